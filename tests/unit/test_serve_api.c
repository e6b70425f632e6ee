// LINK: tools/serve/api.c tools/serve/kernels.c tools/serve/query.c tools/serve/hist.c tools/ingest/agg.c tools/ingest/stream.c tools/output/folded.c tools/output/diff.c tools/model/pprof_read.c tools/output/html.c tools/output/flame_json.c build/web/assets.c tools/model/model.c tools/output/pprof.c tools/output/svg.c tools/model/sym.c uapi/profile_raw.c uapi/profile_stream.c uapi/profile_stream_meta.c build/host/proto/profile.pb-c.c tools/serve/persist.c tools/store/store.c tools/store/retain.c tools/store/store_sqlite.c tools/store/store_pg.c tools/serve/api_trace.c tools/serve/trace.c tools/ingest/trace_stream.c tools/model/trace.c tools/output/trace_json.c tools/output/trace_names.c uapi/trace_raw.c
// LIBS: -Ibuild/host/proto -lprotobuf-c -lz -lelf -ldw -ljansson -I/usr/include/postgresql -lsqlite3 -lpq
/* tests/unit/test_serve_api.c: the JSON `sonde-prof serve`'s page reads
 * (tools/serve/api.c, query.c), read back with jansson: status (kernels,
 * their state, last time and authentication, tasks, kinds, the bound),
 * the timeline, flame trees through the real pipeline (agg -> model ->
 * flame_json's tree) with the fixture's names, filters, diffs with their
 * deltas, the downloads, and every bad argument's 4xx naming what was
 * wrong and what is allowed. */
#include "test.h"
#include <jansson.h>
#include <stdlib.h>
#include "pipeline_fixture.h"
#include "tools/serve/api.h"

struct fixture {
    struct sv_state st;
    struct sv_kernel k[2];
    struct sp_stream s[2];
    struct sp_map map;
};

static void fix_sym(void *ctx, struct sp_profile *p, unsigned map)
{
    (void)ctx, (void)map;
    fix_symbolize(p);
}

static void stream_meta(struct sp_stream *s, uint32_t pid, const char *task)
{
    sp_stream_init(s, 1);
    s->have_meta = true;
    memcpy(s->meta.build_id, FIX_BID, sizeof s->meta.build_id);
    snprintf(s->meta.source, sizeof s->meta.source, "tick 100Hz");
    s->meta.cpus = 2;
    s->tasks = calloc(1, sizeof *s->tasks);
    s->captasks = s->ntasks = 1;
    s->tasks[0].pid = pid;
    snprintf(s->tasks[0].name, sizeof s->tasks[0].name, "%s", task);
}

static void add(struct fixture *f, unsigned k, uint32_t pid, uint16_t cpu, uint64_t pc,
                uint64_t t_ms, unsigned n)
{
    struct pstr_record r;
    memset(&r, 0, sizeof r);
    r.pid = pid;
    r.depth = 2;
    r.weight = 1;
    r.frames[0] = pc;
    r.frames[1] = 0x2005;
    for (unsigned i = 0; i < n; i++)
        sv_hist_add(f->st.h, k, cpu, &r, t_ms);
}

/* Kernel k1 (pid 7 burn): 10 samples of 0x1010 (spin with step inlined)
 * at 5 s; 30 of them and 20 of 0x1020 at 25 s. Kernel k2 (pid 3 net): 5
 * of 0x1020 at 26 s. Now is 26 s. */
