// LINK: tools/serve/writer.c tools/serve/persist.c tools/serve/hist.c tools/store/store.c tools/store/retain.c tools/store/store_sqlite.c tools/store/store_pg.c tools/ingest/stream.c tools/model/model.c uapi/profile_raw.c uapi/profile_stream.c uapi/profile_stream_meta.c
// LIBS: -I/usr/include/postgresql -lsqlite3 -lpq -lpthread
/* tests/unit/test_serve_writer.c: serve's store written on its own thread
 * (tools/serve/writer.c) on a real SQLite file: kernels and buckets
 * queued while the state's own connection reads, everything queued
 * written by sv_writer_stop, in order (a kernel's identity before its
 * buckets), and buckets past the queue's bound counted as failed, never
 * waited for. */
#include "test.h"
#include <stdlib.h>
#include <unistd.h>
#include "tools/serve/persist.h"
#include "tools/serve/writer.h"

#define B SV_HIST_BUCKET_MS
#define T0 1796187120000ull         /* Unix ms, a bucket's start */
#define BUILD "1dc82198561db37dd138851f2ddc5824f497af77"

static struct pstr_record rec(uint64_t pc)
{
    struct pstr_record r;
    memset(&r, 0, sizeof r);
    r.pid = 7;
    r.depth = 1;
    r.kind = PSTR_KIND_CPU;
    r.weight = 1;
    r.frames[0] = pc;
    return r;
}

TEST(writer_writes_every_bucket_queued_by_its_stop)
{
    char path[64], err[ST_ERR_MAX];
    snprintf(path, sizeof path, "/tmp/sonde-writer-test.%d.db", (int)getpid());
    unlink(path);
    struct sv_kernel k = { .map = 0 };
    snprintf(k.name, sizeof k.name, "10.0.0.1:5555");
    struct sv_state st = { .k = &k, .n = 1 };
    st.h = sv_hist_new(64);
    st.store = st_open(path, err, sizeof err);
    struct sv_writer *w = sv_writer_start(path, ST_RETAIN_DEFAULT, err, sizeof err);
    CHECK(st.store && w);
    if (!st.store || !w)
        return;
    struct st_kernel sk = { "10.0.0.1:5555", BUILD, "tick 100Hz", 0 };
    sv_writer_kernel(w, &sk);
    struct pstr_record r = rec(0x1000);
    for (unsigned b = 0; b < 3; b++) {
        for (unsigned i = 0; i <= b; i++)
            CHECK(sv_hist_add(st.h, 0, 0, &r, T0 + b * B + i));
        sv_writer_bucket(w, &st, T0 / B + b, T0 + b * B + 100);
    }
    sv_writer_stop(w);
    struct st_filter f = { NULL, -1, -1, PSTR_KIND_CPU, NULL, NULL };
    struct st_sel s;
    CHECK_EQ(st_select(st.store, T0, T0 + 3 * B, &f, &s, err, sizeof err), 0);
    CHECK_EQ(s.samples, 1 + 2 + 3);
    CHECK_EQ(s.from_ms, T0);
    CHECK_EQ(s.to_ms, T0 + 3 * B);
    st_sel_free(&s);
    size_t n;
    struct st_kernel *ks = st_kernels(st.store, &n, err, sizeof err);
    CHECK_EQ(n, 1);
    if (ks && n == 1) {
        CHECK_STR(ks[0].build_id, BUILD);
        CHECK_EQ(ks[0].last_ms, T0 + 3 * B);     /* moved by its buckets, written after */
    }
    free(ks);
    st_close(st.store);
    sv_hist_free(st.h);
    unlink(path);
}

TEST(writer_counts_a_bucket_past_its_bound_as_failed)
{
    char path[64], err[ST_ERR_MAX];
    snprintf(path, sizeof path, "/tmp/sonde-writer-bound.%d.db", (int)getpid());
    unlink(path);
    struct sv_kernel k = { .map = 0 };
    snprintf(k.name, sizeof k.name, "10.0.0.1:5555");
    struct sv_state st = { .k = &k, .n = 1 };
    st.h = sv_hist_new(64);
    struct sv_writer *w = sv_writer_start(path, ST_RETAIN_DEFAULT, err, sizeof err);
    CHECK(w != NULL);
    if (!w)
        return;
    struct pstr_record r = rec(0x1000);
    CHECK(sv_hist_add(st.h, 0, 0, &r, T0));
    /* Far more than the bound, faster than any disk: some are refused,
     * each counted, and the queue never waits. */
    const unsigned many = 50 * SV_WRITER_QUEUE_MAX;
    for (unsigned i = 0; i < many; i++)
        sv_writer_bucket(w, &st, T0 / B, T0 + 100);
    uint64_t failed = sv_writer_failed(w, err, sizeof err);
    CHECK(failed > 0);
    CHECK(failed <= many - SV_WRITER_QUEUE_MAX);
    CHECK(strstr(err, "behind") != NULL);
    sv_writer_stop(w);
    struct st_store *rd = st_open(path, err, sizeof err);
    CHECK(rd != NULL);
    if (rd) {
        struct st_filter f = { NULL, -1, -1, PSTR_KIND_CPU, NULL, NULL };
        struct st_sel s;
        CHECK_EQ(st_select(rd, T0, T0 + B, &f, &s, err, sizeof err), 0);
        CHECK_EQ(s.samples, many - failed);     /* each written bucket added once */
        st_sel_free(&s);
        st_close(rd);
    }
    sv_hist_free(st.h);
    unlink(path);
}
