// LINK: tools/output/trace_pftrace.c tools/output/trace_names.c tools/model/trace.c tools/model/model.c uapi/profile_raw.c build/host/proto/perfetto.pb-c.c uapi/trace_raw.c
// LIBS: -Ibuild/host/proto -lprotobuf-c
/* tests/unit/test_output_trace_pftrace.c: the Perfetto writer, its file
 * unpacked as one Trace through the same generated protobuf-c code and
 * read back as Perfetto's importer would: the sequence's interned state
 * first, task names from the track descriptors, the switches and wakes
 * of each CPU's bundles in time order (each switch's entering task the
 * next one's leaving task), interrupt slices nested on their CPU's
 * track, samples whose callstacks name the fixture's functions, and the
 * drops. */
#include "test.h"
#include "pftrace_read_fixture.h"

TEST(pftrace_unpacks_as_one_sequence_with_state_first)
{
    struct sp_trace t;
    tfix_load(&t);
    struct rd r;
    CHECK_EQ(rd_write_load(&r, &t), 0);
    CHECK(r.tr && r.tr->n_packet > 0);
    CHECK(r.seq_ok);
    Packet *first = r.tr && r.tr->n_packet ? r.tr->packet[0] : NULL;
    CHECK(first && first->interned_data && first->first_packet_on_sequence);
    CHECK(first && first->sequence_flags ==
                   PERFETTO__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED);
    CHECK(r.in && r.in->n_mappings == 1 && r.in->n_build_ids == 1);
    if (r.in && r.in->n_build_ids == 1) {
        CHECK_EQ(r.in->build_ids[0]->str.len, 20);
        CHECK_EQ(r.in->build_ids[0]->str.data[0], 0x00);
        CHECK_EQ(r.in->build_ids[0]->str.data[19], 0x33);
        CHECK_EQ(r.in->mappings[0]->build_id, r.in->build_ids[0]->iid);
    }
    rd_free(&r);
    sp_trace_free(&t);
}

TEST(pftrace_names_every_task_but_idle)
{
    struct sp_trace t;
    tfix_load(&t);
    struct rd r;
    CHECK_EQ(rd_write_load(&r, &t), 0);
    CHECK_EQ(r.nprocess, 3);
    CHECK_EQ(r.nthread, 3);
    CHECK_STR(rd_process(&r, 7), "burn");
    CHECK_STR(rd_thread(&r, 7), "burn");
    CHECK_STR(rd_process(&r, 8), "pong");
    CHECK_STR(rd_thread(&r, 8), "pong");
    CHECK_STR(rd_process(&r, 9), "net");
    CHECK_STR(rd_thread(&r, 9), "net");
    CHECK(!rd_process(&r, 0) && !rd_thread(&r, 0));
    rd_free(&r);
    sp_trace_free(&t);
}

TEST(pftrace_switches_are_the_traces_in_order_per_cpu)
{
    struct sp_trace t;
    tfix_load(&t);
    struct rd r;
    CHECK_EQ(rd_write_load(&r, &t), 0);
    CHECK_EQ(r.nswitch, TFIX_SWITCHES);
    CHECK(r.ordered);
    CHECK(r.chained);
    CHECK_EQ(r.nbundles, 2);
    /* CPU 0's first: burn preempted (R) for net at 4000 ns */
    CHECK_EQ(r.sw_cpu[0], 0);
    CHECK_EQ(r.sw[0]->timestamp, 4000);
    CHECK_EQ(r.sw[0]->pid, 7);
    CHECK_STR(r.sw[0]->sched_switch->prev_comm, "burn");
    CHECK_EQ(r.sw[0]->sched_switch->prev_state, 0);
    CHECK_STR(r.sw[0]->sched_switch->next_comm, "net");
    CHECK_EQ(r.sw[0]->sched_switch->next_pid, 9);
    CHECK_EQ(r.sw[1]->sched_switch->prev_state, 1);     /* net slept: S */
    /* CPU 1: idle (swapper/1, R) to pong, pong on a waitq (S), idle to
     * pong, pong exits (X) */
    CHECK_EQ(r.sw_cpu[2], 1);
    CHECK_STR(r.sw[2]->sched_switch->prev_comm, "swapper/1");
    CHECK_EQ(r.sw[2]->sched_switch->prev_pid, 0);
    CHECK_EQ(r.sw[2]->sched_switch->prev_state, 0);
    CHECK_EQ(r.sw[3]->sched_switch->prev_state, 1);
    CHECK_STR(r.sw[3]->sched_switch->next_comm, "swapper/1");
    CHECK_EQ(r.sw[5]->sched_switch->prev_state, 16);
    CHECK_EQ(r.sw[5]->timestamp, 8000);
    for (unsigned i = 0; i < 6; i++) {
        CHECK_EQ(r.sw[i]->sched_switch->prev_prio, 120);
        CHECK_EQ(r.sw[i]->pid, (uint32_t)r.sw[i]->sched_switch->prev_pid);
    }
    rd_free(&r);
    sp_trace_free(&t);
}

