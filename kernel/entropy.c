/* kernel/entropy.c: hal/entropy.h's portable core: which source, the
 * retries, the health check.
 *
 * The source is chosen once, at boot: the CPU's own instruction where its
 * ID registers say it exists (arch/<arch>: RDRAND, RNDR), else a virtio-rng
 * device (drivers/virtio_rng.c: on PCI on x86, on virtio-mmio on arm64),
 * else none. Never a clock or a counter: with no source entropy_source()
 * is NULL and entropy_get fails, so a caller that needs secrecy can refuse.
 * Like kernel/netboot.c, this is where the buses are asked for the device.
 *
 * Two checks keep a broken source from passing for a working one:
 *   - the instruction gets ENTROPY_CPU_TRIES tries per word. Ten failures
 *     in a row mean a broken generator, not a busy one (Intel's DRNG
 *     Software Implementation Guide, 5.2.1);
 *   - a 64-bit word equal to the one drawn before it (the continuous test
 *     of FIPS 140-2, 4.9.2) fails the source for good. A generator stuck on
 *     one value (some AMD parts' RDRAND returned all ones with CF = 1 after
 *     a resume) would otherwise hand out the same "random" epoch at every
 *     boot. A working source repeats a word with probability 2^-64.
 * At boot two words are drawn before a source is chosen, so one that fails
 * either check at once is never used.
 *
 * One lock serialises the draws: the repetition check needs the previous
 * word, and a device source has one buffer in flight. Draws are rare (a
 * boot epoch, a challenge), so a sleeping mutex costs nothing. */
#include "drivers/virtio.h"
#include "drivers/virtio_rng.h"
#include "hal/entropy.h"
#include "kernel/console.h"
#include "kernel/entropy.h"
#include "kernel/once.h"
#include "kernel/sched.h"
#include "lib/sha256.h"
#include "lib/printf.h"
#include "lib/string.h"

#define ENTROPY_CPU_TRIES   10      /* per word; the DRNG guide's count */
#define ENTROPY_CHUNK_WORDS 8       /* drawn per round: 64 bytes on the stack */
#define STR_(x) #x
#define STR(x) STR_(x)

enum ent_src { ENT_NONE, ENT_CPU, ENT_VIRTIO };

static struct {
    enum ent_src src;
    const char *name;              /* entropy_source() while src != ENT_NONE */
    bool failed;                   /* a check failed: every later draw fails */
    const char *fail_name, *fail_why;   /* the last source refused, and why */
    bool have_last;
    uint64_t last;                 /* the previous word, for the repetition check */
    uint64_t words, retries;       /* drawn; instruction tries that had no value */
} ent;
static struct mutex ent_lock = MUTEX_INIT("entropy");
static int ent_once;

/* One word from the instruction, in at most ENTROPY_CPU_TRIES tries. */
static bool cpu_word(uint64_t *w)
{
    for (int i = 0; i < ENTROPY_CPU_TRIES; i++) {
        if (cpu_rng_read(w))
            return true;
        ent.retries++;
    }
    return false;
}

/* n words from the source; NULL, or what went wrong. */
static const char *source_words(uint64_t *w, size_t n)
{
    if (ent.src == ENT_VIRTIO)
        return virtio_rng_read(w, n * sizeof w[0]) ? NULL : "the device gave no bytes (see above)";
    for (size_t i = 0; i < n; i++)
        if (!cpu_word(&w[i]))
            return "no value in " STR(ENTROPY_CPU_TRIES) " tries in a row";
    return NULL;
}

/* The repetition check, across calls: each word against the one before. */
static const char *words_check(const uint64_t *w, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (ent.have_last && w[i] == ent.last)
            return "the same 64-bit value twice in a row";
        ent.last = w[i];
        ent.have_last = true;
    }
    return NULL;
}

