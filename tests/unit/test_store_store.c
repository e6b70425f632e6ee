// LINK: tools/store/store.c tools/store/retain.c tools/store/store_sqlite.c tools/store/store_pg.c tools/model/model.c uapi/profile_raw.c
// LIBS: -I/usr/include/postgresql -lsqlite3 -lpq
/* tests/unit/test_store_store.c: the store (tools/store/) against a real
 * SQLite file and a real PostgreSQL: the throwaway cluster of
 * scripts/pg.sh, started here when SONDE_PG_URI does not name one. Each
 * test runs on both: buckets written and selected back whole (frames,
 * reasons, sizes, the over rows), filters, a bucket written twice adding
 * up, a second connection reading what the first wrote (another serve),
 * retention merging old buckets into minutes and 10 minutes and dropping
 * what is past it, and bad input refused with what was wrong. */
#include "test.h"
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>
#include "tools/store/store.h"

#define DAY 86400000ull
#define NOW (20000ull * DAY + 5 * 3600000ull)     /* a Unix ms, 05:00 of a day */

static char lite_path[128];
static char pg_uri[512], pg_dir[512];

/* The two stores, made empty. */
static const char *uri(int backend)
{
    return backend ? pg_uri : lite_path;
}

static void pg_start(void)
{
    const char *env = getenv("SONDE_PG_URI");
    if (env) {
        snprintf(pg_uri, sizeof pg_uri, "%s", env);
        return;
    }
    FILE *f = popen("bash scripts/pg.sh start", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (strncmp(line, "PGDIR=", 6) == 0)
            snprintf(pg_dir, sizeof pg_dir, "%s", line + 6);
        else if (strncmp(line, "PGURI=", 6) == 0)
            snprintf(pg_uri, sizeof pg_uri, "%s", line + 6);
    }
    if (f)
        pclose(f);
}

__attribute__((constructor(200))) static void stores_start(void)
{
    snprintf(lite_path, sizeof lite_path, "/tmp/sonde-store-test.%d.db", (int)getpid());
    pg_start();
}

__attribute__((destructor)) static void stores_stop(void)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -f %s %s-wal %s-shm", lite_path, lite_path, lite_path);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", lite_path);
    if (*pg_dir) {
        snprintf(cmd, sizeof cmd, "bash scripts/pg.sh stop %s", pg_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not stop the cluster in %s\n", pg_dir);
    }
}

/* An empty store of backend: every table emptied. */
static struct st_store *fresh(int backend)
{
    char err[ST_ERR_MAX] = "";
    struct st_store *s = st_open(uri(backend), err, sizeof err);
    if (!s) {
        fprintf(stderr, "%s: %s\n", uri(backend), err);
        return NULL;
    }
    /* Between tests: what an earlier one wrote, gone (a fresh process's
     * store, as if the database were new). */
    st_close(s);
    if (backend == 0) {
        unlink(lite_path);
    } else {
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "psql -q '%s' -c 'DROP TABLE IF EXISTS counts, stacks, "
                 "kernels, reasons' >/dev/null 2>&1", pg_uri);
        if (system(cmd) != 0)
            fprintf(stderr, "psql could not empty %s\n", pg_uri);
    }
    s = st_open(uri(backend), err, sizeof err);
    if (!s)
        fprintf(stderr, "%s: %s\n", uri(backend), err);
    return s;
}

static struct st_row row(const char *kernel, unsigned kind, uint32_t pid, uint16_t cpu,
                         uint64_t pc, uint64_t count, uint64_t weight)
{
    struct st_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.key.kernel, sizeof r.key.kernel, "%s", kernel);
    r.key.kind = (uint8_t)kind;
    r.key.pid = pid;
    r.key.cpu = cpu;
    r.key.depth = 3;
    r.key.frames[0] = pc;
    r.key.frames[1] = 0xffffffff80100000ull;     /* above 2^63: kept whole */
    r.key.frames[2] = 0x1234;
    r.count = count;
    r.weight = weight;
    return r;
}

static const struct st_filter cpu_all = { NULL, -1, -1, PSTR_KIND_CPU, NULL, NULL };

