/* tools/output/trace_names.c: what the trace writers call things
 * (trace_names.h). */
#include "tools/output/trace_names.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t pid_hash(uint32_t pid, size_t mask)
{
    return (size_t)((pid * 0x9e3779b97f4a7c15ull) >> 17) & mask;
}

/* The slot of pid: its entry's, or the free one it would take. */
static size_t *pid_slot(const struct sp_trace_tasks *ts, uint32_t pid)
{
    size_t mask = ts->nslots - 1;
    for (size_t h = pid_hash(pid, mask);; h = (h + 1) & mask) {
        size_t c = ts->slot[h];
        if (!c || ts->v[c - 1].tt_pid == pid)
            return &ts->slot[h];
    }
}

/* Room for one more task: the table at most half full, so a probe ends. */
static void room(struct sp_trace_tasks *ts)
{
    if (2 * (ts->n + 1) <= ts->nslots)
        return;
    free(ts->slot);
    ts->nslots = ts->nslots ? 2 * ts->nslots : 64;
    ts->slot = sp_xcalloc(ts->nslots, sizeof *ts->slot);
    for (size_t i = 0; i < ts->n; i++)
        *pid_slot(ts, ts->v[i].tt_pid) = i + 1;
}

static void add(struct sp_trace_tasks *ts, uint32_t pid, const char *name)
{
    room(ts);
    size_t *s = pid_slot(ts, pid);
    if (*s) {
        struct sp_trace_task *k = &ts->v[*s - 1];
        /* An interrupt's line names no task (""), nor a task gone by the
         * time it was printed ("-"): a later event's name stands. */
        bool unknown = !k->tt_name[0] || strcmp(k->tt_name, "-") == 0;
        if (unknown && name[0] && strcmp(name, "-") != 0)
            k->tt_name = name;
        return;
    }
    ts->v = sp_grow(ts->v, &ts->cap, ts->n + 1, sizeof *ts->v);
    ts->v[ts->n] = (struct sp_trace_task){ .tt_pid = pid, .tt_name = name };
    *s = ++ts->n;
}

void sp_trace_tasks_build(struct sp_trace_tasks *ts, const struct sp_trace *t)
{
    memset(ts, 0, sizeof *ts);
    for (size_t i = 0; i < t->st_nev; i++) {
        const struct traw_event *e = &t->st_ev[i];
        add(ts, e->te_pid, e->te_task);
        if (e->te_type == TRAW_SWITCH || e->te_type == TRAW_WAKE)
            add(ts, e->te_pid2, e->te_task2);
    }
}

void sp_trace_tasks_free(struct sp_trace_tasks *ts)
{
    free(ts->v);
    free(ts->slot);
    memset(ts, 0, sizeof *ts);
}

size_t sp_trace_tasks_find(const struct sp_trace_tasks *ts, uint32_t pid)
{
    if (!ts->nslots)
        return SP_TRACE_TASKS_NONE;
    size_t c = *pid_slot(ts, pid);
    return c ? c - 1 : SP_TRACE_TASKS_NONE;
}

/* The words are uapi/trace_raw.h's grammar's own (its parser's tables);
 * the writers take events built by hand as well as parsed ones, so a
 * value out of range is named "?" rather than trusted. */
const char *sp_trace_left_word(unsigned left)
{
    const char *w = traw_left_name(left);
    return w ? w : "?";
}

const char *sp_trace_class_word(unsigned cls)
{
    const char *w = traw_class_name(cls);
    return w ? w : "?";
}

void sp_trace_irq_label(const struct traw_event *e, char *buf, size_t cap)
{
    if (e->te_irq[0])
        snprintf(buf, cap, "irq %s", e->te_irq);
    else
        snprintf(buf, cap, "irq %s %u", sp_trace_class_word(e->te_class), (unsigned)e->te_vec);
}
