/* tests/unit/fake_profiler.c: the profiler's host-test fakes and
 * helpers (declared in fake_profiler.h). hal/cpu.h comes from fake_hal.c;
 * names come from the real kernel/symtab.c over the table here, installed
 * as symtab_active by reset().
 *
 * The sample path is the kernel's own: the inline capture and walk
 * (kernel/stacktrace_inline.h, with kernel/stacks.c and
 * kernel/stacktrace.c linked) over a real frame chain that frame() lays
 * in this CPU's registered fake stack, and the inline claim
 * (kernel/pmu_nmi.h) over the PMU core's state defined here. Faked are
 * the PMU core's task side (probe, arm, disarm) and its backend, whose
 * acknowledgement answers pmu_claim. */
#include "fake_profiler.h"
#include "fake_hal.h"
#include <stdio.h>
#include <stdlib.h>

#include "hal/cpu.h"
#include "hal/irq.h"
#include "hal/pmu.h"
#include "kernel/buildid.h"
#include "kernel/percpu.h"
#include "kernel/pmu_nmi.h"
#include "kernel/timer.h"
#include "kernel/prof/ring.h"
#include "kernel/prof/sample.h"
#include "kernel/prof/session.h"
#include "kernel/sched.h"
#include "kernel/stacks.h"
#include "kernel/symtab.h"
#include "kernel/task.h"
#include "lib/parse.h"
#include "mm/heap.h"
#include "net/net.h"
#include "net/udpshell.h"

int fake_pid = 5;
static int fake_tasks[] = { 1, 5, 7, 12 };

/* Each CPU's struct cpu, as GS base or TPIDR_EL1 would point at it
 * (arch/host/cpu_inline.h), and the task each runs: the sample reads
 * the pid from there (task_current_pid_inline). tick() and nmi() set it. */
struct cpu cpus[MAX_CPUS];
static struct task fake_running[MAX_CPUS];
struct cpu *this_cpu(void) { return &cpus[fake_cpu]; }
void fake_run(unsigned cpu, int pid)
{
    fake_cpu = cpu;
    fake_pid = pid;
    fake_running[cpu].pid = pid;
    cpus[cpu].current = &fake_running[cpu];
}

int task_current_pid(void) { return task_current_pid_inline(); }

bool task_is_idle(int pid) { return pid == 2; }

bool task_exists(int pid)
{
    for (unsigned i = 0; i < sizeof fake_tasks / sizeof fake_tasks[0]; i++)
        if (fake_tasks[i] == pid)
            return true;
    return false;
}

/* The names task_name finds, by pid; NULL: no such task (or it exited). */
const char *fake_names[64];
const char *fake_build_id = "0123456789abcdef0123456789abcdef01234567";

bool task_name(int pid, char name[TASK_NAME_MAX])
{
    if (pid < 0 || pid >= 64 || !fake_names[pid])
        return false;
    snprintf(name, TASK_NAME_MAX, "%s", fake_names[pid]);
    return true;
}

const char *build_id(void) { return fake_build_id; }

/* The first sleep of a run is its window: run the window callback there,
 * then (if asked) make the window exactly fake_window_cycles long. */
void (*window_fn)(void);
uint64_t fake_window_cycles;
unsigned sleeps;
uint64_t last_sleep_ms;

void (*each_sleep)(void);

void sleep_ms(uint64_t ms)
{
    fake_ns += ms * 1000000;
    if (each_sleep)
        each_sleep();
    sleeps++;
    last_sleep_ms = ms;
    void (*fn)(void) = window_fn;
    window_fn = NULL;
    uint64_t entry = fake_cycles;
    if (fn)
        fn();
    if (fake_window_cycles)
        fake_cycles = entry - fake_cycles_step + fake_window_cycles;
}

/* A window is counted in ticks of 1000 / TIMER_HZ ms: the fake takes it
 * as that many ms, so a run's window is still its first sleep. */
void sleep_ticks(unsigned n)
{
    sleep_ms((uint64_t)(n ? n : 1) * 1000 / TIMER_HZ);
}

/* Before the window: no time to speak of (the fake tick is now). */
void sleep_to_tick(void)
{
}

int kmalloc_fail, kzalloc_fail;  /* fail the next N calls */
int kmalloc_pass;                /* ... after letting this many through */
int kmalloc_fail_after = -1;     /* >= 0: that many succeed, then all fail */
long live_allocs;

