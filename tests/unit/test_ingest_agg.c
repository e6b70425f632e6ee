// LINK: tools/ingest/agg.c tools/ingest/stream.c tools/model/model.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_raw.c
/* tests/unit/test_ingest_agg.c: a stream's records put in the model
 * straight as its types (sp_agg_profile, serve's path: no raw text between)
 * are the profile the text path gives (sp_agg_raw_drops, then
 * sp_profile_add_raw, record's path): one header, and chain for chain the
 * same counts, weights, objects, task, CPU, frames, reason, waker and the
 * waker's name and chain, for each kind. */
#include "test.h"
#include "meta_fixture.h"
#include <stdlib.h>
#include <string.h>
#include "tools/ingest/agg.h"
#include "tools/model/model.h"
#include "uapi/profile_raw.h"

#define ID  0x1a2b3c4du

/* A stream that took one META: build id BID, tick 100Hz, pid 7 "burn". */
static void stream_with_meta(struct sp_stream *s)
{
    static const uint32_t pids[] = { 7 };
    static const char *const names[] = { "burn" };
    meta_stream(s, ID, pids, names, 1);
}

/* Records of every kind: CPU chains on two CPUs, heap blocks of two
 * sizes, off-CPU waits with a named waker, an unnamed one and none, a
 * mutex's releases (one chain, 3 waits in all) and a spinlock's of the
 * same name. */
static void add_records(struct sp_agg *a)
{
    struct pstr_record cpu = { .pid = 7, .depth = 2, .kind = PSTR_KIND_CPU, .weight = 1,
                               .frames = { 0x1000, 0x2000 } };
    for (unsigned i = 0; i < 5; i++)
        sp_agg_add(a, (uint16_t)(i % 2), &cpu);
    cpu.pid = 12;                               /* no META names it: "pid-12" */
    cpu.frames[0] = 0x1004;
    sp_agg_add_n(a, 1, &cpu, 40, 40);
    struct pstr_record heap = { .pid = 7, .depth = 1, .kind = PSTR_KIND_HEAP,
                                .weight = 524320, .size = 64, .frames = { 0x3000 } };
    sp_agg_add(a, 0, &heap);
    sp_agg_add(a, 0, &heap);
    heap.weight = heap.size = 1 << 20;
    heap.frames[0] = 0x3010;
    sp_agg_add(a, 0, &heap);
    struct pstr_record q = { .pid = 7, .depth = 2, .kind = PSTR_KIND_OFFCPU, .weight = 3000,
                             .frames = { 0x1000, 0x2000 }, .why = PSTR_WHY_WAITQ,
                             .waker = 7, .wdepth = 1, .wframes = { 0x5000 } };
    snprintf(q.name, sizeof q.name, "burn-q");
    sp_agg_add(a, 1, &q);
    sp_agg_add(a, 1, &q);
    q.waker = 9;
    sp_agg_add(a, 1, &q);
    struct pstr_record run = { .pid = 7, .depth = 1, .kind = PSTR_KIND_OFFCPU, .weight = 40,
                               .frames = { 0x1000 }, .why = PSTR_WHY_RUNNABLE,
                               .waker = PSTR_WAKER_NONE };
    sp_agg_add(a, 0, &run);
    struct pstr_record lk = { .pid = 7, .depth = 2, .kind = PSTR_KIND_LOCK, .weight = 5000,
                              .frames = { 0x6000, 0x6100 }, .waits = 1, .lkind = PSTR_LOCK_MUTEX };
    snprintf(lk.name, sizeof lk.name, "probe-m");
    sp_agg_add(a, 1, &lk);
    lk.waits = 2;
    lk.weight = 7000;
    sp_agg_add(a, 1, &lk);
    lk.lkind = PSTR_LOCK_SPIN;
    sp_agg_add(a, 1, &lk);
}

static bool same_locs(struct sp_loc *const *x, struct sp_loc *const *y, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (x[i]->pl_addr != y[i]->pl_addr || x[i]->pl_ret != y[i]->pl_ret ||
            x[i]->pl_map != y[i]->pl_map)
            return false;
    return true;
}

