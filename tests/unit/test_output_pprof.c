// LINK: tools/output/pprof.c tools/model/model.c uapi/profile_raw.c build/host/proto/profile.pb-c.c
// LIBS: -Ibuild/host/proto -lprotobuf-c -lz
/* tests/unit/test_output_pprof.c: the pprof writer, checked by decoding what
 * it wrote with protobuf-c and walking every table. */
#include "test.h"
#include "pipeline_fixture.h"
#include "profile.pb-c.h"
#include "tools/output/pprof.h"
#include <stdlib.h>
#include <zlib.h>

typedef Perftools__Profiles__Profile Profile;

static Profile *decode(const struct sp_profile *p)
{
    size_t len;
    uint8_t *buf = sp_pprof_pack(p, &len);
    Profile *m = perftools__profiles__profile__unpack(NULL, len, buf);
    free(buf);
    return m;
}

static const char *str(const Profile *m, int64_t i)
{
    return i >= 0 && (size_t)i < m->n_string_table ? m->string_table[i] : NULL;
}

static const char *label(const Profile *m, const Perftools__Profiles__Sample *s,
                         const char *key)
{
    for (size_t i = 0; i < s->n_label; i++)
        if (strcmp(str(m, s->label[i]->key), key) == 0)
            return str(m, s->label[i]->str);
    return NULL;
}

/* A numeric label's value; -1 if absent, -2 without its unit (pprof
 * would drop a 0 without one). */
static int64_t num_label(const Profile *m, const Perftools__Profiles__Sample *s,
                         const char *key)
{
    for (size_t i = 0; i < s->n_label; i++)
        if (strcmp(str(m, s->label[i]->key), key) == 0)
            return s->label[i]->str == 0 && s->label[i]->num_unit != 0 &&
                   strcmp(str(m, s->label[i]->num_unit), key) == 0
                   ? s->label[i]->num : -2;
    return -1;
}

TEST(pprof_tables_are_consistent)
{
    struct sp_profile p;
    CHECK_EQ(fix_load(&p), 0);
    Profile *m = decode(&p);
    CHECK(m != NULL);
    if (!m) {
        sp_profile_free(&p);
        return;
    }
    CHECK(m->n_string_table > 0);
    CHECK_STR(m->string_table[0], "");
    for (size_t i = 0; i < m->n_function; i++) {
        CHECK(m->function[i]->id != 0);
        for (size_t j = 0; j < i; j++)
            CHECK(m->function[i]->id != m->function[j]->id);
        CHECK(str(m, m->function[i]->name) != NULL);
    }
    for (size_t i = 0; i < m->n_location; i++) {
        Perftools__Profiles__Location *l = m->location[i];
        CHECK(l->id != 0);
        CHECK_EQ(l->mapping_id, 1);
        for (size_t j = 0; j < i; j++)
            CHECK(l->id != m->location[j]->id);
        CHECK(l->n_line >= 1);
        for (size_t k = 0; k < l->n_line; k++) {
            int found = 0;
            for (size_t f = 0; f < m->n_function; f++)
                found |= m->function[f]->id == l->line[k]->function_id;
            CHECK(found);
        }
    }
    for (size_t i = 0; i < m->n_sample; i++)
        for (size_t k = 0; k < m->sample[i]->n_location_id; k++) {
            int found = 0;
            for (size_t j = 0; j < m->n_location; j++)
                found |= m->location[j]->id == m->sample[i]->location_id[k];
            CHECK(found);
        }
    perftools__profiles__profile__free_unpacked(m, NULL);
    sp_profile_free(&p);
}