static void setup(struct fixture *f)
{
    memset(f, 0, sizeof *f);
    f->st.h = sv_hist_new(64);
    memcpy(f->map.pm_build_id, FIX_BID, sizeof f->map.pm_build_id);
    f->map.pm_path = "kernel.elf";
    f->map.pm_start = 0x1000;
    f->map.pm_limit = 0x4000;
    f->st.maps = &f->map;
    f->st.nmaps = 1;
    f->st.symbolize = fix_sym;
    f->st.k = f->k;
    f->st.n = 2;
    stream_meta(&f->s[0], 7, "burn");
    stream_meta(&f->s[1], 3, "net");
    const char *names[2] = { "10.0.0.1:9000", "10.0.0.2:9000" };
    for (unsigned k = 0; k < 2; k++) {
        snprintf(f->st.k[k].name, sizeof f->st.k[k].name, "%s", names[k]);
        f->st.k[k].state = k ? "stopped" : "streaming";
        f->st.k[k].stream = &f->s[k];
    }
    f->st.k[0].authenticated = true;
    f->st.k[1].last_ms = 26000;
    f->st.started_unix_ms = 1700000000000ull;
    f->st.listen = "127.0.0.1:8080";
    add(f, 0, 7, 0, 0x1010, 5000, 10);
    add(f, 0, 7, 1, 0x1010, 25000, 30);
    add(f, 0, 7, 1, 0x1020, 25000, 20);
    add(f, 1, 3, 0, 0x1020, 26000, 5);
}

static void teardown(struct fixture *f)
{
    sv_hist_free(f->st.h);
    sp_stream_free(&f->s[0]);
    sp_stream_free(&f->s[1]);
}

/* GET path with "k=v&k=v" args; the reply's JSON (NULL if it is not JSON). */
static json_t *get(struct fixture *f, const char *path, const char *query,
                   struct sv_reply *r)
{
    struct sv_arg args[SV_API_ARGS_MAX];
    unsigned n = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", query ? query : "");
    for (char *save, *tok = strtok_r(buf, "&", &save); tok; tok = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(tok, '=');
        if (eq)
            *eq = 0;
        args[n++] = (struct sv_arg){ tok, eq ? eq + 1 : NULL };
    }
    sv_api_get(&f->st, path, args, n, r);
    return r->type && strcmp(r->type, "application/json") == 0
               ? json_loadb(r->body, r->len, 0, NULL) : NULL;
}

/* The node at names (NULL-terminated) under root, or NULL. */
static json_t *node(json_t *root, const char *const *names)
{
    json_t *n = root;
    for (; n && *names; names++) {
        json_t *kids = json_object_get(n, "children"), *next = NULL, *c;
        size_t i;
        json_array_foreach(kids, i, c)
            if (strcmp(json_string_value(json_object_get(c, "name")), *names) == 0)
                next = c;
        n = next;
    }
    return n;
}

static long long value(json_t *n, const char *key)
{
    json_t *v = n ? json_object_get(n, key) : NULL;
    return v ? json_integer_value(v) : -1;
}

TEST(api_status_names_kernels_state_and_authentication)
{
    struct fixture f;
    setup(&f);
    struct sv_reply r;
    json_t *j = get(&f, "/api/status", NULL, &r);
    CHECK_EQ(r.status, 200);
    CHECK(j != NULL);
    CHECK_EQ(value(j, "now_ms"), 26000);
    CHECK_EQ(value(j, "bucket_ms"), 10000);
    CHECK_EQ(value(j, "started_unix_ms"), 1700000000000ll);
    json_t *ks = json_object_get(j, "kernels");
    CHECK_EQ(json_array_size(ks), 2);
    json_t *k0 = json_array_get(ks, 0), *k1 = json_array_get(ks, 1);
    CHECK_STR(json_string_value(json_object_get(k0, "name")), "10.0.0.1:9000");
    CHECK_STR(json_string_value(json_object_get(k0, "state")), "streaming");
    CHECK(json_is_true(json_object_get(k0, "authenticated")));
    CHECK(json_is_null(json_object_get(k0, "last_ms")));
    CHECK_STR(json_string_value(json_object_get(k1, "state")), "stopped");
    CHECK(json_is_false(json_object_get(k1, "authenticated")));
    CHECK_EQ(value(k1, "last_ms"), 26000);
    CHECK_STR(json_string_value(json_object_get(k1, "source")), "tick 100Hz");
    json_t *t = json_array_get(json_object_get(k1, "tasks"), 0);
    CHECK_EQ(value(t, "pid"), 3);
    CHECK_STR(json_string_value(json_object_get(t, "name")), "net");
    /* 4 (kernel, cpu, chain), and the fleet's 2 chains */
    CHECK_EQ(value(json_object_get(j, "stacks"), "live"), 6);
    CHECK_EQ(value(json_object_get(j, "stacks"), "max"), 64);
    CHECK_EQ(json_array_size(json_object_get(j, "kinds")), 1);
    json_decref(j);
    sv_reply_free(&r);
    teardown(&f);
}