/* Chain i of a and of b, field by field: the number of fields that differ. */
static unsigned chain_diffs(const struct sp_chain *x, const struct sp_chain *y)
{
    unsigned d = 0;
    d += x->c_count != y->c_count;
    d += x->c_weight != y->c_weight;
    d += x->c_objects != y->c_objects;
    d += x->c_pid != y->c_pid || x->c_cpu != y->c_cpu;
    d += strcmp(x->c_task, y->c_task) != 0;
    d += x->c_depth != y->c_depth || !same_locs(x->c_locs, y->c_locs, x->c_depth);
    d += x->c_why != y->c_why || strcmp(x->c_name, y->c_name) != 0;
    d += (x->c_reason == NULL) != (y->c_reason == NULL) ||
         (x->c_reason && strcmp(x->c_reason->pl_frames[0].pf_func,
                                y->c_reason->pl_frames[0].pf_func) != 0);
    d += x->c_waker != y->c_waker || strcmp(x->c_wtask, y->c_wtask) != 0;
    d += x->c_wdepth != y->c_wdepth || !same_locs(x->c_wlocs, y->c_wlocs, x->c_wdepth);
    return d;
}

TEST(agg_profile_is_the_parsed_raw_text_for_every_kind)
{
    struct sp_stream s;
    struct sp_agg a;
    stream_with_meta(&s);
    sp_agg_init(&a);
    add_records(&a);
    static const unsigned kinds[] = { PRAW_KIND_CPU, PRAW_KIND_HEAP, PRAW_KIND_OFFCPU,
                                      PRAW_KIND_LOCK };
    static const size_t chains[] = { 3, 2, 3, 2 };   /* CPU: pid 7 on two CPUs, pid 12 */
    for (unsigned k = 0; k < 4; k++) {
        struct sp_profile text, typed;
        sp_profile_init(&text);
        sp_profile_init(&typed);
        unsigned tm = sp_profile_add_map(&text, "kernel.elf");
        unsigned ym = sp_profile_add_map(&typed, "kernel.elf");
        size_t len;
        char err[SP_ERR_MAX] = "";
        char *raw = sp_agg_raw_drops(&a, &s, kinds[k], 1500, 3, &len);
        CHECK(raw != NULL);
        CHECK_EQ(sp_profile_add_raw(&text, raw, len, "k", "k", tm, err, sizeof err), 0);
        CHECK_EQ(sp_agg_profile(&a, &s, kinds[k], 1500, 3, &typed, "k", ym), 0);
        CHECK_EQ(typed.ninputs, 1);
        const struct praw_header *x = &text.inputs[0].pi_hdr, *y = &typed.inputs[0].pi_hdr;
        CHECK_STR(y->ph_build_id, x->ph_build_id);
        CHECK_STR(y->ph_source, x->ph_source);
        CHECK_EQ(y->ph_samples, x->ph_samples);
        CHECK_EQ(y->ph_dropped, 3);
        CHECK_EQ(y->ph_cpus, x->ph_cpus);
        CHECK_EQ(y->ph_ms, 1500);
        CHECK_EQ(y->ph_kind, kinds[k]);
        CHECK_EQ(typed.inputs[0].pi_period_ns, text.inputs[0].pi_period_ns);
        CHECK_STR(typed.inputs[0].pi_kernel, "k");
        CHECK_EQ(text.nchains, chains[k]);
        CHECK_EQ(typed.nchains, text.nchains);
        unsigned diffs = 0;
        for (size_t i = 0; i < text.nchains && i < typed.nchains; i++)
            diffs += chain_diffs(&text.chains[i], &typed.chains[i]);
        CHECK_EQ(diffs, 0);
        free(raw);
        sp_profile_free(&text);
        sp_profile_free(&typed);
    }
    sp_agg_free(&a);
    sp_stream_free(&s);
}

