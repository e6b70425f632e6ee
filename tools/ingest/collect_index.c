/* tools/ingest/collect_index.c: the collector's lookups by stream id and
 * by shell address (tools/ingest/collect_priv.h), so that a datagram costs the
 * same with a thousand kernels as with one.
 *
 * Two open-addressing tables of kernel numbers + 1 (0: empty), at most
 * half full, rebuilt whenever the ids change (sp_collect_start). A table
 * is a cache, never the truth: every candidate it gives is checked
 * against the kernel itself, and a collector without tables (one a test
 * put together by hand) is searched kernel by kernel.
 *
 * Host pipeline: prefix sp_. */
#include "tools/ingest/collect_priv.h"
#include <stdlib.h>

static size_t hash64(uint64_t x, size_t cap)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x & (cap - 1);
}

static uint64_t shell_key(const struct sockaddr_in *a)
{
    return (uint64_t)a->sin_addr.s_addr << 16 | a->sin_port;
}

static void put(unsigned *tab, size_t cap, uint64_t key, unsigned i)
{
    size_t s = hash64(key, cap);
    while (tab[s])
        s = (s + 1) & (cap - 1);
    tab[s] = i + 1;
}

void sp_collect_index(struct sp_collect *c)
{
    size_t cap = 16;
    while (cap < 2 * (size_t)c->n)
        cap *= 2;
    free(c->by_id);
    free(c->by_shell);
    c->by_id = sp_collect_zalloc(c, cap, sizeof *c->by_id);
    c->by_shell = sp_collect_zalloc(c, cap, sizeof *c->by_shell);
    c->idx_cap = cap;
    for (unsigned i = 0; i < c->n; i++) {
        put(c->by_id, cap, c->k[i].s.id, i);
        put(c->by_shell, cap, shell_key(&c->k[i].shell), i);
    }
}

void sp_collect_index_free(struct sp_collect *c)
{
    free(c->by_id);
    free(c->by_shell);
    c->by_id = c->by_shell = NULL;
    c->idx_cap = 0;
}

struct sp_collect_kernel *sp_collect_shell_of(struct sp_collect *c, const struct sockaddr_in *from)
{
    if (!c->by_shell) {
        for (unsigned i = 0; i < c->n; i++)
            if (c->k[i].shell.sin_addr.s_addr == from->sin_addr.s_addr &&
                c->k[i].shell.sin_port == from->sin_port)
                return &c->k[i];
        return NULL;
    }
    for (size_t s = hash64(shell_key(from), c->idx_cap); c->by_shell[s];
         s = (s + 1) & (c->idx_cap - 1)) {
        struct sp_collect_kernel *k = &c->k[c->by_shell[s] - 1];
        if (k->shell.sin_addr.s_addr == from->sin_addr.s_addr &&
            k->shell.sin_port == from->sin_port)
            return k;
    }
    return NULL;
}

int sp_collect_next_by_id(const struct sp_collect *c, uint32_t id, size_t *cursor)
{
    if (!c->by_id) {
        while (*cursor < c->n) {
            size_t i = (*cursor)++;
            if (c->k[i].s.id == id)
                return (int)i;
        }
        return -1;
    }
    /* cursor: probes made so far from the id's home slot. */
    for (; *cursor < c->idx_cap; ++*cursor) {
        size_t s = (hash64(id, c->idx_cap) + *cursor) & (c->idx_cap - 1);
        if (!c->by_id[s])
            return -1;
        unsigned i = c->by_id[s] - 1;
        if (c->k[i].s.id == id) {
            ++*cursor;
            return (int)i;
        }
    }
    return -1;
}
