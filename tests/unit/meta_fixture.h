/* tests/unit/meta_fixture.h: a host stream (tools/ingest/stream.h) that
 * took one META, as the ingest tests want one: stream id, build id BID,
 * source "tick 100Hz", 2 CPUs, and the tasks named (pids[i] names[i]). */
#pragma once
#include "test.h"
#include "tools/ingest/stream.h"
#include <stdio.h>

#define BID "0123456789abcdef0123456789abcdef01234567"

static void meta_ignore(void *ctx, uint16_t cpu, const struct pstr_record *r)
{
}

static inline void meta_stream(struct sp_stream *s, uint32_t id, const uint32_t *pids,
                               const char *const *names, unsigned n)
{
    struct pstr_writer w;
    struct pstr_meta m = { .pid = PSTR_PID_ALL, .ms = 0, .period_ns = 10000000, .cpus = 2 };
    snprintf(m.build_id, sizeof m.build_id, "%s", BID);
    snprintf(m.source, sizeof m.source, "tick 100Hz");
    pstr_begin(&w, PSTR_META, 0, id, 0, 1000);
    pstr_meta_head(&w, &m);
    for (unsigned i = 0; i < n; i++)
        CHECK(pstr_add_task(&w, pids[i], names[i]));
    size_t len = pstr_finish(&w);
    struct pstr_hdr h;
    CHECK_EQ(sp_stream_init(s, id), 0);
    CHECK_EQ(pstr_parse(w.buf, len, &h), 0);
    CHECK_EQ(sp_stream_take(s, &h, 0, meta_ignore, NULL), SP_STREAM_TAKEN);
}
