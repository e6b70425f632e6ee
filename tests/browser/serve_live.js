#!/usr/bin/env node
// tests/browser/serve_live.js: `sonde-prof serve`'s page in headless
// chromium against two live x86_64 kernels (tests/browser/serve_fleet.py
// boots them under QEMU and starts serve on 127.0.0.1). One story, in
// order, each step a test:
//   serve_burn_spin_within_3s   `burn` starts on kernel 0 once serve's
//        first whole 10-s bucket is over, then the page loads: burn_spin is a
//        frame of the live flame graph within 3 s, and both kernels'
//        rows say their shells are open (no key);
//   serve_kernel_filter         kernel 1 alone has no burn_spin and no
//        frame of kernel 0; kernel 0 alone has burn_spin;
//   serve_zoom_survives_refresh a frame clicked (zoomed) is still zoomed
//        after two refreshes, and reset zoom undoes it;
//   serve_drag_range            a range dragged on the timeline (the
//        first bucket, before burn) changes the sample count shown;
//   serve_diff_growth           that range set as base, a range dragged
//        during burn, diff on: burn_spin is drawn red (growth);
//   serve_kernel_killed         kernel 1's QEMU killed: its row says
//        stopped with its last time, kernel 0 still streams and the
//        graph still refreshes.
// With SONDE_SERVE_SHOT=FILE, the page at the end (live view, one kernel
// stopped) is saved there as PNG (docs/img/serve.png is made so).
// Prints PASS/FAIL per test and "N passed, N failed"; about 35 s.
'use strict';
const path = require('path');
const readline = require('readline');
const { spawn, spawnSync } = require('child_process');
const { Browser, check } = require('./browser.js');

const ROOT = path.resolve(__dirname, '..', '..');
const BUCKET_MS = 10000;

function build() {
  const r = spawnSync('make', ['-s', '-C', ROOT, 'web/node_modules/.sonde-npm-ci',
                               'build/host/sonde-prof', 'build/x86_64/kernel.elf'],
                      { stdio: 'inherit' });
  return r.status === 0;
}

