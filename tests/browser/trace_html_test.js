// tests/browser/trace_html_test.js: the trace's page (record --trace -o
// FILE.html) in chromium. The trace is made here (trace_fixture.js), so
// every expected figure comes from the fixture and none from the page:
// the page, written by sonde-prof's own writer (sp_html_write_trace,
// through trace_page.c), shows one lane per CPU in order with each run,
// interrupt and wake of the trace (a wake's arrow from the waker's lane at
// the wake to the wakee's where it runs); brushing a range makes the flame graph
// hold exactly that range's samples (each task's too) and the off-CPU
// table that range's reasons; a click on a slice shows its task, the
// reason it left and its scheduling delay, one on a wake its waker and
// wakee; the wheel zooms to a few µs,
// where an interrupt of a few µs is wide and a brushed range of
// microseconds holds its one sample; a narrower window keeps the view; a
// trace where nothing happened shows its lanes and no samples; a page of
// what is no trace says why.
// The page must ask for nothing over the network and raise no error.
//
// A real kernel's trace (trace_real.json, recorded by record --trace)
// shows its CPUs, the pair's and the spinners' runs, every sample, and a
// clicked run's reason. Screenshots go to build/browser/trace-html.png
// and trace-real.png; with SONDE_DOCS_SHOTS=1 also to docs/img/.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { pathToFileURL } = require('url');
const { check, screenshot } = require('./browser.js');
const fixture = require('./trace_fixture.js');

const TITLE = 'trace of <fixture> & co';
const END = 40000;

function sh(env, cmd, args) {
  const r = spawnSync(cmd, args, { cwd: env.root, encoding: 'utf8', timeout: 60000 });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')}: ${r.error ? r.error.message : 'exit ' + r.status}: ` +
      `${(r.stdout || '').trim()} ${(r.stderr || '').trim()}`);
}

async function open(env, b) {
  const p = await b.openPage('file://' + path.join(env.dir, 'trace.html'));
  await p.waitForSelector('g.sonde-lane rect.sonde-run');
  await p.waitForSelector('#sonde-chart g.frame');
  return p;
}

function clean(p) {
  check(p.errors.length === 0, `page errors: ${p.errors.join('; ')}`);
  check(p.refused.length === 0, `the page asked the network for ${p.refused.join(', ')}`);
}

function box(p, sel) {
  return p.$eval(sel, (e) => {
    const r = e.getBoundingClientRect();
    return { x: r.left, y: r.top, w: r.width, h: r.height };
  });
}

// Drags on the range strip from page x a to b.
async function brush(p, a, b) {
  const s = await box(p, '.sonde-strip .overlay');
  await p.mouse.move(a, s.y + s.h / 2);
  await p.mouse.down();
  await p.mouse.move(b, s.y + s.h / 2, { steps: 6 });
  await p.mouse.up();
  return p.$eval('#sonde-range', (e) => [Number(e.dataset.fromUs), Number(e.dataset.toUs)]);
}

// What the flame graph holds: its root's value and each task frame's.
function flame(p) {
  return p.evaluate(() => {
    const frames = [...document.querySelectorAll('#sonde-chart g.frame')].map((g) => g.__data__);
    const root = frames.find((d) => d.depth === 0);
    const tasks = {};
    for (const d of frames.filter((f) => f.depth === 1))
      tasks[d.data.n] = d.value;
    return { shown: document.getElementById('sonde-flame-count').dataset.samples,
             root: root ? root.value : null, tasks };
  });
}

function reasonRows(p) {
  return p.$$eval('#sonde-reasons tr[data-reason]', (rs) => Object.fromEntries(rs.map((r) =>
    [r.dataset.reason, { switches: Number(r.dataset.switches), off: Number(r.dataset.offUs) }])));
}