TEST(pprof_types_values_and_labels)
{
    struct sp_profile p;
    CHECK_EQ(fix_load(&p), 0);
    Profile *m = decode(&p);
    CHECK(m != NULL);
    if (!m) {
        sp_profile_free(&p);
        return;
    }
    CHECK_EQ(m->n_sample_type, 2);
    CHECK_STR(str(m, m->sample_type[0]->type), "samples");
    CHECK_STR(str(m, m->sample_type[0]->unit), "count");
    CHECK_STR(str(m, m->sample_type[1]->type), "cpu");
    CHECK_STR(str(m, m->sample_type[1]->unit), "nanoseconds");
    CHECK_EQ(m->duration_nanos, 2000000000ll);
    CHECK_EQ(m->n_sample, 4);
    static const struct { uint64_t count, period; int64_t pid; const char *task;
                          int64_t cpu; const char *kernel; } want[] = {
        { 6, 1000000, 7, "burn", 0, "k1" },
        { 3, 1000000, 7, "burn", 1, "k1" },
        { 1, 1000000, 0, "idle", 1, "k1" },
        { 5, 10000000, 3, "net", 0, "k2" },
    };
    for (size_t i = 0; i < 4 && i < m->n_sample; i++) {
        Perftools__Profiles__Sample *s = m->sample[i];
        CHECK_EQ(s->n_value, 2);
        CHECK_EQ(s->value[0], want[i].count);
        CHECK_EQ(s->value[1], want[i].count * want[i].period);
        CHECK_EQ(num_label(m, s, "pid"), want[i].pid);
        CHECK_STR(label(m, s, "task"), want[i].task);
        CHECK_EQ(num_label(m, s, "cpu"), want[i].cpu);
        CHECK_STR(label(m, s, "kernel"), want[i].kernel);
    }
    CHECK_EQ(m->n_mapping, 1);
    CHECK_EQ(m->mapping[0]->id, 1);
    CHECK_STR(str(m, m->mapping[0]->build_id), FIX_BID);
    CHECK_STR(str(m, m->mapping[0]->filename), "kernel.elf");
    CHECK_EQ(m->mapping[0]->memory_start, 0x1000);
    CHECK_EQ(m->mapping[0]->memory_limit, 0x4000);
    CHECK(m->mapping[0]->has_inline_frames);
    perftools__profiles__profile__free_unpacked(m, NULL);
    sp_profile_free(&p);
}

/* 0x1010 is step inlined into spin: one location, two lines, innermost
 * first; the leaf comes first in a sample's location ids. */
TEST(pprof_inlined_lines_and_leaf_first)
{
    struct sp_profile p;
    CHECK_EQ(fix_load(&p), 0);
    Profile *m = decode(&p);
    CHECK(m != NULL);
    if (!m) {
        sp_profile_free(&p);
        return;
    }
    Perftools__Profiles__Sample *s = m->sample[0];
    CHECK_EQ(s->n_location_id, 3);
    Perftools__Profiles__Location *leaf = NULL;
    for (size_t i = 0; i < m->n_location; i++)
        if (m->location[i]->id == s->location_id[0])
            leaf = m->location[i];
    CHECK(leaf != NULL);
    if (leaf) {
        CHECK_EQ(leaf->address, 0x1010);
        CHECK_EQ(leaf->n_line, 2);
        const char *names[2] = { "step", "spin" };
        const int64_t lines[2] = { 5, 12 }, starts[2] = { 3, 10 };
        for (size_t k = 0; k < 2 && k < leaf->n_line; k++) {
            Perftools__Profiles__Function *f = NULL;
            for (size_t j = 0; j < m->n_function; j++)
                if (m->function[j]->id == leaf->line[k]->function_id)
                    f = m->function[j];
            CHECK(f != NULL);
            if (!f)
                continue;
            CHECK_STR(str(m, f->name), names[k]);
            CHECK_EQ(leaf->line[k]->line, lines[k]);
            CHECK_EQ(f->start_line, starts[k]);
            CHECK_STR(str(m, f->filename), k == 0 ? "a.h" : "a.c");
        }
    }
    /* spin appears at 0x1010 and 0x1020: one function, not two. */
    unsigned spins = 0;
    for (size_t j = 0; j < m->n_function; j++)
        spins += strcmp(str(m, m->function[j]->name), "spin") == 0;
    CHECK_EQ(spins, 1);
    perftools__profiles__profile__free_unpacked(m, NULL);
    sp_profile_free(&p);
}