/* The profiler never frees a sample buffer that a bigger one replaced
 * (a sampler may still be inside it): what it no longer points to is
 * still pointed to from here, so the leak checker does not report the
 * kernel's deliberate keep as a leak. */
static void *kept[4096];
static unsigned nkept;

void *kmalloc(size_t n)
{
    if (kmalloc_fail_after == 0)
        return NULL;
    if (kmalloc_fail_after > 0)
        kmalloc_fail_after--;
    if (kmalloc_fail > 0 && kmalloc_pass > 0) {
        kmalloc_pass--;
    } else if (kmalloc_fail > 0) {
        kmalloc_fail--;
        return NULL;
    }
    live_allocs++;
    void *p = malloc(n);
    if (p && nkept < sizeof kept / sizeof kept[0])
        kept[nkept++] = p;
    return p;
}

void *kzalloc(size_t n)
{
    if (kzalloc_fail > 0) {
        kzalloc_fail--;
        return NULL;
    }
    live_allocs++;
    return calloc(1, n);
}

void kfree(void *p)
{
    for (unsigned i = 0; p && i < nkept; i++)
        if (kept[i] == p) {
            kept[i] = kept[--nkept];
            break;
        }
    if (p)
        live_allocs--;
    free(p);
}

bool pmu_usable;
const char *pmu_name = "tick 100Hz";
const char *pmu_note;
bool pmu_claim;
unsigned arms, disarms, probes;

/* The PMU core's task side (kernel/pmu.c's pmu_probe, pmu_arm, ...),
 * faked over the core's own per-CPU state, which the inline claim reads
 * (kernel/pmu_nmi.h): the flag here is the one the NMI tests. */
struct pmu_cpu pmu_cpus[MAX_CPUS];
struct pmu_nmi_params pmu_nmi;

bool pmu_probe(void) { probes++; return pmu_usable; }
const char *pmu_source_name(void) { return pmu_name; }
const char *pmu_probe_note(void) { return pmu_note; }
uint64_t arm_fails;          /* bit i: cpu i's counter never arms */
static void set_armed(bool on) { __atomic_store_n(&pmu_cpus[fake_cpu].pc_armed, on, __ATOMIC_RELEASE); }
void pmu_arm(void) { arms++; set_armed(!(arm_fails >> fake_cpu & 1)); }
void pmu_disarm(void) { disarms++; set_armed(false); }
bool pmu_armed(void) { return __atomic_load_n(&pmu_cpus[fake_cpu].pc_armed, __ATOMIC_ACQUIRE); }

/* The backend the claim acknowledges through: the overflow is there when
 * pmu_claim says so, armed or not (a backend whose status only the
 * counter sets, po_claims_when_disarmed). */
static bool fake_nmi_ack(uint64_t period) { return pmu_claim; }
static const struct pmu_ops fake_pmu_ops = {
    .po_name = "pmu/fake",
    .po_claims_when_disarmed = true,
    .po_nmi_ack = fake_nmi_ack,
};
/* kernel/pmu.c's, for that backend: a disarmed CPU's overflow is claimed
 * when the counter's status says it overflowed. */
bool pmu_nmi_claim_disarmed(struct pmu_cpu *me)
{
    if (!pmu_nmi.ops->po_nmi_ack(0))
        return false;
    me->pc_claims++;
    me->pc_stale++;
    return true;
}

uint64_t walk_cycles;        /* cycles a walk "takes" */
void (*walk_hook)(void);     /* runs inside the sample: a nested NMI */

/* Runs where the sample reads its trap frame (fake_trap_read_hook), just
 * before the walk: the walk's time passes there, and a nested NMI comes. */
static void in_sample(void)
{
    fake_cycles += walk_cycles;
    void (*h)(void) = walk_hook;
    walk_hook = NULL;
    if (h)
        h();
}

/* Each CPU's task stack, registered as kernel/stacks.c keeps them and
 * made that CPU's current one, where frame() lays a chain. A context
 * takes FAKE_CTX_WORDS at the top, a nested one (an NMI inside a
 * sample) the next FAKE_CTX_WORDS below, so neither overwrites the
 * other's chain. Every return address the tests use lies in the fake
 * text [0, FAKE_TEXT_END), 0 included; FAKE_NOT_TEXT ends a chain of
 * no frames. */
