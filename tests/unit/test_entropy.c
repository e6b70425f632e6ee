// LINK: lib/printf.c lib/sha256.c
/* tests/unit/test_entropy.c: the portable entropy core (kernel/entropy.c)
 * against a fake CPU instruction and a fake virtio-rng driver: the source
 * chosen, the bounded retries, the repetition check, and failures that
 * reach the caller as "no". */
#include "test.h"
#include <stdarg.h>
#include "sbuf.h"
#include "kernel/entropy.c"

#include "fake_klog.h"

void mutex_lock(struct mutex *m) { m->locked++; }
void mutex_unlock(struct mutex *m) { m->locked--; }

/* The instruction: fake_rng_empty tries answer "none ready" before each
 * value; fake_rng_stuck repeats one value; else a counter-driven xorshift. */
static const char *fake_rng_name;
static int fake_rng_empty;
static bool fake_rng_stuck;
static int fake_rng_tries, fake_rng_left;
static uint64_t fake_rng_x;

const char *cpu_rng_name(void) { return fake_rng_name; }
bool cpu_rng_read(uint64_t *out)
{
    fake_rng_tries++;
    if (fake_rng_left > 0) {
        fake_rng_left--;
        *out = 0;
        return false;
    }
    fake_rng_left = fake_rng_empty;
    if (!fake_rng_stuck) {
        fake_rng_x ^= fake_rng_x << 13;
        fake_rng_x ^= fake_rng_x >> 7;
        fake_rng_x ^= fake_rng_x << 17;
    }
    *out = fake_rng_x;
    return true;
}

/* The virtio side: where a device is found (PCI, MMIO or nowhere), and
 * whether its reads succeed. */
static struct virtio_transport fake_pci_t = { .where = "io 0xc040 irq 11" };
static struct virtio_transport fake_mmio_t = { .where = "mmio 0xa003e00 v1 irq 79" };
static bool fake_on_pci, fake_on_mmio, fake_vrng_ok;
static bool fake_devices_set;           /* by the test, for the next boot() only */
static struct virtio_transport *fake_vrng_t;
static int fake_pci_asked, fake_vrng_reads;
static uint8_t fake_vrng_next;

struct virtio_transport *virtio_pci_probe(uint16_t vendor, uint16_t device)
{
    fake_pci_asked++;
    CHECK_EQ(vendor, 0x1af4);
    CHECK_EQ(device, 0x1005);
    return fake_on_pci ? &fake_pci_t : NULL;
}
struct virtio_transport *virtio_mmio_probe(uint32_t id)
{
    CHECK_EQ(id, 4);
    return fake_on_mmio ? &fake_mmio_t : NULL;
}
int virtio_rng_probe(struct virtio_transport *t)
{
    fake_vrng_t = t;
    return t ? 0 : -1;
}
bool virtio_rng_read(void *out, size_t len)
{
    fake_vrng_reads++;
    for (size_t i = 0; i < len; i++)
        ((uint8_t *)out)[i] = fake_vrng_next++;
    return fake_vrng_ok;
}
const char *virtio_rng_where(void) { return fake_vrng_t ? fake_vrng_t->where : NULL; }
void virtio_rng_print(struct printer *p) { pr_puts(p, "virtio-rng:   (its line)\n"); }

static void devices(bool pci, bool mmio, bool ok)
{
    fake_on_pci = pci;
    fake_on_mmio = mmio;
    fake_vrng_ok = ok;
    fake_vrng_t = NULL;
    fake_pci_asked = fake_vrng_reads = 0;
    fake_vrng_next = 0;
    fake_devices_set = true;
}

/* A fresh boot: the core's state and the fakes'. */
static void boot(const char *cpu, int empty, bool stuck)
{
    if (!fake_devices_set)
        devices(false, false, true);            /* no device unless the test set one */
    memset(&ent, 0, sizeof ent);
    ent_once = ONCE_NOT_RUN;
    klog[0] = 0;
    fake_rng_name = cpu;
    fake_rng_empty = fake_rng_left = empty;
    fake_rng_stuck = stuck;
    fake_rng_tries = 0;
    fake_rng_x = 0x0123456789abcdefull;
    entropy_init();
    fake_devices_set = false;
}