TEST(pftrace_wakes_are_sched_waking_on_the_wakers_cpu)
{
    struct sp_trace t;
    tfix_load(&t);
    struct rd r;
    CHECK_EQ(rd_write_load(&r, &t), 0);
    CHECK_EQ(r.nwake, TFIX_WAKES);
    unsigned irq = 0;
    for (unsigned i = 0; i < r.nwake && i < 3; i++) {
        Perfetto__SchedWakingFtraceEvent *w = r.wk[i]->sched_waking;
        CHECK_EQ(r.wk_cpu[i], 0);       /* every waker ran on CPU 0 */
        CHECK_EQ(r.wk[i]->pid, 7);
        CHECK_EQ(w->success, 1);
        if (w->pid == 9) {
            irq++;
            CHECK_STR(w->comm, "net");
            CHECK_EQ(w->target_cpu, 0);
            CHECK(r.wk[i]->has_common_flags && (r.wk[i]->common_flags & 0x08));
            CHECK_EQ(r.wk[i]->timestamp, 3000);
        } else {
            CHECK_STR(w->comm, "pong");
            CHECK_EQ(w->pid, 8);
            CHECK_EQ(w->target_cpu, 1);
            CHECK(!r.wk[i]->has_common_flags);
        }
    }
    CHECK_EQ(irq, 1);
    rd_free(&r);
    sp_trace_free(&t);
}

TEST(pftrace_interrupts_are_nested_slices_on_their_cpu)
{
    struct sp_trace t;
    tfix_load(&t);
    struct rd r;
    CHECK_EQ(rd_write_load(&r, &t), 0);
    CHECK(r.slices_ok);
    CHECK_EQ(r.nslices, TFIX_IRQS);
    CHECK_STR(r.slice[0].name, "irq tick 32");
    CHECK_EQ(r.slice[0].end - r.slice[0].begin, 712);
    CHECK_STR(r.slice[1].name, "irq virtio-net");
    CHECK_EQ(r.slice[1].begin, 2900);
    CHECK_EQ(r.slice[1].end, 3100);
    CHECK_STR(r.slice[3].name, "irq nmi 2");
    CHECK_EQ(r.slice[3].depth, 1);  /* inside the tick at 8500 */
    CHECK_EQ(r.slice[3].begin, 8600);
    CHECK_EQ(r.slice[3].end, 8700);
    CHECK_EQ(r.slice[2].end, 8800);
    for (unsigned i = 0; i < 4; i++)
        CHECK_EQ(r.slice[i].cpu, 0);
    rd_free(&r);
    sp_trace_free(&t);
}

/* Edges at one time: a tick and an NMI inside it ending together, a
 * zero-length slice there, and a slice beginning where they end. Each
 * end must close its own begin. */
TEST(pftrace_interrupt_edges_at_one_time_nest)
{
    struct sp_trace t;
    tfix_begin(&t, 1);
    tfix_irq(&t, 100, 0, 500, 32, TRAW_IRQ_TICK, "", 7, "burn");
    tfix_irq(&t, 200, 0, 500, 2, TRAW_IRQ_NMI, "", 7, "burn");
    tfix_irq(&t, 500, 0, 500, 33, TRAW_IRQ_IPI, "", 7, "burn");
    tfix_irq(&t, 500, 0, 900, 48, TRAW_IRQ_DEVICE, "virtio-net", 7, "burn");
    struct rd r;
    CHECK_EQ(rd_write_load(&r, &t), 0);
    CHECK(r.slices_ok);
    CHECK_EQ(r.nslices, 4);
    for (unsigned i = 0; i < r.nslices && i < 4; i++) {
        const struct rd_slice *x = &r.slice[i];
        if (strcmp(x->name, "irq tick 32") == 0) {
            CHECK_EQ(x->begin, 100);
            CHECK_EQ(x->end, 500);
            CHECK_EQ(x->depth, 0);
        } else if (strcmp(x->name, "irq nmi 2") == 0) {
            CHECK_EQ(x->begin, 200);
            CHECK_EQ(x->end, 500);
            CHECK_EQ(x->depth, 1);
        } else if (strcmp(x->name, "irq ipi 33") == 0) {
            CHECK_EQ(x->begin, 500);
            CHECK_EQ(x->end, 500);
            CHECK_EQ(x->depth, 1);  /* inside the device slice begun at 500 */
        } else {
            CHECK_STR(x->name, "irq virtio-net");
            CHECK_EQ(x->begin, 500);
            CHECK_EQ(x->end, 900);
            CHECK_EQ(x->depth, 0);
        }
    }
    rd_free(&r);
    sp_trace_free(&t);
}

