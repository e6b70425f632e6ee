// LINK: tools/model/pprof_read.c tools/model/model.c uapi/profile_raw.c build/host/proto/profile.pb-c.c
// LIBS: -Ibuild/host/proto -lprotobuf-c -lz
/* tests/unit/test_model_pprof_read.c: the pprof reader (tools/model/
 * pprof_read.c) against files no Sonde tool writes: location ids out of
 * order (found through a hash, not a scan per sample, so 2^17 of them
 * read in well under a second), a file that inflates past the cap, and
 * one whose messages would unpack to far more than its bytes (refused by
 * the allocation budget), each refusal naming its bound. */
#include "test.h"
#include <stdlib.h>
#include <time.h>
#include <zlib.h>
#include "profile.pb-c.h"
#include "tools/model/pprof_read.h"

#define BID "0123456789abcdef0123456789abcdef01234567"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* raw (n bytes) zlib-compressed, in a malloc'd buffer of *len bytes. */
static uint8_t *deflate_all(const uint8_t *raw, size_t n, size_t *len)
{
    uLongf cap = compressBound(n);
    uint8_t *gz = malloc(cap);
    CHECK(compress2(gz, &cap, raw, n, 9) == Z_OK);
    *len = cap;
    return gz;
}

/* A CPU profile of n locations whose ids run n .. 1 (the reverse of
 * their order in the file), and n samples, sample i naming location
 * i + 1: every lookup misses the "ids are 1..n in order" shortcut. */
static uint8_t *out_of_order(size_t n, size_t *len)
{
    static char *strs[] = { "", "samples", "count", "cpu", "nanoseconds", "kernel.elf", BID };
    Perftools__Profiles__Profile m = PERFTOOLS__PROFILES__PROFILE__INIT;
    Perftools__Profiles__ValueType vt[2] = { PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
                                             PERFTOOLS__PROFILES__VALUE_TYPE__INIT };
    Perftools__Profiles__ValueType *vts[2] = { &vt[0], &vt[1] };
    vt[0].type = 1, vt[0].unit = 2, vt[1].type = 3, vt[1].unit = 4;
    Perftools__Profiles__Mapping map = PERFTOOLS__PROFILES__MAPPING__INIT, *maps = &map;
    map.id = 1, map.filename = 5, map.build_id = 6;
    map.memory_start = 0x1000, map.memory_limit = 0x1000 + n + 1;
    Perftools__Profiles__Location *locs = calloc(n, sizeof *locs), **lp = calloc(n, sizeof *lp);
    Perftools__Profiles__Sample *ss = calloc(n, sizeof *ss), **sp = calloc(n, sizeof *sp);
    uint64_t *ids = calloc(n, sizeof *ids);
    int64_t vals[2] = { 1, 10000000 };
    for (size_t i = 0; i < n; i++) {
        perftools__profiles__location__init(&locs[i]);
        locs[i].id = n - i;
        locs[i].mapping_id = 1;
        locs[i].address = 0x1000 + n - i;
        lp[i] = &locs[i];
        perftools__profiles__sample__init(&ss[i]);
        ids[i] = i + 1;
        ss[i].n_location_id = 1;
        ss[i].location_id = &ids[i];
        ss[i].n_value = 2;
        ss[i].value = vals;
        sp[i] = &ss[i];
    }
    m.n_string_table = sizeof strs / sizeof *strs;
    m.string_table = strs;
    m.n_sample_type = 2;
    m.sample_type = vts;
    m.n_mapping = 1;
    m.mapping = &maps;
    m.n_location = n;
    m.location = lp;
    m.n_sample = n;
    m.sample = sp;
    m.period = 10000000;
    size_t rawlen = perftools__profiles__profile__get_packed_size(&m);
    uint8_t *raw = malloc(rawlen);
    perftools__profiles__profile__pack(&m, raw);
    uint8_t *gz = deflate_all(raw, rawlen, len);
    free(raw);
    free(locs), free(lp), free(ss), free(sp), free(ids);
    return gz;
}

TEST(pprof_read_out_of_order_ids_in_linear_time)
{
    /* 2^17: a scan per sample is 2^33 id compares, minutes under the
     * sanitizers; the hash is one probe or two each. Bound: 8 s (the
     * time taken is printed). */
    size_t n = 1u << 17, len;
    uint8_t *gz = out_of_order(n, &len);
    struct sp_profile p;
    sp_profile_init(&p);
    char err[SP_ERR_MAX] = "";
    double t0 = now_s();
    int rc = sp_pprof_read_mem(&p, gz, len, "ooo.pb.gz", "k", err, sizeof err);
    double took = now_s() - t0;
    fprintf(stderr, "pprof_read: %zu out-of-order location ids read in %.3f s\n", n, took);
    CHECK_STR(err, "");
    CHECK_EQ(rc, 0);
    CHECK_EQ(p.nchains, n);
    CHECK(took < 8.0);
    /* Sample i named location id i + 1, at address 0x1000 + i + 1. */
    int right = 1;
    for (size_t i = 0; i < p.nchains && right; i++)
        right = p.chains[i].c_locs[0]->pl_addr == 0x1000 + i + 1;
    CHECK(right);
    sp_profile_free(&p);
    free(gz);
}

TEST(pprof_read_refuses_a_file_that_inflates_past_the_cap)
{
    /* 9 MiB of one string: past the 8 MiB cap, whatever it holds. */
    size_t n = 9u << 20, len;
    uint8_t *raw = calloc(1, n);
    raw[0] = 0x32;                      /* string_table (6), length-delimited */
    raw[1] = 0x80 | ((n - 6) & 0x7f), raw[2] = 0x80 | ((n - 6) >> 7 & 0x7f);
    raw[3] = 0x80 | ((n - 6) >> 14 & 0x7f), raw[4] = (n - 6) >> 21 & 0x7f;
    uint8_t *gz = deflate_all(raw, n, &len);
    struct sp_profile p;
    sp_profile_init(&p);
    char err[SP_ERR_MAX] = "";
    CHECK_EQ(sp_pprof_read_mem(&p, gz, len, "big.pb.gz", "k", err, sizeof err), -1);
    CHECK(strstr(err, "big.pb.gz: inflates to more than 8 MiB") != NULL);
    sp_profile_free(&p);
    free(raw);
    free(gz);
}

TEST(pprof_read_budgets_what_protobuf_c_allocates)
{
    /* Just under 8 MiB of empty Location messages (2 bytes each on the
     * wire: field 4, length 0): 4.2 million of them, each ~90 bytes
     * unpacked with its pointer, so about 380 MiB unless the allocator's
     * budget (256 MiB) stops it. */
    size_t n = (8u << 20) - 4096, len;
    uint8_t *raw = malloc(n);
    for (size_t i = 0; i < n; i += 2)
        raw[i] = 0x22, raw[i + 1] = 0;
    uint8_t *gz = deflate_all(raw, n, &len);
    struct sp_profile p;
    sp_profile_init(&p);
    char err[SP_ERR_MAX] = "";
    CHECK_EQ(sp_pprof_read_mem(&p, gz, len, "empty.pb.gz", "k", err, sizeof err), -1);
    CHECK(strstr(err, "empty.pb.gz: unpacks to more than 256 MiB") != NULL);
    sp_profile_free(&p);
    free(raw);
    free(gz);
}
