// LINK: tools/output/trace_names.c tools/model/trace.c tools/model/model.c uapi/profile_raw.c uapi/trace_raw.c
/* tests/unit/test_output_trace_names.c: the trace writers' shared names:
 * every task once by pid whatever event names it, a real name preferred
 * to the "-" of a task that exited, many tasks found through the table's
 * growth; interrupt labels; the words of LEFT and CLASS, "?" out of
 * range. */
#include "test.h"
#include "trace_fixture.h"
#include "tools/output/trace_names.h"

TEST(trace_tasks_names_each_pid_once)
{
    struct sp_trace t;
    tfix_load(&t);
    struct sp_trace_tasks ts;
    sp_trace_tasks_build(&ts, &t);
    CHECK_EQ(ts.n, 4);              /* idle, burn, pong, net */
    static const struct { uint32_t pid; const char *name; } want[] = {
        { 0, TRAW_IDLE_TASK }, { 7, "burn" }, { 8, "pong" }, { 9, "net" },
    };
    for (unsigned i = 0; i < 4; i++) {
        size_t k = sp_trace_tasks_find(&ts, want[i].pid);
        CHECK(k != SP_TRACE_TASKS_NONE);
        if (k != SP_TRACE_TASKS_NONE) {
            CHECK_EQ(ts.v[k].tt_pid, want[i].pid);
            CHECK_STR(ts.v[k].tt_name, want[i].name);
        }
    }
    CHECK_EQ(sp_trace_tasks_find(&ts, 10), SP_TRACE_TASKS_NONE);
    sp_trace_tasks_free(&ts);
    sp_trace_free(&t);
}

TEST(trace_tasks_prefer_a_name_to_the_exited_dash)
{
    struct sp_trace t;
    tfix_begin(&t, 1);
    tfix_wake(&t, 10, 0, 0, TRAW_IDLE_TASK, 12, "-", 0, 0, "");
    tfix_switch(&t, 20, 0, 0, TRAW_IDLE_TASK, TRAW_LEFT_NONE, "", 12, "worker");
    tfix_switch(&t, 30, 0, 12, "-", TRAW_LEFT_EXIT, "", 13, "-");
    struct sp_trace_tasks ts;
    sp_trace_tasks_build(&ts, &t);
    CHECK_STR(ts.v[sp_trace_tasks_find(&ts, 12)].tt_name, "worker");
    CHECK_STR(ts.v[sp_trace_tasks_find(&ts, 13)].tt_name, "-");
    sp_trace_tasks_free(&ts);
    sp_trace_free(&t);
}

/* A raw trace's interrupt line names no task: the task it interrupted,
 * first seen there, takes its name from a later event (a sample). */
TEST(trace_tasks_name_a_task_first_seen_interrupted)
{
    struct sp_trace t;
    tfix_begin(&t, 1);
    tfix_irq(&t, 10, 0, 20, 240, TRAW_IRQ_TICK, "", 8, "");
    const uint64_t pc[] = { 0x1000 };
    tfix_sample(&t, 30, 0, 8, "burn", 1, pc);
    struct sp_trace_tasks ts;
    sp_trace_tasks_build(&ts, &t);
    CHECK_STR(ts.v[sp_trace_tasks_find(&ts, 8)].tt_name, "burn");
    sp_trace_tasks_free(&ts);
    sp_trace_free(&t);
}

TEST(trace_tasks_find_many_after_growth)
{
    struct sp_trace t;
    tfix_begin(&t, 1);
    char name[16];
    for (uint32_t p = 1; p <= 5000; p++) {
        snprintf(name, sizeof name, "t%u", (unsigned)p);
        tfix_switch(&t, p, 0, p == 1 ? 0 : (p - 1) * 7919, p == 1 ? TRAW_IDLE_TASK : "x",
                    TRAW_LEFT_SLEEP, "", p * 7919, name);
    }
    struct sp_trace_tasks ts;
    sp_trace_tasks_build(&ts, &t);
    CHECK_EQ(ts.n, 5001);
    unsigned found = 0;
    for (uint32_t p = 1; p <= 5000; p++) {
        size_t k = sp_trace_tasks_find(&ts, p * 7919);
        snprintf(name, sizeof name, "t%u", (unsigned)p);
        found += k != SP_TRACE_TASKS_NONE && strcmp(ts.v[k].tt_name, name) == 0;
    }
    CHECK_EQ(found, 5000);
    sp_trace_tasks_free(&ts);
    sp_trace_free(&t);
}

TEST(trace_tasks_of_an_empty_trace_find_nothing)
{
    struct sp_trace t;
    tfix_begin(&t, 1);
    struct sp_trace_tasks ts;
    sp_trace_tasks_build(&ts, &t);
    CHECK_EQ(ts.n, 0);
    CHECK_EQ(sp_trace_tasks_find(&ts, 0), SP_TRACE_TASKS_NONE);
    sp_trace_tasks_free(&ts);
    sp_trace_free(&t);
}

TEST(trace_words_and_irq_labels)
{
    CHECK_STR(sp_trace_left_word(TRAW_LEFT_NONE), "-");
    CHECK_STR(sp_trace_left_word(TRAW_LEFT_MUTEX), "mutex");
    CHECK_STR(sp_trace_left_word(TRAW_LEFT_YIELD), "yield");
    CHECK_STR(sp_trace_left_word(TRAW_LEFT_MAX + 1), "?");
    CHECK_STR(sp_trace_class_word(TRAW_IRQ_TICK), "tick");
    CHECK_STR(sp_trace_class_word(TRAW_IRQ_NMI), "nmi");
    CHECK_STR(sp_trace_class_word(0), "?");
    CHECK_STR(sp_trace_class_word(TRAW_CLASS_MAX + 1), "?");
    struct traw_event e = { .te_type = TRAW_IRQ, .te_vec = 48, .te_class = TRAW_IRQ_DEVICE };
    char buf[64];
    sp_trace_irq_label(&e, buf, sizeof buf);
    CHECK_STR(buf, "irq device 48");
    snprintf(e.te_irq, sizeof e.te_irq, "virtio-net+rng");
    sp_trace_irq_label(&e, buf, sizeof buf);
    CHECK_STR(buf, "irq virtio-net+rng");
}
