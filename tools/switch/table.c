/* tools/switch/table.c: a learning switch's forwarding decision
 * (tools/switch/table.h). */
#include <string.h>

#include "tools/switch/table.h"

void swt_init(struct swt *t, int nports)
{
    memset(t, 0, sizeof *t);
    t->nports = nports;
}

static struct swt_entry *swt_find(const struct swt *t, const uint8_t *mac)
{
    for (int i = 0; i < t->used; i++)
        if (memcmp(t->e[i].mac, mac, 6) == 0)
            return (struct swt_entry *)&t->e[i];
    return NULL;
}

int swt_lookup(const struct swt *t, const uint8_t *mac)
{
    const struct swt_entry *e = swt_find(t, mac);
    return e ? e->port : -1;
}

/* A station moves (or first appears): remember where it was last heard.
 * Group addresses never send, so a frame claiming one teaches nothing. */
static void swt_learn(struct swt *t, int port, const uint8_t *src)
{
    if (src[0] & 1)
        return;
    struct swt_entry *e = swt_find(t, src);
    if (!e) {
        if (t->used < SWT_MACS) {
            e = &t->e[t->used++];
        } else {
            e = &t->e[0];
            for (int i = 1; i < SWT_MACS; i++)
                if (t->e[i].seen < e->seen)
                    e = &t->e[i];
        }
        memcpy(e->mac, src, 6);
    }
    e->port = port;
    e->seen = ++t->clock;
}

int swt_frame(struct swt *t, int in, const uint8_t *frame, unsigned len)
{
    if (len < 14 || in < 0 || in >= t->nports)
        return SWT_DROP;
    const uint8_t *dst = frame, *src = frame + 6;
    swt_learn(t, in, src);
    if (dst[0] & 1)                  /* broadcast and multicast */
        return SWT_FLOOD;
    int out = swt_lookup(t, dst);
    if (out < 0)
        return SWT_FLOOD;
    return out == in ? SWT_DROP : out;
}
