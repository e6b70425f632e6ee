/* tests/unit/pprof_read_fixture.h: raw profiles and their .pb.gz, as
 * sonde-prof writes them, for the pprof reader's tests
 * (test_output_diff.c).
 * Static helpers: include it in one test file each. */
#pragma once
#include "test.h"
#include "tools/output/pprof.h"
#include "tools/model/pprof_read.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BID "0123456789abcdef0123456789abcdef01234567"

static const char cpu_base[] =
    "# sonde raw build-id=" BID " source=tick 100Hz samples=6 dropped=0 cpus=2 ms=1000\n"
    "4 7 burn 1 ffffffff80104a1c ffffffff80104a5b ffffffff80200010\n"
    "2 9 shell 0 ffffffff80300000 ffffffff80200010\n";
static const char cpu_new[] =
    "# sonde raw build-id=" BID " source=tick 100Hz samples=9 dropped=0 cpus=1 ms=1000\n"
    "8 7 burn 1 ffffffff80104a1c ffffffff80104a5b ffffffff80200010\n"
    "1 7 burn 1 ffffffff80104a20 ffffffff80104a5b ffffffff80200010\n";
static const char heap_base[] =
    "# sonde raw build-id=" BID " source=heap inuse rate 1024 samples=3 dropped=0 cpus=0 "
    "ms=0 kind=heap\n"
    "2:8192:2 7 burn 0 ffffffff80104a1c ffffffff80200010\n"
    "1:1040:16 7 burn 0 ffffffff80300000 ffffffff80200010\n";
static const char heap_new[] =
    "# sonde raw build-id=" BID " source=heap inuse rate 1024 samples=9 dropped=0 cpus=0 "
    "ms=0 kind=heap\n"
    "2:8192:2 7 burn 0 ffffffff80104a1c ffffffff80200010\n"
    "7:7280:112 7 burn 0 ffffffff80300010 ffffffff80200010\n";

static const char off_base[] =
    "# sonde raw build-id=" BID " source=sched samples=5 dropped=0 cpus=2 ms=1000 kind=offcpu\n"
    "3:4500000 7 burn 0 why=waitq:virtio-rx waker=9:shell ffffffff80104a5b ffffffff80200010 "
    "| ffffffff80300000\n"
    "2:100000 9 shell 1 why=preempted ffffffff80300010\n";
static const char off_new[] =
    "# sonde raw build-id=" BID " source=sched samples=7 dropped=0 cpus=1 ms=1000 kind=offcpu\n"
    "6:9000000 7 burn 0 why=waitq:virtio-rx waker=0 ffffffff80104a5b ffffffff80200010\n"
    "1:3000 7 burn 0 why=sleep waker=-1 ffffffff80104a20 ffffffff80200010\n";

/* Names as an ELF would give them: one function per 256 bytes, so two
 * addresses in one function fold into one frame. */
static const char lock_base[] =
    "# sonde raw build-id=" BID " source=locks samples=4 dropped=0 cpus=2 ms=1000 kind=lock\n"
    "3:30000000 7 burn 1 lock=mutex:probe-m waits=10 ffffffff80104a1c ffffffff80200000\n"
    "1:3000000 7 burn 0 lock=spin:probe-s waits=2 ffffffff80200000\n";

static __attribute__((unused)) void name_all(struct sp_profile *p)
{
    for (size_t i = 0; i < p->nlocs; i++) {
        struct sp_loc *l = p->locs[i];
        if (l->pl_frames)
            continue;                       /* a reason: named when made */
        char fn[32];
        snprintf(fn, sizeof fn, "fn_%llx", (unsigned long long)(l->pl_addr >> 8));
        l->pl_frames = sp_xcalloc(1, sizeof *l->pl_frames);
        l->pl_frames[0].pf_func = sp_strdup(p, fn);
        l->pl_frames[0].pf_file = sp_strdup(p, "kernel/x.c");
        l->pl_frames[0].pf_line = (unsigned)(l->pl_addr & 0xff);
        l->pl_nframes = 1;
    }
}

/* A raw profile's model, named, as input label. */
static __attribute__((unused)) void load_raw(struct sp_profile *p, const char *text, const char *label)
{
    char err[SP_ERR_MAX] = "";
    unsigned map = p->nmaps ? 0 : sp_profile_add_map(p, "kernel.elf");
    CHECK_EQ(sp_profile_add_raw(p, text, strlen(text), label, label, map, err, sizeof err), 0);
    /* The ELF's id is the profile's, as sonde-prof checks before it names. */
    snprintf(p->maps[map].pm_build_id, sizeof p->maps[map].pm_build_id, "%s",
             p->inputs[p->ninputs - 1].pi_hdr.ph_build_id);
}

/* The .pb.gz sonde-prof writes for one raw profile, in memory. */
static __attribute__((unused)) char *as_pprof(const char *text, size_t *len)
{
    struct sp_profile p;
    sp_profile_init(&p);
    load_raw(&p, text, "k");
    name_all(&p);
    char *buf = NULL, err[SP_ERR_MAX] = "";
    FILE *f = open_memstream(&buf, len);
    CHECK_EQ(sp_pprof_write(&p, f, err, sizeof err), 0);
    fclose(f);
    sp_profile_free(&p);
    return buf;
}

static __attribute__((unused)) const char *leaf(const struct sp_chain *c)
{
    return c->c_locs[0]->pl_frames[0].pf_func;
}

/* sp_pprof_read_mem refuses the bytes, saying why, and adds nothing. */
static __attribute__((unused)) void refused(const char *gz, size_t len, const char *why)
{
    struct sp_profile p;
    sp_profile_init(&p);
    char err[SP_ERR_MAX] = "";
    CHECK_EQ(sp_pprof_read_mem(&p, gz, len, "x.pb.gz", "base", err, sizeof err), -1);
    CHECK(strncmp(err, "x.pb.gz: ", 9) == 0);
    if (!strstr(err, why))
        fprintf(stderr, "  got: %s\n", err);
    CHECK(strstr(err, why) != NULL);
    CHECK_EQ(p.ninputs, 0);
    CHECK_EQ(p.nchains, 0);
    sp_profile_free(&p);
}
