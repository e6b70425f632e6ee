/* tests/unit/pipeline_fixture.h: a two-kernel profile with hand-made names,
 * for the sonde-prof writer tests (no ELF, no libdw).
 *
 * Kernel "k1" (pmu, 1 ms) and kernel "k2" (tick, 10 ms), both on map 0.
 * Address 0x1010 is spin with inlined step (a.h:5 inside a.c:12); 0x1020
 * is spin alone; return addresses 0x2005 (caller, a.c:30) and 0x3005
 * (top, b.c:7); anything else stays unnamed (sp_profile_name_unknown). */
#pragma once
#include "tools/model/model.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIX_BID "00112233445566778899aabbccddeeff00112233"

static const char fix_k1[] =
    "# sonde raw build-id=" FIX_BID " source=pmu/nmi intel fixed-ctr1 "
    "samples=10 dropped=1 cpus=2 ms=1000\n"
    "6 7 burn 0 1010 2005 3005\n"
    "3 7 burn 1 1020 2005 3005\n"
    "1 0 idle 1 9999\n";

static const char fix_k2[] =
    "# sonde raw build-id=" FIX_BID " source=tick 100Hz samples=5 dropped=0 "
    "cpus=1 ms=2000\n"
    "5 3 net 0 1010 2005\n";

static void fix_frame(struct sp_frame *f, const char *func,
                      const char *file, unsigned line, unsigned fline)
{
    f->pf_func = func;
    f->pf_file = file;
    f->pf_line = line;
    f->pf_func_line = fline;
}

static void fix_name(struct sp_loc *l, const char *sym, uint64_t off,
                     unsigned n)
{
    l->pl_sym = sym;
    l->pl_sym_off = off;
    l->pl_nframes = n;
    l->pl_frames = calloc(n, sizeof *l->pl_frames);
}

static void fix_symbolize(struct sp_profile *p)
{
    for (size_t i = 0; i < p->nlocs; i++) {
        struct sp_loc *l = p->locs[i];
        if (l->pl_addr == 0x1010) {
            fix_name(l, "spin", 0x10, 2);
            fix_frame(&l->pl_frames[0], "step", "a.h", 5, 3);
            fix_frame(&l->pl_frames[1], "spin", "a.c", 12, 10);
        } else if (l->pl_addr == 0x1020) {
            fix_name(l, "spin", 0x20, 1);
            fix_frame(&l->pl_frames[0], "spin", "a.c", 14, 10);
        } else if (l->pl_addr == 0x2005) {
            fix_name(l, "caller", 0x5, 1);
            fix_frame(&l->pl_frames[0], "caller", "a.c", 30, 28);
        } else if (l->pl_addr == 0x3005) {
            fix_name(l, "top", 0x5, 1);
            fix_frame(&l->pl_frames[0], "top", "b.c", 7, 2);
        }
    }
    sp_profile_name_unknown(p);
}

/* A lock profile (`profile lock ... raw`): the holder's two chains under
 * a mutex and a spinlock; dropped= and the spinlock's delay as given. */
#define FIX_LOCK_RAW(dropped, spin_ns)                                                  \
    "# sonde raw build-id=" FIX_BID " source=locks samples=4 dropped=" dropped          \
    " cpus=2 ms=2000 kind=lock\n"                                                        \
    "3:30000000 6 holder 0 lock=mutex:probe-m waits=10 1010 2005\n"                      \
    "1:" spin_ns " 6 holder 1 lock=spin:probe-s waits=2 2005\n"

/* Loads raw (one kernel's profile) into p, named from the fixture's
 * symbols; 0 on success. */
static int fix_load_one(struct sp_profile *p, const char *raw)
{
    char err[SP_ERR_MAX];
    sp_profile_init(p);
    unsigned m = sp_profile_add_map(p, "k.elf");
    if (sp_profile_add_raw(p, raw, strlen(raw), "l.raw", "l", m, err, sizeof err)) {
        printf("  fixture: %s\n", err);
        return -1;
    }
    fix_symbolize(p);
    return 0;
}

/* Loads both kernels; 0 on success. */
static int fix_load(struct sp_profile *p)
{
    char err[SP_ERR_MAX];
    sp_profile_init(p);
    unsigned m = sp_profile_add_map(p, "kernel.elf");
    memcpy(p->maps[m].pm_build_id, FIX_BID, sizeof p->maps[m].pm_build_id);
    p->maps[m].pm_start = 0x1000;
    p->maps[m].pm_limit = 0x4000;
    p->maps[m].pm_dwarf = true;
    if (sp_profile_add_raw(p, fix_k1, strlen(fix_k1), "k1.raw", "k1", m, err,
                     sizeof err) ||
        sp_profile_add_raw(p, fix_k2, strlen(fix_k2), "k2.raw", "k2", m, err,
                     sizeof err)) {
        printf("  fixture: %s\n", err);
        return -1;
    }
    fix_symbolize(p);
    return 0;
}
