/* drivers/virtqueue.h: one split virtqueue in the legacy layout (virtio 1.0
 * section 2.4): the descriptor table, then the available ring, then, at
 * the next VIRTIO_QUEUE_ALIGN boundary, the used ring. Shared by every
 * driver (virtio_net.c, virtio_rng.c) over any transport (virtio.h).
 *
 * vq_setup sizes, allocates and hands over the rings; the descriptors are
 * the driver's to fill, since each device chains its buffers its own way.
 * The ring accessors are inline: virtio-net calls them per frame. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "drivers/virtio.h"

#define VQ_DESC_F_NEXT          1
#define VQ_DESC_F_WRITE         2     /* the device writes this buffer */
#define VQ_AVAIL_F_NO_INTERRUPT 1
#define VQ_USED_F_NO_NOTIFY     1

struct vq_desc {
    uint64_t addr;                /* physical */
    uint32_t len;
    uint16_t flags;
    uint16_t next;
};
_Static_assert(sizeof(struct vq_desc) == 16, "virtq_desc layout (virtio 1.0 2.4.5)");

struct vq_used_elem {
    uint32_t id;                  /* head descriptor of the chain */
    uint32_t len;                 /* bytes the device wrote into it */
};
_Static_assert(sizeof(struct vq_used_elem) == 8, "virtq_used_elem layout (virtio 1.0 2.4.8)");

struct vq {
    struct virtio_transport *t;
    uint16_t index, size;         /* queue number; entries (a power of two) */
    struct vq_desc *desc;
    volatile uint16_t *avail;     /* flags, idx, ring[size], used_event */
    volatile uint8_t *used;       /* flags, idx, ring[size] of used_elem */
    uint16_t avail_idx;           /* next avail idx we publish */
    uint16_t used_seen;           /* used entries consumed so far */
};

/* Queue `index` of t at the size the device offers: rings allocated
 * (zeroed) and handed to the device. NULL, or why it could not be. */
const char *vq_setup(struct vq *q, struct virtio_transport *t, uint16_t index);
/* Tell the device about published entries unless it said it needs no
 * notification (VQ_USED_F_NO_NOTIFY); vq_kick tells it regardless. */
void vq_notify(struct vq *q);
void vq_kick(struct vq *q);

/* The device's used idx (acquire: the entries it covers are visible). */
static inline uint16_t vq_used_idx(const struct vq *q)
{
    return __atomic_load_n((const volatile uint16_t *)(q->used + 2), __ATOMIC_ACQUIRE);
}

static inline struct vq_used_elem vq_used_elem(const struct vq *q, uint16_t i)
{
    const volatile struct vq_used_elem *e =
        (const volatile struct vq_used_elem *)(q->used + 4) + (i & (q->size - 1));
    return (struct vq_used_elem){ e->id, e->len };
}

/* Put chain head `head` in the next avail slot; visible after vq_publish. */
static inline void vq_push(struct vq *q, uint16_t head)
{
    q->avail[2 + (q->avail_idx & (q->size - 1))] = head;
    q->avail_idx++;
}

/* Publish pushed entries: the ring entries must be visible before the idx
 * that covers them (release), and the idx before the notify (vq_notify's
 * fence: the notify is a port or MMIO write the device acts on at once). */
static inline void vq_publish(struct vq *q)
{
    __atomic_store_n(&q->avail[1], q->avail_idx, __ATOMIC_RELEASE);
}

/* Whether the device should interrupt when it uses a buffer. */
static inline void vq_set_interrupts(struct vq *q, bool on)
{
    q->avail[0] = on ? 0 : VQ_AVAIL_F_NO_INTERRUPT;
    __sync_synchronize();
}
