/* kernel/prof/lockprof_hooks.h: the locks' hooks for `profile lock`
 * (kernel/lockcharge.h has the arithmetic): a release that owes its
 * waiters' time becomes one record of kind PROF_KIND_LOCK, the holder's
 * chain walked from the release, weighing the delay in ns, with the
 * number of waits and the lock's name. pr_why says the lock's kind
 * (PROF_WHY_MUTEX, PROF_WHY_SPIN), so the report's root is the off-CPU
 * report's [mutex NAME] and [spin NAME].
 *
 * Both run in the holder's context, the lock still held: a spinlock's in
 * any context but NMI (interrupts off), a mutex's in a task. Neither
 * takes a lock nor allocates: the record goes into this CPU's ring as
 * the sampler's do.
 *
 * Profiler core: prefix prof_lock_. */
#pragma once
#include "kernel/lockstat.h"
#include "kernel/lockcharge.h"

/* What a release at now of the spinlock h owes, from every CPU's slot
 * (lockstat_slots); bound to lockstat_charge_bind. */
void prof_lock_spin_released(struct lockstat_hold *h, uint64_t now);

/* The record of charge c (the clock's units) for a lock of kind and
 * name, the current task's chain from the caller. */
void prof_lock_charged(const char *name, enum lock_kind kind, struct lockcharge_charge c);