TEST(api_flame_tree_through_the_pipeline)
{
    struct fixture f;
    setup(&f);
    struct sv_reply r;
    json_t *j = get(&f, "/api/flame", "from=0&to=26000", &r);
    CHECK_EQ(r.status, 200);
    CHECK_EQ(value(j, "samples"), 65);
    CHECK_EQ(value(j, "from_ms"), 0);
    CHECK_STR(json_string_value(json_object_get(j, "unit")), "samples");
    json_t *tree = json_object_get(j, "tree");
    CHECK_STR(json_string_value(json_object_get(tree, "name")), "all");
    CHECK_EQ(value(tree, "value"), 65);
    /* kernel, task, then root-first frames: caller, spin, and step inlined in spin. */
    const char *step[] = { "10.0.0.1:9000", "burn", "caller", "spin", "step", NULL };
    const char *spin[] = { "10.0.0.1:9000", "burn", "caller", "spin", NULL };
    const char *k2[] = { "10.0.0.2:9000", "net", "caller", "spin", NULL };
    CHECK_EQ(value(node(tree, step), "value"), 40);
    CHECK_EQ(value(node(tree, spin), "value"), 60);
    CHECK_EQ(value(node(tree, k2), "value"), 5);
    CHECK(json_object_get(node(tree, step), "children") == NULL);
    CHECK(json_object_get(tree, "delta") == NULL);
    json_decref(j);
    sv_reply_free(&r);
    /* The live view by default: the last 10 s, widened to buckets 1 and 2. */
    j = get(&f, "/api/flame", NULL, &r);
    CHECK_EQ(value(j, "from_ms"), 10000);
    CHECK_EQ(value(j, "to_ms"), 26000);
    CHECK_EQ(value(j, "samples"), 55);
    json_decref(j);
    sv_reply_free(&r);
    teardown(&f);
}

/* Heap records as the stream carries them: bytes, each with its block's
 * requested size. Kernel 0 at 25 s: three samples of 64-byte blocks at
 * 0x1010 standing for 524320 bytes each (8192.5 objects each), one of a
 * 1 MiB block at 0x1020 standing for itself. */
static void add_heap(struct fixture *f)
{
    struct pstr_record r;
    memset(&r, 0, sizeof r);
    r.pid = 7;
    r.depth = 2;
    r.kind = PSTR_KIND_HEAP;
    r.frames[1] = 0x2005;
    r.frames[0] = 0x1010;
    r.weight = 524320;
    r.size = 64;
    for (unsigned i = 0; i < 3; i++)
        CHECK(sv_hist_add(f->st.h, 0, 0, &r, 25000));
    r.frames[0] = 0x1020;
    r.weight = r.size = 1 << 20;
    CHECK(sv_hist_add(f->st.h, 0, 0, &r, 25000));
}

/* The heap kind: allocated bytes per frame, the objects they stand for,
 * never mixed with the CPU samples, and downloadable as pprof. */