// The fleet helper: its first line, then one answer per command.
function fleet() {
  const p = spawn('python3', [path.join(__dirname, 'serve_fleet.py')],
                  { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = [];
  let waiting = null;
  readline.createInterface({ input: p.stdout }).on('line', (l) => {
    if (waiting) {
      const w = waiting;
      waiting = null;
      w(l);
    } else {
      lines.push(l);
    }
  });
  const next = (ms) => new Promise((resolve, reject) => {
    if (lines.length)
      return resolve(lines.shift());
    const t = setTimeout(() => { waiting = null; reject(new Error(`fleet: no answer in ${ms} ms`)); }, ms);
    waiting = (l) => { clearTimeout(t); resolve(l); };
  });
  return {
    proc: p,
    next,
    async cmd(c, ms = 15000) {
      p.stdin.write(c + '\n');
      const a = await next(ms);
      if (!a.startsWith('ok'))
        throw new Error(`fleet: ${c}: ${a}`);
      return a;
    },
  };
}

async function status(url) {
  const r = await fetch(url + 'api/status');
  return r.json();
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The frames drawn now, by name.
function frames(p) {
  return p.$$eval('#chart g.frame', (gs) => gs.map((g) => g.getAttribute('name')));
}

async function waitFrames(p, pred, ms) {
  const t = Date.now();
  let names = [];
  while (Date.now() - t < ms) {
    names = await frames(p);
    if (pred(names))
      return { ok: true, names, ms: Date.now() - t };
    await sleep(100);
  }
  return { ok: false, names, ms: Date.now() - t };
}

// Drags on the timeline from serve-clock time a to b (ms).
async function drag(p, a, b) {
  const box = await p.$eval('#timeline', (s) => {
    const r = s.getBoundingClientRect();
    return { x: r.left, y: r.top, w: r.width, h: r.height,
             from: +s.dataset.fromMs, to: +s.dataset.toMs };
  });
  const x = (ms) => box.x + Math.max(0, Math.min(1, (ms - box.from) / (box.to - box.from))) * box.w;
  const y = box.y + box.h / 2;
  await p.mouse.move(x(a), y);
  await p.mouse.down();
  await p.mouse.move((x(a) + x(b)) / 2, y, { steps: 3 });
  await p.mouse.move(x(b), y, { steps: 3 });
  await p.mouse.up();
}

const samples = (p) => p.$eval('#sample-count', (e) => +e.dataset.samples);
const rangeText = (p) => p.textContent('#range');

async function main() {
  if (!build()) {
    console.log('serve: build failed');
    console.log('0 passed, 1 failed');
    return 1;
  }
  const names = ['serve_burn_spin_within_3s', 'serve_kernel_filter', 'serve_zoom_survives_refresh',
                 'serve_drag_range',
                 'serve_diff_growth', 'serve_kernel_killed'];
  let passed = 0, failed = 0;
  const f = fleet();
  const browser = new Browser();
  const ctx = {};
  try {
    const first = await f.next(90000);
    if (!first.startsWith('{'))
      throw new Error(`fleet: ${first}`);
    const info = JSON.parse(first);
    ctx.url = info.url;
    ctx.k = info.kernels;
    await browser.start();
  } catch (e) {
    for (const n of names)
      console.log(`FAIL ${n} (0.0): ${e.message}`);
    console.log(`0 passed, ${names.length} failed`);
    f.proc.stdin.end();
    await browser.close();
    return 1;
  }

  const steps = {
    async serve_burn_spin_within_3s() {
      // The first bucket holds no burn: it is the diff's "before".
      // serve's times are Unix ms: its first bucket is the one it started
      // in, cut short; the whole one after it is the "before".
      for (;;) {
        const st = await status(ctx.url);
        ctx.before = (Math.floor(st.started_unix_ms / BUCKET_MS) + 1) * BUCKET_MS;
        const next = ctx.before + BUCKET_MS + 300;
        if (st.now_ms >= next)
          break;
        await sleep(Math.min(500, next - st.now_ms));
      }
      await f.cmd('burn 0');
      const st = await status(ctx.url);
      ctx.burnFrom = st.now_ms;
      ctx.p = await browser.openPage(ctx.url, { sameOrigin: true });
      ctx.p.setDefaultTimeout(5000);    // a step that fails does not eat the stage's time
      const r = await waitFrames(ctx.p, (n) => n.includes('burn_spin'), 3000);
      check(r.ok, `no burn_spin frame within 3 s of the page loading (frames: ${r.names.slice(0, 12).join(', ')})`);
      check(r.names.includes(ctx.k[0]) && r.names.includes(ctx.k[1]),
            `the live graph lacks a kernel's frame: ${r.names.slice(0, 12).join(', ')}`);
      const auth = await ctx.p.$$eval('#kernels tbody td.auth', (tds) => tds.map((t) => t.textContent));
      check(auth.length === 2 && auth.every((a) => a === 'open (no key)'),
            `the kernels' shells: ${JSON.stringify(auth)}, want both "open (no key)"`);
      console.log(`  burn_spin after ${r.ms} ms`);
    },
    async serve_kernel_filter() {
      const p = ctx.p;
      await p.selectOption('#kernel', '1');
      let r = await waitFrames(p, (n) => n.includes(ctx.k[1]) && !n.includes(ctx.k[0]), 3000);
      check(r.ok, `kernel 1 alone still draws kernel 0 (${r.names.slice(0, 12).join(', ')})`);
      if (r.names.includes('burn_spin')) {
        const j = await (await fetch(ctx.url + 'api/flame?kernel=1')).json();
        const s = await status(ctx.url);
        throw new Error(`kernel 1 (no burn) shows burn_spin: frames ${r.names.join(', ')}; ` +
                        `api: ${JSON.stringify(j).slice(0, 600)}; kernels ` +
                        JSON.stringify(s.kernels.map((k) => [k.name, k.state, k.tasks])));
      }
      await p.selectOption('#kernel', '0');
      r = await waitFrames(p, (n) => n.includes('burn_spin') && !n.includes(ctx.k[1]), 3000);
      check(r.ok, `kernel 0 alone: want burn_spin and no kernel 1 (${r.names.slice(0, 12).join(', ')})`);
      await p.selectOption('#kernel', 'all');
      r = await waitFrames(p, (n) => n.includes(ctx.k[0]) && n.includes(ctx.k[1]), 3000);
      check(r.ok, 'all kernels again: both kernel frames');
    },
    async serve_zoom_survives_refresh() {
      const p = ctx.p;
      // The chart's width; a frame's rect takes its width a frame after
      // each drawing (d3 transitions), so widths are waited for.
      const full = await p.$eval('#chart svg', (s) => +s.getAttribute('width'));
      const wide = (want) => p.waitForFunction(([w]) => {
        const r = document.querySelector('#chart g.frame[name="burn_inner"] rect');
        return r && Math.abs(r.getBoundingClientRect().width - w) <= 2;
      }, [want], { timeout: 3000 }).then(() => true, () => false);
      const width = () => p.$eval('#chart g.frame[name="burn_inner"] rect',
                                  (r) => r.getBoundingClientRect().width);
      await p.$eval('#chart g.frame[name="burn_inner"]',
                    (g) => g.dispatchEvent(new MouseEvent('click', { bubbles: true })));
      const n0 = await p.evaluate(() => +document.body.dataset.refreshes);
      await p.waitForFunction((n) => +document.body.dataset.refreshes >= n + 2, n0, { timeout: 5000 });
      check(await wide(full), `burn_inner is ${await width()} px wide two refreshes after the ` +
            `click, want ${full} (zoomed)`);
      await p.click('#reset-zoom');
      await sleep(300);
      const back = await width();
      check(back < full - 2, `burn_inner still ${back} px wide after reset zoom`);
    },
    async serve_drag_range() {
      const p = ctx.p;
      const before = await samples(p);
      const lines = await p.$$eval('#timeline polyline.rate', (l) => l.length);
      check(lines === 2, `${lines} kernels on the timeline, want 2`);
      await drag(p, ctx.before + 1000, ctx.before + BUCKET_MS - 1000);
      await p.waitForFunction(() => !document.getElementById('range').textContent.startsWith('live'),
                              null, { timeout: 3000 });
      const after = await samples(p);
      const text = await rangeText(p);
      check(after !== before, `the count stayed ${before} after the drag`);
      check(after > 0, 'no samples in the first bucket');
      const names = await frames(p);
      check(!names.includes('burn_spin'), 'the range before burn shows burn_spin');
      console.log(`  live ${before} samples; dragged ${text}: ${after}`);
    },
    async serve_diff_growth() {
      const p = ctx.p;
      await p.click('#set-base');
      const st = await status(ctx.url);
      await drag(p, ctx.burnFrom + 300, st.now_ms);
      await p.check('#diff');
      const r = await waitFrames(p, (n) => n.includes('burn_spin'), 3000);
      check(r.ok, 'the diff draws no burn_spin');
      const fill = await p.$eval('#chart g.frame[name="burn_spin"] rect', (e) => e.getAttribute('fill'));
      const m = /rgb\((\d+),\s*(\d+),\s*(\d+)\)/.exec(fill || '');
      check(m && +m[1] >= 200 && +m[2] <= 120 && +m[3] <= 120, `burn_spin is ${fill}, want red (growth)`);
      const legend = await p.isVisible('.legend-diff');
      check(legend, 'the diff legend is not shown');
      console.log(`  burn_spin ${fill}`);
    },
    async serve_kernel_killed() {
      const p = ctx.p;
      await p.uncheck('#diff');
      await p.click('#live');
      await f.cmd('kill 1');
      const t = Date.now();
      await p.waitForFunction(() => {
        const s = document.querySelector('#kernels tr[data-index="1"] td.state');
        return s && s.textContent === 'stopped';
      }, null, { timeout: 9000 });
      const row1 = await p.$eval('#kernels tr[data-index="1"]', (tr) => ({
        last: tr.querySelector('td.last').textContent }));
      const row0 = await p.$eval('#kernels tr[data-index="0"] td.state', (e) => e.textContent);
      check(/\d\d:\d\d:\d\d \(\d+\.\d s ago\)/.test(row1.last), `kernel 1's last time: "${row1.last}"`);
      check(row0 === 'streaming', `kernel 0 is ${row0}, want streaming`);
      const n0 = await p.evaluate(() => +document.body.dataset.refreshes);
      await sleep(1500);
      const n1 = await p.evaluate(() => +document.body.dataset.refreshes);
      check(n1 > n0, 'the page stopped refreshing');
      const names = await frames(p);
      check(names.includes('burn_spin'), 'kernel 0\'s burn_spin is gone from the live graph');
      console.log(`  stopped shown ${Date.now() - t} ms after the kill; last data ${row1.last}`);
      if (process.env.SONDE_SERVE_SHOT) {
        await sleep(1200);
        await p.screenshot({ path: process.env.SONDE_SERVE_SHOT, fullPage: true });
      }
    },
  };

  for (const n of names) {
    const t = Date.now();
    const secs = () => ((Date.now() - t) / 1000).toFixed(1);
    try {
      await steps[n]();
      console.log(`PASS ${n} (${secs()})`);
      passed++;
    } catch (e) {
      console.log(`FAIL ${n} (${secs()}): ${e.message}`);
      failed++;
    }
  }
  if (ctx.p) {
    if (ctx.p.errors.length) {
      console.log(`FAIL serve_page_clean: page errors: ${ctx.p.errors.join('; ')}`);
      failed++;
    } else if (ctx.p.refused.length) {
      console.log(`FAIL serve_page_clean: the page asked for ${ctx.p.refused.join(', ')}`);
      failed++;
    } else {
      console.log('PASS serve_page_clean (0.0)');
      passed++;
    }
  }
  await browser.close();
  f.proc.stdin.end();
  await new Promise((r) => f.proc.on('exit', r));
  console.log(`${passed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

main().then((rc) => process.exit(rc), (e) => {
  console.log(`serve: ${e.stack}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
});
