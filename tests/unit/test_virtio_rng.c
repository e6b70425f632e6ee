// LINK: drivers/virtio_rng.c drivers/virtqueue.c lib/printf.c lib/sha256.c
/* tests/unit/test_virtio_rng.c: drivers/virtio_rng.c (and the shared
 * drivers/virtqueue.c) against a fake transport whose notify plays the
 * device: it reads the available ring, writes into the posted buffer and
 * returns it on the used ring, as QEMU's virtio-rng does. Its modes: fill
 * all, fill short, fill nothing, never answer, answer nonsense. Physical
 * addresses are host pointers (va_to_pa is the identity). */
#include "test.h"
#include "fake_hal.h"
#include "sbuf.h"
#include <stdarg.h>
#include <string.h>
#include <stdlib.h>
#include "drivers/virtio.h"
#include "drivers/virtio_rng.h"
#include "drivers/virtqueue.h"
#include "hal/mem.h"
#include "mm/pmm.h"

#include "fake_klog.h"

/* Pages stay reachable from here, so the leak check sees none lost. */
static void *pages[64];
static int npages;
void *page_alloc(size_t n)
{
    if (npages == 64)
        return NULL;
    void *p = aligned_alloc(PAGE_SIZE, n * PAGE_SIZE);
    memset(p, 0, n * PAGE_SIZE);
    return pages[npages++] = p;
}
uint64_t va_to_pa(const void *va) { return (uint64_t)(uintptr_t)va; }
void *pa_to_va(uint64_t pa) { return (void *)(uintptr_t)pa; }

/* ---- the fake device ---- */

enum mode { FILL, SHORT, EMPTY, SILENT, WRONG_ID, TOO_LONG, TWO_USED };

static struct dev {
    struct virtio_transport t;
    uint8_t status;
    uint64_t offered, accepted;
    uint16_t qmax;
    uint64_t desc, avail, used;   /* what queue_setup was given */
    uint16_t qsize, avail_seen, used_idx;
    enum mode mode;
    unsigned short_by;            /* SHORT: bytes written = asked - short_by, at least 1 */
    unsigned notifies, fills;
    uint8_t next;                 /* the byte pattern written: next, next+1, ... */
    bool keep_features_ok;
    int attach_rc;                /* what irq_attach answers */
    unsigned attached, acks;
    const char *irq_name;         /* the name it was attached under */
    void (*irq_fn)(void *);
    void *irq_arg;
} d;

static uint8_t fd_get_status(struct virtio_transport *t) { return d.status; }
static void fd_set_status(struct virtio_transport *t, uint8_t s)
{
    if ((s & VIRTIO_S_FEATURES_OK) && !d.keep_features_ok)
        s &= (uint8_t)~VIRTIO_S_FEATURES_OK;
    d.status = s;
}
static uint64_t fd_get_features(struct virtio_transport *t) { return d.offered; }
static void fd_set_features(struct virtio_transport *t, uint64_t f) { d.accepted = f; }
static uint8_t fd_config_read8(struct virtio_transport *t, unsigned off) { return 0; }
static uint16_t fd_queue_max(struct virtio_transport *t, uint16_t q) { return q == 0 ? d.qmax : 0; }
static const char *fd_queue_setup(struct virtio_transport *t, uint16_t q, uint16_t size,
                                  uint64_t desc, uint64_t avail, uint64_t used)
{
    d.qsize = size;
    d.desc = desc;
    d.avail = avail;
    d.used = used;
    return NULL;
}

/* The device at work: every newly available chain is used at once. */
static void fd_notify(struct virtio_transport *t, uint16_t q)
{
    d.notifies++;
    volatile uint16_t *avail = pa_to_va(d.avail);
    volatile uint8_t *used = pa_to_va(d.used);
    struct vq_desc *desc = pa_to_va(d.desc);
    while (d.avail_seen != avail[1]) {
        uint16_t head = avail[2 + (d.avail_seen++ & (d.qsize - 1))];
        if (d.mode == SILENT)
            continue;
        struct vq_desc *x = &desc[head];
        uint32_t n = x->len;
        if (d.mode == SHORT)
            n = n > d.short_by ? n - d.short_by : 1;
        if (d.mode == EMPTY)
            n = 0;
        CHECK(x->flags & VQ_DESC_F_WRITE);
        uint8_t *b = pa_to_va(x->addr);
        for (uint32_t i = 0; i < n; i++)
            b[i] = d.next++;
        d.fills++;
        int copies = d.mode == TWO_USED ? 2 : 1;
        for (int c = 0; c < copies; c++) {
            struct vq_used_elem *e = (struct vq_used_elem *)(used + 4) + (d.used_idx & (d.qsize - 1));
            e->id = d.mode == WRONG_ID ? head + 1u : head;
            e->len = d.mode == TOO_LONG ? x->len + 1 : n;
            d.used_idx++;
        }
        __atomic_store_n((volatile uint16_t *)(used + 2), d.used_idx, __ATOMIC_RELEASE);
    }
}
static uint8_t fd_isr_ack(struct virtio_transport *t)
{
    d.acks++;
    return 1;
}
static int fd_irq_attach(struct virtio_transport *t, const char *name, void (*fn)(void *),
                         void *arg)
{
    d.attached++;
    d.irq_name = name;
    d.irq_fn = fn;
    d.irq_arg = arg;
    return d.attach_rc;
}

