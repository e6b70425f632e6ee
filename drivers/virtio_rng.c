/* drivers/virtio_rng.c: the virtio entropy device (virtio 1.0 section 5.4),
 * over any transport (drivers/virtio.h): QEMU's virtio-rng-pci (legacy
 * PCI, 1af4:1005) on x86, virtio-rng-device (virtio-mmio) on arm64's virt.
 *
 * One queue (0, requestq) and no features. The driver posts a buffer the
 * device may write; the device fills some or all of it with entropy and
 * returns it on the used ring, its length saying how much it wrote. Here
 * one descriptor is posted at a time, and the reader polls for its return:
 * entropy is asked for rarely (the UDP shell's boot epoch, its challenges)
 * and at boot, before the scheduler runs, when there is nobody to wake.
 * The device is told not to interrupt, but the spec only says it SHOULD
 * NOT (virtio 1.0 2.4.7.2): on x86 its INTx line may be shared with
 * virtio-net's, level-triggered, and an interrupt nobody acknowledged
 * would repeat forever. So a handler that only acknowledges is attached
 * all the same.
 *
 * Every wait is bounded. A device that does not answer within
 * VRNG_WAIT_MS, or answers nonsense (another descriptor, more bytes than
 * posted), is given up for good: it may still write into the buffer it
 * holds, so that buffer is never posted or read again. A device that keeps
 * returning nothing is refused after VRNG_EMPTY_MAX empty answers in a
 * row. Either way the reader is told "no", never handed a partial or
 * stale buffer.
 *
 * The buffer is wiped after each copy: what it held is someone's secret.
 * The caller serialises reads (kernel/entropy.c holds its lock). */
#include "drivers/virtio_rng.h"
#include "drivers/virtio.h"
#include "drivers/virtqueue.h"
#include "hal/cpu.h"
#include "hal/mem.h"
#include "kernel/console.h"
#include "lib/printf.h"
#include "lib/sha256.h"
#include "lib/string.h"
#include "mm/pmm.h"

#define VRNG_Q          0         /* requestq */
#define VRNG_BUF        256       /* bytes asked for per request */
#define VRNG_WAIT_MS    1000      /* for one answer: QEMU takes microseconds */
#define VRNG_EMPTY_MAX  4         /* empty answers in a row before giving up */
#define STR_(x) #x
#define STR(x) STR_(x)

static struct {
    struct virtio_transport *t;
    struct vq q;
    uint8_t *buf;                 /* one page: what descriptor 0 points at */
    const char *dead;             /* why the device was given up, or NULL */
    struct virtio_transport *irq_t;   /* the transport vrng_irq is attached to */
    uint64_t requests, bytes, short_fills;
} vr;

static void vrng_give_up(const char *why)
{
    if (!vr.dead)
        kprintf("virtio-rng: %s: device not used any more\n", why);
    vr.dead = why;
}

/* Interrupt context: acknowledging drops the line; the reader polls. */
static void vrng_irq(void *arg)
{
    struct virtio_transport *t = arg;
    t->ops->isr_ack(t);
}

static int vrng_fail(const char *why)
{
    vr.t->ops->set_status(vr.t, VIRTIO_S_FAILED);
    kprintf("virtio-rng: %s: device not used\n", why);
    vr.t = NULL;
    return -1;
}

