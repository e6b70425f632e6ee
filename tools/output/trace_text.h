/* tools/output/trace_text.h: a trace as the shell's `trace` prints it
 * (record --trace -o FILE.txt): perf sched timehist's rows, then each
 * CPU's summary, from the raw events (tools/model/trace.h).
 *
 *   trace: 500.000 ms, 2 cpus, kernel 127.0.0.1:9000, build-id 9aef...
 *      time (ms)    cpu  task[pid]               wait (ms) delay (ms)   run (ms)   left => next
 *          19.277 [0001]  burn-pong[7]               0.000      0.000     19.277+  waitq burn-pp => burn-ping[6]
 *   ...
 *   1004 switches shown; per cpu (+: ran from the window's start):
 *   cpu 1: busy 0.4% (2.010 ms), idle 497.990 ms, interrupts 0.1% (0.490 ms), switches 1004,
 *     wakes 1003, samples 50, dropped 0
 *     slices: tick 50 (0.849-0.981 us)
 *     longest: burn-ping[6] 1.005 ms (502 runs, max delay 0.010 ms); ...
 *     hottest: burn_pingpong_wait 21; sched_idle 12
 *
 * A row is a switch: at that time on that CPU the task left (why, and
 * the wait's name) for the next; its run, the wait before it (switch-out
 * to wake) and its scheduling delay (wake to switch-in), as the kernel's
 * fold computes them (kernel/prof/trace.c): a run under way at the
 * window's start is counted from 0 and marked '+', one at its end up
 * to the end. A run begun by a wake inside an interrupt other than the
 * tick says "(woken by irq NAME on CPU N, during TASK)". The summary's
 * "hottest" are the functions the CPU's samples were in, named from the
 * ELF, most sampled first (the raw trace names nothing; the shell's
 * summary has no such line).
 *
 * Host pipeline: prefix sp_trace_text_. */
#pragma once
#include <stdio.h>
#include "tools/model/trace.h"

/* Writes t (its samples named) as above; 0, or -1 on a write error. */
int sp_trace_text_write(const struct sp_trace *t, FILE *f);
