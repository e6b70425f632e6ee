// web/lib/trace_model.js: a trace's Chrome trace-event JSON (the format of
// tools/output/trace_json.h) as what the timeline draws and the trace page
// sums: a lane per CPU with its runs and interrupts, the wakes between
// them, the samples in time order with their stacks. No DOM here, so that
// a test imports it in node and serve's page can reuse it.
//   traceModel(doc)           the model of a parsed document (throws an
//                             Error naming what is wrong when doc is no trace)
//   samplesIn(m, from, to)    the samples with from <= ts < to (µs)
//   stackTree(m, samples)     their flame graph: all > task > outermost
//                             caller ... sampled function
//   reasonsIn(m, from, to)    why tasks left the CPU in the range, and how
//                             long they stayed off it there
//   duration(us)              a length of time for people: 850 ns, 12.5 µs

// Each CPU is a process of its own, pid CPU_PID + cpu (trace_json.h).
export const CPU_PID = 1000000;

function lane(m, pid) {
  let l = m.byPid.get(pid);
  if (!l) {
    l = { cpu: pid - CPU_PID, pid, name: `CPU ${pid - CPU_PID}`, runs: [], irqs: [] };
    m.byPid.set(pid, l);
  }
  return l;
}

const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const byTs = (a, b) => a.ts - b.ts;

// The events a lane's bars are made of: an X event with its times in µs.
function slice(e, l) {
  const ts = num(e.ts), dur = Math.max(0, num(e.dur));
  return { ts, dur, end: ts + dur, lane: l, args: e.args || {} };
}

function addRun(m, e, l) {
  const r = slice(e, l);
  r.idle = e.cat === 'idle';
  r.task = String(r.args.task ?? e.name ?? '?');
  r.pid = r.idle ? -1 : num(r.args.pid);
  r.left = String(r.args.left ?? '');
  r.delay = num(r.args.delay_us);
  r.wait = num(r.args.wait_us);
  r.kind = 'run';
  l.runs.push(r);
}

function addIrq(e, l) {
  const q = slice(e, l);
  q.name = String(e.name ?? 'irq');
  q.task = String(q.args.task ?? '');
  q.kind = 'irq';
  l.irqs.push(q);
}

export function traceModel(doc) {
  if (!doc || typeof doc !== 'object' || !Array.isArray(doc.traceEvents))
    throw new Error('no "traceEvents" array: not a trace in the Chrome trace-event format');
  const m = {
    byPid: new Map(), lanes: [], runs: [], wakes: [], samples: [],
    frames: doc.stackFrames && typeof doc.stackFrames === 'object' ? doc.stackFrames : {},
    meta: doc.otherData && typeof doc.otherData === 'object' ? doc.otherData : {},
    unpaired: 0, chains: new Map(),
  };
  const flows = new Map();
  let end = 0;
  for (const e of doc.traceEvents) {
    if (!e || typeof e !== 'object' || typeof e.pid !== 'number' || e.pid < CPU_PID)
      continue;
    const l = lane(m, e.pid);
    if (e.ph === 'M' && e.name === 'process_name' && e.args && typeof e.args.name === 'string')
      l.name = e.args.name;
    else if (e.ph === 'X' && (e.cat === 'run' || e.cat === 'idle'))
      addRun(m, e, l);
    else if (e.ph === 'X' && e.cat === 'irq')
      addIrq(e, l);
    else if ((e.ph === 's' || e.ph === 'f') && e.cat === 'wake') {
      const w = flows.get(e.id) || { id: e.id };
      w[e.ph === 's' ? 'from' : 'to'] = { ts: num(e.ts), lane: l };
      const a = e.args || {};
      if (a.waker !== undefined)
        w.waker = String(a.waker);
      if (a.wakee !== undefined)
        w.wakee = String(a.wakee);
      flows.set(e.id, w);
    } else if (e.ph === 'i' && e.cat === 'sample') {
      const a = e.args || {};
      m.samples.push({ ts: num(e.ts), sf: e.sf === undefined ? null : String(e.sf),
                       task: String(a.task ?? '?'), pid: num(a.pid), lane: l });
    } else
      continue;
    end = Math.max(end, num(e.ts) + Math.max(0, num(e.dur)));
  }
  for (const w of flows.values()) {
    if (w.from && w.to) {
      w.kind = 'wake';
      m.wakes.push(w);
    } else
      m.unpaired++;
  }
  m.wakes.sort((a, b) => a.from.ts - b.from.ts);
  m.lanes = [...m.byPid.values()].sort((a, b) => a.cpu - b.cpu);
  m.lanes.forEach((l, i) => {
    l.index = i;
    l.runs.sort(byTs);
    l.irqs.sort(byTs);
    m.runs.push(...l.runs);
  });
  m.samples.sort(byTs);
  m.start = 0;
  m.end = Math.max(end, num(m.meta.ms) * 1000, 1);
  return m;
}

