// tests/browser/trace_fixture.js: a trace made here, event by event, in the
// Chrome trace-event JSON of tools/output/trace_json.h, for the trace
// page's test (trace_html_test.js). Being made here, everything the page
// should show is known: the lanes, every run with its task, reason and
// delays, the interrupts, the wakes, the samples' times and stacks.
//   make(seed) -> { doc, cpus, runs, irqs, wakes, samples, end,
//                   samplesIn(from, to), tasksIn(from, to), reasonsIn(from, to) }
// Times are µs with ns as three decimals, as the writer's.
'use strict';

const CPU_PID = 1000000;
const END = 40000;                      // a 40 ms window
// Each CPU's own tasks (a task runs on one CPU here, so no two runs of a
// task overlap). One task's name is markup: the page must show it as text.
const TASKS = [
  [{ pid: 8, name: 'burn' }],
  [{ pid: 9, name: 'ping' }, { pid: 10, name: 'pong' }],
  [{ pid: 5, name: 'virtio-rx' }, { pid: 2, name: 'shell' }],
  [{ pid: 11, name: 'log' }, { pid: 12, name: '</script><b>x' }],
];
const REASONS = ['preempted', 'sleep', 'waitq:virtio-rx', 'mutex:log', 'yield'];
const BLOCKING = new Set(['sleep', 'waitq:virtio-rx', 'mutex:log']);
// Each task's stacks, outermost caller first; the samples pick among them.
const STACKS = {
  burn: [['task_entry', 'burn_main', 'burn_spin'], ['task_entry', 'burn_main', 'burn_mix']],
  ping: [['task_entry', 'pingpong_ping', 'waitq_wake']],
  pong: [['task_entry', 'pingpong_pong', 'waitq_wait', 'sched_yield']],
  'virtio-rx': [['task_entry', 'virtio_rx_task', 'net_input', 'ip_input']],
  shell: [['task_entry', 'shell_main', 'udpshell_poll']],
  log: [['task_entry', 'log_flush', 'uart_putc']],
  '</script><b>x': [['task_entry', 'markup_task']],
  '<idle>': [['idle_loop', 'hal_wait_for_interrupt']],
};

const ns = (us) => Math.round(us * 1000) / 1000;

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

// The stack frames as a trie: a frame's id names its whole chain, so that
// two stacks sharing callers share their frames (as the writer's do).
function frames() {
  const table = {}, ids = new Map();
  let next = 1;
  const leaf = (chain) => {
    let parent = null;
    chain.forEach((name, depth) => {
      const k = chain.slice(0, depth + 1).join(';');
      if (!ids.has(k)) {
        const id = String(next++);
        ids.set(k, id);
        table[id] = { name, category: name === 'idle_loop' ? 'kernel' : `kernel/${name}.c:${10 + depth}` };
        if (parent)
          table[id].parent = parent;
      }
      parent = ids.get(k);
    });
    return parent;
  };
  return { table, leaf };
}

