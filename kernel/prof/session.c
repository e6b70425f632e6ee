/* kernel/prof/session.c: the profiler's run control (kernel/prof/session.h):
 * who holds the profiler, Start, Stop and freeze, and the lifetimes of a
 * window and of a stream.
 *
 * A window: the task that asked takes the profiler, opens the gate
 * (kernel/prof/ring.h), sleeps out the window, closes the gate, waits
 * until no CPU is inside the sampler, and only then freezes the rings
 * into a snapshot for the readers (kernel/prof/report.h), still holding
 * the profiler so that nothing writes the rings under them. A stream
 * holds the profiler from its start to its final drain
 * (kernel/prof/stream.c); what it leaves in the rings is no window's.
 *
 * Profiler core: prefix prof_ and PROF_. */
#include "kernel/prof/session.h"
#include "hal/cpu.h"
#include "hal/irq.h"
#include "hal/pmu.h"
#include "kernel/lockstat.h"
#include "kernel/panic.h"
#include "kernel/prof/fold.h"
#include "kernel/prof/quantile.h"
#include "kernel/prof/offcpu.h"
#include "kernel/prof/ring.h"
#include "kernel/prof/snapshot.h"
#include "kernel/prof/trace.h"
#include "kernel/task.h"
#include "kernel/time.h"
#include "kernel/timer.h"
#include "lib/printf.h"
#include "mm/heap.h"

#define PROF_QUIESCE_MS 50      /* Stop's bound on waiting out samplers */
#define PROF_START_WAIT_MS 1000 /* Start's, for one Stop left behind */
/* A stream's rings, for off-CPU records: a ping-pong of 10,000 switches
 * a second on one CPU writes 30,000 records a second there (each
 * switch-in its blocked time, the waker's chain and its runnable time),
 * and the rings hold four drain intervals of this. */
#define PROF_OFF_STREAM_RATE 32000u

static unsigned prof_busy;      /* a run, report or stream holds the profiler */

/* The last run, frozen by Stop (window fields filled by Start and
 * Stop). Read and written only by the profiler's holder. */
static bool prof_ran;
static struct prof_snapshot prof_snap;
static uint8_t prof_run_kind;   /* what the last run recorded (enum prof_kind) */
static char prof_heap_src[40];  /* "heap allocs rate R", a heap window's */
static enum prof_view prof_last_view;   /* an off-CPU run's, for report again */

/* ---- who holds the profiler ------------------------------------------ */