TEST(api_heap_selection_shows_allocated_bytes_and_objects)
{
    struct fixture f;
    setup(&f);
    add_heap(&f);
    struct sv_reply r;
    json_t *j = get(&f, "/api/status", NULL, &r);
    json_t *kinds = json_object_get(j, "kinds");
    CHECK_EQ(json_array_size(kinds), 2);
    CHECK_STR(json_string_value(json_array_get(kinds, 1)), "heap");
    json_decref(j);
    sv_reply_free(&r);
    j = get(&f, "/api/flame", "from=0&to=26000&kind=heap", &r);
    CHECK_EQ(r.status, 200);
    CHECK_STR(json_string_value(json_object_get(j, "unit")), "bytes");
    CHECK_STR(json_string_value(json_object_get(j, "heap_view")), "allocated");
    CHECK_EQ(value(j, "samples"), 4);
    CHECK_EQ(value(j, "weight"), 3 * 524320 + (1 << 20));
    /* 3 x 8192.5 rounded as the kernel does, and the big block's 1. */
    CHECK_EQ(value(j, "objects"), 24578 + 1);
    json_t *tree = json_object_get(j, "tree");
    CHECK_EQ(value(tree, "value"), 3 * 524320 + (1 << 20));
    const char *step[] = { "10.0.0.1:9000", "burn", "caller", "spin", "step", NULL };
    const char *spin[] = { "10.0.0.1:9000", "burn", "caller", "spin", NULL };
    CHECK_EQ(value(node(tree, step), "value"), 3 * 524320);
    CHECK_EQ(value(node(tree, spin), "value"), 3 * 524320 + (1 << 20));
    json_decref(j);
    sv_reply_free(&r);
    /* A range without heap records: empty, objects 0; CPU samples unchanged. */
    j = get(&f, "/api/flame", "from=0&to=9000&kind=heap", &r);
    CHECK_EQ(value(j, "objects"), 0);
    CHECK_EQ(value(json_object_get(j, "tree"), "value"), 0);
    json_decref(j);
    sv_reply_free(&r);
    j = get(&f, "/api/flame", "from=0&to=26000", &r);
    CHECK_EQ(value(j, "samples"), 65);
    CHECK(json_object_get(j, "objects") == NULL);
    json_decref(j);
    sv_reply_free(&r);
    CHECK(get(&f, "/download/selection.pb.gz", "from=0&to=26000&kind=heap", &r) == NULL);
    CHECK_EQ(r.status, 200);
    CHECK(r.len > 20 && (unsigned char)r.body[0] == 0x1f && (unsigned char)r.body[1] == 0x8b);
    sv_reply_free(&r);
    CHECK(get(&f, "/download/selection.folded", "from=0&to=26000&kind=heap", &r) == NULL);
    char want[64];
    snprintf(want, sizeof want, "10.0.0.1:9000;burn;caller;spin;step %d\n", 3 * 524320);
    CHECK(r.body && strstr(r.body, want) != NULL);
    sv_reply_free(&r);
    teardown(&f);
}

/* by=frame: the fleet's frames merged, no kernel nor task level; by=task:
 * the tasks under the root; by=kernel (the default for 2 kernels): a
 * frame per kernel. The totals are the same. */
TEST(api_flame_by_kernel_task_or_frame)
{
    struct fixture f;
    setup(&f);
    struct sv_reply r;
    json_t *j = get(&f, "/api/flame", "from=0&to=26000&by=frame", &r);
    CHECK_EQ(r.status, 200);
    json_t *tree = json_object_get(j, "tree");
    CHECK_EQ(value(tree, "value"), 65);
    const char *outer[] = { "caller", NULL };
    CHECK(node(tree, outer) != NULL);
    CHECK_EQ(value(node(tree, outer), "value"), 65);   /* both kernels' frames as one */
    json_decref(j);
    sv_reply_free(&r);
    j = get(&f, "/api/flame", "from=0&to=26000&by=task", &r);
    const char *burn[] = { "burn", NULL }, *net[] = { "net", NULL };
    CHECK_EQ(value(node(json_object_get(j, "tree"), burn), "value"), 60);
    CHECK_EQ(value(node(json_object_get(j, "tree"), net), "value"), 5);
    json_decref(j);
    sv_reply_free(&r);
    j = get(&f, "/api/flame", "from=0&to=26000", &r);
    const char *k1[] = { "10.0.0.2:9000", "net", NULL };
    CHECK_EQ(value(node(json_object_get(j, "tree"), k1), "value"), 5);
    json_decref(j);
    sv_reply_free(&r);
    j = get(&f, "/api/flame", "by=stack", &r);
    CHECK_EQ(r.status, 400);
    CHECK(strstr(json_string_value(json_object_get(j, "error")),
                 "by=stack unknown (known: kernel, task, frame)") != NULL);
    json_decref(j);
    sv_reply_free(&r);
    teardown(&f);
}

