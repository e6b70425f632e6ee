// LINK: tools/serve/trace.c tools/ingest/trace_stream.c tools/ingest/stream.c tools/model/trace.c tools/model/model.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_raw.c uapi/trace_raw.c
/* tests/unit/test_serve_trace.c: serve --kind trace's last minute of
 * each kernel's trace (tools/serve/trace.c): a range in Unix ms is the
 * events of that range, re-timed from its start and in time order across
 * CPUs; the minute moves on; a kernel whose stream starts again starts
 * again; past a kernel's bound the oldest go, counted; kernels apart. */
#include "test.h"
#include <string.h>
#include "tools/serve/trace.h"

#define T0 1700000000000ull         /* Unix ms the stream starts at */

static struct pstr_record ev(uint8_t tev, uint32_t pid, uint64_t ns)
{
    struct pstr_record r = { .pid = pid, .kind = PSTR_KIND_TRACE, .weight = ns, .tev = tev };
    return r;
}

static void meta(struct sp_stream *s)
{
    memset(s, 0, sizeof *s);
    s->have_meta = true;
    snprintf(s->meta.build_id, sizeof s->meta.build_id, "%040d", 0);
    s->ncpus = 2;
}

/* A switch every ms on the CPUs in turn, each arriving as it is made. */
static void feed(struct sv_trace *t, unsigned kernel, uint64_t from_ms, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        struct pstr_record r = ev(PSTR_TEV_SWITCH, 7, (from_ms + i) * 1000000ull);
        r.tother = 8;
        r.targ = 4;
        sv_trace_add(t, kernel, (uint16_t)(i % 2), &r, T0 + from_ms + i);
    }
}

TEST(serve_trace_range_is_its_events_in_order)
{
    struct sv_trace *t = sv_trace_new(1024, 64);
    feed(t, 0, 0, 100);
    struct pstr_record s = ev(PSTR_TEV_SAMPLE, 7, 50500000);    /* 50.5 ms */
    s.depth = 1;
    s.frames[0] = 0x1234;
    sv_trace_add(t, 0, 1, &s, T0 + 52);
    struct sv_trace_span sp;
    sv_trace_span(t, 0, &sp);
    CHECK_EQ(sp.events, 100);
    CHECK_EQ(sp.samples, 1);
    CHECK_EQ(sp.from_ms, T0);
    CHECK_EQ(sp.to_ms, T0 + 99);
    struct sp_stream m;
    meta(&m);
    struct sp_trace tr;
    sp_trace_init(&tr);
    unsigned map = sp_profile_add_map(&tr.st_prof, "kernel.elf");
    CHECK_EQ(sv_trace_select(t, 0, T0 + 40, T0 + 59, &m, map, "k0", &tr), 0);
    CHECK_EQ(tr.st_nev, 21);                /* 40 .. 59 ms, and the sample */
    CHECK_EQ(sv_trace_count(t, 0, T0 + 40, T0 + 59), 21);    /* counted as taken */
    CHECK_EQ(sv_trace_count(t, 0, T0 + 200, T0 + 300), 0);
    CHECK_EQ(sv_trace_count(t, 1, T0, T0 + 100), 0);
    CHECK_EQ(tr.st_hdr.th_ms, 20);
    CHECK_EQ(tr.st_ev[0].te_ns, 0);         /* from the range's start */
    CHECK_EQ(tr.st_ev[0].te_type, TRAW_SWITCH);
    CHECK_EQ(tr.st_ev[0].te_left, 4);
    for (size_t i = 1; i < tr.st_nev; i++)
        CHECK(tr.st_ev[i].te_ns >= tr.st_ev[i - 1].te_ns);
    CHECK_EQ(tr.st_ev[11].te_type, TRAW_SAMPLE);
    CHECK_EQ(tr.st_ev[11].te_ns, 10500000);
    CHECK(sp_trace_sample(&tr, 11) != NULL);
    CHECK_STR(tr.st_kernel, "k0");
    sp_trace_free(&tr);
    /* Another kernel holds nothing; a stream with no META is refused. */
    sp_trace_init(&tr);
    CHECK_EQ(sv_trace_select(t, 1, T0, T0 + 100, &m, 0, "k1", &tr), 0);
    CHECK_EQ(tr.st_nev, 0);
    sp_trace_free(&tr);
    m.have_meta = false;
    sp_trace_init(&tr);
    CHECK_EQ(sv_trace_select(t, 0, T0, T0 + 100, &m, 0, "k0", &tr), -1);
    sp_trace_free(&tr);
    sv_trace_free(t);
}

TEST(serve_trace_keeps_the_last_minute_and_its_bound)
{
    struct sv_trace *t = sv_trace_new(1024, 64);
    feed(t, 0, 0, 100);
    sv_trace_advance(t, T0 + SV_TRACE_KEEP_MS + 50);
    struct sv_trace_span sp;
    sv_trace_span(t, 0, &sp);
    CHECK_EQ(sp.events, 50);                /* 50 .. 99 ms are within the minute */
    CHECK_EQ(sp.from_ms, T0 + 50);
    CHECK_EQ(sp.evicted, 0);
    /* Past the bound: the oldest go, counted. */
    feed(t, 0, 100, 2000);
    sv_trace_span(t, 0, &sp);
    CHECK_EQ(sp.events, 1024);
    CHECK_EQ(sp.evicted, 50 + 2000 - 1024);
    CHECK_EQ(sp.to_ms, T0 + 2099);
    sv_trace_free(t);
}

TEST(serve_trace_a_new_stream_starts_again)
{
    struct sv_trace *t = sv_trace_new(1024, 64);
    feed(t, 0, 0, 10);
    /* Its clock at 0 again, 20 s later: another stream. */
    struct pstr_record r = ev(PSTR_TEV_SWITCH, 7, 1000);
    sv_trace_add(t, 0, 0, &r, T0 + 20000);
    struct sv_trace_span sp;
    sv_trace_span(t, 0, &sp);
    CHECK_EQ(sp.events, 1);
    CHECK_EQ(sp.from_ms, T0 + 20000);
    /* Not a trace's record: ignored. */
    struct pstr_record cpu = { .pid = 7, .depth = 1, .kind = PSTR_KIND_CPU };
    sv_trace_add(t, 0, 0, &cpu, T0 + 20001);
    sv_trace_span(t, 0, &sp);
    CHECK_EQ(sp.events, 1);
    CHECK_EQ(sp.samples, 0);
    sv_trace_free(t);
}