static const struct virtio_ops fd_ops = {
    fd_get_status, fd_set_status, fd_get_features, fd_set_features, fd_config_read8,
    fd_queue_max, fd_queue_setup, fd_notify, fd_isr_ack, fd_irq_attach,
};

static struct virtio_transport *device(enum mode mode, bool modern)
{
    memset(&d, 0, sizeof d);
    d.t.ops = &fd_ops;
    d.t.modern = modern;
    strcpy(d.t.where, "fake 0x1000");
    d.qmax = 8;
    d.mode = mode;
    d.keep_features_ok = true;
    d.offered = modern ? VIRTIO_F_VERSION_1 | (1ull << 28) : (1u << 28);   /* + one we don't want */
    klog[0] = 0;
    fake_cycles_step = 1000;      /* 1 us per look at the clock: timeouts come quickly */
    return &d.t;
}

static bool pattern(const uint8_t *b, size_t n, uint8_t first)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (uint8_t)(first + i))
            return false;
    return true;
}

TEST(probe_legacy_negotiates_nothing_and_goes_live)
{
    CHECK_EQ(virtio_rng_probe(device(FILL, false)), 0);
    CHECK_EQ(d.accepted, 0);                    /* no feature of the device's taken */
    CHECK_EQ(d.status, VIRTIO_S_ACK | VIRTIO_S_DRIVER | VIRTIO_S_DRIVER_OK);
    CHECK_EQ(d.qsize, 8);
    CHECK_EQ(d.desc % PAGE_SIZE, 0);            /* the legacy layout */
    CHECK_EQ(d.avail, d.desc + 16 * 8);
    CHECK_EQ(d.used % VIRTIO_QUEUE_ALIGN, 0);
    uint16_t *avail = pa_to_va(d.avail);
    CHECK_EQ(avail[0], VQ_AVAIL_F_NO_INTERRUPT); /* polled: no interrupts */
    CHECK_STR(virtio_rng_where(), "fake 0x1000");
    CHECK_EQ(klog[0], 0);
}

TEST(stray_interrupts_are_acknowledged)
{
    /* Asked not to interrupt, a device still may: on a shared level line
     * an unacknowledged one would repeat forever. */
    static struct virtio_transport t;           /* a transport not attached before */
    t = *device(FILL, false);
    CHECK_EQ(virtio_rng_probe(&t), 0);
    CHECK_EQ(d.attached, 1);
    CHECK(d.irq_name && strcmp(d.irq_name, "virtio-rng") == 0);
    CHECK(d.irq_fn != NULL && d.irq_arg == &t);
    if (d.irq_fn)
        d.irq_fn(d.irq_arg);
    CHECK_EQ(d.acks, 1);
    CHECK_EQ(virtio_rng_probe(&t), 0);          /* probed again: not attached twice */
    CHECK_EQ(d.attached, 1);
}

TEST(no_vector_for_the_acknowledgement_refuses_the_device)
{
    struct virtio_transport other = *device(FILL, false);   /* not attached yet */
    d.attach_rc = -1;
    CHECK_EQ(virtio_rng_probe(&other), -1);
    CHECK(strstr(klog, "virtio-rng: no interrupt vector left for its acknowledgement: "
                 "device not used") != NULL);
    CHECK_EQ(d.status, VIRTIO_S_FAILED);
    uint8_t b[8];
    CHECK(!virtio_rng_read(b, sizeof b));
}

TEST(probe_modern_takes_version_1_and_features_ok)
{
    CHECK_EQ(virtio_rng_probe(device(FILL, true)), 0);
    CHECK_EQ(d.accepted, VIRTIO_F_VERSION_1);
    CHECK(d.status & VIRTIO_S_FEATURES_OK);
    CHECK(d.status & VIRTIO_S_DRIVER_OK);
}