TEST(api_flame_filters)
{
    struct fixture f;
    setup(&f);
    struct sv_reply r;
    static const struct { const char *q; long long samples; } cases[] = {
        { "from=0&to=26000&kernel=1", 5 },
        { "from=0&to=26000&kernel=0", 60 },
        { "from=0&to=26000&kernel=all&pid=7", 60 },
        { "from=0&to=26000&pid=3", 5 },
        { "from=0&to=26000&cpu=1", 50 },
        { "from=0&to=26000&cpu=0&kernel=0", 10 },
        { "from=0&to=26000&kind=offcpu", 0 },
        { "from=0&to=9000", 10 },
        { "from=20000&to=26000", 55 },
    };
    for (unsigned i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *j = get(&f, "/api/flame", cases[i].q, &r);
        CHECK_EQ(r.status, 200);
        if (value(j, "samples") != cases[i].samples)
            printf("  %s: %lld samples, want %lld\n", cases[i].q, value(j, "samples"),
                   cases[i].samples);
        CHECK_EQ(value(j, "samples"), cases[i].samples);
        CHECK_EQ(value(json_object_get(j, "tree"), "value"), cases[i].samples);
        json_decref(j);
        sv_reply_free(&r);
    }
    teardown(&f);
}

TEST(api_diff_deltas_grow_and_shrink)
{
    struct fixture f;
    setup(&f);
    struct sv_reply r;
    json_t *j = get(&f, "/api/diff", "base_from=0&base_to=10000&from=20000&to=26000&kernel=0",
                    &r);
    CHECK_EQ(r.status, 200);
    CHECK_EQ(value(json_object_get(j, "base"), "samples"), 10);
    CHECK_EQ(value(json_object_get(j, "new"), "samples"), 50);
    json_t *tree = json_object_get(j, "tree");
    const char *step[] = { "10.0.0.1:9000", "burn", "caller", "spin", "step", NULL };
    const char *spin[] = { "10.0.0.1:9000", "burn", "caller", "spin", NULL };
    CHECK_EQ(value(node(tree, step), "value"), 30);
    CHECK_EQ(value(node(tree, step), "base"), 10);
    CHECK_EQ(value(node(tree, step), "delta"), 20);
    CHECK_EQ(value(node(tree, spin), "delta"), 40);
    json_decref(j);
    sv_reply_free(&r);
    /* The other way round, the same frames shrink. */
    j = get(&f, "/api/diff", "base_from=20000&base_to=26000&from=0&to=10000&kernel=0", &r);
    tree = json_object_get(j, "tree");
    CHECK_EQ(value(node(tree, step), "delta"), -20);
    json_decref(j);
    sv_reply_free(&r);
    teardown(&f);
}