/* The count of the stack whose pc is pc in s, or 0. */
static uint64_t count_of(const struct st_sel *s, const char *kernel, uint64_t pc)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->keys[i].frames[0] == pc && strcmp(s->keys[i].kernel, kernel) == 0)
            return s->counts[i];
    return 0;
}

static void write_and_select(int backend)
{
    struct st_store *s = fresh(backend);
    CHECK(s != NULL);
    if (!s)
        return;
    char err[ST_ERR_MAX];
    struct st_kernel k = { "10.0.0.1:5555", "ab12", "pmu", 0 };
    CHECK_EQ(st_kernel_put(s, &k, err, sizeof err), 0);
    struct st_row rows[5] = {
        row("10.0.0.1:5555", PSTR_KIND_CPU, 7, 0, 0xffffffff80101000ull, 5, 5),
        row("10.0.0.1:5555", PSTR_KIND_CPU, 8, 1, 0xffffffff80102000ull, 3, 3),
        row("10.0.0.2:5555", PSTR_KIND_CPU, 7, 0, 0xffffffff80101000ull, 11, 11),
        row("10.0.0.1:5555", PSTR_KIND_OFFCPU, 7, 0, 0xffffffff80103000ull, 2, 2000000),
        row("10.0.0.1:5555", PSTR_KIND_CPU, 0, 0, 0, 4, 4),
    };
    rows[3].key.why = PSTR_WHY_WAITQ;
    snprintf(rows[3].key.reason, sizeof rows[3].key.reason, "burn-q");
    rows[4].key.depth = 0;                      /* over the writer's bound */
    uint64_t b = NOW / 10000 * 10000;
    CHECK_EQ(st_write(s, b, ST_SPAN_FINE, rows, 5, err, sizeof err), 0);
    struct st_sel sel;
    CHECK_EQ(st_select(s, b, b + 10000, &cpu_all, &sel, err, sizeof err), 0);
    CHECK_EQ(sel.n, 3);
    CHECK_EQ(sel.samples, 19);
    CHECK_EQ(sel.over, 4);
    CHECK_EQ(sel.from_ms, b);
    CHECK_EQ(sel.to_ms, b + 10000);
    CHECK_EQ(count_of(&sel, "10.0.0.1:5555", 0xffffffff80101000ull), 5);
    CHECK_EQ(count_of(&sel, "10.0.0.2:5555", 0xffffffff80101000ull), 11);
    for (size_t i = 0; i < sel.n; i++) {
        CHECK_EQ(sel.keys[i].depth, 3);
        CHECK_EQ(sel.keys[i].frames[1], 0xffffffff80100000ull);
        CHECK_EQ(sel.keys[i].frames[2], 0x1234);
    }
    st_sel_free(&sel);
    /* Off-CPU: its reason by name, its weight in ns. */
    struct st_filter off = { NULL, -1, -1, PSTR_KIND_OFFCPU, NULL, NULL };
    CHECK_EQ(st_select(s, b - 5000, b + 1, &off, &sel, err, sizeof err), 0);
    CHECK_EQ(sel.n, 1);
    if (sel.n == 1) {
        CHECK_EQ(sel.keys[0].why, PSTR_WHY_WAITQ);
        CHECK_STR(sel.keys[0].reason, "burn-q");
        CHECK_EQ(sel.weights[0], 2000000);
        CHECK_EQ(sel.keys[0].pid, 7);
    }
    st_sel_free(&sel);
    /* A range before the bucket: nothing, and says so. */
    CHECK_EQ(st_select(s, b - 20000, b, &cpu_all, &sel, err, sizeof err), 0);
    CHECK_EQ(sel.n, 0);
    CHECK_EQ(sel.samples, 0);
    CHECK_EQ(sel.from_ms, sel.to_ms);
    st_sel_free(&sel);
    st_close(s);
}

TEST(sqlite_write_and_select) { write_and_select(0); }
TEST(pg_write_and_select) { write_and_select(1); }

