// LINK: tools/model/pprof_read.c tools/model/model.c uapi/profile_raw.c build/host/proto/profile.pb-c.c
// LIBS: -Ibuild/host/proto -lprotobuf-c -lz
/* tests/fuzz/fuzz_pprof_read.c: the pprof reader (tools/model/
 * pprof_read.c), which `sonde-prof diff` runs on whatever .pb.gz it is
 * given.
 *
 * The input's first byte chooses: 0, the rest is the file as it is (gzip
 * or not); anything else, the rest is a serialized Profile, compressed
 * here, so that the mutations reach the message rather than dying in
 * zlib. Invariants: a refusal says why, names the input, and adds no
 * input or chain; a profile read has chains of 1 to 8 named locations of
 * one known kind. */
#include <string.h>
#include <zlib.h>
#include "fuzz.h"
#include "tools/model/pprof_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    if (n < 1)
        return 0;
    const uint8_t *body = d + 1;
    size_t len = n - 1;
    uint8_t *gz = NULL;
    if (d[0] != 0) {
        uLongf cap = compressBound(len);
        gz = malloc(cap ? cap : 1);
        FUZZ_CHECK(gz && compress(gz, &cap, body, len) == Z_OK);
        body = gz;
        len = cap;
    }
    /* A heap copy of exactly len bytes: ASan sees a read past it. */
    uint8_t *in = malloc(len ? len : 1);
    FUZZ_CHECK(in);
    memcpy(in, body, len);
    struct sp_profile p;
    sp_profile_init(&p);
    char err[SP_ERR_MAX] = "";
    int rc = sp_pprof_read_mem(&p, in, len, "f.pb.gz", "base", err, sizeof err);
    if (rc != 0) {
        FUZZ_CHECK(rc == -1 && strncmp(err, "f.pb.gz: ", 9) == 0 && strlen(err) > 9);
        FUZZ_CHECK(p.ninputs == 0 && p.nchains == 0);
    } else {
        FUZZ_CHECK(p.ninputs == 1 && p.inputs[0].pi_hdr.ph_kind <= PRAW_KIND_MAX);
        for (size_t i = 0; i < p.nchains; i++) {
            const struct sp_chain *c = &p.chains[i];
            FUZZ_CHECK(c->c_depth >= 1 && c->c_depth <= PRAW_FRAMES && c->c_input == 0);
            for (unsigned k = 0; k < c->c_depth; k++)
                FUZZ_CHECK(c->c_locs[k]->pl_nframes >= 1 && c->c_locs[k]->pl_frames[0].pf_func &&
                           c->c_locs[k]->pl_map < p.nmaps);
        }
    }
    sp_profile_free(&p);
    free(in);
    free(gz);
    return 0;
}