#define FAKE_CTX_WORDS 24              /* 11 records of 2 words, and slack */
#define FAKE_STACK_WORDS (4 * FAKE_CTX_WORDS)
#define FAKE_TEXT_END 0x10000
#define FAKE_NOT_TEXT 0xdead0000ul
static struct {
    int id;
    uint64_t w[FAKE_STACK_WORDS];
} fake_stacks[MAX_CPUS];
static bool fake_stacks_registered;
static unsigned fake_nest;

static void fake_stacks_reset(void)
{
    unsigned cpu = fake_cpu;
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        uintptr_t lo = (uintptr_t)fake_stacks[i].w;
        if (!fake_stacks_registered)
            fake_stacks[i].id = stack_register(lo, lo + sizeof fake_stacks[i].w,
                                               STACK_TASK, (int)i, "fake", false);
        if (fake_stacks[i].id < 0)
            abort();
        fake_cpu = i;
        stack_cpu_switch(fake_stacks[i].id);
    }
    fake_stacks_registered = true;
    fake_cpu = cpu;
    fake_nest = 0;
    symtab_test_text_lo = 0;
    symtab_test_text_hi = FAKE_TEXT_END;
}

/* In symgen's layout. burn_spin starts where burn_inner ends, so a
 * return address at burn_spin's first byte belongs to burn_inner. */
static const uint64_t t_addrs[] = { 0x1000, 0x2000, 0x3000, 0x3080, 0x4000 };
static const uint32_t t_sizes[] = { 0x400, 0x100, 0x80, 0x20, 0x40 };
static const uint32_t t_offs[] = { 0, 11, 20, 31, 41 };
static const char t_names[] = "burn_outer\0burn_mid\0burn_inner\0burn_spin\0idle_loop";
static const struct symtab_image t_syms = { 5, t_addrs, t_sizes, t_offs, t_names };

/* ---- helpers -------------------------------------------------------- */

char out[1 << 16];
struct buf_printer bp;

/* The output, through a call the compiler cannot see into, so CHECK_STR's
 * message buffer does not trip -Wformat-truncation on a 64 KiB array. */
__attribute__((noinline)) const char *got(void) { return out; }

/* The commands as registered in this link, found by name. */
extern const struct shell_cmd __start_shell_cmds[], __stop_shell_cmds[];

shell_fn cmd_fn(const char *name)
{
    for (const struct shell_cmd *c = __start_shell_cmds; c < __stop_shell_cmds; c++)
        if (strcmp(c->name, name) == 0)
            return c->fn;
    abort();
}

int run_cmd(const char *line)
{
    char copy[256];
    char *argv[8];
    snprintf(copy, sizeof copy, "%s", line);
    int argc = split_words(copy, argv, 8);
    buf_printer_init(&bp, out, sizeof out);
    return cmd_fn(argv[0])(argc, argv, &bp.pr);
}

/* udp_reserve's buffers (below), emptied by reset. */
static uint8_t fake_inplace_buf[FAKE_INPLACE_BUFS][UDP_PAYLOAD_MAX];
static bool fake_inplace_held[FAKE_INPLACE_BUFS];