static void filters_and_upsert(int backend)
{
    struct st_store *s = fresh(backend);
    CHECK(s != NULL);
    if (!s)
        return;
    char err[ST_ERR_MAX];
    uint64_t b = NOW / 10000 * 10000;
    struct st_row rows[3] = {
        row("a:1", PSTR_KIND_CPU, 7, 0, 0x1000, 5, 5),
        row("a:1", PSTR_KIND_CPU, 8, 1, 0x2000, 3, 3),
        row("b:1", PSTR_KIND_CPU, 7, 1, 0x1000, 11, 11),
    };
    CHECK_EQ(st_write(s, b, ST_SPAN_FINE, rows, 3, err, sizeof err), 0);
    CHECK_EQ(st_write(s, b, ST_SPAN_FINE, rows, 1, err, sizeof err), 0);   /* adds 5 */
    CHECK_EQ(st_write(s, b + 10000, ST_SPAN_FINE, rows + 2, 1, err, sizeof err), 0);
    struct st_sel sel;
    struct st_filter f = { "a:1", -1, -1, PSTR_KIND_CPU, NULL, NULL };
    CHECK_EQ(st_select(s, b, b + 20000, &f, &sel, err, sizeof err), 0);
    CHECK_EQ(sel.samples, 13);
    CHECK_EQ(count_of(&sel, "a:1", 0x1000), 10);
    CHECK_EQ(sel.to_ms, b + 10000);             /* a:1 has no second bucket */
    st_sel_free(&sel);
    f = (struct st_filter){ NULL, 7, -1, PSTR_KIND_CPU, NULL, NULL };
    CHECK_EQ(st_select(s, b, b + 20000, &f, &sel, err, sizeof err), 0);
    CHECK_EQ(sel.samples, 10 + 22);
    st_sel_free(&sel);
    f = (struct st_filter){ NULL, -1, 1, PSTR_KIND_CPU, NULL, NULL };
    CHECK_EQ(st_select(s, b + 10000, b + 20000, &f, &sel, err, sizeof err), 0);
    CHECK_EQ(sel.samples, 11);
    CHECK_EQ(sel.from_ms, b + 10000);
    st_sel_free(&sel);
    f = (struct st_filter){ "nobody:1", -1, -1, PSTR_KIND_CPU, NULL, NULL };
    CHECK_EQ(st_select(s, b, b + 20000, &f, &sel, err, sizeof err), 0);
    CHECK_EQ(sel.n, 0);
    st_sel_free(&sel);
    /* Another connection (another serve) reads what this one wrote, and
     * writes a kernel of its own that this one reads. */
    struct st_store *o = st_open(uri(backend), err, sizeof err);
    CHECK(o != NULL);
    if (o) {
        struct st_row mine = row("c:1", PSTR_KIND_CPU, 9, 0, 0x3000, 2, 2);
        CHECK_EQ(st_write(o, b, ST_SPAN_FINE, &mine, 1, err, sizeof err), 0);
        CHECK_EQ(st_select(o, b, b + 20000, &cpu_all, &sel, err, sizeof err), 0);
        CHECK_EQ(sel.samples, 13 + 22 + 2);
        st_sel_free(&sel);
        st_close(o);
    }
    CHECK_EQ(st_select(s, b, b + 10000, &cpu_all, &sel, err, sizeof err), 0);
    CHECK_EQ(count_of(&sel, "c:1", 0x3000), 2);
    st_sel_free(&sel);
    size_t nk = 0;
    struct st_kernel *ks = st_kernels(s, &nk, err, sizeof err);
    CHECK_EQ(nk, 3);
    if (ks && nk == 3) {
        CHECK_STR(ks[0].name, "a:1");
        CHECK_EQ(ks[0].last_ms, b + 10000);     /* each write moves its kernels' */
        CHECK_EQ(ks[1].last_ms, b + 20000);
        CHECK_STR(ks[2].name, "c:1");
    }
    free(ks);
    st_close(s);
}

TEST(sqlite_filters_and_upsert) { filters_and_upsert(0); }
TEST(pg_filters_and_upsert) { filters_and_upsert(1); }

static uint64_t total(struct st_store *s, uint64_t from, uint64_t to, uint64_t *span)
{
    char err[ST_ERR_MAX];
    struct st_sel sel;
    if (st_select(s, from, to, &cpu_all, &sel, err, sizeof err))
        return UINT64_MAX;
    uint64_t n = sel.samples;
    *span = sel.to_ms - sel.from_ms;
    st_sel_free(&sel);
    return n;
}

