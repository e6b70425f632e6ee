/* drivers/virtqueue.c: a split virtqueue's setup and notification
 * (drivers/virtqueue.h), the same for every device and transport. */
#include "drivers/virtqueue.h"
#include "hal/mem.h"
#include "mm/pmm.h"

static size_t align_up(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }

const char *vq_setup(struct vq *q, struct virtio_transport *t, uint16_t index)
{
    uint16_t size = t->ops->queue_max(t, index);
    if (size < 2 || (size & (size - 1)))
        return "queue size not a power of two >= 2";
    size_t avail_end = 16u * size + 2 * (3u + size);
    size_t used_off = align_up(avail_end, VIRTIO_QUEUE_ALIGN);
    size_t total = used_off + align_up(2 * 3u + 8u * size, VIRTIO_QUEUE_ALIGN);
    uint8_t *mem = page_alloc(total / PAGE_SIZE);
    if (!mem)
        return "out of memory for the queues";
    q->t = t;
    q->index = index;
    q->size = size;
    q->desc = (struct vq_desc *)mem;
    q->avail = (volatile uint16_t *)(mem + 16u * size);
    q->used = mem + used_off;
    q->avail_idx = q->used_seen = 0;
    uint64_t pa = va_to_pa(mem);
    return t->ops->queue_setup(t, index, size, pa, pa + 16u * size, pa + used_off);
}

/* The device sets VQ_USED_F_NO_NOTIFY while it is working through the
 * ring anyway (QEMU: whenever the RX ring has buffers, and while it drains
 * TX). Skipping the notify write then matters: under emulation each one is
 * an exit to the device model, the costliest thing on the path. The fence
 * orders our avail idx store before the flag load: otherwise we could read
 * a stale "no notify" while the device, having looked at the old idx,
 * goes to sleep, and the new entries would wait for the next notify. */
void vq_notify(struct vq *q)
{
    __sync_synchronize();
    if (__atomic_load_n((const volatile uint16_t *)q->used, __ATOMIC_ACQUIRE) & VQ_USED_F_NO_NOTIFY)
        return;
    q->t->ops->notify(q->t, q->index);
}

void vq_kick(struct vq *q)
{
    __sync_synchronize();
    q->t->ops->notify(q->t, q->index);
}
