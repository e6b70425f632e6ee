/* tests/unit/trace_fixture.h: a scheduling trace built by hand, for the
 * trace writers' tests (no kernel, no parser, no ELF).
 *
 * Two CPUs, a 10 ms window. On CPU 0 burn (7) runs until it is preempted
 * at 4000 ns by net (9), which a virtio-net interrupt woke at 3000 ns
 * while burn was running; net sleeps at 6000 and burn runs to the end.
 * On CPU 1 pong (8), woken by burn at 1400, runs 1900-5000, waits on
 * the waitq "pingpong", is woken again at 6500 and runs 7000-8000, when
 * it exits; idle fills the rest. Interrupts: two ticks and the device
 * interrupt on CPU 0, an NMI nested in the second tick. Three samples,
 * named by pipeline_fixture.h's symbols (0x1010 spin with step inlined,
 * 0x1020 spin, 0x2005 caller, 0x3005 top). CPU 1 dropped 3 records. */
#pragma once
#include "pipeline_fixture.h"
#include "tools/model/trace.h"

#define TFIX_WINDOW_NS 10000000ull
#define TFIX_SWITCHES  6
#define TFIX_WAKES     3
#define TFIX_IRQS      4
#define TFIX_SAMPLES   3

static void tfix_task(char *dst, const char *src)
{
    snprintf(dst, TRAW_TASK_MAX + 1, "%s", src);
}

static void tfix_switch(struct sp_trace *t, uint64_t ns, uint32_t cpu, uint32_t pid,
                        const char *task, unsigned left, const char *name,
                        uint32_t pid2, const char *task2)
{
    struct traw_event e = { .te_type = TRAW_SWITCH, .te_ns = ns, .te_cpu = cpu,
                            .te_pid = pid, .te_pid2 = pid2, .te_left = (uint8_t)left };
    tfix_task(e.te_task, task);
    tfix_task(e.te_task2, task2);
    snprintf(e.te_name, sizeof e.te_name, "%s", name);
    sp_trace_add_event(t, &e);
}

/* A wake; irq_vec non-zero: made inside that device interrupt. */
static void tfix_wake(struct sp_trace *t, uint64_t ns, uint32_t cpu, uint32_t pid,
                      const char *task, uint32_t pid2, const char *task2, uint32_t wcpu,
                      unsigned irq_vec, const char *irq)
{
    struct traw_event e = { .te_type = TRAW_WAKE, .te_ns = ns, .te_cpu = cpu,
                            .te_pid = pid, .te_pid2 = pid2, .te_wcpu = wcpu };
    tfix_task(e.te_task, task);
    tfix_task(e.te_task2, task2);
    if (irq_vec) {
        e.te_in_irq = 1;
        e.te_vec = irq_vec;
        e.te_class = TRAW_IRQ_DEVICE;
        snprintf(e.te_irq, sizeof e.te_irq, "%s", irq);
    }
    sp_trace_add_event(t, &e);
}

static void tfix_irq(struct sp_trace *t, uint64_t ns, uint32_t cpu, uint64_t end,
                     unsigned vec, unsigned cls, const char *irq, uint32_t pid,
                     const char *task)
{
    struct traw_event e = { .te_type = TRAW_IRQ, .te_ns = ns, .te_cpu = cpu, .te_end = end,
                            .te_vec = vec, .te_class = (uint8_t)cls, .te_pid = pid };
    snprintf(e.te_irq, sizeof e.te_irq, "%s", irq);
    tfix_task(e.te_task, task);
    sp_trace_add_event(t, &e);
}

static void tfix_sample(struct sp_trace *t, uint64_t ns, uint32_t cpu, uint32_t pid,
                        const char *task, unsigned depth, const uint64_t *frames)
{
    struct traw_event e = { .te_type = TRAW_SAMPLE, .te_ns = ns, .te_cpu = cpu,
                            .te_pid = pid, .te_depth = depth };
    tfix_task(e.te_task, task);
    memcpy(e.te_frames, frames, depth * sizeof *frames);
    sp_trace_add_event(t, &e);
}

/* A trace begun with cpus CPUs and a 10 ms window, no events yet. */
static void tfix_begin(struct sp_trace *t, uint32_t cpus)
{
    struct traw_header h = { .th_cpus = cpus, .th_ms = 10 };
    memcpy(h.th_build_id, FIX_BID, sizeof h.th_build_id);
    if (cpus > 1)
        h.th_dropped[1] = 3;
    sp_trace_init(t);
    sp_trace_begin(t, &h, "k1.trace", "k1", "kernel.elf");
}

/* The trace above, its samples named. */
static void tfix_load(struct sp_trace *t)
{
    static const uint64_t s1[] = { 0x1010, 0x2005, 0x3005 }, s2[] = { 0x1020, 0x2005 },
                          s3[] = { 0x1010 };
    tfix_begin(t, 2);
    tfix_irq(t, 1000, 0, 1712, 32, TRAW_IRQ_TICK, "", 7, "burn");
    tfix_sample(t, 1200, 0, 7, "burn", 3, s1);
    tfix_wake(t, 1400, 0, 7, "burn", 8, "pong", 1, 0, "");
    tfix_switch(t, 1900, 1, 0, TRAW_IDLE_TASK, TRAW_LEFT_NONE, "", 8, "pong");
    tfix_sample(t, 2500, 1, 8, "pong", 2, s2);
    tfix_irq(t, 2900, 0, 3100, 48, TRAW_IRQ_DEVICE, "virtio-net", 7, "burn");
    tfix_wake(t, 3000, 0, 7, "burn", 9, "net", 0, 48, "virtio-net");
    tfix_switch(t, 4000, 0, 7, "burn", TRAW_LEFT_PREEMPTED, "", 9, "net");
    tfix_switch(t, 5000, 1, 8, "pong", TRAW_LEFT_WAITQ, "pingpong", 0, TRAW_IDLE_TASK);
    tfix_switch(t, 6000, 0, 9, "net", TRAW_LEFT_SLEEP, "", 7, "burn");
    tfix_wake(t, 6500, 0, 7, "burn", 8, "pong", 1, 0, "");
    tfix_switch(t, 7000, 1, 0, TRAW_IDLE_TASK, TRAW_LEFT_NONE, "", 8, "pong");
    tfix_switch(t, 8000, 1, 8, "pong", TRAW_LEFT_EXIT, "", 0, TRAW_IDLE_TASK);
    tfix_irq(t, 8500, 0, 8800, 32, TRAW_IRQ_TICK, "", 7, "burn");
    tfix_irq(t, 8600, 0, 8700, 2, TRAW_IRQ_NMI, "", 7, "burn");
    tfix_sample(t, 9000, 0, 7, "burn", 1, s3);
    fix_symbolize(&t->st_prof);
}

/* What a writer wrote into memory; the caller frees it. */
static char *tfix_capture(const struct sp_trace *t, int (*write)(const struct sp_trace *, FILE *),
                          size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    int rc = write(t, f);
    fclose(f);
    if (rc)
        printf("  the writer failed\n");
    return buf;
}
