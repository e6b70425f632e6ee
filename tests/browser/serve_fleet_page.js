#!/usr/bin/env node
// tests/browser/serve_fleet_page.js: `sonde-prof serve`'s page in headless
// chromium over a fleet of 120 simulated kernels (tests/browser/serve_sim.py:
// fleet-gen and serve, no QEMU). Each step a test:
//   fleet_list_paged      the kernel list shows 50 of 120, "1-50 of 120
//        kernels", the counts by state say 120 streaming; next shows
//        51-100, the rows the API's second page; previous goes back;
//   fleet_list_search     a kernel's port typed into the search box leaves
//        that kernel's row alone ("1-1 of 1 found"), the kernel filter
//        offers it, and clearing the search gives the 120 back;
//   fleet_flame_merged    the live flame graph is the fleet's frames
//        merged (by frame, the default past 16 kernels): no kernel's
//        frame is drawn, and its samples are the fleet's;
//   fleet_timeline        one black line for the fleet, at most 8 lines of
//        the busiest kernels.
// Prints PASS/FAIL per test and "N passed, N failed"; about 20 s.
'use strict';
const path = require('path');
const readline = require('readline');
const { spawn, spawnSync } = require('child_process');
const { Browser, check } = require('./browser.js');

const ROOT = path.resolve(__dirname, '..', '..');
const KERNELS = 120;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function build() {
  const r = spawnSync('make', ['-s', '-C', ROOT, 'web/node_modules/.sonde-npm-ci',
                               'build/host/sonde-prof', 'build/host/fleet-gen',
                               'build/x86_64/kernel.elf'], { stdio: 'inherit' });
  return r.status === 0;
}

function sim() {
  const p = spawn('python3', [path.join(__dirname, 'serve_sim.py'), String(KERNELS), '20'],
                  { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const first = new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('serve_sim: no answer in 60 s')), 60000);
    readline.createInterface({ input: p.stdout }).once('line', (l) => {
      clearTimeout(t);
      resolve(JSON.parse(l));
    });
  });
  return { proc: p, first };
}

async function until(pred, ms) {
  const t = Date.now();
  while (Date.now() - t < ms) {
    const v = await pred();
    if (v)
      return v;
    await sleep(100);
  }
  return pred();
}

const rows = (p) => p.$$eval('#kernels tbody tr td.name', (tds) => tds.map((t) => t.textContent));
const pageText = (p) => p.textContent('#kernels-page');

const tests = {
  async fleet_list_paged(ctx) {
    const p = ctx.p;
    const ok = await until(async () => (await pageText(p)) === `1-50 of ${KERNELS} kernels`, 10000);
    check(ok, `page text ${JSON.stringify(await pageText(p))}`);
    check((await rows(p)).length === 50, `${(await rows(p)).length} rows, want 50`);
    const states = await until(async () => {
      const s = await p.textContent('#kernel-states');
      return s.includes(`${KERNELS} streaming`) ? s : null;
    }, 10000);
    check(states, `states ${JSON.stringify(await p.textContent('#kernel-states'))}`);
    const api = await (await fetch(ctx.url + 'api/kernels?offset=50&limit=50')).json();
    await p.click('#kernels-next');
    const next = await until(async () => (await pageText(p)).startsWith('51-100'), 5000);
    check(next, `after next: ${JSON.stringify(await pageText(p))}`);
    const names = await rows(p);
    check(names.length === 50 && names[0] === api.kernels[0].name &&
          names[49] === api.kernels[49].name,
          `rows ${names[0]}..${names[names.length - 1]}, want the API's second page ` +
          `${api.kernels[0].name}..${api.kernels[49].name}`);
    await p.click('#kernels-prev');
    check(await until(async () => (await pageText(p)).startsWith('1-50'), 5000),
          `after previous: ${JSON.stringify(await pageText(p))}`);
  },

  async fleet_list_search(ctx) {
    const p = ctx.p;
    const want = ctx.kernels[77];
    await p.fill('#kernel-search', want.split(':')[1]);
    const one = await until(async () => {
      const r = await rows(p);
      return r.length === 1 && r[0] === want;
    }, 5000);
    check(one, `search ${want}: rows ${JSON.stringify(await rows(p))}`);
    check((await pageText(p)) === `1-1 of 1 found (${KERNELS} kernels)`,
          `page text ${JSON.stringify(await pageText(p))}`);
    const opts = await p.$$eval('#kernel option', (os) => os.map((o) => o.text));
    check(opts.includes(want), `kernel filter offers ${JSON.stringify(opts)}`);
    await p.fill('#kernel-search', '');
    check(await until(async () => (await pageText(p)) === `1-50 of ${KERNELS} kernels`, 5000),
          `cleared: ${JSON.stringify(await pageText(p))}`);
  },

  async fleet_flame_merged(ctx) {
    const p = ctx.p;
    const names = await until(async () => {
      const n = await p.$$eval('#chart g.frame', (gs) => gs.map((g) => g.getAttribute('name')));
      return n.length > 1 ? n : null;
    }, 10000);
    check(names, 'no flame graph drawn');
    const kernelFrames = names.filter((n) => n.startsWith('127.0.0.1:'));
    check(kernelFrames.length === 0, `kernel frames drawn: ${kernelFrames.slice(0, 3)}`);
    const drawn = await p.$eval('#sample-count', (e) => +e.dataset.samples);
    check(drawn > 0, `${drawn} samples`);
  },

  async fleet_timeline(ctx) {
    const p = ctx.p;
    const total = await p.$$eval('#timeline polyline.total', (l) => l.length);
    const lines = await p.$$eval('#timeline polyline.rate', (l) => l.length);
    check(total === 1, `${total} fleet lines, want 1`);
    check(lines >= 1 && lines <= 8, `${lines} kernel lines, want 1-8`);
  },
};

async function main() {
  if (!build()) {
    console.log('serve-fleet: build failed\n0 passed, 1 failed');
    return 1;
  }
  let passed = 0, failed = 0;
  const s = sim();
  const browser = new Browser();
  const ctx = {};
  try {
    const info = await s.first;
    ctx.url = info.url;
    ctx.kernels = info.kernels;
    await browser.start();
    ctx.p = await browser.openPage(ctx.url, { sameOrigin: true });
    for (const [name, fn] of Object.entries(tests)) {
      const t0 = Date.now();
      try {
        await fn(ctx);
        passed++;
        console.log(`PASS ${name} (${((Date.now() - t0) / 1000).toFixed(1)})`);
      } catch (e) {
        failed++;
        console.log(`FAIL ${name} (${((Date.now() - t0) / 1000).toFixed(1)}): ${e.message}`);
      }
    }
    const errs = ctx.p.errors.concat(ctx.p.refused);
    if (errs.length) {
      failed++;
      console.log(`FAIL fleet_page_clean: ${errs.slice(0, 3)}`);
    } else {
      passed++;
      console.log('PASS fleet_page_clean');
    }
  } catch (e) {
    failed++;
    console.log(`FAIL serve_fleet_page: ${e.message}`);
  } finally {
    await browser.close();
    s.proc.stdin.end();
    await new Promise((r) => { s.proc.on('exit', r); setTimeout(r, 40000); });
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

main().then((rc) => process.exit(rc));