TEST(probe_refusals_are_named)
{
    CHECK_EQ(virtio_rng_probe(NULL), -1);
    struct virtio_transport *t = device(FILL, true);
    d.offered = 0;                               /* modern, but no VERSION_1 */
    CHECK_EQ(virtio_rng_probe(t), -1);
    CHECK(strstr(klog, "virtio-rng: modern transport, but the device does not offer VERSION_1") != NULL);
    CHECK_EQ(d.status, VIRTIO_S_FAILED);
    t = device(FILL, true);
    d.keep_features_ok = false;
    CHECK_EQ(virtio_rng_probe(t), -1);
    CHECK(strstr(klog, "FEATURES_OK not kept") != NULL);
    t = device(FILL, false);
    d.qmax = 6;
    CHECK_EQ(virtio_rng_probe(t), -1);
    CHECK(strstr(klog, "queue size not a power of two") != NULL);
    CHECK(virtio_rng_where() == NULL);
    uint8_t b[8];
    CHECK(!virtio_rng_read(b, sizeof b));       /* no device in use: no */
}

TEST(read_fills_the_posted_buffer)
{
    CHECK_EQ(virtio_rng_probe(device(FILL, false)), 0);
    d.next = 7;
    uint8_t b[40];
    memset(b, 0, sizeof b);
    CHECK(virtio_rng_read(b, sizeof b));
    CHECK(pattern(b, sizeof b, 7));
    CHECK_EQ(d.fills, 1);
    CHECK_EQ(d.notifies, 1);
    /* Long reads go in requests of at most 256 bytes, the buffer reused. */
    uint8_t big[600];
    CHECK(virtio_rng_read(big, sizeof big));
    CHECK(pattern(big, sizeof big, (uint8_t)(7 + 40)));
    CHECK_EQ(d.fills, 1 + 3);
    /* What the device wrote does not stay in the driver's buffer. */
    struct vq_desc *desc = pa_to_va(d.desc);
    const uint8_t *buf = pa_to_va(desc[0].addr);
    for (int i = 0; i < 256; i++)
        CHECK_EQ(buf[i], 0);
}

TEST(short_fills_are_topped_up)
{
    CHECK_EQ(virtio_rng_probe(device(SHORT, false)), 0);
    d.short_by = 5;                             /* 32 asked: 27, then 5 asked: 1 each */
    uint8_t b[32];
    CHECK(virtio_rng_read(b, sizeof b));
    CHECK(pattern(b, sizeof b, 0));
    CHECK_EQ(d.fills, 1 + 5);
    struct sbuf s = SBUF_INIT;
    virtio_rng_print(&s.pr);
    CHECK(strstr(s.s, "virtio-rng:   fake 0x1000, queue 8: 6 requests, 32 bytes, 5 short answers\n")
          == s.s);
}

TEST(empty_answers_give_up_bounded)
{
    CHECK_EQ(virtio_rng_probe(device(EMPTY, false)), 0);
    uint8_t b[16];
    CHECK(!virtio_rng_read(b, sizeof b));
    CHECK_EQ(d.fills, 4);
    CHECK(strstr(klog, "virtio-rng: returned no bytes 4 times in a row: device not used any more")
          != NULL);
    d.mode = FILL;                              /* even if it recovers: given up */
    CHECK(!virtio_rng_read(b, sizeof b));
    CHECK_EQ(d.fills, 4);
}

TEST(silent_device_times_out_not_hangs)
{
    CHECK_EQ(virtio_rng_probe(device(SILENT, false)), 0);
    uint64_t t0 = fake_cycles;
    uint8_t b[16];
    CHECK(!virtio_rng_read(b, sizeof b));
    uint64_t waited_us = (fake_cycles - t0) / fake_cycles_per_us;
    CHECK(waited_us >= 1000000 && waited_us < 1000000 + 100);   /* 1000 ms, then no */
    CHECK(strstr(klog, "virtio-rng: no answer within 1000 ms: device not used any more") != NULL);
    int notifies = (int)d.notifies;
    CHECK(!virtio_rng_read(b, sizeof b));       /* its buffer is never posted again */
    CHECK_EQ(d.notifies, notifies);
    struct sbuf s = SBUF_INIT;
    virtio_rng_print(&s.pr);
    CHECK(strstr(s.s, "; given up: no answer within 1000 ms\n") != NULL);
}

TEST(nonsense_answers_give_up)
{
    enum mode bad[] = { WRONG_ID, TOO_LONG, TWO_USED };
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(virtio_rng_probe(device(bad[i], false)), 0);
        uint8_t b[16];
        CHECK(!virtio_rng_read(b, sizeof b));
        CHECK(strstr(klog, "device not used any more") != NULL);
        CHECK(!virtio_rng_read(b, sizeof b));
        CHECK_EQ(d.fills, 1);
    }
}

TEST(reprobe_brings_a_given_up_device_back)
{
    CHECK_EQ(virtio_rng_probe(device(SILENT, false)), 0);
    uint8_t b[8];
    CHECK(!virtio_rng_read(b, sizeof b));
    CHECK_EQ(virtio_rng_probe(device(FILL, false)), 0);   /* reset: a new queue */
    CHECK(virtio_rng_read(b, sizeof b));
    CHECK(pattern(b, sizeof b, 0));
}