static void retention(int backend)
{
    struct st_store *s = fresh(backend);
    CHECK(s != NULL);
    if (!s)
        return;
    char err[ST_ERR_MAX];
    uint64_t hour_ago = (NOW - 2 * 3600000ull) / 60000 * 60000;     /* a minute's start */
    uint64_t days_ago = (NOW - 2 * DAY) / 600000 * 600000;          /* 10 minutes' */
    uint64_t gone = NOW - 8 * DAY;
    struct st_row r = row("a:1", PSTR_KIND_CPU, 7, 0, 0x1000, 1, 1);
    for (unsigned i = 0; i < 6; i++) {          /* a minute of 10 s buckets */
        r.count = r.weight = i + 1;
        CHECK_EQ(st_write(s, hour_ago + i * 10000, ST_SPAN_FINE, &r, 1, err, sizeof err), 0);
    }
    r.count = r.weight = 100;
    CHECK_EQ(st_write(s, days_ago + 30000, ST_SPAN_FINE, &r, 1, err, sizeof err), 0);
    CHECK_EQ(st_write(s, days_ago + 420000, ST_SPAN_FINE, &r, 1, err, sizeof err), 0);
    CHECK_EQ(st_write(s, gone / 10000 * 10000, ST_SPAN_FINE, &r, 1, err, sizeof err), 0);
    uint64_t span;
    CHECK_EQ(total(s, hour_ago, hour_ago + 10000, &span), 1);
    CHECK_EQ(span, 10000);
    CHECK_EQ(st_retain(s, NOW, ST_RETAIN_DEFAULT, err, sizeof err), 0);
    /* The hour-old minute is one bucket of a minute, every count kept. */
    CHECK_EQ(total(s, hour_ago, hour_ago + 10000, &span), 21);
    CHECK_EQ(span, 60000);
    CHECK_EQ(total(s, days_ago + 30000, days_ago + 40000, &span), 200);
    CHECK_EQ(span, 600000);
    CHECK_EQ(total(s, gone - DAY, gone + DAY, &span), 0);
    CHECK_EQ(st_oldest(s), days_ago);
    /* Again: nothing merged twice. */
    CHECK_EQ(st_retain(s, NOW + 10000, ST_RETAIN_DEFAULT, err, sizeof err), 0);
    CHECK_EQ(total(s, hour_ago, hour_ago + 60000, &span), 21);
    CHECK_EQ(total(s, 0, NOW, &span), 221);
    st_close(s);
    /* And a new process, scanning from the start, neither. */
    s = st_open(uri(backend), err, sizeof err);
    CHECK(s != NULL);
    if (s) {
        CHECK_EQ(st_retain(s, NOW + 20000, ST_RETAIN_DEFAULT, err, sizeof err), 0);
        CHECK_EQ(total(s, 0, NOW, &span), 221);
        st_close(s);
    }
}

TEST(sqlite_retention) { retention(0); }
TEST(pg_retention) { retention(1); }

