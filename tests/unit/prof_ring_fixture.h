/* tests/unit/prof_ring_fixture.h: what the ring's and the stream's host
 * tests share (test_prof_ring.c, test_prof_stream.c): a stream's hold on
 * the profiler, and numbered samples whose pcs say which they were. */
#pragma once
#include "fake_profiler.h"
#include "kernel/prof/ring.h"
#include "kernel/prof/session.h"
#include "kernel/prof/stream.h"

#define PC0 0x100000u           /* a sample's pc: PC0 + its number */

static inline bool begin(void)
{
    bool pmu;
    buf_printer_init(&bp, out, sizeof out);
    return prof_session_stream_begin(PROF_ALL, PROF_STREAM_DRAIN_MS, &pmu, NULL) == PROF_OK;
}

static inline void end(void)
{
    prof_session_stream_stop();
    prof_session_stream_end();
}

static uint32_t tried[64];      /* per CPU: samples attempted, numbering the pcs */

static inline void sample(unsigned cpu)
{
    tick(cpu, 5, PC0 + tried[cpu]++, NULL);
}

