/* tools/pipeline/fleet.c: a fleet's record in rounds and its accounting
 * (tools/pipeline/fleet.h).
 * Host pipeline: prefix sp_. */
#include "tools/pipeline/fleet.h"
#include <inttypes.h>
#include <string.h>

void sp_fleet_pick(unsigned round, unsigned k, unsigned n, bool *which)
{
    memset(which, 0, n * sizeof *which);
    if (k > n)
        k = n;
    uint64_t first = (uint64_t)round * k % n;
    for (unsigned j = 0; j < k; j++)
        which[(first + j) % n] = true;
}

void sp_fleet_add(struct sp_fleet_total *t, const struct sp_collect_kernel *k,
                  uint64_t covered_ms)
{
    const struct sp_stream *s = &k->s;
    t->streams++;
    t->covered_ms += covered_ms;
    t->records += s->records;
    t->lost_records += s->lost_records;
    t->lost_dgrams += s->lost_dgrams;
    t->dups += s->dups - s->end_dups;
    t->drops += sp_stream_drops(s);
    t->refused += s->far + s->malformed + s->bad_records;
    t->end_missing |= s->end_missing;
}

static int line(FILE *f, const char *name, const struct sp_fleet_total *t)
{
    return fprintf(f, "%s streams %u covered_ms %" PRIu64 " records %" PRIu64
                   " lost_records %" PRIu64 " lost_dgrams %" PRIu64 " dups %" PRIu64
                   " drops %" PRIu64 " refused %" PRIu64 "%s\n", name, t->streams,
                   t->covered_ms, t->records, t->lost_records, t->lost_dgrams, t->dups,
                   t->drops, t->refused, t->end_missing ? " end_missing" : "") < 0 ? -1 : 0;
}

int sp_fleet_write_stats(FILE *f, const struct sp_collect *c, const struct sp_fleet_total *t)
{
    struct sp_fleet_total all;
    memset(&all, 0, sizeof all);
    int rc = 0;
    for (unsigned i = 0; i < c->n; i++) {
        const struct sp_fleet_total *x = &t[i];
        rc |= line(f, c->k[i].name, x);
        all.streams += x->streams;
        all.covered_ms += x->covered_ms;
        all.records += x->records;
        all.lost_records += x->lost_records;
        all.lost_dgrams += x->lost_dgrams;
        all.dups += x->dups;
        all.drops += x->drops;
        all.refused += x->refused;
        all.end_missing |= x->end_missing;
    }
    rc |= line(f, "total", &all);
    return rc;
}

void sp_fleet_coverage(char *buf, size_t cap, const struct sp_fleet_total *t, unsigned period_ms)
{
    snprintf(buf, cap, "covered %.1f kernel-s in %u stream%s of %.1f s", t->covered_ms / 1000.0,
             t->streams, t->streams == 1 ? "" : "s", period_ms / 1000.0);
}