TEST(bad_input_refused)
{
    char err[ST_ERR_MAX] = "";
    CHECK(st_open("/nonexistent/dir/x.db", err, sizeof err) == NULL);
    CHECK(strstr(err, "/nonexistent/dir/x.db") != NULL);
    CHECK(st_open("postgresql://nobody@127.0.0.1:1/none", err, sizeof err) == NULL);
    CHECK(strstr(err, "postgresql") != NULL);
    CHECK(st_open("", err, sizeof err) == NULL);
    uint64_t ms = 0;
    CHECK_EQ(st_parse_duration("7d", &ms, err, sizeof err), 0);
    CHECK_EQ(ms, 7 * DAY);
    CHECK_EQ(st_parse_duration("90m", &ms, err, sizeof err), 0);
    CHECK_EQ(ms, 90 * 60000ull);
    CHECK(st_parse_duration("10m", &ms, err, sizeof err) < 0);
    CHECK(strstr(err, "1h to 3650d") != NULL);
    CHECK(st_parse_duration("3651d", &ms, err, sizeof err) < 0);
    CHECK(st_parse_duration("7x", &ms, err, sizeof err) < 0);
    CHECK(st_parse_duration("-1d", &ms, err, sizeof err) < 0);
    CHECK(st_parse_duration("99999999999999999999d", &ms, err, sizeof err) < 0);
    struct st_store *s = fresh(0);
    CHECK(s != NULL);
    if (!s)
        return;
    struct st_row r = row("a:1", PSTR_KIND_CPU, 7, 0, 0x1000, 1, 1);
    CHECK(st_write(s, 12345, ST_SPAN_FINE, &r, 1, err, sizeof err) < 0);
    CHECK(strstr(err, "multiple") != NULL);
    CHECK(st_write(s, 10000, 5000, &r, 1, err, sizeof err) < 0);
    struct st_sel sel;
    CHECK(st_select(s, 10, 10, &cpu_all, &sel, err, sizeof err) < 0);
    CHECK(strstr(err, "from < to") != NULL);
    st_sel_free(&sel);
    st_close(s);
}

/* Keys: the same stack hashes the same, each field tells stacks apart. */
TEST(key_hash_and_sel)
{
    struct st_row a = row("a:1", PSTR_KIND_CPU, 7, 0, 0x1000, 1, 1), b = a;
    CHECK_EQ(st_key_hash(&a.key), st_key_hash(&b.key));
    b.key.cpu = 1;
    CHECK(st_key_hash(&a.key) != st_key_hash(&b.key));
    CHECK(!st_key_eq(&a.key, &b.key));
    b = a;
    snprintf(b.key.kernel, sizeof b.key.kernel, "a:2");
    CHECK(st_key_hash(&a.key) != st_key_hash(&b.key));
    struct st_sel s;
    st_sel_init(&s);
    for (unsigned i = 0; i < 1000; i++) {
        a.key.frames[0] = i % 300;
        st_sel_add(&s, &a.key, 2, 3);
    }
    CHECK_EQ(s.n, 300);
    CHECK_EQ(s.samples, 2000);
    CHECK_EQ(s.weight, 3000);
    st_sel_free(&s);
}

/* More stacks than one lookup names (SQLite adds a selection up itself,
 * then asks for its stacks 500 at a time). */
static void many_stacks(int backend)
{
    struct st_store *s = fresh(backend);
    CHECK(s != NULL);
    if (!s)
        return;
    char err[ST_ERR_MAX];
    enum { N = 1234 };
    static struct st_row rows[N];
    uint64_t b = NOW / 10000 * 10000;
    for (unsigned i = 0; i < N; i++)
        rows[i] = row("a:1", PSTR_KIND_CPU, 7 + i % 3, (uint16_t)(i % 4), 0x100000 + i, i + 1, 1);
    CHECK_EQ(st_write(s, b, ST_SPAN_FINE, rows, N, err, sizeof err), 0);
    CHECK_EQ(st_write(s, b + 10000, ST_SPAN_FINE, rows, N, err, sizeof err), 0);
    struct st_sel sel;
    CHECK_EQ(st_select(s, b, b + 20000, &cpu_all, &sel, err, sizeof err), 0);
    CHECK_EQ(sel.n, N);
    CHECK_EQ(sel.samples, (uint64_t)N * (N + 1));
    CHECK_EQ(count_of(&sel, "a:1", 0x100000 + 1000), 2 * 1001);
    CHECK_EQ(sel.from_ms, b);
    CHECK_EQ(sel.to_ms, b + 20000);
    st_sel_free(&sel);
    struct st_filter f = { NULL, 8, 2, PSTR_KIND_CPU, NULL, NULL };     /* i % 3 == 1, i % 4 == 2 */
    CHECK_EQ(st_select(s, b, b + 20000, &f, &sel, err, sizeof err), 0);
    CHECK_EQ(sel.n, 102);                       /* i = 10, 22, ... below 1234 */
    st_sel_free(&sel);
    st_close(s);
}

TEST(sqlite_many_stacks) { many_stacks(0); }
TEST(pg_many_stacks) { many_stacks(1); }