/* The fields the test compares are the ones that were set: the off-CPU
 * chain with the named waker carries its name and chain, the heap chain
 * its objects, the unnamed pid its made-up name. */
TEST(agg_profile_keeps_what_the_records_said)
{
    struct sp_stream s;
    struct sp_agg a;
    stream_with_meta(&s);
    sp_agg_init(&a);
    add_records(&a);
    struct sp_profile p;
    sp_profile_init(&p);
    unsigned m = sp_profile_add_map(&p, "kernel.elf");
    CHECK_EQ(sp_agg_profile(&a, &s, PRAW_KIND_OFFCPU, 1000, 0, &p, "k", m), 0);
    CHECK_EQ(sp_agg_profile(&a, &s, PRAW_KIND_HEAP, 1000, 0, &p, "k", m), 0);
    CHECK_EQ(sp_agg_profile(&a, &s, PRAW_KIND_CPU, 1000, 0, &p, "k", m), 0);
    CHECK_EQ(sp_agg_profile(&a, &s, PRAW_KIND_LOCK, 1000, 0, &p, "k", m), 0);
    CHECK_EQ(p.ninputs, 4);
    unsigned seen = 0;
    for (size_t i = 0; i < p.nchains; i++) {
        const struct sp_chain *c = &p.chains[i];
        if (c->c_why == PRAW_WHY_WAITQ && c->c_waker == 7) {
            CHECK_EQ(c->c_count, 2);
            CHECK_EQ(c->c_weight, 6000);
            CHECK_STR(c->c_wtask, "burn");
            CHECK_EQ(c->c_wdepth, 1);
            CHECK_EQ(c->c_wlocs[0]->pl_addr, 0x5000);
            CHECK_STR(c->c_reason->pl_frames[0].pf_func, "[waitq burn-q]");
            seen |= 1;
        } else if (c->c_input == 1 && c->c_locs[0]->pl_addr == 0x3000) {
            CHECK_EQ(c->c_weight, 2 * 524320);
            CHECK_EQ(c->c_objects, 16385);          /* 16385 of 64 bytes, rounded */
            seen |= 2;
        } else if (c->c_input == 2 && c->c_pid == 12) {
            CHECK_STR(c->c_task, "pid-12");
            CHECK_EQ(c->c_count, 40);
            seen |= 4;
        } else if (c->c_input == 3 && c->c_why == PRAW_WHY_MUTEX) {
            CHECK(c->c_lock);
            CHECK_STR(c->c_name, "probe-m");
            CHECK_EQ(c->c_count, 2);                /* releases */
            CHECK_EQ(c->c_weight, 12000);           /* ns waited under them */
            CHECK_EQ(c->c_objects, 3);              /* the waits they ended */
            CHECK_STR(c->c_reason->pl_frames[0].pf_func, "[mutex probe-m]");
            seen |= 8;
        } else if (c->c_input == 3 && c->c_why == PRAW_WHY_SPIN) {
            CHECK_EQ(c->c_count, 1);
            CHECK_EQ(c->c_objects, 2);
            CHECK_STR(c->c_reason->pl_frames[0].pf_func, "[spin probe-m]");
            seen |= 16;
        }
    }
    CHECK_EQ(seen, 31);
    sp_profile_free(&p);
    sp_agg_free(&a);
    sp_stream_free(&s);
}

/* A stream that never sent its META adds nothing: no build id to name. */
TEST(agg_profile_without_meta_adds_nothing)
{
    struct sp_stream s;
    struct sp_agg a;
    CHECK_EQ(sp_stream_init(&s, ID), 0);
    sp_agg_init(&a);
    add_records(&a);
    struct sp_profile p;
    sp_profile_init(&p);
    CHECK_EQ(sp_agg_profile(&a, &s, PRAW_KIND_CPU, 1000, 0, &p, "k", 0), -1);
    CHECK_EQ(p.ninputs, 0);
    CHECK_EQ(p.nchains, 0);
    sp_profile_free(&p);
    sp_agg_free(&a);
    sp_stream_free(&s);
}