int virtio_rng_probe(struct virtio_transport *t)
{
    if (!t)
        return -1;
    vr.t = t;
    vr.dead = NULL;
    vr.requests = vr.bytes = vr.short_fills = 0;
    const struct virtio_ops *o = t->ops;
    o->set_status(t, 0);                               /* reset */
    o->set_status(t, VIRTIO_S_ACK);
    o->set_status(t, VIRTIO_S_ACK | VIRTIO_S_DRIVER);
    uint64_t want = o->get_features(t) & VIRTIO_F_VERSION_1;   /* no device features */
    if (t->modern && !want)
        return vrng_fail("modern transport, but the device does not offer VERSION_1");
    o->set_features(t, want);
    uint8_t status = VIRTIO_S_ACK | VIRTIO_S_DRIVER;
    if (want) {
        status |= VIRTIO_S_FEATURES_OK;
        o->set_status(t, status);
        if (!(o->get_status(t) & VIRTIO_S_FEATURES_OK))
            return vrng_fail("the device refused our features (FEATURES_OK not kept)");
    }
    const char *err = vq_setup(&vr.q, t, VRNG_Q);
    if (err)
        return vrng_fail(err);
    if (!vr.buf)
        vr.buf = page_alloc(1);
    if (!vr.buf)
        return vrng_fail("out of memory for the buffer");
    vr.q.desc[0] = (struct vq_desc){ va_to_pa(vr.buf), VRNG_BUF, VQ_DESC_F_WRITE, 0 };
    vq_set_interrupts(&vr.q, false);
    if (vr.irq_t != t) {
        if (o->irq_attach(t, "virtio-rng", vrng_irq, t) < 0)
            return vrng_fail("no interrupt vector left for its acknowledgement");
        vr.irq_t = t;
    }
    o->set_status(t, status | VIRTIO_S_DRIVER_OK);
    return 0;
}

/* Post the buffer for want bytes and wait for it back: the bytes written
 * (0..want), or -1 when the device is given up. */
static long vrng_request(uint32_t want)
{
    vr.q.desc[0].len = want;
    vq_push(&vr.q, 0);
    vq_publish(&vr.q);
    vq_kick(&vr.q);
    vr.requests++;
    uint64_t end = cycles_now() + (uint64_t)VRNG_WAIT_MS * 1000 * cycles_per_us();
    while (vq_used_idx(&vr.q) == vr.q.used_seen) {
        if (cycles_now() >= end) {
            vrng_give_up("no answer within " STR(VRNG_WAIT_MS) " ms");
            return -1;
        }
        cpu_relax();
    }
    struct vq_used_elem e = vq_used_elem(&vr.q, vr.q.used_seen++);
    if (e.id != 0 || e.len > want) {
        vrng_give_up("returned a buffer it was not given, or more bytes than it holds");
        return -1;
    }
    if (vq_used_idx(&vr.q) != vr.q.used_seen) {
        vrng_give_up("returned more buffers than it was given");
        return -1;
    }
    return (long)e.len;
}

bool virtio_rng_read(void *out, size_t len)
{
    uint8_t *o = out;
    unsigned empty = 0;
    while (len) {
        if (!vr.t || vr.dead)
            return false;
        uint32_t want = len < VRNG_BUF ? (uint32_t)len : VRNG_BUF;
        long n = vrng_request(want);
        if (n < 0)
            return false;
        if ((uint32_t)n < want)
            vr.short_fills++;
        if (n == 0 && ++empty == VRNG_EMPTY_MAX) {
            vrng_give_up("returned no bytes " STR(VRNG_EMPTY_MAX) " times in a row");
            return false;
        }
        if (n > 0)
            empty = 0;
        memcpy(o, vr.buf, (size_t)n);
        secure_zero(vr.buf, (size_t)n);
        o += n;
        len -= (size_t)n;
        vr.bytes += (uint64_t)n;
    }
    return true;
}

const char *virtio_rng_where(void) { return vr.t ? vr.t->where : NULL; }

void virtio_rng_print(struct printer *p)
{
    if (!vr.t) {
        pr_puts(p, "virtio-rng:   no device in use\n");
        return;
    }
    pr_printf(p, "virtio-rng:   %s, queue %u: %lu requests, %lu bytes, %lu short answers%s%s\n",
              vr.t->where, vr.q.size, (unsigned long)vr.requests, (unsigned long)vr.bytes,
              (unsigned long)vr.short_fills, vr.dead ? "; given up: " : "", vr.dead ? vr.dead : "");
}