TEST(pprof_file_is_gzip_of_the_message)
{
    struct sp_profile p;
    CHECK_EQ(fix_load(&p), 0);
    FILE *f = tmpfile();
    char err[SP_ERR_MAX];
    CHECK_EQ(sp_pprof_write(&p, f, err, sizeof err), 0);
    long n = ftell(f);
    rewind(f);
    uint8_t *gz = malloc((size_t)n);
    CHECK_EQ(fread(gz, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    CHECK(n > 18 && gz[0] == 0x1f && gz[1] == 0x8b);    /* gzip magic */
    size_t len;
    uint8_t *want = sp_pprof_pack(&p, &len);
    uint8_t *got = malloc(len + 16);
    z_stream z;
    memset(&z, 0, sizeof z);
    CHECK_EQ(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = gz;
    z.avail_in = (uInt)n;
    z.next_out = got;
    z.avail_out = (uInt)(len + 16);
    CHECK_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
    CHECK_EQ(z.total_out, len);
    CHECK(memcmp(got, want, len) == 0);
    inflateEnd(&z);
    free(got);
    free(want);
    free(gz);
    sp_profile_free(&p);
}

TEST(pprof_empty_profile)
{
    struct sp_profile p;
    char err[SP_ERR_MAX];
    sp_profile_init(&p);
    unsigned mp = sp_profile_add_map(&p, "k.elf");
    const char t[] = "# sonde raw build-id=" FIX_BID " source=tick 100Hz "
                     "samples=0 dropped=0 cpus=0 ms=5\n";
    CHECK_EQ(sp_profile_add_raw(&p, t, strlen(t), "e", "e", mp, err, sizeof err), 0);
    Profile *m = decode(&p);
    CHECK(m != NULL);
    if (m) {
        CHECK_EQ(m->n_sample, 0);
        CHECK_STR(m->string_table[0], "");
        perftools__profiles__profile__free_unpacked(m, NULL);
    }
    sp_profile_free(&p);
}

TEST(model_rejects_unknown_source)
{
    struct sp_profile p;
    char err[SP_ERR_MAX];
    sp_profile_init(&p);
    unsigned mp = sp_profile_add_map(&p, "k.elf");
    const char t[] = "# sonde raw build-id=" FIX_BID " source=magic "
                     "samples=0 dropped=0 cpus=0 ms=5\n";
    CHECK_EQ(sp_profile_add_raw(&p, t, strlen(t), "x.raw", "x", mp, err, sizeof err), -1);
    CHECK(strstr(err, "x.raw: line 1: unknown source 'magic'") != NULL);
    CHECK_EQ(p.ninputs, 0);
    sp_profile_free(&p);
}

/* One location per distinct (address, pc-or-return): 0x1010 as a pc in
 * both kernels is one location; ids are 1..n in order. */
TEST(model_locations_are_shared)
{
    struct sp_profile p;
    CHECK_EQ(fix_load(&p), 0);
    CHECK_EQ(p.nlocs, 5);
    for (size_t i = 0; i < p.nlocs; i++)
        CHECK_EQ(p.locs[i]->pl_id, i + 1);
    CHECK(p.chains[0].c_locs[0] == p.chains[3].c_locs[0]);
    CHECK(!p.chains[0].c_locs[0]->pl_ret);
    CHECK(p.chains[0].c_locs[1]->pl_ret);
    CHECK_STR(p.chains[2].c_locs[0]->pl_frames[0].pf_func, "0x9999");
    CHECK_EQ(sp_profile_total(&p), 15);
    sp_profile_free(&p);
}

/* A heap profile's pprof has Go's four sample types, the view's pair
 * filled (inuse or alloc, from the source) and the other 0, the rate as
 * the period, and the view's space as pprof's default. */
static Profile *heap_profile(struct sp_profile *p, const char *view)
{
    char t[512], err[SP_ERR_MAX];
    snprintf(t, sizeof t, "# sonde raw build-id=" FIX_BID " source=heap %s rate 4096 "
             "samples=5 dropped=0 cpus=1 ms=0 kind=heap\n"
             "3:19440:5 7 burn 0 1010 2005\n"
             "2:8256:129 7 burn 0 1020\n", view);
    sp_profile_init(p);
    unsigned mp = sp_profile_add_map(p, "k.elf");
    CHECK_EQ(sp_profile_add_raw(p, t, strlen(t), "h.raw", "h", mp, err, sizeof err), 0);
    fix_symbolize(p);
    return decode(p);
}

TEST(pprof_heap_four_sample_types)
{
    static const char *const types[] = { "alloc_objects", "alloc_space", "inuse_objects",
                                         "inuse_space" };
    static const char *const units[] = { "count", "bytes", "count", "bytes" };
    for (int inuse = 0; inuse < 2; inuse++) {
        struct sp_profile p;
        Profile *m = heap_profile(&p, inuse ? "inuse" : "allocs");
        CHECK(m != NULL);
        if (!m) {
            sp_profile_free(&p);
            continue;
        }
        CHECK_EQ(m->n_sample_type, 4);
        for (unsigned i = 0; i < 4 && i < m->n_sample_type; i++) {
            CHECK_STR(str(m, m->sample_type[i]->type), types[i]);
            CHECK_STR(str(m, m->sample_type[i]->unit), units[i]);
        }
        CHECK_STR(str(m, m->default_sample_type), inuse ? "inuse_space" : "alloc_space");
        CHECK_STR(str(m, m->period_type->type), "space");
        CHECK_EQ(m->period, 4096);
        CHECK_EQ(m->n_sample, 2);
        unsigned at = inuse ? 2 : 0, other = inuse ? 0 : 2;
        for (size_t i = 0; i < m->n_sample; i++) {
            const Perftools__Profiles__Sample *s = m->sample[i];
            CHECK_EQ(s->n_value, 4);
            bool first = s->n_location_id == 2;
            CHECK_EQ(s->value[at], first ? 5 : 129);
            CHECK_EQ(s->value[at + 1], first ? 19440 : 8256);
            CHECK_EQ(s->value[other], 0);
            CHECK_EQ(s->value[other + 1], 0);
        }
        perftools__profiles__profile__free_unpacked(m, NULL);
        sp_profile_free(&p);
    }
}

/* A lock profile's pprof is Go's mutex profile: contentions/count and
 * delay/nanoseconds, period type contentions with period 1 (every wait
 * counted), the waits and the delay per sample, and the lock as the
 * root location above the holder's chain. */
TEST(pprof_lock_mutex_profile_types)
{
    struct sp_profile p;
    CHECK_EQ(fix_load_one(&p, FIX_LOCK_RAW("0", "3000000")), 0);
    CHECK(p.chains[0].c_lock && p.chains[1].c_lock);
    CHECK_STR(p.chains[0].c_reason->pl_frames[0].pf_func, "[mutex probe-m]");
    CHECK_STR(p.chains[1].c_reason->pl_frames[0].pf_func, "[spin probe-s]");
    Profile *m = decode(&p);
    CHECK(m != NULL);
    if (!m) {
        sp_profile_free(&p);
        return;
    }
    CHECK_EQ(m->n_sample_type, 2);
    CHECK_STR(str(m, m->sample_type[0]->type), "contentions");
    CHECK_STR(str(m, m->sample_type[0]->unit), "count");
    CHECK_STR(str(m, m->sample_type[1]->type), "delay");
    CHECK_STR(str(m, m->sample_type[1]->unit), "nanoseconds");
    CHECK_STR(str(m, m->period_type->type), "contentions");
    CHECK_STR(str(m, m->period_type->unit), "count");
    CHECK_EQ(m->period, 1);
    CHECK_STR(str(m, m->default_sample_type), "delay");
    CHECK_EQ(m->n_sample, 2);
    static const int64_t want[2][2] = { { 10, 30000000 }, { 2, 3000000 } };
    static const char *const root[2] = { "[mutex probe-m]", "[spin probe-s]" };
    static const size_t nlocs[2] = { 3, 2 };
    for (size_t i = 0; i < m->n_sample && i < 2; i++) {
        const Perftools__Profiles__Sample *s = m->sample[i];
        CHECK_EQ(s->n_value, 2);
        CHECK_EQ(s->value[0], want[i][0]);
        CHECK_EQ(s->value[1], want[i][1]);
        CHECK_EQ(s->n_location_id, nlocs[i]);
        CHECK(label(m, s, "waker") == NULL);
        /* The root: the last location, its one line the lock's function. */
        uint64_t id = s->location_id[s->n_location_id - 1];
        const char *name = NULL;
        for (size_t l = 0; l < m->n_location; l++)
            if (m->location[l]->id == id && m->location[l]->n_line == 1)
                for (size_t f = 0; f < m->n_function; f++)
                    if (m->function[f]->id == m->location[l]->line[0]->function_id)
                        name = str(m, m->function[f]->name);
        CHECK_STR(name, root[i]);
    }
    perftools__profiles__profile__free_unpacked(m, NULL);
    sp_profile_free(&p);
}
