// LINK: tools/serve/persist.c tools/serve/hist.c tools/store/store.c tools/store/retain.c tools/store/store_sqlite.c tools/store/store_pg.c tools/ingest/stream.c tools/model/model.c uapi/profile_raw.c uapi/profile_stream.c uapi/profile_stream_meta.c
// LIBS: -I/usr/include/postgresql -lsqlite3 -lpq
/* tests/unit/test_serve_persist.c: serve's history and its store
 * (tools/serve/persist.c) on a real SQLite file: a closed bucket written
 * and read back by kernel name, its reasons, sizes and over counts kept;
 * a restarted serve (a new history on the same store) answering the old
 * bucket from the store and its open one from memory; another serve's
 * kernel named by its build id, filtered by its index after this
 * serve's; and a selection without a store from the history alone. */
#include "test.h"
#include <stdlib.h>
#include <unistd.h>
#include "tools/serve/persist.h"

#define B SV_HIST_BUCKET_MS
#define T0 1796187120000ull         /* Unix ms, a bucket's start */
#define BUILD "1dc82198561db37dd138851f2ddc5824f497af77"

struct fixture {
    struct sv_state st;
    struct sv_kernel k[1];
    struct sp_stream s;
    struct sp_map map;
    char path[64];
};

static void fix_init(struct fixture *x, const char *name, bool store)
{
    memset(x, 0, sizeof *x);
    snprintf(x->path, sizeof x->path, "/tmp/sonde-persist-test.%d.db", (int)getpid());
    x->st.h = sv_hist_new(64);
    x->st.k = x->k;
    x->st.n = 1;
    snprintf(x->st.k[0].name, sizeof x->st.k[0].name, "%s", name);
    sp_stream_init(&x->s, 1);
    x->s.have_meta = true;
    snprintf(x->s.meta.build_id, sizeof x->s.meta.build_id, BUILD);
    x->st.k[0].stream = &x->s;
    x->map.pm_path = "kernel.elf";
    snprintf(x->map.pm_build_id, sizeof x->map.pm_build_id, BUILD);
    x->st.maps = &x->map;
    x->st.nmaps = 1;
    char err[ST_ERR_MAX];
    if (store) {
        x->st.store = st_open(x->path, err, sizeof err);
        if (!x->st.store)
            fprintf(stderr, "%s\n", err);
        else if (sv_persist_start(&x->st, err, sizeof err))
            fprintf(stderr, "%s\n", err);
    }
}

static void fix_free(struct fixture *x)
{
    sv_foreign_free(&x->st);
    st_close(x->st.store);
    sv_hist_free(x->st.h);
    sp_stream_free(&x->s);
}

static struct pstr_record rec(uint64_t pc, uint8_t kind)
{
    struct pstr_record r;
    memset(&r, 0, sizeof r);
    r.pid = 7;
    r.depth = 2;
    r.kind = kind;
    r.weight = 1;
    r.frames[0] = pc;
    r.frames[1] = 0x9000;
    return r;
}

