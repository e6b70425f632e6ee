/* tests/unit/test_timer.c: timer_tick_prompt (kernel/timer.h), the
 * rule by which a tick ends its vCPU's turn (arch/x86_64/trap.c), and why
 * it is that rule: against a model of QEMU 7.2's -icount round robin
 * (docs/qemu-icount.md), vCPU 0 always busy, vCPU 1 idle with a task of
 * work to do (a UDP shell's reply). The model, one instruction a step:
 * each round first fires the due timers (a tick already pending is
 * merged), then runs the vCPUs in order, each with the time left to the
 * next deadline; a vCPU given none fires the due timers and runs
 * nothing. A vCPU takes a pending tick first (HANDLER instructions; the
 * rule is asked at its start, with the time since the tick last fell
 * due as the timer's count gives it), then works; with no work it halts
 * and its turn ends. The rule checked: a prompt tick's end also ends the
 * turn. Compared against no yield at all and a yield on every tick. */
#include "test.h"
#include <stdio.h>
#include "kernel/timer.h"

#define PERIOD   20000u        /* a tick period in instructions */
#define HANDLER  300u          /* a tick's cost */
#define PERIODS  200u
#define NCPU     2

enum policy { YIELD_NEVER, YIELD_ALWAYS, YIELD_PROMPT };

struct vcpu {
    uint64_t phase;            /* its ticks fall due at phase + k * PERIOD */
    uint64_t next_due;
    int pending;               /* a tick raised and not yet taken */
    unsigned in_handler;       /* instructions left of the tick being handled */
    int yield_after;           /* the rule's answer for that tick */
    uint64_t work;             /* instructions left of its task (~0: forever) */
    uint64_t done, ticks;
    uint64_t finished_at;      /* when its task's last instruction ran */
};

struct model {
    enum policy policy;
    uint64_t now;
    struct vcpu v[NCPU];
};

static uint64_t deadline(const struct model *m)
{
    uint64_t d = m->v[0].next_due;
    for (int i = 1; i < NCPU; i++)
        if (m->v[i].next_due < d)
            d = m->v[i].next_due;
    return d;
}

static void fire_due(struct model *m)
{
    for (int i = 0; i < NCPU; i++) {
        struct vcpu *c = &m->v[i];
        if (c->next_due > m->now)
            continue;
        c->pending = 1;                         /* merged if it already was */
        while (c->next_due <= m->now)
            c->next_due += PERIOD;
    }
}

static int decide(const struct model *m, const struct vcpu *c)
{
    uint64_t since = (m->now - c->phase) % PERIOD;      /* the count's view */
    switch (m->policy) {
    case YIELD_ALWAYS: return 1;
    case YIELD_PROMPT: return timer_tick_prompt(since, PERIOD);
    default: return 0;
    }
}

/* One turn of vCPU i with budget b: what QEMU's cpu_exec would run. */
static void turn(struct model *m, int i, uint64_t b)
{
    struct vcpu *c = &m->v[i];
    while (b > 0) {
        if (!c->in_handler && c->pending) {
            c->pending = 0;
            c->in_handler = HANDLER;
            c->yield_after = decide(m, c);
            c->ticks++;
        }
        if (c->in_handler) {
            m->now++, b--;
            if (--c->in_handler == 0 && c->yield_after)
                return;                         /* PAUSE: the turn ends */
        } else if (c->work) {
            m->now++, b--;
            if (--c->work == 0)
                c->finished_at = m->now;
            c->done++;
        } else {
            return;                             /* HLT */
        }
    }
}

static void run(struct model *m, enum policy p, uint64_t work1)
{
    memset(m, 0, sizeof *m);
    m->policy = p;
    for (int i = 0; i < NCPU; i++) {
        m->v[i].phase = PERIOD * ((unsigned)(i * 158) & 0xff) / 256;   /* lapic_timer_phase */
        m->v[i].next_due = m->v[i].phase;
    }
    m->v[0].work = ~0ull;
    m->v[1].work = work1;
    while (m->now < (uint64_t)PERIODS * PERIOD) {
        fire_due(m);
        for (int i = 0; i < NCPU; i++) {
            uint64_t left = deadline(m) - m->now;
            if (left == 0)
                fire_due(m);                    /* and runs nothing */
            else
                turn(m, i, left);
        }
    }
}

TEST(prompt_is_the_first_eighth)
{
    CHECK(timer_tick_prompt(0, 800));
    CHECK(timer_tick_prompt(99, 800));
    CHECK(!timer_tick_prompt(100, 800));
    CHECK(!timer_tick_prompt(799, 800));
    CHECK(!timer_tick_prompt(0, 0));            /* no timer running: never */
    CHECK(timer_tick_prompt(0, UINT64_MAX));
}

/* Without a yield, vCPU 0 runs to every deadline and vCPU 1, next, never
 * has time: no tick handled, none of its task done. */
TEST(model_without_yield_starves_the_next_vcpu)
{
    static struct model m;
    run(&m, YIELD_NEVER, ~0ull);
    CHECK_EQ(m.v[1].ticks, 0);
    CHECK_EQ(m.v[1].done, 0);
    CHECK(m.v[0].ticks >= PERIODS - 1);
}

/* A yield on every tick is no better for vCPU 1's task: its own late tick
 * ends the one turn it gets. */
TEST(model_yield_on_every_tick_still_starves_the_task)
{
    static struct model m;
    run(&m, YIELD_ALWAYS, ~0ull);
    CHECK(m.v[1].done < (uint64_t)PERIODS * PERIOD / 100);
}

/* The kernel's rule: both vCPUs tick at the full rate and vCPU 1's task
 * gets a fair part of the time. */
TEST(model_prompt_yield_shares_the_time)
{
    static struct model m;
    run(&m, YIELD_PROMPT, ~0ull);
    CHECK(m.v[0].ticks >= PERIODS - 1);
    CHECK(m.v[1].ticks >= PERIODS - 1);
    CHECK(m.v[1].done >= (uint64_t)PERIODS * PERIOD / 4);
    CHECK(m.v[0].done >= (uint64_t)PERIODS * PERIOD / 4);
}

/* A task on vCPU 1 of one period's work (a reply) is done within a few
 * periods; without the yield, never. */
TEST(model_prompt_yield_finishes_a_short_task)
{
    static struct model m;
    run(&m, YIELD_PROMPT, PERIOD);
    CHECK_EQ(m.v[1].work, 0);
    CHECK(m.v[1].finished_at <= 4 * PERIOD);
    run(&m, YIELD_NEVER, PERIOD);
    CHECK_EQ(m.v[1].work, PERIOD);
}