static bool prof_take(void)
{
    unsigned zero = 0;
    return __atomic_compare_exchange_n(&prof_busy, &zero, 1, false,
                                       __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static void prof_give(void)
{
    __atomic_store_n(&prof_busy, 0, __ATOMIC_RELEASE);
}

/* Who holds the profiler, when a stream does (prof_session_set_busy_note). */
static prof_busy_note_fn prof_busy_note;

void prof_session_set_busy_note(prof_busy_note_fn note)
{
    __atomic_store_n(&prof_busy_note, note, __ATOMIC_RELEASE);
}

/* The refusal of a busy profiler: who holds it, while a stream does. */
static int prof_busy_err(struct prof_err *e)
{
    prof_refuse(e, PROF_EBUSY, PROF_NOT_BUSY, 0);
    if (e)
        e->pe_note = __atomic_load_n(&prof_busy_note, __ATOMIC_ACQUIRE);
    return PROF_EBUSY;
}

/* Take the profiler, or refuse as busy. */
static int prof_take_or_refuse(struct prof_err *e)
{
    return prof_take() ? PROF_OK : prof_busy_err(e);
}

/* The fastest source a run can use: the counter's ~1 kHz (PMU_PERIOD_US)
 * where the probe found one, else the tick. */
static unsigned prof_rate_hz(bool pmu)
{
    return pmu ? 1000000u / PMU_PERIOD_US : TIMER_HZ;
}

/* ---- Start, Stop, freeze ----------------------------------------------- */

/* A window is a whole number of this CPU's ticks, the nearest to ms (at
 * least one), and starts just after a tick: then it ends just after the
 * tick n periods on, and holds n periods to within the few microseconds
 * that separate the two wake-ups. Started anywhere and timed in ns, it
 * ended at the first tick past ms, up to a tick late: a 1000 ms window
 * on the 1 kHz counter took 1010 samples. */
static unsigned prof_window_ticks(unsigned ms)
{
    unsigned n = (ms * TIMER_HZ + 500) / 1000;
    return n ? n : 1;
}

/* Open the gate to kinds; the snapshot's window fields start here. */
static void prof_start(int pid, bool pmu, unsigned kinds)
{
    prof_snap.ps_pid = pid;
    prof_snap.ps_cycles = cycles_now();
    prof_snap.ps_ncpus = prof_ring_open(pid, kinds, pmu);
    /* This CPU arms its own counter now rather than at its next tick: a
     * window shorter than a tick (profile 1) ends at that same tick, and
     * at -smp 1 would otherwise never see the counter armed at all. The
     * other CPUs arm from their ticks (their registers are theirs). With
     * interrupts off, as pmu_arm requires: no migration in between. */
    if (pmu) {
        unsigned long f = irq_save();
        if (!pmu_armed())
            pmu_arm();
        irq_restore(f);
    }
}

/* Take the profiler for a new run (windowed or a stream), or say why
 * not: a second `profile` (the other shell) must not zero or read the
 * rings of a run in progress, and a sampler of the last run still inside
 * (Stop waits only so long) would finish its record after Start zeroed
 * the counts, and count it into this run: wait it out, or say so.
 * PROF_OK with the profiler held, or PROF_EBUSY (PROF_NOT_BUSY or
 * PROF_NOT_LATE in *e). */
static int prof_hold(struct prof_err *e)
{
    if (!prof_take())
        return prof_busy_err(e);
    int late = prof_ring_quiesce(PROF_START_WAIT_MS);
    if (late >= 0) {
        prof_give();
        prof_refuse(e, PROF_EBUSY, PROF_NOT_LATE, 0);
        if (e)
            e->pe_cpu = late;
        return PROF_EBUSY;
    }
    return PROF_OK;
}

/* Close the gate, then wait until no CPU is inside the sampler: after
 * that nothing writes a ring until the gate opens again. The wait is
 * bounded; a CPU stuck inside longer than that is broken anyway, and the
 * report still reads only records whose count was published. */
static void prof_stop(void)
{
    prof_ring_close();
    prof_snap.ps_cycles = cycles_now() - prof_snap.ps_cycles;
    prof_ring_quiesce(PROF_QUIESCE_MS);
}

/* Hand the run over: from here the readers read only the snapshot. Also
 * after an inject, which adds records while the profiler is held. The
 * acquire of each count pairs with the sampler's release (F in
 * kernel/prof/ring_produce.h): the records counted are whole. */
static void prof_freeze(void)
{
    struct prof_snapshot *s = &prof_snap;
    s->ps_dropped = 0;
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        struct prof_cpu *pc = &prof_cpus[i];
        uint32_t n = pc->pc_buf ? __atomic_load_n(&pc->pc_count, __ATOMIC_ACQUIRE) : 0;
        if (n > pc->pc_cap)
            n = pc->pc_cap;
        s->ps_recs[i] = pc->pc_buf;
        s->ps_count[i] = n;
        uint32_t cpu_n = pc->pc_other < n ? n - pc->pc_other : 0;
        s->ps_from_tick[i] = pc->pc_from_tick < cpu_n ? pc->pc_from_tick : cpu_n;
        s->ps_from_pmu[i] = cpu_n - s->ps_from_tick[i];
        s->ps_in_window[i] = pc->pc_in_window;
        s->ps_nested[i] = prof_ring_nested(i);
        s->ps_drops[i] = pc->pc_full + s->ps_nested[i];
        s->ps_dropped += s->ps_drops[i];
    }
    s->ps_kind = prof_run_kind;
    s->ps_counter = (prof_ring_gate() & PROF_GATE_PMU) != 0;
    s->ps_source = prof_run_kind == PROF_KIND_HEAP ? prof_heap_src : pmu_source_name();
    s->ps_note = pmu_probe_note();
}

static int prof_report_snap(unsigned chains, enum prof_format fmt,
                            struct printer *p)
{
    struct prof_report_opts o = { .ro_chains = chains, .ro_format = fmt,
                                  .ro_view = prof_last_view };
    prof_freeze();
    return prof_report(&prof_snap, &o, p);
}

/* ---- windows, reports, bench -------------------------------------------- */

void prof_heap_source(char *buf, size_t cap, bool inuse, uint32_t rate)
{
    fmt_snprintf(buf, cap, "heap %s rate %u", inuse ? "inuse" : "allocs", (unsigned)rate);
}

bool prof_window_ok(uint64_t ms)
{
    return ms >= PROF_WINDOW_MIN && ms <= PROF_WINDOW_MAX;
}

bool prof_chains_ok(uint64_t n)
{
    return n >= 1 && n <= PROF_CHAINS;
}

/* Records per second a CPU's ring is sized for in an off-CPU window: a
 * switch-in writes up to PROF_OFF_RECS, and a CPU switching 5000 times a
 * second fills this; past it, what does not fit is counted as dropped. */
#define PROF_OFF_RATE 16000u

/* Records per second a CPU's ring is sized for in a trace, besides its
 * samples and their slices: a switch and a wake for each of 10,000
 * switches a second, the tick's 100 slices, and margin. */
#define PROF_TRACE_RATE 24000u

/* What a window of ws needs, checked before anything starts: 0, or the
 * refusal. */
static int prof_window_check(const struct prof_window_spec *ws, struct prof_err *e)
{
    if (!prof_window_ok(ws->ws_ms))
        return prof_refuse(e, PROF_EINVAL, PROF_NOT_WINDOW, ws->ws_ms);
    if (!prof_chains_ok(ws->ws_chains))
        return prof_refuse(e, PROF_EINVAL, PROF_NOT_CHAINS, ws->ws_chains);
    if (ws->ws_format != PROF_TEXT && ws->ws_format != PROF_FOLDED &&
        ws->ws_format != PROF_RAW)
        return prof_refuse(e, PROF_EINVAL, PROF_NOT_FORMAT, ws->ws_format);
    if (ws->ws_kind == PROF_KIND_OFFCPU && ws->ws_view == PROF_VIEW_WALL &&
        ws->ws_format == PROF_RAW)
        return prof_refuse(e, PROF_EINVAL, PROF_NOT_WALL_RAW, 0);
    if (ws->ws_pid < PROF_ALL)
        return prof_refuse(e, PROF_EINVAL, PROF_NOT_PID, ws->ws_pid);
    if (ws->ws_kind == PROF_KIND_HEAP && !ws->ws_heap_rate)
        return prof_refuse(e, PROF_EINVAL, PROF_NOT_HEAP_OFF, 0);
    /* The kind is the calling command's, never a user's word, and so is a
     * trace's reader. */
    BUG_ON(ws->ws_kind != PROF_KIND_CPU && ws->ws_kind != PROF_KIND_OFFCPU &&
           ws->ws_kind != PROF_KIND_HEAP && ws->ws_kind != PROF_KIND_TRACE &&
           ws->ws_kind != PROF_KIND_LOCK);
    /* A trace's records skip the pid filter's test (prof_reserve_on). */
    BUG_ON(ws->ws_kind == PROF_KIND_TRACE &&
           (!ws->ws_read || ws->ws_format != PROF_TEXT || ws->ws_pid != PROF_ALL));
    return PROF_OK;
}

/* The records per CPU a window of ws needs, and the gate's kinds. The
 * probe (cached after the first run) says which source samples the CPU,
 * and so how many records a window of it needs. The allocator's samples
 * come at its own pace, not a source's: a ring of PROF_HEAP_WINDOW_RECS, and
 * what does not fit is counted as dropped. */
static uint32_t prof_window_size(const struct prof_window_spec *ws, bool *pmu,
                                 unsigned *kinds)
{
    if (ws->ws_kind == PROF_KIND_HEAP) {
        *pmu = false;
        *kinds = PROF_GATE_KIND(PROF_KIND_HEAP);
        return PROF_HEAP_WINDOW_RECS;
    }
    /* A lock's records come one a contended release: at most about as
     * often as the scheduler's. */
    if (ws->ws_kind == PROF_KIND_LOCK) {
        *pmu = false;
        *kinds = PROF_GATE_KIND(PROF_KIND_LOCK);
        return prof_ring_records_for(ws->ws_ms, PROF_OFF_RATE);
    }
    if (ws->ws_kind == PROF_KIND_CPU) {
        *pmu = pmu_probe();
        *kinds = PROF_GATE_CPU;
        return prof_ring_records_for(ws->ws_ms, prof_rate_hz(*pmu));
    }
    if (ws->ws_kind == PROF_KIND_TRACE) {
        *pmu = pmu_probe();
        *kinds = PROF_GATE_TRACE | PROF_GATE_CPU;
        return prof_ring_records_for(ws->ws_ms, PROF_TRACE_RATE + 2 * prof_rate_hz(*pmu));
    }
    /* Wall time needs the CPU's samples too, from the probed source. */
    bool wall = ws->ws_view == PROF_VIEW_WALL;
    *pmu = wall && pmu_probe();
    *kinds = PROF_GATE_KIND(PROF_KIND_OFFCPU) | (wall ? PROF_GATE_CPU : 0);
    return prof_ring_records_for(ws->ws_ms,
                                 PROF_OFF_RATE + (wall ? prof_rate_hz(*pmu) : 0));
}

/* The window itself, the profiler held and the rings grown: Start just
 * after a tick, sleep out whole ticks, Stop. An off-CPU window keeps the
 * scheduler's clock (the raw counter, kernel/prof/offcpu.h) over it, and
 * at its end charges every task still away up to the end, while the
 * gate is still open to the sweep's records. */
static void prof_window_sleep(const struct prof_window_spec *ws, bool pmu, unsigned kinds)
{
    bool off = ws->ws_kind == PROF_KIND_OFFCPU;
    prof_ran = true;
    /* A trace's samples are a CPU profile's: what `report again` shows. */
    prof_run_kind = (uint8_t)(ws->ws_kind == PROF_KIND_TRACE ? PROF_KIND_CPU : ws->ws_kind);
    prof_last_view = off ? ws->ws_view : 0;
    prof_snap.ps_ms = ws->ws_ms;
    if (ws->ws_kind == PROF_KIND_HEAP) {
        prof_heap_source(prof_heap_src, sizeof prof_heap_src, false, ws->ws_heap_rate);
        prof_snap.ps_rate = ws->ws_heap_rate;
        prof_snap.ps_inuse = false;
    }
    bool trace = ws->ws_kind == PROF_KIND_TRACE;
    sleep_to_tick();
    uint64_t t0 = time_ns();
    if (off) {
        prof_trace_irq_reset();     /* a wake names the interrupt it came in */
        prof_off_begin(cycles_now(), time_ns_mult());
        lockstat_spun_gate(true);   /* [spin NAME]: time spun, kernel/lockstat.h */
    }
    if (trace)
        prof_trace_begin(cycles_now(), time_ns_mult());
    bool lock = ws->ws_kind == PROF_KIND_LOCK;
    prof_start(ws->ws_pid, pmu, kinds);
    if (lock)
        lockstat_charge_gate(true);     /* waits charged to holders, kernel/lockstat.h */
    sleep_ticks(prof_window_ticks(ws->ws_ms));
    if (trace) {
        /* The window on the trace's own clock: what its records' times
         * are clipped to. */
        prof_snap.ps_ns = prof_trace_ns(cycles_now());
        prof_snap.ps_t0 = t0;
    }
    if (lock) {
        lockstat_charge_gate(false);
        prof_snap.ps_t0 = t0;
        prof_snap.ps_ns = time_ns() - t0;
    }
    if (off) {
        lockstat_spun_gate(false);
        prof_off_end(cycles_now());
        uint64_t t1 = time_ns();
        sched_off_sweep();
        prof_snap.ps_t0 = t0;
        prof_snap.ps_ns = t1 - t0;
    }
    prof_stop();
}

int prof_window_run(const struct prof_window_spec *ws, struct printer *report,
                    struct prof_err *e)
{
    int rc = prof_window_check(ws, e);
    if (rc != PROF_OK || (rc = prof_hold(e)) != PROF_OK)
        return rc;
    bool pmu;
    unsigned kinds;
    rc = prof_ring_grow(prof_window_size(ws, &pmu, &kinds), e);
    if (rc == PROF_OK) {
        prof_window_sleep(ws, pmu, kinds);
        if (ws->ws_kind == PROF_KIND_TRACE) {
            prof_freeze();
            ws->ws_read(&prof_snap, ws->ws_arg);
        } else {
            rc = prof_report_snap(ws->ws_chains, ws->ws_format, report);
        }
    }
    prof_give();
    return rc;
}

int prof_report_again(unsigned chains, struct printer *report, struct prof_err *e)
{
    if (!prof_chains_ok(chains))
        return prof_refuse(e, PROF_EINVAL, PROF_NOT_CHAINS, chains);
    int rc = prof_take_or_refuse(e);
    if (rc != PROF_OK)
        return rc;
    if (prof_ran)
        rc = prof_report_snap(chains, PROF_TEXT, report);
    else
        rc = prof_refuse(e, PROF_EINVAL, PROF_NOT_NO_RUN, 0);
    prof_give();
    return rc;
}

int prof_cost_permille(unsigned permille, uint32_t *cost)
{
    if (permille < 1 || permille > 1000)
        return PROF_EINVAL;
    if (!prof_take())
        return PROF_EBUSY;
    int rc = PROF_EINVAL;
    uint32_t total = 0;
    if (prof_ran) {
        prof_freeze();
        for (unsigned i = 0; i < MAX_CPUS; i++)
            total += prof_snap.ps_count[i];     /* a bound: CPU samples are fewer */
    }
    uint32_t *a = total ? kmalloc(total * sizeof *a) : NULL;
    if (total && !a)
        rc = PROF_ENOMEM;
    if (a) {
        uint32_t n = 0;
        for (unsigned i = 0; i < MAX_CPUS; i++)
            for (uint32_t j = 0; j < prof_snap.ps_count[i]; j++)
                if (prof_snap.ps_recs[i][j].pr_kind == PROF_KIND_CPU)
                    a[n++] = prof_snap.ps_recs[i][j].pr_cost;
        if (n) {
            /* Nearest rank: the smallest cost at or above permille of them. */
            uint32_t rank = (uint32_t)(((uint64_t)n * permille + 999) / 1000);
            *cost = prof_select(a, n, rank - 1);
            rc = PROF_OK;
        }
        kfree(a);
    }
    prof_give();
    return rc;
}

int prof_session_reserve(uint32_t records, struct prof_err *e)
{
    if (records == 0 || records > PROF_RESERVE_MAX)
        return prof_refuse(e, PROF_EINVAL, PROF_NOT_RESERVE, records);
    int rc = prof_take_or_refuse(e);
    if (rc != PROF_OK)
        return rc;
    uint32_t cap = PROF_RING_MIN;
    while (cap < records)
        cap *= 2;
    rc = prof_ring_grow(cap, e);
    prof_give();
    return rc;
}

int prof_inject(unsigned cpu, int pid, const uintptr_t *frames,
                    unsigned depth, uint32_t cost)
{
    if (cpu >= MAX_CPUS || depth < 1 || depth > PROF_FRAMES)
        return PROF_EINVAL;
    if (!prof_take())
        return PROF_EBUSY;
    struct prof_record r = {
        .pr_pid = pid, .pr_cost = cost, .pr_depth = (uint8_t)depth,
        /* As if from the source the last run used. */
        .pr_tick = !(prof_ring_gate() & PROF_GATE_PMU),
        .pr_kind = PROF_KIND_CPU,
    };
    for (unsigned i = 0; i < depth; i++)
        r.pr_frames[i] = frames[i];
    int rc = prof_ring_put(cpu, &r);
    prof_give();
    return rc;
}

/* ---- a stream's lifetime ------------------------------------------------ */

/* Whether the stream holding the profiler records off-CPU time: its end
 * charges every task still away, as a window's does. */
static bool prof_stream_off;
/* Whether it charges waits for locks to their holders. */
static bool prof_stream_lock;

int prof_session_stream_begin(int pid, unsigned drain_ms, bool *pmu, struct prof_err *e)
{
    return prof_session_stream_begin_what(pid, drain_ms, PROF_STREAM_CPU, 0, pmu, e);
}

int prof_session_stream_begin_what(int pid, unsigned drain_ms, unsigned what,
                                   uint32_t heap_rate, bool *pmu, struct prof_err *e)
{
    /* A heap stream: the allocator's samples alone (a CPU sample's weight
     * is not bytes: one profile, one kind), and only while heap profiling
     * is on. */
    if ((what & PROF_STREAM_HEAP) && what != PROF_STREAM_HEAP)
        return prof_refuse(e, PROF_EINVAL, PROF_NOT_HEAP_ALONE, 0);
    /* A lock stream likewise: a lock record's weight is others' waits;
     * and a trace's records are its own (its samples carry their time). */
    BUG_ON((what & PROF_STREAM_LOCK) && what != PROF_STREAM_LOCK);
    BUG_ON((what & PROF_STREAM_TRACE) && what != PROF_STREAM_TRACE);
    if ((what & PROF_STREAM_HEAP) && !heap_rate)
        return prof_refuse(e, PROF_EINVAL, PROF_NOT_HEAP_OFF, 0);
    int rc = prof_hold(e);
    if (rc != PROF_OK)
        return rc;
    bool cpu = what & PROF_STREAM_CPU, off = what & PROF_STREAM_OFF;
    bool lock = what & PROF_STREAM_LOCK, trace = what & PROF_STREAM_TRACE;
    *pmu = (cpu || trace) && pmu_probe();
    /* A lock's records come one a contended release: at most about as
     * often as the scheduler's, as in a window; a trace's as a window's. */
    unsigned hz = (cpu ? prof_rate_hz(*pmu) : 0) +
                  (off || lock ? PROF_OFF_STREAM_RATE : 0) +
                  (trace ? PROF_TRACE_RATE + 2 * prof_rate_hz(*pmu) : 0);
    uint32_t want = prof_ring_records_for(4 * drain_ms, hz);
    /* The allocator's samples come at its own pace, as in a window: the
     * window's rings, which a stream drains far more often than a window
     * of PROF_WINDOW_MAX fills them. */
    if ((what & PROF_STREAM_HEAP) && want < PROF_HEAP_WINDOW_RECS)
        want = PROF_HEAP_WINDOW_RECS;
    rc = prof_ring_grow(want < PROF_STREAM_MIN_RECS ? PROF_STREAM_MIN_RECS : want, e);
    if (rc != PROF_OK) {
        prof_give();
        return rc;
    }
    /* The rings are about to wrap: what they hold is no window's any more. */
    prof_ran = false;
    prof_run_kind = PROF_KIND_CPU;
    prof_stream_off = off;
    prof_stream_lock = lock;
    /* An off-CPU window with no end yet: the stream's end gives it one. */
    if (off) {
        prof_trace_irq_reset();
        prof_off_begin(cycles_now(), time_ns_mult());
    }
    /* A trace's clock starts with the stream: its records' times are ns
     * since now (kernel/prof/trace.h). */
    if (trace) {
        prof_trace_irq_reset();
        prof_trace_begin(cycles_now(), time_ns_mult());
    }
    prof_start(pid, *pmu, (cpu || trace ? PROF_GATE_CPU : 0) |
                          (trace ? PROF_GATE_TRACE : 0) |
                          (off ? PROF_GATE_KIND(PROF_KIND_OFFCPU) : 0) |
                          (what & PROF_STREAM_HEAP ? PROF_GATE_KIND(PROF_KIND_HEAP) : 0) |
                          (lock ? PROF_GATE_KIND(PROF_KIND_LOCK) : 0));
    if (lock)
        lockstat_charge_gate(true);     /* waits charged to holders, kernel/lockstat.h */
    return PROF_OK;
}

void prof_session_stream_stop(void)
{
    /* As a window's end: nothing charged past now, then what every task
     * still away is owed up to it, while the gate is still open to the
     * sweep's records (into this CPU's ring, for the final drain). */
    if (prof_stream_off) {
        prof_off_end(cycles_now());
        sched_off_sweep();
    }
    if (prof_stream_lock)
        lockstat_charge_gate(false);
    prof_stop();
}

void prof_session_stream_end(void)
{
    prof_session_set_busy_note(NULL);
    prof_give();
}

int prof_print_last_sources(struct printer *report, struct prof_err *e)
{
    int rc = prof_take_or_refuse(e);
    if (rc != PROF_OK)
        return rc;
    if (prof_ran) {
        prof_freeze();
        prof_print_sources(&prof_snap, report);
    } else {
        rc = prof_refuse(e, PROF_EINVAL, PROF_NOT_NO_RUN, 0);
    }
    prof_give();
    return rc;
}

#ifdef SONDE_HOST_TEST
void prof_test_reset(void)
{
    prof_ring_test_reset();
    prof_ran = false;
}
#endif