void reset(void)
{
    symtab_active = &t_syms;
    fake_online = 0xf;
    fake_ncpus = 4;
    fake_cpu = 0;
    fake_cycles_step = 1;
    fake_pid = 5;
    fake_window_cycles = 0;
    walk_cycles = 0;
    walk_hook = NULL;
    fake_nmi_window_hook = NULL;
    fake_trap_read_hook = in_sample;
    fake_trap_link = 0;
    memset(cpus, 0, sizeof cpus);
    fake_stacks_reset();
    window_fn = NULL;
    pmu_usable = false;
    pmu_name = "tick 100Hz";
    pmu_note = NULL;
    pmu_claim = false;
    memset(pmu_cpus, 0, sizeof pmu_cpus);
    pmu_nmi = (struct pmu_nmi_params){ .ops = &fake_pmu_ops, .period = 1000000 };
    arm_fails = 0;
    arms = disarms = 0;
    kmalloc_fail = kzalloc_fail = kmalloc_pass = 0;
    kmalloc_fail_after = -1;
    memset(fake_names, 0, sizeof fake_names);
    fake_names[1] = "shell";
    fake_names[5] = "burn";
    fake_names[7] = "burn";
    fake_names[12] = "netload";
    fake_build_id = "0123456789abcdef0123456789abcdef01234567";
    fake_requester = false;
    fake_keyed = NULL;
    fake_requester_ip = 0x0a000202;
    fake_requester_port = 40000;        /* a client's own port, not a stream's */
    fake_spawn_fail = 0;
    fake_spawned = NULL;
    fake_ndgrams = 0;
    fake_udp_rc = 0;
    fake_inplace = false;
    fake_reserves = fake_commits = fake_cancels = fake_udp_sends = fake_inplace_misuse = 0;
    fake_unsummed = 0;
    memset(fake_inplace_held, 0, sizeof fake_inplace_held);
    udp_hook = NULL;
    each_sleep = NULL;
    off_sweep_hook = NULL;
    off_sweeps = 0;
    prof_test_reset();              /* each test sizes its own buffers */
}

void room(uint32_t records)
{
    if (prof_session_reserve(records, NULL) != PROF_OK)
        abort();
}

/* The chain st as frame records at the top of this CPU's fake stack
 * (below the contexts already there), each pointing at the next, the
 * last at 0: sp and fp both point at the first, so the leaf needs no
 * look at the bytes at pc (st_leaf_is_moot), and the walk returns
 * exactly st's return addresses. */
struct trap_frame frame(uintptr_t pc, const struct fstack *st)
{
    unsigned n = st ? st->n : 0;
    if (n > sizeof st->ret / sizeof st->ret[0] || fake_nest >= FAKE_STACK_WORDS / FAKE_CTX_WORDS)
        abort();
    uint64_t *w = fake_stacks[fake_cpu].w + FAKE_STACK_WORDS - FAKE_CTX_WORDS * (fake_nest + 1);
    w[0] = 0;
    w[1] = FAKE_NOT_TEXT;                   /* no frames: the walk takes none */
    for (unsigned k = 0; k < n; k++) {
        w[2 * k] = k + 1 < n ? (uintptr_t)&w[2 * k + 2] : 0;
        w[2 * k + 1] = st->ret[k];
    }
    return (struct trap_frame){ pc, (uintptr_t)w, (uintptr_t)w };
}

/* Both entry points run with interrupts off, as the trap code calls them,
 * on cpu, running pid, interrupting the context tf describes. */
void tick_at(unsigned cpu, int pid, const struct trap_frame *tf)
{
    fake_run(cpu, pid);
    unsigned long f = irq_save();
    fake_nest++;
    prof_tick(tf);
    fake_nest--;
    irq_restore(f);
}

bool nmi_at(unsigned cpu, int pid, const struct trap_frame *tf)
{
    fake_run(cpu, pid);
    unsigned long f = irq_save();
    fake_nest++;
    bool ours = prof_nmi(tf);
    fake_nest--;
    irq_restore(f);
    return ours;
}

void tick(unsigned cpu, int pid, uintptr_t pc, const struct fstack *st)
{
    fake_cpu = cpu;
    struct trap_frame tf = frame(pc, st);
    tick_at(cpu, pid, &tf);
}

bool nmi(unsigned cpu, int pid, uintptr_t pc, const struct fstack *st)
{
    fake_cpu = cpu;
    struct trap_frame tf = frame(pc, st);
    return nmi_at(cpu, pid, &tf);
}

/* Leaf lines: "12.5% ..." at the start of a line. */
unsigned count_leaves(void)
{
    unsigned n = 0;
    for (const char *s = out; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : s) {
        const char *q = s;
        while (*q >= '0' && *q <= '9')
            q++;
        if (q > s && q[0] == '.' && q[1] >= '0' && q[1] <= '9' && q[2] == '%')
            n++;
    }
    return n;
}

/* burn_inner <- burn_mid+0x44 <- burn_outer+0x1b2, and a sibling path. */
const struct fstack st_a = { 2, { 0x2044, 0x11b2 } };
const struct fstack st_b = { 2, { 0x2048, 0x11b2 } };

/* ---- report format -------------------------------------------------- */

