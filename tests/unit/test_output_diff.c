// LINK: tools/cmd/diff.c tools/output/diff.c tools/model/pprof_read.c tools/output/html.c tools/output/flame_json.c build/web/assets.c tools/output/folded.c tools/model/model.c tools/output/pprof.c tools/output/svg.c tools/model/sym.c uapi/profile_raw.c build/host/proto/profile.pb-c.c
// LIBS: -Ibuild/host/proto -lprotobuf-c -lz -lelf -ldw -ljansson
/* tests/unit/test_output_diff.c: differential profiles
 * (tools/output/diff.c): the merge of two stack lists, the .folded
 * (difffolded) and .txt writers, and the SVG's colours; the pprof reader
 * (tools/model/pprof_read.c): what sp_pprof_write wrote comes back
 * chain for chain and name for name, for CPU, heap and off-CPU profiles,
 * what is not a Sonde profile is refused with why, and .pb.gz inputs
 * diff as their raw profiles do. Here rather than in a file of its own:
 * this test already builds everything the reader needs. */
#include "test.h"
#include "tools/cmd/cmd.h"
#include "tools/output/diff.h"
#include "tools/model/pprof_read.h"
#include "pprof_read_fixture.h"
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>
#include "profile.pb-c.h"

static const char *sa[] = { "shell", "main", "leak" };
static const char *sb[] = { "shell", "main", "ok" };
static const char *sc[] = { "shell", "gone" };

static void two_lists(struct sp_stacks *b, struct sp_stacks *n)
{
    static struct sp_stack bv[2], nv[2];
    bv[0] = (struct sp_stack){ sc, 2, 50 };          /* sorted by names: gone < main */
    bv[1] = (struct sp_stack){ sa, 3, 100 };
    nv[0] = (struct sp_stack){ sa, 3, 400 };
    nv[1] = (struct sp_stack){ sb, 3, 30 };
    *b = (struct sp_stacks){ bv, 2, 150 };
    *n = (struct sp_stacks){ nv, 2, 430 };
}

static char *written(int (*fn)(const struct sp_diff *, FILE *), const struct sp_diff *d)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK_EQ(fn(d, f), 0);
    fclose(f);
    return buf;
}

static int text_bytes(const struct sp_diff *d, FILE *f)
{
    return sp_diff_text(d, "bytes", f);
}

static int svg(const struct sp_diff *d, FILE *f)
{
    return sp_diff_svg(d, "t", f);
}

TEST(diff_merge_folded_text_svg)
{
    struct sp_stacks b, n;
    two_lists(&b, &n);
    struct sp_diff d;
    sp_diff_build(&b, &n, &d);
    CHECK_EQ(d.n, 3);
    CHECK_EQ(d.base_total, 150);
    CHECK_EQ(d.new_total, 430);
    char *s = written(sp_diff_folded, &d);
    CHECK_STR(s, "shell;gone 50 0\nshell;main;leak 100 400\nshell;main;ok 0 30\n");
    free(s);
    s = written(text_bytes, &d);
    CHECK(strstr(s, "base 150 bytes, new 430 bytes, change +280 bytes\n") != NULL);
    char *leak = strstr(s, "shell;main;leak"), *ok = strstr(s, "shell;main;ok"),
         *gone = strstr(s, "shell;gone");
    CHECK(leak && ok && gone && leak < ok && ok < gone);     /* by growth */
    CHECK(strstr(s, "+300   +300.0%") != NULL);
    CHECK(strstr(s, "+30       new") != NULL);
    CHECK(strstr(s, "-50   -100.0%") != NULL);
    free(s);
    s = written(svg, &d);
    CHECK(strstr(s, "leak (base 100, new 400, +300)") != NULL);
    CHECK(strstr(s, "rgb(255,63,63)") != NULL);   /* leak: grew by 3/4 of 400: 1/4 white */
    CHECK(strstr(s, "gone") == NULL);                         /* not in NEW: no width */
    free(s);
    sp_diff_free(&d);
}

