/* tools/switch/table.h: the forwarding decision of a learning Ethernet
 * switch (IEEE 802.1D's filtering database, minus ageing and spanning
 * tree), kept apart from the sockets so that it is unit-tested. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define SWT_MACS      64             /* learnt addresses; the oldest is replaced */
#define SWT_PORTS_MAX 8
#define SWT_FLOOD     (-1)
#define SWT_DROP      (-2)

struct swt_entry {
    uint8_t mac[6];
    int port;
    uint64_t seen;                   /* swt_frame's counter when last heard */
};

struct swt {
    int nports;
    uint64_t clock;                  /* frames seen: the replacement order */
    int used;
    struct swt_entry e[SWT_MACS];
};

void swt_init(struct swt *t, int nports);

/* One frame of len bytes in on port in: learn its source, then say where
 * it goes: a port (never in), SWT_FLOOD (every port but in: broadcast,
 * multicast, or a destination not yet heard from), or SWT_DROP (too
 * short for an Ethernet header, or addressed to a station on the port it
 * came in by, which has already heard it). */
int swt_frame(struct swt *t, int in, const uint8_t *frame, unsigned len);

/* The port a MAC was last heard on, or -1. */
int swt_lookup(const struct swt *t, const uint8_t *mac);
