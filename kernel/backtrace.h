/* kernel/backtrace.h: backtraces of tasks and CPUs, printed in the form
 * the profiler's caller lines use ("        <- name+0xoff"). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

struct printer;
struct trap_frame;

#define BT_MAX 16

/* Another CPU's current context (kernel/backtrace.c), by the request
 * protocol over cpu_ask_backtrace. Frame 0 is the interrupted instruction.
 * *pid (if not NULL): the task it interrupted.
 * -1 if it did not answer within BT_WAIT_MS. Under TCG a vCPU thread the
 * host has descheduled answers late: 4 vCPUs on a busy 2-core host were
 * seen to miss 250 ms now and then. A live CPU answers in
 * microseconds; the bound only matters for one that is really stuck, and
 * a panic waits it out once per such CPU. */
#define BT_WAIT_MS 1000
int cpu_backtrace(unsigned cpu, uintptr_t *out, unsigned max, int *pid);
/* From the arch's NMI (or pseudo-NMI) handler, first: answer a pending
 * request (true if there was one, so the interrupt is claimed), and halt if
 * another CPU is panicking. */
bool bt_answer(const struct trap_frame *tf);

/* frames[0] is an exact pc (trap frame, NMI) when first_is_pc; every other
 * entry is a return address. */
void bt_print(struct printer *p, const uintptr_t *frames, unsigned n, bool first_is_pc);
/* A task's stack: a sleeping one from its saved context, a running one on
 * another CPU by NMI (then *first_is_pc is set). Returns frames (0 for a
 * task that has not run yet), -1 if its CPU did not answer, -2 if there is
 * no such task. */
int bt_task(int pid, uintptr_t *out, unsigned max, bool *first_is_pc);