/* The two files a diff reads, written in turn to path. */
static char *diff_output(const char *base, const char *new_, bool pb, const char *ext)
{
    struct sp_profile p;
    sp_profile_init(&p);
    char err[SP_ERR_MAX] = "";
    if (pb) {
        size_t lb, ln;
        char *gb = as_pprof(base, &lb), *gn = as_pprof(new_, &ln);
        CHECK_EQ(sp_pprof_read_mem(&p, gb, lb, "b.pb.gz", "base", err, sizeof err), 0);
        CHECK_EQ(sp_pprof_read_mem(&p, gn, ln, "n.pb.gz", "new", err, sizeof err), 0);
        free(gb);
        free(gn);
    } else {
        load_raw(&p, base, "base");
        load_raw(&p, new_, "new");
        name_all(&p);
    }
    char path[64];
    snprintf(path, sizeof path, "/tmp/sonde-pprof-read-%d%s", (int)getpid(), ext);
    CHECK_EQ(sp_diff_write(&p, path, err, sizeof err), 0);
    char *text = NULL;
    size_t len;
    CHECK_EQ(sp_profile_read_file(path, &text, &len, err, sizeof err), 0);
    remove(path);
    sp_profile_free(&p);
    return text;
}

/* The diff of two .pb.gz is the diff of the raw profiles they came from:
 * .folded and .txt alike, CPU, heap and off-CPU (its reasons kept). */
TEST(pprof_read_diff_equals_raw_diff)
{
    const char *pairs[3][2] = { { cpu_base, cpu_new }, { heap_base, heap_new },
                                { off_base, off_new } };
    const char *exts[] = { ".folded", ".txt" };
    for (unsigned k = 0; k < 3; k++) {
        for (unsigned e = 0; e < 2; e++) {
            char *raw = diff_output(pairs[k][0], pairs[k][1], false, exts[e]);
            char *pb = diff_output(pairs[k][0], pairs[k][1], true, exts[e]);
            CHECK(raw && pb && strlen(raw) > 20);
            CHECK_STR(pb, raw);
            free(raw);
            free(pb);
        }
    }
    char *t = diff_output(heap_base, heap_new, true, ".txt");
    CHECK(strstr(t, "base 9232 bytes, new 15472 bytes, change +6240 bytes\n") != NULL);
    free(t);
    t = diff_output(off_base, off_new, true, ".folded");
    CHECK(strstr(t, "burn;fn_ffffffff802000;fn_ffffffff80104a;[waitq virtio-rx] 4500 9000\n"));
    free(t);
}

/* A diff's .pb.gz (BASE negated) read back is refused, not misread. */
TEST(pprof_read_refuses_a_diff)
{
    struct sp_profile p;
    sp_profile_init(&p);
    load_raw(&p, cpu_base, "base");
    load_raw(&p, cpu_new, "new");
    name_all(&p);
    p.inputs[0].pi_negate = true;
    char *buf = NULL, err[SP_ERR_MAX] = "";
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    CHECK_EQ(sp_pprof_write(&p, f, err, sizeof err), 0);
    fclose(f);
    sp_profile_free(&p);
    refused(buf, len, "negative sample values");
    free(buf);
}