// The flame graph and the reasons table against the fixture's for [a, b).
async function checkRange(p, f, [a, b], what) {
  const want = f.samplesIn(a, b).length, got = await flame(p);
  check(Number(got.shown) === want && got.root === want,
    `${what} [${a}, ${b}) µs: the flame graph says ${got.shown} samples and holds ${got.root}, ` +
    `want ${want}`);
  const tasks = f.tasksIn(a, b);
  check(JSON.stringify(Object.entries(got.tasks).sort()) === JSON.stringify(Object.entries(tasks).sort()),
    `${what}: the task frames hold ${JSON.stringify(got.tasks)}, want ${JSON.stringify(tasks)}`);
  const rows = await reasonRows(p), wantRows = f.reasonsIn(a, b);
  check(Object.keys(rows).sort().join() === Object.keys(wantRows).sort().join(),
    `${what}: reasons ${Object.keys(rows)}, want ${Object.keys(wantRows)}`);
  for (const [k, w] of Object.entries(wantRows))
    check(rows[k].switches === w.switches && Math.abs(rows[k].off - w.off) < 0.01,
      `${what}: ${k} has ${rows[k].switches} switches, ${rows[k].off} µs off, want ` +
      `${w.switches}, ${w.off}`);
  return want;
}

module.exports = {
  async setup(env) {
    env.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sonde-trace-html.'));
    env.f = fixture.make();
    fs.writeFileSync(path.join(env.dir, 'trace.json'), JSON.stringify(env.f.doc));
    // The writer linked with what its unit test links (that test's LINK
    // and LIBS lines), so that the two cannot drift apart.
    const unit = fs.readFileSync(path.join(env.root, 'tests', 'unit', 'test_output_html.c'), 'utf8');
    const line = (k) => (new RegExp(`^// ${k}: (.*)$`, 'm').exec(unit) || [, ''])[1].trim().split(/\s+/);
    const bin = path.join(env.dir, 'trace_page');
    sh(env, 'cc', ['-std=gnu11', '-O1', '-Wall', '-Wextra', '-Werror', '-I.', '-o', bin,
      'tests/browser/trace_page.c', ...line('LINK'), ...line('LIBS')]);
    sh(env, bin, [TITLE, path.join(env.dir, 'trace.json'), path.join(env.dir, 'trace.html')]);
    // Pages of what is no trace: not JSON, and JSON without events.
    // And a trace of two CPUs where nothing happened: lanes alone.
    const lanesAlone = JSON.stringify({ traceEvents: [0, 1].map((c) => ({ ph: 'M', name: 'process_name',
      pid: fixture.CPU_PID + c, tid: fixture.CPU_PID + c, args: { name: `CPU ${c}` } })),
    stackFrames: {}, otherData: { ms: 5, cpus: 2, dropped: [0, 0] } });
    for (const [name, text] of [['notjson', '{"traceEvents": ['], ['noevents', '{"traceEvents": 3}'],
      ['empty', lanesAlone]]) {
      fs.writeFileSync(path.join(env.dir, name + '.json'), text);
      sh(env, bin, [name, path.join(env.dir, name + '.json'), path.join(env.dir, name + '.html')]);
    }
    // A real kernel's trace (trace_real.json: `record --trace -d 150 -o
    // FILE.json` of an x86-64 kernel at -smp 2 running burn pingpong at
    // 1000/s and two burn spinners), through the same writer.
    env.real = JSON.parse(fs.readFileSync(path.join(__dirname, 'trace_real.json'), 'utf8'));
    sh(env, bin, ['a real kernel: burn pingpong and two spinners',
      path.join(__dirname, 'trace_real.json'), path.join(env.dir, 'real.html')]);
    env.model = await import(pathToFileURL(path.join(env.root, 'web', 'lib', 'trace_model.js')).href);
  },
  async teardown(env) {
    fs.rmSync(env.dir, { recursive: true, force: true });
  },
  tests: [
    ['trace_lane_per_cpu', async (env, b) => {
      const f = env.f, p = await open(env, b);
      const lanes = await p.$$eval('g.sonde-lane', (gs) => gs.map((g) => ({
        cpu: Number(g.dataset.cpu), y: g.getBoundingClientRect().top,
        runs: [...g.querySelectorAll('rect.sonde-run')].map((r) => ({
          dense: r.classList.contains('sonde-dense'), task: r.dataset.task, pid: Number(r.dataset.pid),
          fill: getComputedStyle(r).fill })),
        irqs: g.querySelectorAll('rect.sonde-irq').length,
        device: [...g.querySelectorAll('rect.sonde-irq-device')].map((r) => r.dataset.name),
        fills: new Set([...g.querySelectorAll('rect.sonde-irq')].map((r) => getComputedStyle(r).fill)).size,
      })));
      const labels = await p.$$eval('text.sonde-lane-label', (ts) => ts.map((t) => t.textContent));
      // Each arrow's ends on the page: where it leaves and where it points.
      const wakes = await p.$$eval('path.sonde-wake', (ps) => ps.map((path) => {
        const m = path.getScreenCTM(), end = path.getTotalLength();
        return [0, end].map((at) => {
          const q = path.getPointAtLength(at);
          return { x: q.x * m.a + q.y * m.c + m.e, y: q.x * m.b + q.y * m.d + m.f };
        });
      }));
      const bg = await box(p, 'rect.sonde-bg');
      const laneBox = await p.$$eval('g.sonde-lane', (gs) => gs.map((g) => {
        const r = g.getBoundingClientRect();
        return { top: r.top, bottom: r.bottom };
      }));
      const title = await p.title(), h1 = await p.textContent('#sonde-title');
      const markup = await p.$$eval('#sonde-page b, #sonde-page script', (e) => e.length);
      const hostile = await p.$$eval('#sonde-chart g.frame', (gs) => gs.filter((g) =>
        g.getAttribute('name') === '</script><b>x').length);
      await p.close();
      clean(p);
      check(lanes.length === f.cpus, `${lanes.length} lanes for ${f.cpus} CPUs`);
      check(lanes.every((l, i) => l.cpu === i && (i === 0 || l.y > lanes[i - 1].y)),
        `the lanes are not CPU 0 to ${f.cpus - 1} top to bottom: ${lanes.map((l) => l.cpu)}`);
      check(labels.join() === 'CPU 0,CPU 1,CPU 2,CPU 3', `lane labels ${labels}`);
      const colours = new Map();
      for (const l of lanes) {
        const want = f.runs.filter((r) => r.cpu === l.cpu);
        // At the whole window every run is a few pixels wide: a bar each.
        check(l.runs.length === want.length && !l.runs.some((r) => r.dense),
          `CPU ${l.cpu}: ${l.runs.length} bars, want ${want.length} runs`);
        check(l.irqs === f.irqs.filter((q) => q.cpu === l.cpu).length,
          `CPU ${l.cpu}: ${l.irqs} interrupt marks, want ${f.irqs.filter((q) => q.cpu === l.cpu).length}`);
        // The device's interrupts marked apart from the tick's.
        const dev = f.irqs.filter((q) => q.cpu === l.cpu && q.cls === 'device');
        check(l.device.length === dev.length && l.device.every((n) => n === 'irq virtio-net') &&
          l.fills === (dev.length ? 2 : 1), `CPU ${l.cpu}: ${l.device.length} device marks of ` +
          `${dev.length}, ${l.fills} colours`);
        l.runs.forEach((r, i) => {
          check(r.task === want[i].task, `CPU ${l.cpu} bar ${i} is ${r.task}, want ${want[i].task}`);
          if (r.pid > 0)
            colours.set(r.fill, (colours.get(r.fill) || new Set()).add(r.task));
        });
      }
      // A colour a task: as many colours as tasks, none shared.
      const tasks = new Set(f.runs.filter((r) => !r.idle).map((r) => r.task));
      check(colours.size === tasks.size && [...colours.values()].every((s) => s.size === 1),
        `${colours.size} colours for ${tasks.size} tasks: ${[...colours.values()].map((s) => [...s])}`);
      check(wakes.length === f.wakes.length, `${wakes.length} wake arrows, want ${f.wakes.length}`);
      // In the order of their waking: from the waker's lane at the wake to
      // the wakee's lane where it runs.
      const xOf = (us) => bg.x + us / END * bg.w;
      const inLane = (pt, cpu) => pt.y > laneBox[cpu].top && pt.y < laneBox[cpu].bottom;
      [...f.wakes].sort((a, c) => a.from.ts - c.from.ts).forEach((w, i) => {
        const [a, c] = wakes[i];
        check(Math.abs(a.x - xOf(w.from.ts)) < 1 && inLane(a, w.from.cpu) &&
          Math.abs(c.x - xOf(w.to.ts)) < 1 && inLane(c, w.to.cpu),
          `wake ${i} (${w.waker} woke ${w.wakee}, CPU ${w.from.cpu} at ${w.from.ts} to CPU ` +
          `${w.to.cpu} at ${w.to.ts}) is drawn from ${JSON.stringify(a)} to ${JSON.stringify(c)}`);
      });
      check(title === TITLE && h1 === TITLE, `the title is "${title}" / "${h1}", want "${TITLE}"`);
      check(markup === 0 && hostile === 1, `a task named as markup made ${markup} elements ` +
        `and ${hostile} frames named as it is`);
    }],
    ['trace_brush_range_redraws_flame', async (env, b) => {
      const f = env.f, p = await open(env, b);
      const whole = await checkRange(p, f, [0, END], 'the whole window');
      check(whole === f.samples.length, `the whole window holds ${whole} of ${f.samples.length}`);
      const bg = await box(p, 'rect.sonde-bg');
      const usAt = (x) => (x - bg.x) / bg.w * END;
      const counts = [];
      for (const [a, c] of [[0.2, 0.45], [0.6, 0.68]]) {
        const xa = bg.x + a * bg.w, xc = bg.x + c * bg.w;
        const r = await brush(p, xa, xc);
        // The range is where the mouse went, within a pixel's time.
        check(Math.abs(r[0] - usAt(xa)) < END / bg.w && Math.abs(r[1] - usAt(xc)) < END / bg.w,
          `dragged ${usAt(xa)}-${usAt(xc)} µs, the range is ${r[0]}-${r[1]}`);
        const n = await checkRange(p, f, r, 'the brushed range');
        check(n > 0 && n < whole, `the range holds ${n} of ${whole} samples`);
        counts.push(n);
      }
      check(counts[0] !== counts[1], `two ranges, one count: ${counts}`);
      await p.click('#sonde-range-clear');
      await checkRange(p, f, [0, END], 'after "Whole window"');
      await p.close();
      clean(p);
      console.log(`    ranges of ${counts.join(' and ')} samples of ${whole}`);
    }],
    ['trace_click_slice_shows_task_and_reason', async (env, b) => {
      const f = env.f, p = await open(env, b);
      // The longest run that waited for a wake: its reason, its delay.
      const run = f.runs.filter((r) => !r.idle && r.wait > 0).sort((x, y) => y.dur - x.dur)[0];
      const sel = `g.sonde-lane[data-cpu="${run.cpu}"] rect.sonde-run[data-ts="${run.ts}"]`;
      await p.hover(sel);
      await p.waitForSelector('.sonde-tl-tip', { state: 'visible' });
      const tip = await p.textContent('.sonde-tl-tip');
      await p.click(sel);
      const panel = await p.textContent('#sonde-slice');
      const outlined = await p.$eval(sel, (r) => r.classList.contains('sonde-selected'));
      await p.close();
      clean(p);
      const { duration } = env.model;
      for (const [where, text] of [['the tooltip', tip], ['the panel', panel]])
        for (const want of [`${run.task}[${run.pid}]`, `CPU ${run.cpu}`, `left ${run.left}`,
          `scheduling delay ${duration(run.delay)}`, `blocked before ${duration(run.wait)}`])
          check(text.replace(/:/g, '').includes(want.replace(/:/g, '')),
            `${where} says "${text}", without "${want}"`);
      check(outlined, 'the clicked run is not outlined');
    }],
    ['trace_hover_wake_shows_waker_and_wakee', async (env, b) => {
      const f = env.f, p = await open(env, b);
      // The wake with the longest arrow between two lanes, hovered halfway.
      const i = f.wakes.map((w, k) => [w.to.cpu - w.from.cpu ? w.to.ts - w.from.ts : -1, k])
        .sort((x, y) => y[0] - x[0])[0][1];
      const w = f.wakes[i];
      const order = [...f.wakes].sort((a, c) => a.from.ts - c.from.ts).indexOf(w);
      const at = await p.$$eval('path.sonde-wake-hit', (ps, k) => {
        const path = ps[k], m = path.getScreenCTM(), q = path.getPointAtLength(path.getTotalLength() / 2);
        return { x: q.x * m.a + q.y * m.c + m.e, y: q.x * m.b + q.y * m.d + m.f };
      }, order);
      await p.mouse.move(at.x, at.y);
      await p.waitForSelector('.sonde-tl-tip', { state: 'visible' });
      const tip = await p.textContent('.sonde-tl-tip');
      await p.mouse.click(at.x, at.y);
      const panel = await p.textContent('#sonde-slice');
      await p.close();
      clean(p);
      const { duration } = env.model;
      for (const [where, text] of [['the tooltip', tip], ['the panel', panel]])
        for (const want of [`wake ${w.waker} woke ${w.wakee}`, `from CPU ${w.from.cpu} at ${duration(w.from.ts)}`,
          `to CPU ${w.to.cpu}, running at ${duration(w.to.ts)}`])
          check(text.replace(/:/g, '').includes(want), `${where} says "${text}", without "${want}"`);
    }],
    ['trace_zoom_to_microseconds', async (env, b) => {
      const f = env.f, p = await open(env, b);
      const bg = await box(p, 'rect.sonde-bg');
      // An interrupt with a sample of its CPU a few µs away: zoomed to
      // microseconds, both are in view.
      const q = f.irqs.find((x) => x.ts > 5000 && f.samples.some((s) => s.cpu === x.cpu &&
        Math.abs(s.ts - x.ts) < 16));
      const lsel = `g.sonde-lane[data-cpu="${q.cpu}"]`;
      const lane = await box(p, lsel);
      await p.mouse.move(bg.x + (q.ts + q.dur / 2) / END * bg.w, lane.y + lane.h / 2);
      for (let i = 0; i < 10; i++) {
        await p.mouse.wheel(0, -500);
        await p.waitForTimeout(60);
      }
      await p.waitForTimeout(200);
      const view = await p.$eval('svg.sonde-tl-svg', (s) => [Number(s.dataset.fromUs), Number(s.dataset.toUs)]);
      const span = view[1] - view[0];
      check(span < 60 && view[0] <= q.ts && q.end <= view[1],
        `after ten wheel steps the view is ${view[0]}-${view[1]} µs, want under 60 µs around ${q.ts}`);
      const mark = await p.$$eval(`${lsel} rect.sonde-irq`, (rs) =>
        rs.map((r) => r.getBoundingClientRect().width));
      check(mark.length === 1 && mark[0] > q.dur / span * bg.w * 0.9,
        `the ${q.dur}-µs interrupt is ${mark} px wide in a ${span}-µs view`);
      const ticks = await p.$$eval('.sonde-axis .tick text', (ts) => ts.map((t) => t.textContent));
      check(ticks.length >= 2 && ticks.every((t) => /^\d+\.\d{3,} ms$/.test(t)),
        `the axis at ${span} µs reads ${ticks}`);
      const said = await p.textContent('text.sonde-span');
      check(/showing [\d.]+ µs of 40 ms/.test(said), `the view says "${said}"`);
      await p.click(`${lsel} rect.sonde-irq`);
      const panel = await p.textContent('#sonde-slice');
      check(panel.includes(`interrupt ${q.name}`) && panel.includes(`vector ${q.vector}`),
        `a click on the interrupt says "${panel}"`);
      // A range of microseconds holds the samples of those microseconds.
      const s = f.samples.filter((x) => x.ts >= view[0] && x.ts < view[1]);
      const r = await brush(p, bg.x + 2, bg.x + bg.w - 2);
      check(r[1] - r[0] < 60, `a range brushed at this zoom is ${r[1] - r[0]} µs`);
      const n = await checkRange(p, f, r, 'a range of microseconds');
      check(n >= 1 && n === s.length, `the range holds ${n} samples, the view ${s.length}`);
      // Panning: a drag of 300 px to the left shows later times.
      await p.mouse.move(bg.x + 0.7 * bg.w, lane.y + lane.h / 2);
      await p.mouse.down();
      await p.mouse.move(bg.x + 0.7 * bg.w - 300, lane.y + lane.h / 2, { steps: 8 });
      await p.mouse.up();
      const moved = await p.$eval('svg.sonde-tl-svg', (e) => Number(e.dataset.fromUs));
      const want = view[0] + 300 / bg.w * span;
      check(Math.abs(moved - want) < span / bg.w * 2, `a 300-px pan moved the view to ${moved} µs, ` +
        `want ${want}`);
      await p.click('#sonde-tl-reset');
      const back = await p.$eval('svg.sonde-tl-svg', (e) => [Number(e.dataset.fromUs), Number(e.dataset.toUs)]);
      await p.close();
      clean(p);
      check(Math.abs(back[0]) < 1e-6 && Math.abs(back[1] - END) < 1e-6, `reset shows ${back}`);
      console.log(`    zoomed to ${span.toFixed(1)} µs: the interrupt ${mark[0].toFixed(0)} px, ` +
        `${n} sample${n === 1 ? '' : 's'} in range (${s.length} in view)`);
    }],
    ['trace_resize_keeps_view', async (env, b) => {
      const p = await open(env, b);
      const bg = await box(p, 'rect.sonde-bg');
      await p.mouse.move(bg.x + bg.w / 3, bg.y + 10);
      for (let i = 0; i < 3; i++) {
        await p.mouse.wheel(0, -500);
        await p.waitForTimeout(60);
      }
      await p.waitForTimeout(200);
      const view = () => p.$eval('svg.sonde-tl-svg', (s) => [Number(s.dataset.fromUs), Number(s.dataset.toUs)]);
      const before = await view();
      await p.setViewportSize({ width: 900, height: 700 });
      await p.waitForFunction(() => Number(document.querySelector('svg.sonde-tl-svg').getAttribute('width')) < 900);
      const after = await view(), bg2 = await box(p, 'rect.sonde-bg');
      const chart = await box(p, '#sonde-chart svg');
      await p.close();
      clean(p);
      check(bg2.w < bg.w - 300 && chart.x + chart.w <= 900, `at 900 px the lanes are ${bg2.w} px ` +
        `(${bg.w} before) and the flame graph ends at ${chart.x + chart.w}`);
      check(before[1] - before[0] < END / 4 && Math.abs(after[0] - before[0]) < 1e-6 &&
        Math.abs(after[1] - before[1]) < 1e-6, `the view was ${before}, is ${after}`);
    }],
    ['trace_empty_trace_lanes_alone', async (env, b) => {
      const p = await b.openPage('file://' + path.join(env.dir, 'empty.html'));
      await p.waitForSelector('#sonde-flame-count');
      const lanes = await p.$$eval('g.sonde-lane', (gs) => gs.map((g) => g.querySelectorAll('rect').length));
      const empty = await p.textContent('#sonde-chart');
      const shown = await p.$eval('#sonde-flame-count', (e) => e.dataset.samples);
      const rows = await p.$$eval('#sonde-reasons tr[data-reason]', (rs) => rs.length);
      const bg = await box(p, 'rect.sonde-bg');
      await brush(p, bg.x + 10, bg.x + 100);
      const after = await p.$eval('#sonde-flame-count', (e) => e.dataset.samples);
      await p.close();
      clean(p);
      check(lanes.join() === '0,0', `the lanes of an empty trace hold ${lanes} bars`);
      check(empty === 'No samples in this range.' && shown === '0' && after === '0' && rows === 0,
        `an empty trace's views say "${empty}", ${shown} then ${after} samples, ${rows} reasons`);
    }],
    ['trace_bad_trace_says_so', async (env, b) => {
      for (const [name, want] of [['notjson', /cannot be read: .*JSON/],
        ['noevents', /cannot be read: no "traceEvents" array/]]) {
        const p = await b.openPage('file://' + path.join(env.dir, name + '.html'));
        await p.waitForSelector('#sonde-error');
        const text = await p.textContent('#sonde-error');
        const drawn = await p.$$eval('svg', (s) => s.length);
        await p.close();
        clean(p);
        check(want.test(text) && drawn === 0, `${name}: the page says "${text}" and draws ${drawn} svg`);
      }
    }],
    ['trace_real_kernel', async (env, b) => {
      const p = await b.openPage('file://' + path.join(env.dir, 'real.html'));
      await p.waitForSelector('g.sonde-lane rect.sonde-run');
      await p.waitForSelector('#sonde-chart g.frame');
      const ev = env.real.traceEvents;
      const lanes = await p.$$eval('g.sonde-lane', (gs) => gs.length);
      check(lanes === env.real.otherData.cpus, `${lanes} lanes for ${env.real.otherData.cpus} CPUs`);
      const want = new Set(ev.filter((e) => e.ph === 'X' && e.cat === 'run').map((e) => e.name));
      const tasks = new Set(await p.$$eval('rect.sonde-run[data-task]', (rs) => rs.map((r) => r.dataset.task)));
      for (const t of ['burn-ping', 'burn-pong', 'burn'])
        check(want.has(t) && tasks.has(t), `no run of ${t} drawn (drawn: ${[...tasks].join(', ')})`);
      const samples = ev.filter((e) => e.ph === 'i' && e.cat === 'sample').length;
      const n = Number(await p.$eval('#sonde-flame-count', (e) => e.dataset.samples));
      check(n === samples, `the whole window's flame graph holds ${n} samples, the trace ${samples}`);
      const run = ev.filter((e) => e.cat === 'run' && e.name === 'burn-pong')[0];
      const sel = `rect.sonde-run[data-task="burn-pong"]`;
      await p.click(sel);
      await p.hover(sel);
      await p.waitForTimeout(200);
      const said = await p.textContent('#sonde-slice');
      check(said.includes('burn-pong') && said.includes(run.args.left.split(':')[0]),
        `the clicked run says "${said}", its event left for ${run.args.left}`);
      await screenshot(p, 'trace-real');
      await p.close();
      clean(p);
    }],
    ['trace_screenshot', async (env, b) => {
      const p = await open(env, b);
      const bg = await box(p, 'rect.sonde-bg');
      await brush(p, bg.x + 0.3 * bg.w, bg.x + 0.55 * bg.w);
      const f = env.f;
      const run = f.runs.filter((r) => !r.idle && r.cpu === 1).sort((x, y) => y.dur - x.dur)[0];
      const sel = `g.sonde-lane[data-cpu="1"] rect.sonde-run[data-ts="${run.ts}"]`;
      await p.click(sel);
      await p.hover(sel);
      await p.waitForTimeout(200);
      await screenshot(p, 'trace-html');
      await p.close();
      clean(p);
    }],
  ],
};
