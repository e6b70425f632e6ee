// tests/browser/bundle_test.js: the pages' flame-graph library module
// (web/lib/flame.js), imported by a module of the test's own and bundled as
// the pages are (web/bundle.js): inlined into a page with a made-up
// profile, it loads with no network, lays frames out by value, zooms on a
// click and reports a search's share. The pages sonde-prof writes and
// serves are tested on real profiles in their own files.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { pathToFileURL } = require('url');
const { check } = require('./browser.js');

// all 100: a 70 (spin 60, x 10), b 30.
const DATA = {
  name: 'all', value: 100, children: [
    { name: 'a', value: 70, children: [{ name: 'spin', value: 60 }, { name: 'x', value: 10 }] },
    { name: 'b', value: 30 },
  ],
};

// The test's module: what the library gives, then the chart drawn. The
// chart is left on window for the tests to zoom and search with.
const ENTRY = `
import { flamegraph, tooltip, colorMapper, select } from './flame.js';
window.lib = [typeof flamegraph, typeof tooltip, typeof colorMapper.differentialColorMapper];
const chart = flamegraph().width(1000).cellHeight(18).transitionDuration(100)
  .setDetailsElement(document.getElementById('details'));
select('#chart').datum(${JSON.stringify(DATA)}).call(chart);
window.chart = chart;
`;

async function page(root) {
  const web = await import(pathToFileURL(path.join(root, 'web', 'bundle.js')).href);
  const { js, css } = await web.bundle({ contents: ENTRY, resolveDir: path.join(root, 'web', 'lib') });
  return web.assemble('bundle_test', `<!doctype html><html><head><meta charset="utf-8">
<!--SONDE_STYLE--></head><body><div id="chart"></div><div id="details"></div>
<!--SONDE_SCRIPT--></body></html>`, { js, css });
}

// The on-screen width of the frame named name (the first one).
function width(p, name) {
  return p.$eval(`#chart g.frame[name="${name}"] rect`, (r) => r.getBoundingClientRect().width);
}

async function settled(p, name, want, tol) {
  await p.waitForFunction(([n, w, t]) => {
    const r = document.querySelector(`#chart g.frame[name="${n}"] rect`);
    return r && Math.abs(r.getBoundingClientRect().width - w) <= t;
  }, [name, want, tol], { timeout: 5000 }).catch(() => {});
  return width(p, name);
}

module.exports = {
  async setup(env) {
    env.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sonde-bundle.'));
    env.file = path.join(env.dir, 'bundle.html');
    fs.writeFileSync(env.file, await page(env.root));
    env.url = 'file://' + env.file;
  },
  async teardown(env) {
    fs.rmSync(env.dir, { recursive: true, force: true });
  },
  tests: [
    ['bundle_loads_offline', async (env, b) => {
      const p = await b.openPage(env.url);
      const lib = await p.evaluate(() => window.lib);
      const frames = await p.$$eval('#chart g.frame', (g) => g.length);
      await p.close();
      check(lib.join() === 'function,function,function', 'web/lib/flame.js: flamegraph, tooltip ' +
            `and colorMapper.differentialColorMapper are ${lib.join(', ')}, want functions`);
      check(frames === 5, `${frames} frames drawn, want 5`);
      check(p.errors.length === 0, `page errors: ${p.errors.join('; ')}`);
      check(p.refused.length === 0, `the page asked the network for ${p.refused.join(', ')}`);
    }],
    ['bundle_widths_by_value', async (env, b) => {
      const p = await b.openPage(env.url);
      const all = await settled(p, 'all', 1000, 1);
      const a = await settled(p, 'a', 700, 1);
      const bw = await settled(p, 'b', 300, 1);
      await p.close();
      check(Math.abs(all - 1000) <= 1, `all is ${all} px wide, want 1000`);
      check(Math.abs(a - 700) <= 1 && Math.abs(bw - 300) <= 1, `a ${a} px, b ${bw} px: want 700 and 300`);
    }],
    ['bundle_click_zooms', async (env, b) => {
      const p = await b.openPage(env.url);
      await settled(p, 'spin', 600, 1);
      await p.click('#chart g.frame[name="spin"]');
      const w = await settled(p, 'spin', 1000, 1);
      await p.evaluate(() => window.chart.resetZoom());
      const back = await settled(p, 'spin', 600, 1);
      await p.close();
      check(Math.abs(w - 1000) <= 1, `spin is ${w} px wide after the click, want 1000 (the width)`);
      check(Math.abs(back - 600) <= 1, `spin is ${back} px wide after reset, want 600`);
    }],
    ['bundle_search_share', async (env, b) => {
      const p = await b.openPage(env.url);
      await p.evaluate(() => window.chart.search('^(spin|b)$'));
      const text = await p.textContent('#details');
      const lit = await p.$$eval('#chart g.frame rect', (rs) =>
        rs.filter((r) => r.getAttribute('fill') === '#E600E6').length);
      await p.close();
      check(/90\.000%/.test(text), `search details "${text}": want 90.000%`);
      check(lit === 2, `${lit} frames highlighted, want 2`);
    }],
  ],
};
