// tests/browser/trace_model_test.js: web/lib/trace_model.js imported as the
// module it is, in node (no page), on documents made by hand: what is no
// trace is refused with a message naming what is missing; lanes, wakes
// and samples come out of the events as trace_json.h lays them; a stack
// whose frames loop still ends; the off-CPU reasons of a range clip each
// gap to it and give an exited task none; durations read as people write them.
'use strict';
const path = require('path');
const { pathToFileURL } = require('url');
const { check } = require('./browser.js');

const P = 1000000;

function load(env) {
  return import(pathToFileURL(path.join(env.root, 'web', 'lib', 'trace_model.js')).href);
}

const run = (cpu, ts, dur, pid, left, extra = {}) => ({ ph: 'X', cat: 'run', name: `t${pid}`,
  pid: P + cpu, tid: P + cpu, ts, dur, args: { pid, task: `t${pid}`, left, delay_us: 1, wait_us: 2,
  ...extra } });

module.exports = {
  tests: [
    ['trace_model_refuses_what_is_no_trace', async (env) => {
      const { traceModel } = await load(env);
      for (const bad of [null, 7, {}, { traceEvents: {} }, { traceEvents: 'x' }]) {
        let msg = null;
        try {
          traceModel(bad);
        } catch (e) {
          msg = e.message;
        }
        check(msg && msg.includes('"traceEvents" array'), `${JSON.stringify(bad)}: ${msg}`);
      }
    }],
    ['trace_model_lanes_wakes_samples', async (env) => {
      const { traceModel, samplesIn, stackTree } = await load(env);
      const m = traceModel({
        traceEvents: [
          run(3, 0, 10, 7, 'sleep'), run(1, 5, 10, 8, 'preempted'),
          { ph: 'X', cat: 'idle', name: '<idle>', pid: P + 1, tid: P + 1, ts: 0, dur: 5, args: {} },
          { ph: 'X', cat: 'irq', name: 'irq tick', pid: P + 3, tid: P + 3, ts: 2, dur: 1, args: {} },
          { ph: 's', cat: 'wake', id: 1, pid: P + 1, ts: 12, args: { waker: 't8', wakee: 't7' } },
          { ph: 'f', cat: 'wake', id: 1, pid: P + 3, ts: 20, args: {} },
          { ph: 's', cat: 'wake', id: 2, pid: P + 1, ts: 13, args: {} },
          { ph: 'X', cat: 'run', name: 'not a CPU', pid: 42, tid: 42, ts: 0, dur: 1 },
          { ph: 'i', cat: 'sample', pid: P + 3, ts: 4, sf: 1, args: { pid: 7, task: 't7' } },
          { ph: 'i', cat: 'sample', pid: P + 1, ts: 6, sf: 9, args: { pid: 8, task: 't8' } },
          { ph: 'i', cat: 'sample', pid: P + 3, ts: 3, sf: 1, args: { pid: 7, task: 't7' } },
          { ph: 'M', name: 'process_name', pid: P + 3, args: { name: 'CPU three' } },
        ],
        // A loop: 1's parent is 2, 2's is 1. The chain ends where it would repeat.
        stackFrames: { 1: { name: 'a', category: 'k/a.c:1', parent: '2' },
                       2: { name: 'b', category: 'kernel', parent: '1' } },
        otherData: { ms: 1 },
      });
      check(m.lanes.map((l) => `${l.cpu}:${l.name}:${l.runs.length}:${l.irqs.length}`).join() ===
        '1:CPU 1:2:0,3:CPU three:1:1', `lanes ${m.lanes.map((l) => [l.cpu, l.name])}`);
      check(m.runs.length === 3 && m.runs.filter((r) => r.idle).length === 1, `${m.runs.length} runs`);
      check(m.wakes.length === 1 && m.unpaired === 1 && m.wakes[0].from.lane.cpu === 1 &&
        m.wakes[0].to.lane.cpu === 3 && m.wakes[0].waker === 't8',
        `wakes ${m.wakes.length}, unpaired ${m.unpaired}`);
      check(m.end === 1000, `the window ends at ${m.end} µs, want 1000 (otherData.ms)`);
      check(samplesIn(m, 3, 6).map((s) => s.ts).join() === '3,4', 'samples in [3, 6) µs');
      const t = stackTree(m, m.samples);
      const t7 = t.c.find((c) => c.n === 't7'), t8 = t.c.find((c) => c.n === 't8');
      check(t.v === 3 && t7.v === 2 && t7.k === 'task' && t8.v === 1 && t8.c.length === 0,
        `tree ${JSON.stringify(t)}`);
      check(t7.c.length === 1 && t7.c[0].n === 'b' && t7.c[0].k === 'kernel' && t7.c[0].c[0].n === 'a' &&
        t7.c[0].c[0].f === 'k/a.c:1' && t7.c[0].c[0].c.length === 0, `t7's stack ${JSON.stringify(t7)}`);
    }],
    ['trace_model_reasons_clip_to_range', async (env) => {
      const { traceModel, reasonsIn } = await load(env);
      // Task 7 sleeps 10-30 on CPU 0 and runs again on CPU 1; task 8
      // exits at 15; task 9 is preempted at 40 and never runs again.
      const m = traceModel({ traceEvents: [run(0, 0, 10, 7, 'sleep'), run(1, 30, 5, 7, 'yield'),
        run(0, 10, 5, 8, 'exit'), run(1, 35, 5, 9, 'preempted')], otherData: { ms: 0.1 } });
      const rows = (a, b) => JSON.stringify(reasonsIn(m, a, b).map((r) => [r.reason, r.switches, r.off]));
      const all = rows(0, 100);
      check(all === '[["yield",1,65],["preempted",1,60],["sleep",1,20],["exit",1,0]]', `all: ${all}`);
      const part = rows(20, 36);
      check(part === '[["sleep",0,10],["yield",1,1]]', `[20, 36): ${part}`);
    }],
    ['trace_model_durations', async (env) => {
      const { duration } = await load(env);
      for (const [us, want] of [[0.85, '850 ns'], [3.25, '3.25 µs'], [12.5, '12.5 µs'], [1500, '1.5 ms'],
        [39062.5, '39.06 ms'], [2.5e6, '2.5 s']])
        check(duration(us) === want, `duration(${us}) is "${duration(us)}", want "${want}"`);
    }],
  ],
};