TEST(api_timeline_fleet_per_second_and_top_kernels)
{
    struct fixture f;
    setup(&f);
    struct sv_reply r;
    json_t *j = get(&f, "/api/timeline", "from=24000&to=26000", &r);
    CHECK_EQ(r.status, 200);
    CHECK_EQ(value(j, "from_s"), 24);
    CHECK_EQ(value(j, "to_s"), 27);
    /* The fleet's line per second: 50 of kernel 0 in second 25, 5 of
     * kernel 1 in second 26. */
    json_t *total = json_object_get(j, "total");
    CHECK_EQ(json_array_size(total), 3);
    CHECK_EQ(json_integer_value(json_array_get(total, 1)), 50);
    CHECK_EQ(json_integer_value(json_array_get(total, 2)), 5);
    /* Each kernel's per bucket (bucket 2, 20-30 s), the most first: kernel
     * 0's 50 over the 6 s of the bucket so far, kernel 1's 5. */
    CHECK_EQ(value(j, "bucket_s"), 10);
    CHECK_EQ(value(j, "from_bucket_s"), 20);
    json_t *ks = json_object_get(j, "kernels");
    CHECK_EQ(json_array_size(ks), 2);
    CHECK_EQ(value(json_array_get(ks, 0), "index"), 0);
    CHECK_EQ(value(json_array_get(ks, 1), "index"), 1);
    json_t *r0 = json_object_get(json_array_get(ks, 0), "rate");
    json_t *r1 = json_object_get(json_array_get(ks, 1), "rate");
    CHECK_EQ(json_array_size(r0), 1);
    CHECK_EQ(json_integer_value(json_array_get(r0, 0)), 8);     /* 50 / 6 s */
    CHECK_EQ(json_integer_value(json_array_get(r1, 0)), 1);     /* 5 / 6 s */
    json_decref(j);
    sv_reply_free(&r);
    /* kernel=1: its line alone. */
    j = get(&f, "/api/timeline", "from=24000&to=26000&kernel=1", &r);
    ks = json_object_get(j, "kernels");
    CHECK_EQ(json_array_size(ks), 1);
    CHECK_EQ(value(json_array_get(ks, 0), "index"), 1);
    json_decref(j);
    sv_reply_free(&r);
    teardown(&f);
}