static uint64_t sel_merged(const struct sv_state *st, uint64_t from, uint64_t to, int kernel,
                           unsigned kind, bool merged, struct st_sel *keep)
{
    struct sv_hist_filter f = { kernel, -1, -1, kind, merged };
    struct st_sel s;
    char err[ST_ERR_MAX];
    if (sv_select(st, from, to, &f, &s, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return UINT64_MAX;
    }
    uint64_t n = s.samples;
    if (keep)
        *keep = s;
    else
        st_sel_free(&s);
    return n;
}

static uint64_t sel_samples(const struct sv_state *st, uint64_t from, uint64_t to, int kernel,
                            unsigned kind, struct st_sel *keep)
{
    return sel_merged(st, from, to, kernel, kind, false, keep);
}

TEST(persist_a_bucket_and_answer_it_after_a_restart)
{
    struct fixture x;
    fix_init(&x, "10.0.0.1:5555", true);
    CHECK(x.st.store != NULL);
    if (!x.st.store)
        return;
    x.st.started_unix_ms = T0;
    char err[ST_ERR_MAX];
    struct pstr_record cpu = rec(0x1000, PSTR_KIND_CPU), off = rec(0x2000, PSTR_KIND_OFFCPU);
    off.why = PSTR_WHY_WAITQ;
    off.weight = 1000000;
    snprintf(off.name, sizeof off.name, "burn-q");
    for (unsigned i = 0; i < 30; i++)
        CHECK(sv_hist_add(x.st.h, 0, 1, &cpu, T0 + i * 100));
    CHECK(sv_hist_add(x.st.h, 0, 1, &off, T0 + 5));
    CHECK_EQ(sv_persist_bucket(&x.st, T0 / B, err, sizeof err), 0);
    CHECK(sv_hist_add(x.st.h, 0, 1, &cpu, T0 + B + 5));    /* the open bucket: memory */
    /* Closed from the store, open from memory: 31 in all. */
    CHECK_EQ(sel_samples(&x.st, T0, T0 + 2 * B, -1, PSTR_KIND_CPU, NULL), 31);
    fix_free(&x);

    /* Restarted: a new history, the same store. */
    fix_init(&x, "10.0.0.1:5555", true);
    x.st.started_unix_ms = T0 + 3 * B;
    CHECK_EQ(x.st.store_prior_ms, T0 + B);      /* its one bucket's end */
    CHECK(sv_hist_add(x.st.h, 0, 1, &cpu, T0 + 3 * B));
    struct st_sel s;
    CHECK_EQ(sel_samples(&x.st, T0, T0 + B, -1, PSTR_KIND_CPU, &s), 30);
    CHECK_EQ(s.n, 1);
    if (s.n == 1) {
        CHECK_STR(s.keys[0].kernel, "10.0.0.1:5555");
        CHECK_EQ(s.keys[0].frames[0], 0x1000);
        CHECK_EQ(s.keys[0].cpu, 1);
    }
    CHECK_EQ(s.from_ms, T0);
    CHECK_EQ(s.to_ms, T0 + B);
    st_sel_free(&s);
    CHECK_EQ(sel_samples(&x.st, T0, T0 + B, -1, PSTR_KIND_OFFCPU, &s), 1);
    if (s.n == 1) {
        CHECK_STR(s.keys[0].reason, "burn-q");
        CHECK_EQ(s.keys[0].why, PSTR_WHY_WAITQ);
        CHECK_EQ(s.weights[0], 1000000);
    }
    st_sel_free(&s);
    /* An earlier serve's kernel this one neither streams nor lists: its
     * rows are not counted, as they are not drawn. */
    struct st_row old = { .count = 50, .weight = 50 };
    snprintf(old.key.kernel, sizeof old.key.kernel, "10.0.0.9:5555");
    old.key.depth = 1;
    old.key.frames[0] = 0x1000;
    CHECK_EQ(st_write(x.st.store, T0, ST_SPAN_FINE, &old, 1, err, sizeof err), 0);
    CHECK_EQ(sel_samples(&x.st, T0, T0 + B, -1, PSTR_KIND_CPU, NULL), 30);
    /* The whole range: the old bucket and the open one. */
    CHECK_EQ(sel_samples(&x.st, T0, T0 + 4 * B, -1, PSTR_KIND_CPU, NULL), 30 + 1);
    fix_free(&x);
    unlink(x.path);
}

/* Hot and cold: a range the history holds whole is memory's, the whole
 * fleet's merged selection its fleet stacks; the same range from the
 * store (as a serve started later would read it) counts the same. */
TEST(persist_memory_and_store_count_the_same)
{
    struct fixture x;
    fix_init(&x, "10.0.0.1:5555", true);
    CHECK(x.st.store != NULL);
    if (!x.st.store)
        return;
    x.st.started_unix_ms = T0;
    char err[ST_ERR_MAX];
    struct pstr_record a = rec(0x1000, PSTR_KIND_CPU), b = rec(0x1100, PSTR_KIND_CPU);
    for (unsigned i = 0; i < 40; i++) {
        CHECK(sv_hist_add(x.st.h, 0, (uint16_t)(i % 4), i % 3 ? &a : &b, T0 + i * 100));
        CHECK(sv_hist_add(x.st.h, 0, 0, &a, T0 + B + i * 100));
    }
    CHECK_EQ(sv_persist_bucket(&x.st, T0 / B, err, sizeof err), 0);
    struct st_sel hot, cold;
    CHECK_EQ(sel_merged(&x.st, T0, T0 + 2 * B, -1, PSTR_KIND_CPU, true, &hot), 80);
    CHECK_EQ(hot.n, 2);                         /* the fleet's: pid and CPUs merged */
    for (size_t i = 0; i < hot.n; i++) {
        CHECK_STR(hot.keys[i].kernel, "10.0.0.1:5555");     /* its ELF's kernel */
        CHECK_EQ(hot.keys[i].cpu, 0);
    }
    CHECK_EQ(sel_samples(&x.st, T0, T0 + 2 * B, -1, PSTR_KIND_CPU, NULL), 80);
    /* As a serve started at T0 + B on this store would see it: memory
     * no longer holds T0 whole. */
    x.st.started_unix_ms = T0 + B;
    CHECK_EQ(sv_persist_start(&x.st, err, sizeof err), 0);
    CHECK_EQ(x.st.store_prior_ms, T0 + B);
    CHECK_EQ(sel_merged(&x.st, T0, T0 + 2 * B, -1, PSTR_KIND_CPU, true, &cold), 80);
    CHECK_EQ(cold.from_ms, hot.from_ms);
    CHECK_EQ(cold.to_ms, hot.to_ms);
    CHECK_EQ(sel_samples(&x.st, T0, T0 + B, -1, PSTR_KIND_CPU, NULL), 40);
    CHECK_EQ(sel_samples(&x.st, T0, T0 + 2 * B, 0, PSTR_KIND_CPU, NULL), 80);
    st_sel_free(&hot);
    st_sel_free(&cold);
    fix_free(&x);
    unlink(x.path);
}

TEST(persist_another_serves_kernel_listed_and_filtered)
{
    struct fixture a, b;
    fix_init(&a, "10.0.0.1:5555", true);
    fix_init(&b, "10.0.0.2:5555", true);
    CHECK(a.st.store && b.st.store);
    if (!a.st.store || !b.st.store)
        return;
    char err[ST_ERR_MAX];
    struct st_kernel ka = { "10.0.0.1:5555", BUILD, "tick 100Hz", 0 };
    struct st_kernel kb = { "10.0.0.2:5555", BUILD, "tick 100Hz", 0 };
    struct st_kernel kc = { "10.0.0.3:5555", "ffff", "tick 100Hz", 0 };   /* no ELF here */
    CHECK_EQ(st_kernel_put(a.st.store, &ka, err, sizeof err), 0);
    CHECK_EQ(st_kernel_put(b.st.store, &kb, err, sizeof err), 0);
    CHECK_EQ(st_kernel_put(b.st.store, &kc, err, sizeof err), 0);
    struct pstr_record cpu = rec(0x1000, PSTR_KIND_CPU);
    for (unsigned i = 0; i < 10; i++)
        sv_hist_add(a.st.h, 0, 0, &cpu, T0 + i);
    for (unsigned i = 0; i < 20; i++)
        sv_hist_add(b.st.h, 0, 0, &cpu, T0 + i);
    CHECK_EQ(sv_persist_bucket(&a.st, T0 / B, err, sizeof err), 0);
    CHECK_EQ(sv_persist_bucket(&b.st, T0 / B, err, sizeof err), 0);
    sv_hist_advance(a.st.h, T0 + B + 1);
    CHECK_EQ(sv_foreign_load(&a.st, 0, err, sizeof err), 0);
    CHECK_EQ(a.st.nforeign, 1);                 /* b's; c has no ELF here */
    CHECK_EQ(a.st.foreign[0].k.last_ms, T0 + B);    /* its bucket's end */
    CHECK_STR(sv_kernel_name(&a.st, 1), "10.0.0.2:5555");
    CHECK(sv_kernel_name(&a.st, 2) == NULL);
    CHECK(sv_kernel_name_known(&a.st, "10.0.0.2:5555"));
    CHECK(!sv_kernel_name_known(&a.st, "10.0.0.3:5555"));
    CHECK_EQ(sel_samples(&a.st, T0, T0 + B, -1, PSTR_KIND_CPU, NULL), 30);
    CHECK_EQ(sel_samples(&a.st, T0, T0 + B, 1, PSTR_KIND_CPU, NULL), 20);
    CHECK_EQ(sel_samples(&a.st, T0, T0 + B, 0, PSTR_KIND_CPU, NULL), 10);
    CHECK_STR(a.st.foreign[0].s.meta.build_id, BUILD);
    /* A kernel silent since before since_ms is no fleet's any more. */
    CHECK_EQ(sv_foreign_load(&a.st, T0 + B + 1, err, sizeof err), 0);
    CHECK_EQ(a.st.nforeign, 0);
    fix_free(&a);
    fix_free(&b);
    unlink(a.path);
}

TEST(persist_without_a_store_selects_the_history)
{
    struct fixture x;
    fix_init(&x, "10.0.0.1:5555", false);
    struct pstr_record cpu = rec(0x1000, PSTR_KIND_CPU);
    for (unsigned i = 0; i < 12; i++)
        sv_hist_add(x.st.h, 0, 0, &cpu, T0 + i * B / 4);   /* 3 buckets */
    CHECK_EQ(sel_samples(&x.st, T0, T0 + 3 * B, -1, PSTR_KIND_CPU, NULL), 12);
    CHECK_EQ(sel_samples(&x.st, T0 + B, T0 + B + 1, -1, PSTR_KIND_CPU, NULL), 4);
    struct st_sel s;
    char err[ST_ERR_MAX];
    struct sv_hist_filter f = { -1, -1, -1, PSTR_KIND_CPU, false };
    CHECK(sv_select(&x.st, T0, T0, &f, &s, err, sizeof err) < 0);
    st_sel_free(&s);
    fix_free(&x);
}