void win_span(void)
{
    tick(0, 5, 0x301a, &st_a);
    tick(0, 5, 0x303e, &st_a);
    tick(1, 5, 0x3010, &st_b);
    tick(2, 7, 0x3030, &st_a);
    tick(2, 7, 0x3010, &st_b);
    tick(0, 5, 0x3020, &st_a);
}

/* ---- the stream's world: clock, tasks, network (kernel/prof/stream.c) ---- */

uint64_t fake_ns = 1000000000;
uint64_t time_ns(void) { return fake_ns; }
/* kernel/time.c's: ns per cycles_now() unit, 32.32, from the fake rate
 * (1000 per us: one unit is one ns). */
uint64_t time_ns_mult(void) { return (1000ull << 32) / fake_cycles_per_us; }
void yield(void) { fake_ns += 1000; }

bool fake_requester;
uint32_t fake_requester_ip = 0x0a000202;     /* 10.0.2.2 */
uint16_t fake_requester_port;
bool udpshell_requester(uint32_t *ip)
{
    if (fake_requester)
        *ip = fake_requester_ip;
    return fake_requester;
}

bool (*fake_keyed)(struct hmac_sha256 *m, uint64_t *epoch);
bool udpshell_keyed(struct hmac_sha256 *m, uint64_t *epoch)
{
    return fake_keyed && fake_keyed(m, epoch);
}

bool udpshell_requester_addr(uint32_t *ip, uint16_t *port)
{
    if (fake_requester) {
        *ip = fake_requester_ip;
        *port = fake_requester_port;
    }
    return fake_requester;
}

int fake_spawn_fail;
task_fn fake_spawned;
static struct task fake_spawned_task;
struct task *task_spawn(const char *name, task_fn fn, void *arg, int cpu, unsigned flags)
{
    if (fake_spawn_fail)
        return NULL;
    fake_spawned = fn;
    return &fake_spawned_task;
}
void task_exit(void) { abort(); }

/* The scheduler's end-of-window sweep: what it would emit comes from the
 * hook (the tasks still off their CPUs). */
unsigned off_sweeps;
void (*off_sweep_hook)(void);
void sched_off_sweep(void)
{
    off_sweeps++;
    if (off_sweep_hook)
        off_sweep_hook();
}

void task_for_each_id(void (*fn)(int pid, const char *name, void *arg), void *arg)
{
    for (int pid = 0; pid < 64; pid++)
        if (fake_names[pid])
            fn(pid, fake_names[pid], arg);
}

void task_for_each(void (*fn)(struct task *t, void *arg), void *arg)
{
    for (int pid = 0; pid < 64; pid++) {
        if (!fake_names[pid])
            continue;
        struct task t = { .pid = pid };
        snprintf(t.name, sizeof t.name, "%s", fake_names[pid]);
        fn(&t, arg);
    }
}

struct fake_dgram fake_dgrams[FAKE_DGRAMS_MAX];
unsigned fake_ndgrams;
int fake_udp_rc;                /* what udp_send answers (0: sent and kept) */
void (*udp_hook)(void);         /* runs at each send: samples arriving meanwhile */
uint32_t fake_udp_ip;
uint16_t fake_udp_src, fake_udp_dst;

bool fake_inplace;
unsigned fake_reserves, fake_commits, fake_cancels, fake_udp_sends, fake_inplace_misuse;
unsigned fake_unsummed;             /* udp_commit_unsummed's commits */

static int fake_inplace_slot(void *p)
{
    for (int i = 0; i < FAKE_INPLACE_BUFS; i++)
        if (p == fake_inplace_buf[i] && fake_inplace_held[i])
            return i;
    fake_inplace_misuse++;
    return -1;
}

void *udp_reserve(uint32_t dst_ip)
{
    if (!fake_inplace)
        return NULL;
    for (int i = 0; i < FAKE_INPLACE_BUFS; i++)
        if (!fake_inplace_held[i]) {
            fake_inplace_held[i] = true;
            fake_reserves++;
            memset(fake_inplace_buf[i], 0xa5, UDP_PAYLOAD_MAX);
            return fake_inplace_buf[i];
        }
    fake_inplace_misuse++;
    return NULL;
}

void udp_cancel(void *payload)
{
    int i = fake_inplace_slot(payload);
    if (i >= 0) {
        fake_inplace_held[i] = false;
        fake_cancels++;
    }
}