TEST(pftrace_samples_name_their_functions)
{
    struct sp_trace t;
    tfix_load(&t);
    struct rd r;
    CHECK_EQ(rd_write_load(&r, &t), 0);
    CHECK_EQ(r.nsamples, TFIX_SAMPLES);
    char st[512];
    rd_stack(&r, r.sample[0], st, sizeof st);
    CHECK_STR(st, "top@b.c:7 caller@a.c:30 spin@a.c:12 step@a.h:5");
    CHECK_EQ(r.sample_ns[0], 1200);
    CHECK_EQ(r.sample[0]->cpu, 0);
    CHECK_EQ(r.sample[0]->pid, 7);
    CHECK_EQ(r.sample[0]->tid, 7);
    CHECK_EQ(r.sample[0]->cpu_mode, PERFETTO__PROFILING__CPU_MODE__MODE_KERNEL);
    rd_stack(&r, r.sample[1], st, sizeof st);
    CHECK_STR(st, "caller@a.c:30 spin@a.c:14");
    CHECK_EQ(r.sample[1]->cpu, 1);
    rd_stack(&r, r.sample[2], st, sizeof st);
    CHECK_STR(st, "spin@a.c:12 step@a.h:5");
    /* three distinct chains, each its own callstack; one function name
     * each for step, spin, caller, top */
    CHECK(r.in && r.in->n_callstacks == 3 && r.in->n_function_names == 4);
    rd_free(&r);
    sp_trace_free(&t);
}

TEST(pftrace_counts_each_cpus_drops)
{
    struct sp_trace t;
    tfix_load(&t);
    struct rd r;
    CHECK_EQ(rd_write_load(&r, &t), 0);
    CHECK_EQ(r.lost[0], 0);
    CHECK_EQ(r.lost[1], 3);
    rd_free(&r);
    sp_trace_free(&t);
}

/* More switches than a bundle holds: several bundles, still in order,
 * every switch there once; the same samples share one callstack. */
TEST(pftrace_long_trace_spans_bundles)
{
    struct sp_trace t;
    static const uint64_t pc[] = { 0x1020, 0x2005 };
    tfix_begin(&t, 1);
    unsigned n = 3 * SP_PFTRACE_BUNDLE + 7;
    for (unsigned i = 0; i < n; i++) {
        bool even = i % 2 == 0;
        tfix_switch(&t, 1000 + 10ull * i, 0, even ? 0 : 8, even ? TRAW_IDLE_TASK : "pong",
                    even ? TRAW_LEFT_NONE : TRAW_LEFT_SLEEP, "", even ? 8 : 0,
                    even ? "pong" : TRAW_IDLE_TASK);
        if (i % 100 == 0)
            tfix_sample(&t, 1005 + 10ull * i, 0, 8, "pong", 2, pc);
    }
    fix_symbolize(&t.st_prof);
    struct rd r;
    CHECK_EQ(rd_write_load(&r, &t), 0);
    CHECK_EQ(r.nswitch, n);
    CHECK_EQ(r.nbundles, 4);
    CHECK(r.ordered);
    CHECK(r.chained);
    CHECK_EQ(r.nsamples, (n + 99) / 100);
    CHECK(r.in && r.in->n_callstacks == 1);
    rd_free(&r);
    sp_trace_free(&t);
}

TEST(pftrace_reports_a_write_error)
{
    struct sp_trace t;
    tfix_load(&t);
    FILE *f = fopen("/dev/full", "w");
    CHECK(f);
    if (f) {
        setvbuf(f, NULL, _IONBF, 0);
        CHECK_EQ(sp_trace_pftrace_write(&t, f), -1);
        fclose(f);
    }
    sp_trace_free(&t);
}
