/* tools/ingest/fleet.c: a fleet's record in rounds and its accounting
 * (tools/ingest/fleet.h).
 * Host pipeline: prefix sp_. */
#include "tools/ingest/fleet.h"
#include "tools/model/model.h"
#include <inttypes.h>
#include <stdlib.h>
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

/* ---- recording: one window on every kernel, or rounds ------------------ */

/* The progress line, on a terminal only: elapsed, samples, lost. */
static void progress(const struct sp_collect *c, const struct sp_fleet_run *r, unsigned ms,
                     bool last)
{
    uint64_t recs = 0, wire = 0, dgrams = 0, drops = 0;
    for (unsigned i = 0; i < c->n; i++) {
        recs += c->k[i].s.records;
        wire += c->k[i].s.lost_records;
        dgrams += c->k[i].s.lost_dgrams;
        drops += sp_stream_drops(&c->k[i].s);
    }
    double t = (double)sp_collect_elapsed_ms(c) / 1000;
    if (t > ms / 1000.0)
        t = ms / 1000.0;
    fprintf(stderr, "\r%s: %.0f/%.0f s, %llu samples, lost %llu (wire %llu records, "
            "%llu datagrams; kernel %llu)\033[K%s", r->prog, t, ms / 1000.0,
            (unsigned long long)recs, (unsigned long long)(wire + drops),
            (unsigned long long)wire, (unsigned long long)dgrams,
            (unsigned long long)drops, last ? "\n" : "");
}

/* The window as each kernel's stream covers it: all of it, unless the
 * kernel was given up on or restarted before its end. */
static unsigned stream_ms(const struct sp_collect_kernel *k, unsigned ms)
{
    if (k->state == SP_COLLECT_SILENT || k->state == SP_COLLECT_RESTARTED) {
        uint64_t got = k->last_dgram_ms - k->start_ms;
        return got < ms ? (unsigned)got : ms;
    }
    return ms;
}

/* Each kernel ends its stream itself after ms by its own clock (END
 * "elapsed"), which need not run at the host's pace (under QEMU's
 * -icount it does not): the wait is for the ENDs, as long as the kernels
 * keep streaming (a silent one is given up on by the collector). It is
 * over when some kernel's clock has passed the window by end_wait_ms
 * with no END from it, or, whatever the clocks say, after 4 windows and
 * 10 s of the host's time. */
static bool overdue(const struct sp_collect *c, const struct sp_fleet_run *r, unsigned ms)
{
    if (sp_collect_elapsed_ms(c) >= 4ull * ms + 10000)
        return true;
    for (unsigned i = 0; i < c->n; i++)
        if (c->k[i].state == SP_COLLECT_STREAMING &&
            sp_stream_kernel_ms(&c->k[i].s) >= (uint64_t)ms + r->end_wait_ms)
            return true;
    return false;
}

/* One window of ms on the kernels i with which[i]: started, received,
 * stopped, and each one's stream added to its total. */
static int one_round(struct sp_collect *c, const struct sp_fleet_run *r, unsigned ms,
                     const bool *which, struct sp_fleet_total *t)
{
    int rc = sp_collect_start_some(c, ms, r->who, which);
    if (rc == USHC_EXIT_OK && r->tty && !r->sample)
        for (unsigned i = 0; i < c->n; i++)
            fprintf(stderr, "%s: %s: stream 0x%08x\n", r->prog, c->k[i].name, c->k[i].s.id);
    if (rc != USHC_EXIT_OK)
        return rc;
    uint64_t shown = 0;
    while (sp_collect_active(c) && !overdue(c, r, ms)) {
        if (sp_collect_poll(c, 200) < 0) {
            rc = USHC_EXIT_PROTO;
            break;
        }
        if (r->tty && sp_collect_elapsed_ms(c) >= shown + 1000) {
            shown = sp_collect_elapsed_ms(c) / 1000 * 1000;
            progress(c, r, ms, false);
        }
    }
    sp_collect_stop(c, r->end_wait_ms);
    if (r->tty)
        progress(c, r, ms, true);
    for (unsigned i = 0; i < c->n; i++)
        if (which[i])
            sp_fleet_add(&t[i], &c->k[i], stream_ms(&c->k[i], ms));
    return rc;
}

/* Given up on (silent, restarted): not asked again in a later round. */
static bool usable(const struct sp_collect_kernel *k)
{
    return k->state == SP_COLLECT_IDLE || k->state == SP_COLLECT_ENDED;
}

/* --sample K --period P: rounds of P on K kernels each, over the window. */
static int rounds(struct sp_collect *c, const struct sp_fleet_run *r, struct sp_fleet_total *t)
{
    unsigned nr = r->ms / r->period_ms;
    bool *which = sp_xcalloc(c->n, sizeof *which);
    int rc = USHC_EXIT_OK;
    for (unsigned i = 0; i < nr && rc == USHC_EXIT_OK; i++) {
        sp_fleet_pick(i, r->sample, c->n, which);
        for (unsigned j = 0; j < c->n; j++) {
            which[j] = which[j] && usable(&c->k[j]);
            if (which[j])
                sp_collect_rearm(c, j);
        }
        rc = one_round(c, r, r->period_ms, which, t);
    }
    free(which);
    uint64_t all = 0, lo = UINT64_MAX, hi = 0;
    for (unsigned i = 0; i < c->n; i++) {
        all += t[i].covered_ms;
        lo = t[i].covered_ms < lo ? t[i].covered_ms : lo;
        hi = t[i].covered_ms > hi ? t[i].covered_ms : hi;
    }
    if (rc == USHC_EXIT_OK)
        fprintf(stderr, "%s: sampled %u of %u kernels at a time, %u rounds of %.1f s: "
                "%.1f kernel-s covered, %.1f to %.1f s each\n", r->prog,
                r->sample < c->n ? r->sample : c->n, c->n, nr, r->period_ms / 1000.0,
                all / 1000.0, lo / 1000.0, hi / 1000.0);
    return rc;
}

int sp_fleet_record(struct sp_collect *c, const struct sp_fleet_run *r, struct sp_fleet_total *t)
{
    if (r->sample)
        return rounds(c, r, t);
    bool *all = sp_xcalloc(c->n, sizeof *all);
    memset(all, 1, c->n * sizeof *all);
    int rc = one_round(c, r, r->ms, all, t);
    free(all);
    return rc;
}