/* Fill buf from the source, under ent_lock; NULL, or why it failed. */
static const char *draw(void *buf, size_t len)
{
    uint64_t w[ENTROPY_CHUNK_WORDS];
    uint8_t *out = buf;
    const char *err = NULL;
    while (len && !err) {
        size_t nw = (len + 7) / 8 < ENTROPY_CHUNK_WORDS ? (len + 7) / 8 : ENTROPY_CHUNK_WORDS;
        err = source_words(w, nw);
        if (!err)
            err = words_check(w, nw);
        if (!err) {
            size_t n = len < nw * 8 ? len : nw * 8;
            memcpy(out, w, n);
            out += n;
            len -= n;
            ent.words += nw;
        }
    }
    secure_zero(w, sizeof w);           /* a copy of what the caller keeps secret */
    return err;
}

/* Called with ent_lock held, once the source has failed a check. */
static void source_fail(const char *why)
{
    if (!ent.failed)
        kprintf("entropy: %s failed: %s: no entropy from now on\n", ent.name, why);
    ent.failed = true;
    ent.fail_name = ent.name;
    ent.fail_why = why;
}

bool entropy_get(void *buf, size_t len)
{
    if (!entropy_source())
        return false;
    mutex_lock(&ent_lock);
    bool ok = !ent.failed;
    if (ok) {
        const char *err = draw(buf, len);
        if (err)
            source_fail(err);
        ok = !err;
    }
    mutex_unlock(&ent_lock);
    return ok;
}

const char *entropy_source(void)
{
    if (!once_done(&ent_once) || ent.src == ENT_NONE || ent.failed)
        return NULL;
    return ent.name;
}

/* Take src as the source if two words drawn from it pass the checks. */
static bool source_try(enum ent_src src, const char *name)
{
    uint64_t w[2];
    ent.src = src;
    ent.name = name;
    ent.failed = ent.have_last = false;
    const char *err = draw(w, sizeof w);
    secure_zero(w, sizeof w);
    if (!err)
        return true;
    kprintf("entropy: %s failed its start-up check (%s): not used\n", name, err);
    ent.src = ENT_NONE;
    ent.fail_name = name;
    ent.fail_why = err;
    return false;
}

/* The first virtio-rng device: on PCI (x86), else on virtio-mmio (arm64). */
static bool virtio_found(void)
{
    struct virtio_transport *t = virtio_pci_probe(VIRTIO_PCI_VENDOR, VIRTIO_PCI_ID_RNG);
    if (!t)
        t = virtio_mmio_probe(VIRTIO_ID_RNG);
    return virtio_rng_probe(t) == 0;
}

static void entropy_choose(void)
{
    mutex_lock(&ent_lock);
    const char *cpu = cpu_rng_name();
    if (cpu && source_try(ENT_CPU, cpu))
        kprintf("entropy: %s (the CPU's instruction)\n", cpu);
    else if (virtio_found() && source_try(ENT_VIRTIO, "virtio-rng"))
        kprintf("entropy: virtio-rng (%s)\n", virtio_rng_where());
    else
        kprintf("entropy: none: no %s on this CPU and no usable virtio-rng device "
                "(ushkey= cannot be used)\n", cpu ? cpu : "RDRAND/RNDR");
    mutex_unlock(&ent_lock);
}

void entropy_init(void) { once(&ent_once, entropy_choose); }

void entropy_print(struct printer *p)
{
    const char *s = entropy_source();
    if (s && ent.src == ENT_VIRTIO) {
        pr_printf(p, "entropy:      %s (%lu words drawn)\n", s, (unsigned long)ent.words);
        virtio_rng_print(p);
    } else if (s) {
        pr_printf(p, "entropy:      %s (%lu words drawn, %lu empty tries)\n", s,
                  (unsigned long)ent.words, (unsigned long)ent.retries);
    } else if (ent.fail_name) {
        pr_printf(p, "entropy:      none (%s failed: %s)\n", ent.fail_name, ent.fail_why);
    } else {
        pr_printf(p, "entropy:      none\n");
    }
}