TEST(cpu_instruction_chosen_and_named)
{
    boot("rdrand", 0, false);
    CHECK_STR(entropy_source(), "rdrand");
    CHECK(strstr(klog, "entropy: rdrand (the CPU's instruction)\n") != NULL);
    uint8_t a[13], b[13];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    CHECK(entropy_get(a, sizeof a));
    CHECK(entropy_get(b, sizeof b));
    CHECK(memcmp(a, b, sizeof a) != 0);
    CHECK_EQ(ent_lock.locked, 0);              /* released on every path */
    entropy_init();                             /* idempotent: no second choice */
    CHECK_EQ(strlen(klog), strlen("entropy: rdrand (the CPU's instruction)\n"));
}

TEST(no_instruction_no_source_and_get_fails)
{
    boot(NULL, 0, false);
    CHECK(entropy_source() == NULL);
    CHECK(strstr(klog, "entropy: none") != NULL);
    uint8_t b[8] = { 0 };
    CHECK(!entropy_get(b, sizeof b));
    CHECK_EQ(fake_rng_tries, 0);                /* never asked a CPU without it */
}

TEST(source_is_null_before_init)
{
    memset(&ent, 0, sizeof ent);
    ent_once = ONCE_NOT_RUN;
    fake_rng_name = "rdrand";
    CHECK(entropy_source() == NULL);
    uint8_t b[8];
    CHECK(!entropy_get(b, sizeof b));
}

TEST(empty_tries_are_retried_up_to_ten)
{
    boot("rndr", 9, false);                     /* 9 empty, then a value */
    CHECK_STR(entropy_source(), "rndr");
    int before = fake_rng_tries;
    uint64_t w;
    CHECK(entropy_get(&w, sizeof w));
    CHECK_EQ(fake_rng_tries - before, 10);
    CHECK_EQ(ent.retries, 3 * 9);               /* the boot's 2 words, then this one */
}

TEST(eleven_empty_tries_refuse_the_source_at_boot)
{
    boot("rdrand", 10, false);                  /* a value only on the 11th try */
    CHECK(entropy_source() == NULL);
    CHECK(strstr(klog, "rdrand failed its start-up check (no value in 10 tries in a row)")
          != NULL);
    CHECK_EQ(fake_rng_tries, 10);               /* bounded: gave up, did not loop */
    uint8_t b[4];
    CHECK(!entropy_get(b, sizeof b));
}

TEST(stuck_value_refused_at_boot)
{
    boot("rdrand", 0, true);
    CHECK(entropy_source() == NULL);
    CHECK(strstr(klog, "the same 64-bit value twice in a row") != NULL);
}

TEST(failure_after_boot_reaches_the_caller_and_stays)
{
    boot("rdrand", 0, false);
    uint8_t b[64];
    CHECK(entropy_get(b, sizeof b));
    fake_rng_empty = fake_rng_left = 1000;      /* the generator dies */
    CHECK(!entropy_get(b, sizeof b));
    CHECK(strstr(klog, "entropy: rdrand failed: no value in 10 tries") != NULL);
    CHECK(entropy_source() == NULL);
    fake_rng_empty = fake_rng_left = 0;         /* back: still refused */
    int before = fake_rng_tries;
    CHECK(!entropy_get(b, sizeof b));
    CHECK_EQ(fake_rng_tries, before);
    CHECK_EQ(ent_lock.locked, 0);
}

TEST(repeat_across_calls_is_caught)
{
    boot("rdrand", 0, false);
    uint64_t w;
    CHECK(entropy_get(&w, sizeof w));
    fake_rng_stuck = true;                      /* the next word repeats the last */
    CHECK(!entropy_get(&w, sizeof w));
    CHECK(strstr(klog, "the same 64-bit value twice in a row") != NULL);
}

TEST(long_and_odd_lengths_filled_whole)
{
    boot("rdrand", 0, false);
    uint8_t b[203];
    memset(b, 0, sizeof b);
    uint64_t words = ent.words;
    CHECK(entropy_get(b, sizeof b));
    CHECK_EQ(ent.words - words, (203 + 7) / 8);
    int zeros = 0;                              /* ~0.8 expected of 203 random bytes */
    for (size_t i = 0; i < sizeof b; i++)
        zeros += b[i] == 0;
    CHECK(zeros < 8);
    CHECK(b[202] != 0 || b[201] != 0);          /* the tail was written */
    CHECK(entropy_get(b, 0));
}

