/* tools/output/trace_json.h: a trace as Chrome's trace-event JSON
 * (record --trace -o FILE.json), which Perfetto's UI, chrome://tracing
 * and speedscope open, and which the page's timeline reads (FILE.html
 * embeds exactly this text).
 *
 * The object format: {"traceEvents": [...], "stackFrames": {...},
 * "samples": [...], "displayTimeUnit": "ns", "otherData": {...}}. ts and dur are in µs,
 * as the format wants, with ns kept as three decimals. Each CPU is a
 * process of its own, pid 1000000 + cpu (no task pid is that high),
 * named "CPU n" by an "M" process_name event, with one thread, tid =
 * that pid, so each CPU is one lane:
 *   - a task's run: {"ph":"X","cat":"run","name":TASK,"pid":P,"tid":P,
 *     "ts","dur","args":{"pid":PID,"task":TASK,"left":REASON,
 *     "delay_us":D,"wait_us":W}}, REASON the switch's LEFT word (with
 *     ":NAME" for waitq and mutex: "waitq:virtio-rx"; "" for a run still
 *     going at the window's end), D its scheduling delay (wake, or
 *     preemption, to run), W its blocked time before the wake (0 when
 *     not seen); idle's runs are "<idle>", cat "idle". A CPU's first
 *     run starts at 0 with the task its first event shows, its last ends
 *     at the window's end (or the last event's time, if later): its runs
 *     tile the window;
 *   - an interrupt: {"ph":"X","cat":"irq","name":"irq NAME" (or "irq
 *     CLASS VEC"),...,"args":{"vector":V,"class":CLASS,"task":TASK}};
 *   - a wake: a flow, {"ph":"s","cat":"wake","id":N,...} on the waker's
 *     CPU at the wake and {"ph":"f","bp":"e",...,"id":N} on the wakee's
 *     CPU where the wakee's next run starts, "name":"wake", args
 *     {"waker":TASK or "irq NAME","wakee":TASK};
 *   - a CPU sample: {"ph":"i","s":"t","cat":"sample","name":"sample",
 *     "ts",...,"sf":ID,"args":{"pid":PID,"task":TASK}}, ID a key of
 *     "stackFrames": {"ID":{"name":FUNCTION,"category":FILE:LINE or
 *     "kernel","parent":"ID"}} (the root frame has no parent).
 * The samples again, as the object format's own "samples" array, which
 * speedscope reads (it takes no instant event): {"cpu":N,"pid":P,"tid":P,
 * "ts","name":"sample","sf":ID,"weight":1}, P the CPU's lane.
 * otherData holds {"kernel", "build_id", "ms", "cpus", "dropped": [per
 * CPU]}.
 *
 * Host pipeline: prefix sp_trace_json_. */
#pragma once
#include <stdio.h>
#include "tools/model/trace.h"

/* Writes t (its samples named) as above; -1 on a write error. */
int sp_trace_json_write(const struct sp_trace *t, FILE *f);