TEST(api_kernels_paged_and_searched)
{
    struct fixture f;
    setup(&f);
    struct sv_reply r;
    json_t *j = get(&f, "/api/kernels", "offset=1&limit=1", &r);
    CHECK_EQ(r.status, 200);
    CHECK_EQ(value(j, "total"), 2);
    CHECK_EQ(value(j, "matched"), 2);
    json_t *ks = json_object_get(j, "kernels");
    CHECK_EQ(json_array_size(ks), 1);
    CHECK_STR(json_string_value(json_object_get(json_array_get(ks, 0), "name")),
              "10.0.0.2:9000");
    json_decref(j);
    sv_reply_free(&r);
    j = get(&f, "/api/kernels", "q=0.0.1:&state=streaming", &r);
    CHECK_EQ(value(j, "matched"), 1);
    ks = json_object_get(j, "kernels");
    CHECK_EQ(json_array_size(ks), 1);
    CHECK_EQ(value(json_array_get(ks, 0), "index"), 0);
    /* Kernel 0's records over the last whole bucket (10-20 s): none. */
    CHECK_EQ(value(json_array_get(ks, 0), "rate"), 0);
    json_decref(j);
    sv_reply_free(&r);
    j = get(&f, "/api/kernels", "q=nowhere", &r);
    CHECK_EQ(value(j, "matched"), 0);
    CHECK_EQ(json_array_size(json_object_get(j, "kernels")), 0);
    json_decref(j);
    sv_reply_free(&r);
    /* Status: the counts by state. */
    j = get(&f, "/api/status", NULL, &r);
    CHECK_EQ(value(j, "kernel_count"), 2);
    CHECK_EQ(value(json_object_get(j, "kernel_states"), "streaming"), 1);
    CHECK_EQ(value(json_object_get(j, "kernel_states"), "stopped"), 1);
    json_decref(j);
    sv_reply_free(&r);
    const char *bad[][2] = {
        { "limit=0", "limit=0 out of range (1-500)" },
        { "limit=501", "limit=501 out of range (1-500)" },
        { "offset=-1", "offset=-1 out of range (0-4096)" },
        { "page=2", "unknown argument 'page'" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        j = get(&f, "/api/kernels", bad[i][0], &r);
        CHECK_EQ(r.status, 400);
        CHECK(strstr(json_string_value(json_object_get(j, "error")), bad[i][1]) != NULL);
        json_decref(j);
        sv_reply_free(&r);
    }
    teardown(&f);
}

TEST(api_downloads_folded_and_pprof)
{
    struct fixture f;
    setup(&f);
    struct sv_reply r;
    CHECK(get(&f, "/download/selection.folded", "from=0&to=26000&kernel=1", &r) == NULL);
    CHECK_EQ(r.status, 200);
    CHECK_STR(r.filename, "selection.folded");
    char want[] = "10.0.0.2:9000;net;caller;spin 5\n";
    CHECK_EQ(r.len, strlen(want));
    CHECK(r.len == strlen(want) && memcmp(r.body, want, r.len) == 0);
    sv_reply_free(&r);
    CHECK(get(&f, "/download/selection.pb.gz", "from=0&to=26000", &r) == NULL);
    CHECK_EQ(r.status, 200);
    CHECK_STR(r.type, "application/gzip");
    CHECK(r.len > 20 && (unsigned char)r.body[0] == 0x1f && (unsigned char)r.body[1] == 0x8b);
    sv_reply_free(&r);
    teardown(&f);
}

TEST(api_bad_requests_are_4xx_naming_the_problem)
{
    struct fixture f;
    setup(&f);
    static const struct { const char *path, *q; unsigned status; const char *says; } cases[] = {
        { "/api/flame", "from=abc", 400, "from=abc out of range (0-26000 ms" },
        { "/api/flame", "from=-5", 400, "from=-5 out of range" },
        { "/api/flame", "to=26001", 400, "to=26001 out of range (0-26000 ms" },
        { "/api/flame", "from=99999999999999999999999", 400, "out of range" },
        { "/api/flame", "from=20000&to=10000", 400, "an empty range (from < to <= 26000)" },
        { "/api/flame", "from=5&to=5", 400, "an empty range" },
        { "/api/flame", "kernel=2", 400, "kernel=2 out of range (a kernel's index 0-1, or all)" },
        { "/api/flame", "pid=2147483648", 400, "pid 0-2147483647, or all" },
        { "/api/flame", "cpu=4096", 400, "cpu 0-4095, or all" },
        { "/api/flame", "kind=gpu", 400, "kind=gpu unknown (known: cpu, offcpu, heap, lock)" },
        { "/api/flame", "bogus=1", 400, "unknown argument 'bogus'" },
        { "/api/flame", "from", 400, "from: no value" },
        { "/api/diff", "from=0&to=100", 400, "a diff needs base_from and base_to" },
        { "/api/diff", "base_from=9&base_to=3", 400, "base_from=9 base_to=3: an empty range" },
        { "/api/status", "x=1", 400, "takes no arguments" },
        { "/api/nope", NULL, 404, "no such page: /api/nope" },
        { "/../etc/passwd", NULL, 404, "no such page" },
    };
    for (unsigned i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct sv_reply r;
        json_t *j = get(&f, cases[i].path, cases[i].q, &r);
        const char *e = json_string_value(json_object_get(j, "error"));
        if (r.status != cases[i].status || !e || !strstr(e, cases[i].says))
            printf("  %s?%s: %u %s\n", cases[i].path, cases[i].q ? cases[i].q : "", r.status,
                   e ? e : "(no error)");
        CHECK_EQ(r.status, cases[i].status);
        CHECK(e && strstr(e, cases[i].says));
        json_decref(j);
        sv_reply_free(&r);
    }
    teardown(&f);
}

/* The error's text, or "" when the reply is not {"error": S} JSON. */
static const char *error_of(json_t *j)
{
    const char *e = json_string_value(json_object_get(j, "error"));
    return e ? e : "";
}

TEST(api_echoed_bytes_are_escaped_never_an_exit)
{
    struct fixture f;
    setup(&f);
    struct sv_reply r;
    /* Invalid UTF-8 in the path, in a value, and a 2-byte character cut
     * by the message's %.100s: each a 4xx whose JSON shows the bytes. */
    json_t *j = get(&f, "/\xff", NULL, &r);
    CHECK_EQ(r.status, 404);
    CHECK(strstr(error_of(j), "no such page: /\\xff") != NULL);
    json_decref(j);
    sv_reply_free(&r);
    j = get(&f, "/api/flame", "kind=\xff\x01", &r);
    CHECK_EQ(r.status, 400);
    CHECK(strstr(error_of(j), "kind=\\xff\\x01 unknown") != NULL);
    json_decref(j);
    sv_reply_free(&r);
    char path[128] = "/";
    memset(path + 1, 'a', 98);
    memcpy(path + 99, "\xc3\xa9", 3);
    j = get(&f, path, NULL, &r);
    CHECK_EQ(r.status, 404);
    CHECK(strstr(error_of(j), "aaa\\xc3 (known:") != NULL);
    json_decref(j);
    sv_reply_free(&r);
    teardown(&f);
}

TEST(api_status_takes_any_bytes_a_kernel_names_and_pids_past_2_31)
{
    struct fixture f;
    setup(&f);
    /* A task name and a source from the wire that are not UTF-8, and a
     * pid that an int cannot hold. */
    snprintf(f.s[0].tasks[0].name, sizeof f.s[0].tasks[0].name, "bu\xffrn");
    snprintf(f.s[0].meta.source, sizeof f.s[0].meta.source, "tick\xc3");
    f.s[1].tasks[0].pid = 4294967280u;
    struct sv_reply r;
    json_t *j = get(&f, "/api/status", NULL, &r);
    CHECK_EQ(r.status, 200);
    json_t *k0 = json_array_get(json_object_get(j, "kernels"), 0);
    json_t *k1 = json_array_get(json_object_get(j, "kernels"), 1);
    json_t *t0 = json_array_get(json_object_get(k0, "tasks"), 0);
    json_t *t1 = json_array_get(json_object_get(k1, "tasks"), 0);
    CHECK_STR(json_string_value(json_object_get(t0, "name")), "bu\xef\xbf\xbdrn");
    CHECK_STR(json_string_value(json_object_get(k0, "source")), "tick\xef\xbf\xbd");
    CHECK(json_integer_value(json_object_get(t1, "pid")) == 4294967280ll);
    json_decref(j);
    sv_reply_free(&r);
    teardown(&f);
}

TEST(api_timeline_is_clamped_to_the_history)
{
    struct fixture f;
    setup(&f);
    /* A month on serve's clock: from=0 asks for 2.6 million seconds per
     * kernel, of which the history holds SV_HIST_SECONDS. */
    sv_hist_advance(f.st.h, 30ull * 86400 * 1000);
    struct sv_reply r;
    json_t *j = get(&f, "/api/timeline", "from=0", &r);
    CHECK_EQ(r.status, 200);
    /* The fleet's line, a value a second, and the busiest kernels' (none
     * now: their records left the history), a value a bucket. */
    size_t n = json_array_size(json_object_get(j, "total"));
    CHECK(n > 0 && n <= SV_HIST_SECONDS + 1);
    CHECK_EQ(json_array_size(json_object_get(j, "kernels")), 0);
    CHECK(value(j, "from_s") * 1000 >= (long long)sv_hist_oldest(f.st.h));
    json_decref(j);
    sv_reply_free(&r);
    teardown(&f);
}