TEST(lscpu_line)
{
    boot("rndr", 0, false);
    struct sbuf b = SBUF_INIT;
    entropy_print(&b.pr);
    CHECK(strcmp(b.s, "entropy:      rndr (2 words drawn, 0 empty tries)\n") == 0);
    boot(NULL, 0, false);
    struct sbuf n = SBUF_INIT;
    entropy_print(&n.pr);
    CHECK(strcmp(n.s, "entropy:      none\n") == 0);
    boot("rdrand", 0, true);
    struct sbuf f = SBUF_INIT;
    entropy_print(&f.pr);
    CHECK(strcmp(f.s, "entropy:      none (rdrand failed: the same 64-bit value twice in a row)\n") == 0);
}

TEST(virtio_rng_when_the_cpu_has_no_instruction)
{
    devices(true, true, true);
    boot(NULL, 0, false);
    CHECK_STR(entropy_source(), "virtio-rng");
    CHECK(strstr(klog, "entropy: virtio-rng (io 0xc040 irq 11)\n") != NULL);   /* PCI first */
    uint8_t b[20];
    CHECK(entropy_get(b, sizeof b));
    CHECK_EQ(b[0], 16);                         /* after the boot's two words */
    CHECK_EQ(b[19], 35);
    struct sbuf o = SBUF_INIT;
    entropy_print(&o.pr);
    CHECK(strcmp(o.s, "entropy:      virtio-rng (5 words drawn)\nvirtio-rng:   (its line)\n") == 0);
}

TEST(virtio_rng_on_mmio)
{
    devices(false, true, true);
    boot(NULL, 0, false);
    CHECK_STR(entropy_source(), "virtio-rng");
    CHECK(strstr(klog, "entropy: virtio-rng (mmio 0xa003e00 v1 irq 79)\n") != NULL);
}

TEST(instruction_preferred_and_no_device_probed)
{
    devices(true, false, true);
    boot("rdrand", 0, false);
    CHECK_STR(entropy_source(), "rdrand");
    CHECK_EQ(fake_vrng_reads, 0);
}

TEST(stuck_instruction_falls_back_to_virtio_rng)
{
    devices(true, false, true);
    boot("rdrand", 0, true);
    CHECK(strstr(klog, "entropy: rdrand failed its start-up check (the same 64-bit value twice "
                 "in a row): not used\n") != NULL);
    CHECK_STR(entropy_source(), "virtio-rng");
    uint8_t b[8];
    CHECK(entropy_get(b, sizeof b));
    CHECK_EQ(fake_rng_tries, 2);                /* the instruction is not asked again */
}

TEST(failing_device_is_no_source)
{
    devices(true, false, false);
    boot(NULL, 0, false);
    CHECK(entropy_source() == NULL);
    CHECK(strstr(klog, "entropy: virtio-rng failed its start-up check") != NULL);
    CHECK(strstr(klog, "entropy: none: no RDRAND/RNDR on this CPU and no usable virtio-rng "
                 "device (ushkey= cannot be used)\n") != NULL);
    uint8_t b[8];
    CHECK(!entropy_get(b, sizeof b));
}

TEST(device_failing_later_reaches_the_caller)
{
    devices(false, true, true);
    boot(NULL, 0, false);
    uint8_t b[8];
    CHECK(entropy_get(b, sizeof b));
    fake_vrng_ok = false;
    CHECK(!entropy_get(b, sizeof b));
    CHECK(entropy_source() == NULL);
    fake_vrng_ok = true;
    int reads = fake_vrng_reads;
    CHECK(!entropy_get(b, sizeof b));           /* failed for good */
    CHECK_EQ(fake_vrng_reads, reads);
    CHECK(strstr(klog, "entropy: virtio-rng failed: the device gave no bytes") != NULL);
}

TEST(no_instruction_no_device_says_so)
{
    devices(false, false, true);
    boot("rndr", 10, false);                    /* present but never ready */
    CHECK(entropy_source() == NULL);
    CHECK(strstr(klog, "entropy: none: no rndr on this CPU and no usable virtio-rng device") != NULL);
}
