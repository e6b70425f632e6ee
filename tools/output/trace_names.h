/* tools/output/trace_names.h: what the trace writers call things: the
 * tasks a trace names, each pid once, and an interrupt's label.
 *
 * The trace writers each need a task's name by its pid (Perfetto's
 * descriptors) or a slot per task (the JSON's runs, waits and delays);
 * this is the one table both build. A task's name is the first one the
 * trace gives it other than "-" (the kernel prints "-" for a task that
 * exited before the trace was printed), or "-" when it has no other.
 * Pid 0 is every CPU's idle, "<idle>".
 *
 * Host pipeline: prefix sp_trace_. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tools/model/trace.h"

struct sp_trace_task {
    uint32_t tt_pid;
    const char *tt_name;        /* points into the trace's events */
};

struct sp_trace_tasks {
    struct sp_trace_task *v;    /* in the order the trace first names them */
    size_t n, cap;
    size_t *slot;               /* open addressing over v: index + 1, 0 free */
    size_t nslots;
};

#define SP_TRACE_TASKS_NONE ((size_t)-1)

/* Every task t names (the leaving, entering, waking, woken, interrupted
 * and sampled ones); ts is overwritten. */
void sp_trace_tasks_build(struct sp_trace_tasks *ts, const struct sp_trace *t);
void sp_trace_tasks_free(struct sp_trace_tasks *ts);
/* pid's index in ts->v, or SP_TRACE_TASKS_NONE. */
size_t sp_trace_tasks_find(const struct sp_trace_tasks *ts, uint32_t pid);

/* LEFT's word ("-", "sleep", ... "yield") and CLASS's ("tick", "device",
 * "ipi", "nmi"), as uapi/trace_raw.h spells them; "?" out of range. */
const char *sp_trace_left_word(unsigned left);
const char *sp_trace_class_word(unsigned cls);

/* An interrupt's label, as both writers show it: "irq NAME", or "irq
 * CLASS VEC" when the vector has no name. e is an irq, or a wake made
 * inside one (te_in_irq). */
void sp_trace_irq_label(const struct traw_event *e, char *buf, size_t cap);
