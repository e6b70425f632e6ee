#!/usr/bin/env node
// tests/browser/run.js: the browser tests, one headless chromium for all.
//   node tests/browser/run.js [--list] [NAME ...]
// Every tests/browser/*_test.js exports { setup(env), tests: [[name, fn]],
// teardown(env) } (setup and teardown optional); fn(env, browser) throws
// to fail. Prints 'PASS name (secs)' or 'FAIL name (secs): reason' per
// test and ends with 'N passed, N failed'; nothing is retried, and a
// setup that fails fails each of its file's tests. Builds what the tests
// need first (sonde-prof with its pages' assets, web/node_modules).
'use strict';
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const ROOT = path.resolve(__dirname, '..', '..');

function build() {
  const r = spawnSync('make', ['-s', '-C', ROOT, 'web/node_modules/.sonde-npm-ci', 'build/host/sonde-prof'],
                      { stdio: 'inherit' });
  return r.status === 0;
}

function suites(names) {
  const files = fs.readdirSync(__dirname).filter((f) => f.endsWith('_test.js')).sort();
  return files.map((f) => ({ file: f, ...require(path.join(__dirname, f)) }))
    .map((s) => ({ ...s, tests: s.tests.filter(([n]) => !names.length || names.includes(n)) }))
    .filter((s) => s.tests.length);
}

async function main() {
  const argv = process.argv.slice(2);
  const list = argv.includes('--list');
  const names = argv.filter((a) => a !== '--list');
  if (!build()) {
    console.log('browser: build failed');
    console.log('0 passed, 1 failed');
    return 1;
  }
  const { Browser } = require('./browser.js');
  const all = suites(names);
  if (list) {
    for (const s of all)
      for (const [n] of s.tests)
        console.log(n);
    return 0;
  }
  let passed = 0, failed = 0;
  const known = new Set(all.flatMap((s) => s.tests.map(([n]) => n)));
  for (const n of names.filter((n) => !known.has(n))) {
    console.log(`FAIL ${n}: no such test`);
    failed++;
  }
  const browser = new Browser();
  try {
    await browser.start();
  } catch (e) {
    console.log(`FAIL chromium: ${e.message}`);
    console.log(`${passed} passed, ${failed + 1} failed`);
    return 1;
  }
  for (const s of all) {
    const env = { root: ROOT };
    let broken = null;
    const t0 = Date.now();
    try {
      if (s.setup)
        await s.setup(env);
    } catch (e) {
      broken = `${s.file} setup: ${e.message}`;
    }
    for (const [name, fn] of s.tests) {
      const t = Date.now();
      const secs = () => ((Date.now() - t) / 1000).toFixed(1);
      if (broken) {
        console.log(`FAIL ${name} (0.0): ${broken}`);
        failed++;
        continue;
      }
      try {
        await fn(env, browser);
        console.log(`PASS ${name} (${secs()})`);
        passed++;
      } catch (e) {
        console.log(`FAIL ${name} (${secs()}): ${e.name === 'Error' || e.name === 'Fail' ? e.message : e.stack}`);
        failed++;
      }
    }
    if (s.teardown)
      await s.teardown(env).catch((e) => console.log(`${s.file} teardown: ${e.message}`));
    if (process.env.SONDE_BROWSER_VERBOSE)
      console.log(`${s.file}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  await browser.close();
  console.log(`${passed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

main().then((rc) => process.exit(rc), (e) => {
  console.log(`browser: ${e.stack}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
});