function make(seed = 36) {
  const rnd = rng(seed);
  const pick = (a) => a[Math.floor(rnd() * a.length)];
  const fr = frames();
  const ev = [], runs = [], irqs = [], wakes = [], samples = [];
  // Runs, back to back on each CPU: a task's or idle's, 150-2500 µs.
  for (let cpu = 0; cpu < TASKS.length; cpu++) {
    const lastEnd = new Map(), lastLeft = new Map();
    for (let t = 0, n = 0; t < END; n++) {
      const dur = Math.min(END - t, ns(150 + rnd() * 2350));
      const task = n % 2 ? pick(TASKS[cpu]) : null;
      const r = { cpu, ts: ns(t), dur, end: ns(t + dur), idle: !task,
                  task: task ? task.name : '<idle>', pid: task ? task.pid : 0 };
      if (task) {
        r.left = pick(REASONS);
        const gap = lastEnd.has(task.pid) ? ns(t - lastEnd.get(task.pid)) : 0;
        // A blocked task was woken some 5-80 µs before it ran: its wait is
        // the gap less that; a preempted one waited the whole gap runnable.
        r.delay = gap && BLOCKING.has(lastLeft.get(task.pid)) ? ns(Math.min(gap, 5 + rnd() * 75)) : gap;
        r.wait = gap && BLOCKING.has(lastLeft.get(task.pid)) ? ns(gap - r.delay) : 0;
        lastEnd.set(task.pid, r.end);
        lastLeft.set(task.pid, r.left);
      }
      runs.push(r);
      t = r.end;
    }
  }
  const runAt = (cpu, ts) => runs.find((r) => r.cpu === cpu && r.ts <= ts && ts < r.end);
  for (const r of runs) {
    const P = CPU_PID + r.cpu;
    ev.push({ ph: 'X', cat: r.idle ? 'idle' : 'run', name: r.task, pid: P, tid: P, ts: r.ts, dur: r.dur,
              args: r.idle ? { pid: 0, task: r.task }
                : { pid: r.pid, task: r.task, left: r.left, delay_us: r.delay, wait_us: r.wait } });
    // Its wake: on the next CPU (the same one for CPU 3's), made by what
    // ran there, or by the network interrupt for virtio-rx.
    if (r.wait > 0) {
      const from = r.cpu === 3 ? 3 : (r.cpu + 1) % TASKS.length, at = ns(r.ts - r.delay);
      const w = { id: wakes.length + 1, from: { cpu: from, ts: at }, to: { cpu: r.cpu, ts: r.ts },
                  waker: r.task === 'virtio-rx' ? 'irq virtio-net' : runAt(from, at).task, wakee: r.task };
      wakes.push(w);
      const args = { waker: w.waker, wakee: w.wakee };
      ev.push({ ph: 's', cat: 'wake', name: 'wake', id: w.id, pid: CPU_PID + from, tid: CPU_PID + from,
                ts: at, args });
      ev.push({ ph: 'f', bp: 'e', cat: 'wake', name: 'wake', id: w.id, pid: P, tid: P, ts: r.ts, args });
    }
  }
  // The tick every ms on each CPU, 2-9 µs long; virtio-net on CPU 2.
  for (let cpu = 0; cpu < TASKS.length; cpu++)
    for (let k = 0; k < END / 1000; k++) {
      const tick = { cpu, ts: ns(100 + cpu * 37 + k * 1000), dur: ns(2 + rnd() * 7), name: 'irq tick',
                     vector: 32, cls: 'tick' };
      irqs.push(tick);
      if (cpu === 2 && k % 3 === 0)
        irqs.push({ cpu, ts: ns(tick.ts + 500), dur: ns(4 + rnd() * 20), name: 'irq virtio-net',
                    vector: 41, cls: 'device' });
    }
  for (const q of irqs) {
    q.end = ns(q.ts + q.dur);
    q.task = runAt(q.cpu, q.ts).task;
    const P = CPU_PID + q.cpu;
    ev.push({ ph: 'X', cat: 'irq', name: q.name, pid: P, tid: P, ts: q.ts, dur: q.dur,
              args: { vector: q.vector, class: q.cls, task: q.task } });
  }
  // A sample every 250 µs on each CPU, of what runs there.
  for (let cpu = 0; cpu < TASKS.length; cpu++)
    for (let ts = 13.5 + cpu * 61; ts < END; ts += 250) {
      const r = runAt(cpu, ts);
      const s = { cpu, ts: ns(ts), task: r.task, pid: r.pid, stack: pick(STACKS[r.task]) };
      samples.push(s);
      ev.push({ ph: 'i', s: 't', cat: 'sample', name: 'sample', pid: CPU_PID + cpu, tid: CPU_PID + cpu,
                ts: s.ts, sf: Number(fr.leaf(s.stack)), args: { pid: s.pid, task: s.task } });
    }
  ev.sort((a, b) => a.ts - b.ts);
  // The lanes' names first, as writers put them, and out of order: the
  // page orders its lanes by CPU, not by what it read first.
  ev.unshift(...[2, 0, 3, 1].flatMap((cpu) => ['process_name', 'thread_name'].map((name) =>
    ({ ph: 'M', name, pid: CPU_PID + cpu, tid: CPU_PID + cpu, args: { name: `CPU ${cpu}` } }))));
  // The samples again as the object format's own "samples" array, which
  // some viewers read instead of instant events: the page must not count
  // them twice.
  const again = ev.filter((e) => e.cat === 'sample').map((e) => ({ cpu: e.pid - CPU_PID, pid: e.pid,
    tid: e.tid, ts: e.ts, name: 'sample', sf: e.sf, weight: 1 }));
  const doc = { traceEvents: ev, stackFrames: fr.table, samples: again, displayTimeUnit: 'ns',
                otherData: { kernel: 'fixture', build_id: 'f1x7', ms: END / 1000, cpus: TASKS.length,
                             dropped: [0, 0, 0, 0] } };
  const inRange = (from, to) => samples.filter((s) => s.ts >= from && s.ts < to);
  return {
    doc, cpus: TASKS.length, runs, irqs, wakes, samples, end: END,
    samplesIn: inRange,
    tasksIn(from, to) {
      const n = {};
      for (const s of inRange(from, to))
        n[s.task] = (n[s.task] || 0) + 1;
      return n;
    },
    // Per reason: the runs that left for it with their end in the range,
    // and the time their tasks then stayed off the CPU inside the range
    // (up to the task's next run, or the window's end).
    reasonsIn(from, to) {
      const out = {};
      for (const r of runs.filter((x) => !x.idle)) {
        const next = runs.filter((x) => x.pid === r.pid && x.ts >= r.end).sort((a, b) => a.ts - b.ts)[0];
        const off = Math.max(0, Math.min(next ? next.ts : END, to) - Math.max(r.end, from));
        const left = r.end >= from && r.end < to;
        if (left || off > 0) {
          const o = out[r.left] || (out[r.left] = { switches: 0, off: 0 });
          o.switches += left ? 1 : 0;
          o.off += off;
        }
      }
      return out;
    },
  };
}

module.exports = { make, CPU_PID };
