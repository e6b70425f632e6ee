/* drivers/virtio_net.h: the virtio network device, over any virtio
 * transport (drivers/virtio.h: legacy PCI on x86, virtio-mmio on arm64).
 *
 * Bring-up is two steps so the stack can be initialised in between:
 *   dev = virtio_net_probe(t);  reset, features, queues, RX buffers posted
 *   net_init(dev, ip, mask, gw);
 *   virtio_net_start();         receive task, interrupt, DRIVER_OK
 * Frames then flow: interrupt -> receive task -> net_rx(); the stack sends
 * through dev->xmit. */
#pragma once
#include "net/net.h"

struct virtio_transport;

/* NULL if t is NULL (no device found) or the device could not be set up
 * (after a message saying why). One device: a second probe replaces it. */
struct netdev *virtio_net_probe(struct virtio_transport *t);
/* 0, or -1 after a message (no task, no interrupt vector). */
int virtio_net_start(void);
/* `vnet`: queues and counters, to p. 0, or 1 with no device in use. */
struct printer;
int virtio_net_print(struct printer *p);
