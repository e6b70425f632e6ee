/* drivers/virtio_rng.h: the virtio entropy device (drivers/virtio_rng.c),
 * over any virtio transport (drivers/virtio.h). kernel/entropy.c uses it
 * where the CPU has no instruction of its own. One device. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

struct printer;
struct virtio_transport;

/* Reset, negotiate, set up the request queue, DRIVER_OK. 0, or -1 if t
 * is NULL (no device found) or the device cannot be used (after a message
 * saying why). */
int virtio_rng_probe(struct virtio_transport *t);
/* Fill out with len bytes from the device, waiting for it (task context,
 * or boot before the scheduler; each answer within a bounded time). False
 * when there is no device or it was given up (out's contents then
 * unspecified): a device that did not answer in time, answered nonsense
 * or kept answering with nothing is never used again. Not reentrant: the
 * caller serialises. */
bool virtio_rng_read(void *out, size_t len);
/* The transport's description ("io 0xc0a0 irq 11"), NULL if none in use. */
const char *virtio_rng_where(void);
/* One `lscpu` line: the device, its requests, bytes, short answers. */
void virtio_rng_print(struct printer *p);
