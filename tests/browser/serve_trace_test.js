// tests/browser/serve_trace_test.js: the page of `serve --kind trace` in
// chromium, against the fake stream kernel (tests/tools/fake_stream_
// kernel.py) speaking `trace stream` on two CPUs: the page hides the
// profile's controls, takes the kernel's last 2 s from /api/trace and
// shows them as the trace page does: a lane per CPU, burn's runs, a
// clicked run's task and the reason it left (sleep), a brushed range's
// samples (burn_spin, named from the ELF); "the last 2 s again" takes a
// new trace. The page asks for nothing but serve's own.
'use strict';
const dgram = require('dgram');
const fs = require('fs');
const os = require('os');
const path = require('path');
const readline = require('readline');
const { spawn, spawnSync } = require('child_process');
const { check } = require('./browser.js');

const ELF = 'build/x86_64/kernel.elf';

function freeUdpPort() {
  return new Promise((resolve, reject) => {
    const s = dgram.createSocket('udp4');
    s.on('error', reject);
    s.bind(0, '127.0.0.1', () => {
      const port = s.address().port;
      s.close(() => resolve(port));
    });
  });
}

function nm(env, name) {
  const out = spawnSync('nm', [ELF], { cwd: env.root, encoding: 'utf8' }).stdout;
  const l = out.split('\n').find((x) => x.endsWith(' ' + name));
  if (!l)
    throw new Error(`${name} is not in ${ELF}`);
  return BigInt('0x' + l.split(' ')[0]);
}

function firstLine(stream, re, ms) {
  return new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: stream });
    const t = setTimeout(() => reject(new Error(`no line matching ${re} in ${ms} ms`)), ms);
    rl.on('line', (l) => {
      const m = re.exec(l);
      if (m) {
        clearTimeout(t);
        resolve(m);
      }
    });
  });
}

module.exports = {
  async setup(env) {
    const r = spawnSync('make', ['-s', '-C', env.root, ELF], { stdio: 'inherit' });
    if (r.status !== 0)
      throw new Error(`make ${ELF} failed`);
    env.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sonde-serve-trace.'));
    const id = /Build ID: ([0-9a-f]+)/.exec(spawnSync('readelf', ['-n', ELF],
      { cwd: env.root, encoding: 'utf8' }).stdout)[1];
    const frames = `${(nm(env, 'burn_spin') + 0x30n).toString(16)},${nm(env, 'burn_task').toString(16)}`;
    const kport = await freeUdpPort();
    env.kernel = `127.0.0.1:${kport}`;
    env.fake = spawn('python3', ['tests/tools/fake_stream_kernel.py', '--port', String(kport),
      '--build-id', id, '--frames', frames, '--cpus', '2', '--hz', '100'],
    { cwd: env.root, stdio: ['pipe', 'pipe', 'inherit'] });
    await firstLine(env.fake.stdout, /ready/, 10000);
    env.serve = spawn('build/host/sonde-prof', ['serve', '--kind', 'trace', '-l', '127.0.0.1:0',
      '--store', path.join(env.dir, 'serve.db'), '-e', ELF, env.kernel],
    { cwd: env.root, stdio: ['ignore', 'pipe', 'pipe'] });
    env.serve.stderr.on('data', () => {});
    const m = await firstLine(env.serve.stdout, /http:\/\/(127\.0\.0\.1:\d+)\//, 10000);
    env.url = `http://${m[1]}/`;
  },
  async teardown(env) {
    for (const p of [env.serve, env.fake])
      if (p)
        p.kill();
    fs.rmSync(env.dir, { recursive: true, force: true });
  },
  tests: [
    ['serve_trace_timeline', async (env, b) => {
      const p = await b.openPage(env.url, { sameOrigin: true });
      await p.waitForSelector('g.sonde-lane rect.sonde-run', { timeout: 15000 });
      check(await p.$eval('#chart', (e) => e.hidden) && await p.$eval('#timeline', (e) => e.hidden),
        'the profile\'s flame graph and timeline are not hidden');
      check(await p.$eval('body', (e) => e.dataset.traceKernel) === env.kernel,
        'the page does not say which kernel it shows');
      const lanes = await p.$$eval('g.sonde-lane', (gs) => gs.map((g) => Number(g.dataset.cpu)));
      check(lanes.length === 2 && lanes[0] === 0 && lanes[1] === 1, `lanes ${JSON.stringify(lanes)}`);
      const burn = await p.$$eval('rect.sonde-run[data-task="burn"]', (rs) => rs.length);
      check(burn > 0, 'no run of burn');
      // A click on one of burn's runs: its task and the reason it left.
      await p.$eval('rect.sonde-run[data-task="burn"]', (r) =>
        r.dispatchEvent(new MouseEvent('click', { bubbles: true })));
      const said = await p.textContent('#sonde-slice');
      check(/burn/.test(said) && /sleep/.test(said), `the clicked run says "${said}"`);
      // The window's samples are burn's, named from the ELF.
      await p.waitForSelector('#sonde-chart g.frame');
      const names = await p.$$eval('#sonde-chart g.frame', (gs) => gs.map((g) => g.__data__.data.n));
      check(names.includes('burn_spin'), `the flame graph's frames: ${names.slice(0, 8).join(', ')}`);
      const n = Number(await p.$eval('#sonde-flame-count', (e) => e.dataset.samples));
      check(n > 0, `${n} samples in the window`);
      // Another trace, on asking.
      const before = Number(await p.$eval('body', (e) => e.dataset.traces));
      await p.click('#trace-refresh');
      await p.waitForFunction((k) => Number(document.body.dataset.traces) > k, before, { timeout: 10000 });
      await p.waitForSelector('g.sonde-lane rect.sonde-run');
      check(p.errors.length === 0, `page errors: ${p.errors.join('; ')}`);
      check(p.refused.length === 0, `the page asked for ${p.refused.join(', ')}`);
      await p.close();
    }],
  ],
};
