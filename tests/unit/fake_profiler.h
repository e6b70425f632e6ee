/* tests/unit/fake_profiler.h: what the profiler's host tests share
 * (tests/unit/fake_profiler.c): fakes of tasks, sleep, heap, the PMU and
 * the stack walk, a tiny symbol table for the real kernel/symtab.c, and
 * helpers that run a `profile` through a fake window. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "lib/printf.h"
#include "kernel/pmu_nmi.h"                 /* pmu_cpus[i].pc_armed: cpu i armed */
#include "kernel/shell.h"

struct trap_frame;

/* A chain of return addresses: frame() lays it as frame records in the
 * sampled CPU's fake stack, and the real walk reads them back. */
struct fstack {
    unsigned n;
    uintptr_t ret[10];
};

extern int fake_pid;                    /* the pid tick() or nmi() ran last */
void fake_run(unsigned cpu, int pid);   /* cpu runs pid, and is the cpu we are on */
extern const char *fake_names[64];      /* task_name(pid); reset() sets 1 5 7 12 */
extern const char *fake_build_id;       /* build_id() */
/* The first sleep of a run is its window: window_fn runs there, then (if
 * set) the window is made exactly fake_window_cycles long. */
extern void (*window_fn)(void);
extern uint64_t fake_window_cycles;
extern unsigned sleeps;
extern uint64_t last_sleep_ms;
extern int kmalloc_fail, kzalloc_fail;  /* fail the next N calls */
extern int kmalloc_pass;                /* ... after letting this many through */
extern int kmalloc_fail_after;          /* >= 0: that many succeed, then all fail */
extern long live_allocs;

extern bool pmu_usable;                 /* what pmu_probe() answers */
extern const char *pmu_name, *pmu_note;
extern bool pmu_claim;                  /* the counter overflowed: the claim's answer */
extern unsigned arms, disarms, probes;
extern uint64_t arm_fails;              /* bit i: cpu i's counter never arms */
extern uint64_t walk_cycles;            /* cycles a sample's capture "takes" */
extern void (*walk_hook)(void);         /* runs inside the sample, once: a nested NMI */

extern char out[1 << 16];               /* the last command's output */
extern struct buf_printer bp;
const char *got(void);
shell_fn cmd_fn(const char *name);
int run_cmd(const char *line);
void reset(void);                       /* also frees the sample buffers */
void room(uint32_t records);            /* prof_reserve, or abort */
struct trap_frame frame(uintptr_t pc, const struct fstack *st);
void tick(unsigned cpu, int pid, uintptr_t pc, const struct fstack *st);
bool nmi(unsigned cpu, int pid, uintptr_t pc, const struct fstack *st);
/* The same with a frame the test built itself (its own stacks). */
void tick_at(unsigned cpu, int pid, const struct trap_frame *tf);
bool nmi_at(unsigned cpu, int pid, const struct trap_frame *tf);
unsigned count_leaves(void);

/* burn_inner <- burn_mid+0x44 <- burn_outer+0x1b2, and a sibling path. */
extern const struct fstack st_a, st_b;
void win_span(void);                    /* 6 samples of them on 3 cpus */
/* A tick on cpu 2 whose walk takes PROF_DEFER + 1 NMIs at pcs 0x3000 on
 * (nested_ret: whether every NMI was claimed): the first PROF_DEFER are
 * deferred and kept behind the tick's sample, the last a nested drop. */
extern bool nested_ret;
void win_nested(void);
/* cpu 0 arms its counter at its first tick, then a foreign NMI and one of
 * ours arrive (what prof_nmi answered each, and the arms after the
 * first tick). */
extern bool nmi_ret_foreign, nmi_ret_ours;
extern unsigned arms_after_first_tick;
void win_counter(void);

/* The stream's world (kernel/prof/stream.c). sleep_ms advances fake_ns. */
extern uint64_t fake_ns;                /* time_ns() */
extern void (*each_sleep)(void);        /* runs in every sleep_ms: the world moves */
extern bool fake_requester;             /* udpshell_requester() answers */
extern uint32_t fake_requester_ip;
extern uint16_t fake_requester_port;    /* udpshell_requester_addr()'s port */
struct hmac_sha256;
/* udpshell_keyed(): NULL, the shell has no key; else what it answers. */
extern bool (*fake_keyed)(struct hmac_sha256 *m, uint64_t *epoch);
extern int fake_spawn_fail;             /* task_spawn fails */
extern void (*fake_spawned)(void *);    /* what task_spawn was given */
#define FAKE_DGRAMS_MAX 4096
struct fake_dgram {
    uint8_t d[1500];
    size_t len;
};
extern struct fake_dgram fake_dgrams[FAKE_DGRAMS_MAX];  /* what udp_send sent */
extern unsigned fake_ndgrams;
extern int fake_udp_rc;                 /* udp_send's answer (0: sent, kept) */
extern void (*udp_hook)(void);          /* runs at each udp_send */
extern uint32_t fake_udp_ip;
extern uint16_t fake_udp_src, fake_udp_dst;
extern struct net_app_stats *fake_app_stats;  /* what net_app_stats_register got */
/* udp_reserve, udp_commit, udp_cancel: with fake_inplace false (reset's),
 * udp_reserve gives nothing and every datagram goes through udp_send;
 * true, it gives one of FAKE_INPLACE_BUFS buffers (stale bytes in them),
 * and a commit keeps the datagram in fake_dgrams as udp_send does. A
 * commit or cancel of anything not held, or a reserve while all are held,
 * counts in fake_inplace_misuse. */
#define FAKE_INPLACE_BUFS 2
extern bool fake_inplace;
extern unsigned fake_reserves, fake_commits, fake_cancels, fake_udp_sends, fake_inplace_misuse;
extern unsigned fake_unsummed;      /* of those commits, udp_commit_unsummed's */

/* sched_off_sweep: how many times the session swept, and what runs then. */
extern unsigned off_sweeps;
extern void (*off_sweep_hook)(void);

/* A task switched out, for the scheduler's off-CPU hooks
 * (kernel/prof/offcpu_hooks.h): its state, and a stack whose saved
 * context holds a frame-pointer chain of the given return addresses
 * (innermost first), as arch_switch leaves it. */
#include "kernel/prof/offcpu_hooks.h"
struct fake_task {
    struct prof_off ft_off;
    _Alignas(16) uintptr_t ft_stack[TASK_STACK_SIZE / sizeof(uintptr_t)];
};
struct prof_task fake_task_view(struct fake_task *t, int pid, const uintptr_t *chain,
                                unsigned n);

/* A counter window where cpu 1's counter never arms: its tick goes on
 * sampling; cpu 0's counter takes over after its first tick (3 NMIs).
 * For window_fn, in the session's and the report's tests alike. */
void fake_win_mixed(void);