int udp_commit(void *payload, uint32_t dst_ip, uint16_t src_port, uint16_t dst_port, size_t len)
{
    int i = fake_inplace_slot(payload);
    if (i < 0)
        return NET_ERR_INVAL;
    fake_inplace_held[i] = false;
    fake_commits++;
    fake_udp_sends--;               /* udp_send's path counts it again */
    int rc = udp_send(dst_ip, src_port, dst_port, payload, len);
    return rc == NET_QUEUED ? 0 : rc;
}


int udp_commit_unsummed(void *payload, uint32_t dst_ip, uint16_t src_port, uint16_t dst_port,
                        size_t len)
{
    int rc = udp_commit(payload, dst_ip, src_port, dst_port, len);
    fake_unsummed += rc == 0;
    return rc;
}

int udp_send(uint32_t dst_ip, uint16_t src_port, uint16_t dst_port, const void *data, size_t len)
{
    fake_udp_sends++;
    if (udp_hook)
        udp_hook();
    fake_udp_ip = dst_ip;
    fake_udp_src = src_port;
    fake_udp_dst = dst_port;
    if (fake_udp_rc != 0 && fake_udp_rc != NET_QUEUED)
        return fake_udp_rc;
    if (fake_ndgrams < FAKE_DGRAMS_MAX && len <= sizeof fake_dgrams[0].d) {
        memcpy(fake_dgrams[fake_ndgrams].d, data, len);
        fake_dgrams[fake_ndgrams].len = len;
        fake_ndgrams++;
    }
    return fake_udp_rc;
}

struct net_app_stats *fake_app_stats;
void net_app_stats_register(struct net_app_stats *s) { fake_app_stats = s; }

char *net_fmt_ip(char *buf, uint32_t ip)
{
    snprintf(buf, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
    return buf;
}

/* ---- windows the sample and session tests share --------------------- */

bool nested_ret;
/* One NMI more than the deferral holds, each landing inside the tick's
 * sample (NMIs follow each other, never nest): all but the last are
 * kept, the last is a nested drop. */
static void nested_nmi(void)
{
    nested_ret = true;
    for (unsigned i = 0; i < PROF_DEFER + 1; i++)
        nested_ret &= nmi(2, 5, 0x3000 + i, NULL);
}
void win_nested(void)
{
    walk_hook = nested_nmi;
    tick(2, 5, 0x2000, NULL);
}

bool nmi_ret_foreign, nmi_ret_ours;
unsigned arms_after_first_tick;
void win_counter(void)
{
    tick(0, 5, 0x3000, NULL);           /* arms, does not sample */
    arms_after_first_tick = arms;
    tick(0, 5, 0x3001, NULL);           /* armed: the counter samples now */
    pmu_claim = false;
    nmi_ret_foreign = nmi(0, 5, 0x3002, NULL);
    pmu_claim = true;
    nmi_ret_ours = nmi(0, 5, 0x2004, NULL);
    nmi(1, 5, 0x2004, NULL);
}

/* Where arch_switch's frame record sits above the saved stack pointer
 * (hal/task.h): the fake's own layout, as each arch fixes its own. */
const unsigned arch_saved_fp_off = 2 * sizeof(uintptr_t);

struct prof_task fake_task_view(struct fake_task *t, int pid, const uintptr_t *chain, unsigned n)
{
    uintptr_t *saved = &t->ft_stack[64];
    uintptr_t *rec = (uintptr_t *)((char *)saved + arch_saved_fp_off);
    for (unsigned i = 0; i < n; i++, rec += 2) {
        rec[0] = i + 1 < n ? (uintptr_t)(rec + 2) : 0;
        rec[1] = chain[i];
    }
    return (struct prof_task){ pid, (uintptr_t)t->ft_stack, (uint64_t)(uintptr_t)saved, &t->ft_off };
}

void fake_win_mixed(void)
{
    tick(0, 5, 0x3000, NULL);           /* arms */
    tick(1, 5, 0x3001, NULL);           /* cannot arm: samples */
    for (int i = 0; i < 3; i++)
        nmi(0, 5, 0x3002, NULL);
    tick(1, 5, 0x3003, NULL);
    tick(0, 5, 0x3004, NULL);           /* armed: no sample */
}
