// LINK: tools/ingest/trace_stream.c tools/ingest/stream.c tools/model/trace.c tools/model/model.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_raw.c uapi/trace_raw.c
/* tests/unit/test_ingest_trace_stream.c: a trace stream's records made a
 * trace (tools/ingest/trace_stream.c): every event's fields as the raw
 * trace's, the CPUs' records merged by time with ties in arrival order,
 * task names from the META ("<idle>" for pid 0, "-" for one it did not
 * list), the header's build id, CPUs and drops, each sample a chain. */
#include "test.h"
#include "meta_fixture.h"
#include <stdlib.h>
#include <string.h>
#include "tools/ingest/trace_stream.h"

#define ID  0x5eedu

/* A stream that took one META: pid 7 "ping", 8 "pong". */
static void stream_with_meta(struct sp_stream *s)
{
    static const uint32_t pids[] = { 7, 8 };
    static const char *const names[] = { "ping", "pong" };
    meta_stream(s, ID, pids, names, 2);
}

struct fed {
    struct sp_stream *s;
    struct sp_trace_gather *g;
    uint16_t cpu;
};

static void gather(void *ctx, uint16_t cpu, const struct pstr_record *r)
{
    struct fed *f = ctx;
    CHECK_EQ(cpu, f->cpu);
    sp_trace_gather_add(f->g, f->s, cpu, r);
}

/* One BATCH of cpu holding recs, with drops_total drops, through the
 * stream as the collector hands it over. */
static void feed(struct sp_stream *s, struct sp_trace_gather *g, uint16_t cpu, uint32_t seq,
                 uint32_t first, const struct pstr_record *recs, unsigned n, uint32_t drops)
{
    struct pstr_writer w;
    pstr_begin(&w, PSTR_BATCH, cpu, ID, seq, 2000);
    struct pstr_batch b = { first, drops, drops };
    pstr_batch_head(&w, &b);
    for (unsigned i = 0; i < n; i++)
        CHECK(pstr_add_record(&w, &recs[i]));
    size_t len = pstr_finish(&w);
    struct pstr_hdr h;
    CHECK_EQ(pstr_parse(w.buf, len, &h), 0);
    struct fed f = { s, g, cpu };
    CHECK_EQ(sp_stream_take(s, &h, 1, gather, &f), SP_STREAM_TAKEN);
}

static struct pstr_record ev(uint8_t tev, uint32_t pid, uint64_t ns)
{
    struct pstr_record r = { .pid = pid, .kind = PSTR_KIND_TRACE, .weight = ns, .tev = tev };
    return r;
}

TEST(trace_gather_merges_cpus_by_time_and_names_tasks)
{
    struct sp_stream s;
    stream_with_meta(&s);
    struct sp_trace_gather g;
    sp_trace_gather_init(&g);
    /* CPU 1's batch first, then CPU 0's: their times interleave. */
    struct pstr_record one[2], zero[2];
    one[0] = ev(PSTR_TEV_SWITCH, 7, 500);
    one[0].targ = TRAW_LEFT_WAITQ;
    strcpy(one[0].name, "burn-pp");
    one[1] = ev(PSTR_TEV_SAMPLE, 99, 900);      /* a pid the META did not list */
    one[1].depth = 2;
    one[1].frames[0] = 0x1000;
    one[1].frames[1] = 0x2000;
    zero[0] = ev(PSTR_TEV_IRQ, 0, 300);
    zero[0].targ = TRAW_IRQ_DEVICE;
    zero[0].tvec = 43;
    zero[0].tdur = 250;
    strcpy(zero[0].name, "virtio-net");
    zero[1] = ev(PSTR_TEV_WAKE, 0, 500);        /* a tie with the switch */
    zero[1].tother = 8;
    zero[1].twcpu = 1;
    zero[1].targ = TRAW_IRQ_DEVICE;
    zero[1].tvec = 43;
    strcpy(zero[1].name, "virtio-net");
    feed(&s, &g, 1, 1, 0, one, 2, 3);
    feed(&s, &g, 0, 2, 0, zero, 2, 0);
    struct pstr_record cpu = { .pid = 7, .depth = 1, .kind = PSTR_KIND_CPU };
    sp_trace_gather_add(&g, &s, 0, &cpu);       /* not a trace's */
    CHECK_EQ(g.skipped, 1);
    struct sp_trace t;
    sp_trace_init(&t);
    char err[200] = "";
    CHECK_EQ(sp_trace_gather_build(&g, &s, 3000, "k", "k", "kernel.elf", &t, err, sizeof err), 0);
    CHECK_STR(t.st_hdr.th_build_id, BID);
    CHECK_EQ(t.st_hdr.th_cpus, 2);
    CHECK_EQ(t.st_hdr.th_ms, 3000);
    CHECK_EQ(t.st_hdr.th_events, 4);
    CHECK_EQ(t.st_hdr.th_dropped[0], 0);
    CHECK_EQ(t.st_hdr.th_dropped[1], 3);
    CHECK_EQ(t.st_nev, 4);
    const struct traw_event *e = t.st_ev;
    CHECK_EQ(e[0].te_type, TRAW_IRQ);
    CHECK_EQ(e[0].te_ns, 300);
    CHECK_EQ(e[0].te_end, 550);
    CHECK_EQ(e[0].te_vec, 43);
    CHECK_STR(e[0].te_irq, "virtio-net");
    CHECK_STR(e[0].te_task, TRAW_IDLE_TASK);
    CHECK_EQ(e[1].te_type, TRAW_SWITCH);      /* came first at 500 */
    CHECK_EQ(e[1].te_cpu, 1);
    CHECK_STR(e[1].te_task, "ping");
    CHECK_EQ(e[1].te_pid2, 0);
    CHECK_STR(e[1].te_task2, TRAW_IDLE_TASK);
    CHECK_EQ(e[1].te_left, TRAW_LEFT_WAITQ);
    CHECK_STR(e[1].te_name, "burn-pp");
    CHECK_EQ(e[2].te_type, TRAW_WAKE);
    CHECK_EQ(e[2].te_pid2, 8);
    CHECK_STR(e[2].te_task2, "pong");
    CHECK_EQ(e[2].te_wcpu, 1);
    CHECK(e[2].te_in_irq);
    CHECK_EQ(e[2].te_class, TRAW_IRQ_DEVICE);
    CHECK_EQ(e[3].te_type, TRAW_SAMPLE);
    CHECK_STR(e[3].te_task, "-");
    CHECK_EQ(e[3].te_depth, 2);
    const struct sp_chain *c = sp_trace_sample(&t, 3);
    CHECK(c != NULL);
    CHECK_EQ(c->c_depth, 2);
    CHECK_EQ(c->c_locs[0]->pl_addr, 0x1000);
    CHECK(sp_trace_sample(&t, 0) == NULL);
    sp_trace_free(&t);
    sp_trace_gather_free(&g);
    sp_stream_free(&s);
}

TEST(trace_gather_without_meta_is_refused_by_name)
{
    struct sp_stream s;
    CHECK_EQ(sp_stream_init(&s, ID), 0);
    struct sp_trace_gather g;
    sp_trace_gather_init(&g);
    struct sp_trace t;
    sp_trace_init(&t);
    char err[200] = "";
    CHECK_EQ(sp_trace_gather_build(&g, &s, 10, "10.0.0.1:9000", "k", "kernel.elf", &t, err,
                                   sizeof err), -1);
    CHECK(strstr(err, "10.0.0.1:9000: no META came") != NULL);
    sp_trace_free(&t);
    sp_stream_free(&s);
}