static void write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK_EQ(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* The command on two .pb.gz: no ELF needed; the build ids the mappings
 * carry must match, or --force compares them by name; kinds must match. */
TEST(pprof_read_diff_command_build_ids_and_kinds)
{
    static const char other[] =
        "# sonde raw build-id=ffffffffffffffffffffffffffffffffffffffff source=tick 100Hz "
        "samples=1 dropped=0 cpus=1 ms=1000\n1 7 burn 1 ffffffff80104a1c\n";
    char b[64], n[64], o[64], h[64];
    int pid = (int)getpid();
    snprintf(b, sizeof b, "/tmp/sonde-prd-%d-b.pb.gz", pid);
    snprintf(n, sizeof n, "/tmp/sonde-prd-%d-n.pb.gz", pid);
    snprintf(h, sizeof h, "/tmp/sonde-prd-%d-h.pb.gz", pid);
    snprintf(o, sizeof o, "/tmp/sonde-prd-%d-o.txt", pid);
    size_t len;
    char *gz = as_pprof(cpu_base, &len);
    write_file(b, gz, len);
    free(gz);
    gz = as_pprof(other, &len);
    write_file(n, gz, len);
    free(gz);
    gz = as_pprof(heap_new, &len);
    write_file(h, gz, len);
    free(gz);
    char *same[] = { "diff", b, b, "-o", o, NULL };
    CHECK_EQ(sp_diff_main(5, same), 0);
    char *differ[] = { "diff", b, n, "-o", o, NULL };
    CHECK_EQ(sp_diff_main(5, differ), 2);
    char *forced[] = { "diff", b, n, "-o", o, "--force", NULL };
    CHECK_EQ(sp_diff_main(6, forced), 0);
    char *kinds[] = { "diff", b, h, "-o", o, NULL };
    CHECK_EQ(sp_diff_main(5, kinds), 2);
    /* A raw profile still needs its ELF. */
    write_file(o, cpu_base, strlen(cpu_base));
    char *noelf[] = { "diff", o, b, "-o", h, NULL };
    CHECK_EQ(sp_diff_main(5, noelf), 2);
    remove(b);
    remove(n);
    remove(h);
    remove(o);
}

/* ---- the pprof reader ---- */


TEST(pprof_read_cpu_round_trip)
{
    size_t len;
    char *gz = as_pprof(cpu_base, &len);
    struct sp_profile p;
    sp_profile_init(&p);
    char err[SP_ERR_MAX] = "";
    CHECK_EQ(sp_pprof_read_mem(&p, gz, len, "b.pb.gz", "base", err, sizeof err), 0);
    CHECK_STR(err, "");
    CHECK_EQ(p.ninputs, 1);
    CHECK_EQ(p.inputs[0].pi_hdr.ph_kind, PRAW_KIND_CPU);
    CHECK_STR(p.inputs[0].pi_hdr.ph_build_id, BID);
    CHECK_STR(p.inputs[0].pi_kernel, "base");
    CHECK_EQ(p.inputs[0].pi_period_ns, 10000000);
    CHECK_EQ(p.inputs[0].pi_hdr.ph_samples, 6);
    CHECK_EQ(p.inputs[0].pi_hdr.ph_ms, 1000);
    CHECK_EQ(p.nchains, 2);
    const struct sp_chain *burn = p.chains[0].c_pid == 7 ? &p.chains[0] : &p.chains[1];
    const struct sp_chain *sh = burn == &p.chains[0] ? &p.chains[1] : &p.chains[0];
    CHECK_EQ(burn->c_count, 4);
    CHECK_EQ(burn->c_weight, 4);
    CHECK_EQ(burn->c_cpu, 1);
    CHECK_STR(burn->c_task, "burn");
    CHECK_EQ(burn->c_depth, 3);
    CHECK_STR(leaf(burn), "fn_ffffffff80104a");
    CHECK_EQ(burn->c_locs[0]->pl_frames[0].pf_line, 0x1c);
    CHECK_STR(burn->c_locs[0]->pl_frames[0].pf_file, "kernel/x.c");
    CHECK_STR(burn->c_locs[2]->pl_frames[0].pf_func, "fn_ffffffff802000");
    CHECK_EQ(sh->c_count, 2);
    CHECK_EQ(sh->c_pid, 9);
    CHECK_STR(sh->c_task, "shell");
    /* The caller both chains share is one location of the model. */
    CHECK(burn->c_locs[2] == sh->c_locs[1]);
    sp_profile_free(&p);
    free(gz);
}

TEST(pprof_read_heap_round_trip)
{
    size_t len;
    char *gz = as_pprof(heap_new, &len);
    struct sp_profile p;
    sp_profile_init(&p);
    char err[SP_ERR_MAX] = "";
    CHECK_EQ(sp_pprof_read_mem(&p, gz, len, "n.pb.gz", "new", err, sizeof err), 0);
    CHECK_EQ(p.inputs[0].pi_hdr.ph_kind, PRAW_KIND_HEAP);
    CHECK_STR(p.inputs[0].pi_hdr.ph_source, "heap inuse rate 1024");
    CHECK_EQ(p.nchains, 2);
    uint64_t w = 0, o = 0;
    for (size_t i = 0; i < p.nchains; i++) {
        w += p.chains[i].c_weight;
        o += p.chains[i].c_objects;
        if (p.chains[i].c_weight == 7280)
            CHECK_EQ(p.chains[i].c_objects, 112);
    }
    CHECK_EQ(w, 8192 + 7280);
    CHECK_EQ(o, 2 + 112);
    sp_profile_free(&p);
    free(gz);
}

/* A hand-made profile: sample types, one mapping, one location, one
 * sample with values v (nv of them); gzip'd with zlib's framing (the
 * reader takes either). */
static char *hand_made(const char *const types[][2], unsigned ntypes, const int64_t *v,
                       unsigned nv, uint64_t loc_ref, size_t *len)
{
    Perftools__Profiles__Profile m = PERFTOOLS__PROFILES__PROFILE__INIT;
    char *strs[32] = { "" };
    size_t ns = 1;
    Perftools__Profiles__ValueType vt[4], *vtp[4];
    for (unsigned i = 0; i < ntypes; i++) {
        perftools__profiles__value_type__init(&vt[i]);
        strs[ns] = (char *)types[i][0];
        vt[i].type = (int64_t)ns++;
        strs[ns] = (char *)types[i][1];
        vt[i].unit = (int64_t)ns++;
        vtp[i] = &vt[i];
    }
    m.n_sample_type = ntypes;
    m.sample_type = vtp;
    Perftools__Profiles__Mapping mp = PERFTOOLS__PROFILES__MAPPING__INIT, *mpp = &mp;
    mp.id = 1;
    strs[ns] = "kernel.elf";
    mp.filename = (int64_t)ns++;
    strs[ns] = BID;
    mp.build_id = (int64_t)ns++;
    m.n_mapping = 1;
    m.mapping = &mpp;
    Perftools__Profiles__Function fn = PERFTOOLS__PROFILES__FUNCTION__INIT, *fnp = &fn;
    fn.id = 1;
    strs[ns] = "[waitq virtio-rx]";
    fn.name = (int64_t)ns++;
    m.n_function = 1;
    m.function = &fnp;
    Perftools__Profiles__Line ln = PERFTOOLS__PROFILES__LINE__INIT, *lnp = &ln;
    ln.function_id = 1;
    Perftools__Profiles__Location loc = PERFTOOLS__PROFILES__LOCATION__INIT, *locp = &loc;
    loc.id = 1;
    loc.mapping_id = 1;
    loc.address = 0x1000;
    loc.n_line = 1;
    loc.line = &lnp;
    m.n_location = 1;
    m.location = &locp;
    Perftools__Profiles__Sample s = PERFTOOLS__PROFILES__SAMPLE__INIT, *sp = &s;
    uint64_t ref = loc_ref;
    s.n_location_id = 1;
    s.location_id = &ref;
    s.n_value = nv;
    s.value = (int64_t *)v;
    m.n_sample = 1;
    m.sample = &sp;
    m.period = 1000;
    m.n_string_table = ns;
    m.string_table = strs;
    size_t n = perftools__profiles__profile__get_packed_size(&m);
    uint8_t *raw = malloc(n);
    perftools__profiles__profile__pack(&m, raw);
    uLongf out = compressBound(n);
    char *gz = malloc(out);
    CHECK_EQ(compress((Bytef *)gz, &out, raw, n), Z_OK);
    free(raw);
    *len = out;
    return gz;
}

/* Off-CPU: samples/count beside off_cpu/nanoseconds; the weight is the
 * nanoseconds, and a leaf named as a reason is the chain's reason. */
TEST(pprof_read_offcpu)
{
    const char *const types[][2] = { { "samples", "count" }, { "off_cpu", "nanoseconds" } };
    const int64_t v[] = { 3, 4500000 };
    size_t len;
    char *gz = hand_made(types, 2, v, 2, 1, &len);
    struct sp_profile p;
    sp_profile_init(&p);
    char err[SP_ERR_MAX] = "";
    CHECK_EQ(sp_pprof_read_mem(&p, gz, len, "o.pb.gz", "base", err, sizeof err), 0);
    CHECK_EQ(p.inputs[0].pi_hdr.ph_kind, PRAW_KIND_OFFCPU);
    CHECK_EQ(p.nchains, 1);
    CHECK_EQ(p.chains[0].c_count, 3);
    CHECK_EQ(p.chains[0].c_weight, 4500000);
    /* The leaf was the reason: the chain's reason now, no frame left. */
    CHECK_EQ(p.chains[0].c_why, PRAW_WHY_WAITQ);
    CHECK_STR(p.chains[0].c_name, "virtio-rx");
    CHECK_STR(p.chains[0].c_reason->pl_frames[0].pf_func, "[waitq virtio-rx]");
    CHECK_EQ(p.chains[0].c_depth, 0);
    CHECK_STR(p.chains[0].c_task, "-");
    sp_profile_free(&p);
    free(gz);
}

/* A lock profile (record --lock's): Go's mutex types read back as the
 * lock kind, the root a lock again, a chain's count its waits. */
TEST(pprof_read_lock_round_trip)
{
    size_t len;
    char *gz = as_pprof(lock_base, &len);
    struct sp_profile p;
    sp_profile_init(&p);
    char err[SP_ERR_MAX] = "";
    CHECK_EQ(sp_pprof_read_mem(&p, gz, len, "l.pb.gz", "base", err, sizeof err), 0);
    CHECK_STR(err, "");
    CHECK_EQ(p.inputs[0].pi_hdr.ph_kind, PRAW_KIND_LOCK);
    CHECK_EQ(p.nchains, 2);
    const struct sp_chain *m = p.chains[0].c_why == PRAW_WHY_MUTEX ? &p.chains[0] : &p.chains[1];
    const struct sp_chain *s = m == &p.chains[0] ? &p.chains[1] : &p.chains[0];
    CHECK(m->c_lock && s->c_lock);
    CHECK_STR(m->c_name, "probe-m");
    CHECK_STR(m->c_reason->pl_frames[0].pf_func, "[mutex probe-m]");
    CHECK_EQ(m->c_objects, 10);
    CHECK_EQ(m->c_count, 10);
    CHECK_EQ(m->c_weight, 30000000);
    CHECK_EQ(m->c_depth, 2);
    CHECK_EQ(s->c_why, PRAW_WHY_SPIN);
    CHECK_STR(s->c_reason->pl_frames[0].pf_func, "[spin probe-s]");
    CHECK_EQ(s->c_objects, 2);
    CHECK_EQ(s->c_depth, 1);
    sp_profile_free(&p);
    free(gz);
}

TEST(pprof_read_refusals)
{
    refused("# sonde raw", 11, "not a gzip-compressed pprof profile");
    /* gzip'd bytes that are no Profile. */
    uLongf out = 64;
    char junk[64];
    CHECK_EQ(compress((Bytef *)junk, &out, (const Bytef *)"\xff\xff\xff\xff", 4), Z_OK);
    refused(junk, out, "not a pprof profile");
    /* A cut-off file. */
    size_t len;
    char *gz = as_pprof(cpu_base, &len);
    refused(gz, len / 2, "not a gzip-compressed pprof profile");
    free(gz);
    /* Another tool's sample types. */
    const char *const other[][2] = { { "alloc", "count" }, { "contentions", "count" } };
    const int64_t v[] = { 1, 2 };
    gz = hand_made(other, 2, v, 2, 1, &len);
    refused(gz, len, "sample types [alloc/count, contentions/count] are none of Sonde's kinds");
    free(gz);
    /* A sample naming a location that is not there. */
    const char *const off[][2] = { { "samples", "count" }, { "off_cpu", "nanoseconds" } };
    gz = hand_made(off, 2, v, 2, 5, &len);
    refused(gz, len, "names location 5, which is not in the file");
    free(gz);
    /* Negative values: a diff's own output is no BASE. */
    const int64_t neg[] = { -1, -2 };
    gz = hand_made(off, 2, neg, 2, 1, &len);
    refused(gz, len, "negative sample values");
    free(gz);
}

