/* drivers/virtio_net.h: the virtio network device (legacy interface).
 *
 * Bring-up is two steps so the stack can be initialised in between:
 *   dev = virtio_net_probe();   reset, features, queues, RX buffers posted
 *   net_init(dev, ip, mask, gw);
 *   virtio_net_start();         receive task, interrupt, DRIVER_OK
 * Frames then flow: interrupt -> receive task -> net_rx(); the stack sends
 * through dev->xmit. */
#pragma once
#include "net/net.h"

/* NULL if there is no virtio-net device (silently) or it could not be set
 * up (after a message saying why). */
struct netdev *virtio_net_probe(void);
/* 0, or -1 after a message (no task, no interrupt vector). */
int virtio_net_start(void);