// The first index of sorted (by key) whose key is >= v.
export function lowerBound(sorted, v, key) {
  let lo = 0, hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (key(sorted[mid]) < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

export function samplesIn(m, from, to) {
  const ts = (s) => s.ts;
  return m.samples.slice(lowerBound(m.samples, from, ts), lowerBound(m.samples, to, ts));
}

// A stack's frames, outermost first. A frame's parent that is missing ends
// the chain; one seen twice (a loop in a hand-made file) ends it too.
function chain(m, sf) {
  let c = m.chains.get(sf);
  if (c)
    return c;
  c = [];
  const seen = new Set();
  for (let id = sf; id != null && Object.hasOwn(m.frames, id) && !seen.has(id);) {
    seen.add(id);
    const f = m.frames[id] || {};
    c.push(f);
    id = f.parent === undefined ? null : String(f.parent);
  }
  c.reverse();
  m.chains.set(sf, c);
  return c;
}

function child(node, name, make) {
  node.byName = node.byName || new Map();
  let c = node.byName.get(name);
  if (!c) {
    c = make();
    node.byName.set(name, c);
    node.c.push(c);
  }
  return c;
}

// d3-flame-graph's data (n: name, v: value, c: children), as the flame
// page's (tools/output/flame_json.h): k marks the task's frame and the
// kernel's, f holds a frame's FILE:LINE.
export function stackTree(m, samples) {
  const root = { n: 'all', v: 0, c: [] };
  for (const s of samples) {
    root.v++;
    let node = child(root, s.task, () => ({ n: s.task, v: 0, k: 'task', c: [] }));
    node.v++;
    for (const f of s.sf === null ? [] : chain(m, s.sf)) {
      const name = String(f.name ?? '?'), at = String(f.category ?? '');
      node = child(node, name, () => (at === 'kernel' ? { n: name, v: 0, k: 'kernel', c: [] }
        : { n: name, v: 0, f: at, c: [] }));
      node.v++;
    }
  }
  (function strip(n) {
    delete n.byName;
    n.c.forEach(strip);
  })(root);
  return root;
}

// Each task's time off the CPU is a gap between two of its runs (on any
// CPU), or after its last run up to the window's end, and it belongs to
// the reason the run before the gap left for; a task that exited has no
// gap after. Per reason: the switches (runs that left for it, their end in
// the range) and the gaps' time inside the range, most time first.
export function reasonsIn(m, from, to) {
  const byTask = new Map();
  for (const r of m.runs)
    if (!r.idle)
      (byTask.get(r.pid) || byTask.set(r.pid, []).get(r.pid)).push(r);
  const out = new Map();
  const row = (why) => out.get(why) || out.set(why, { reason: why, switches: 0, off: 0 }).get(why);
  for (const runs of byTask.values()) {
    runs.sort(byTs);
    runs.forEach((r, i) => {
      if (!r.left)
        return;
      const next = i + 1 < runs.length ? runs[i + 1].ts : r.left === 'exit' ? r.end : m.end;
      const off = Math.max(0, Math.min(next, to) - Math.max(r.end, from));
      const left = r.end >= from && r.end < to;
      if (left || off > 0) {
        const x = row(r.left);
        x.switches += left ? 1 : 0;
        x.off += off;
      }
    });
  }
  return [...out.values()].sort((a, b) => b.off - a.off || (a.reason < b.reason ? -1 : 1));
}

export function duration(us) {
  const a = Math.abs(us);
  if (a < 1)
    return `${Math.round(us * 1000)} ns`;
  if (a < 1000)
    return `${+us.toFixed(a < 10 ? 2 : 1)} µs`;
  if (a < 1e6)
    return `${+(us / 1000).toFixed(a < 1e4 ? 3 : 2)} ms`;
  return `${+(us / 1e6).toFixed(3)} s`;
}
