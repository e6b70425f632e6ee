// tests/browser/bundle_test.js: the web pages' library as build/web holds it
// (the files sonde-prof embeds): inlined into a page of its own with a
// made-up profile, it loads with no network, lays frames out by value,
// zooms on a click and reports a search's share. The pages sonde-prof
// writes and serves are tested on real profiles in their own files.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { check } = require('./browser.js');

// all 100: a 70 (spin 60, x 10), b 30.
const DATA = {
  name: 'all', value: 100, children: [
    { name: 'a', value: 70, children: [{ name: 'spin', value: 60 }, { name: 'x', value: 10 }] },
    { name: 'b', value: 30 },
  ],
};

function page(root) {
  const css = fs.readFileSync(path.join(root, 'build/web/flame.css'), 'utf8');
  const js = fs.readFileSync(path.join(root, 'build/web/flame.js'), 'utf8');
  return `<!doctype html><html><head><meta charset="utf-8"><style>${css}</style></head>
<body><div id="chart"></div><div id="details"></div>
<script>${js}</script>
<script>
const chart = sondeFlame.flamegraph().width(1000).cellHeight(18).transitionDuration(100)
  .setDetailsElement(document.getElementById('details'));
sondeFlame.select('#chart').datum(${JSON.stringify(DATA)}).call(chart);
window.chart = chart;
</script></body></html>`;
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
  setup(env) {
    env.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sonde-bundle.'));
    env.file = path.join(env.dir, 'bundle.html');
    fs.writeFileSync(env.file, page(env.root));
    env.url = 'file://' + env.file;
  },
  async teardown(env) {
    fs.rmSync(env.dir, { recursive: true, force: true });
  },
  tests: [
    ['bundle_loads_offline', async (env, b) => {
      const p = await b.openPage(env.url);
      const ok = await p.evaluate(() => typeof sondeFlame === 'object' &&
        typeof sondeFlame.flamegraph === 'function' && typeof sondeFlame.tooltip === 'function' &&
        typeof sondeFlame.colorMapper.differentialColorMapper === 'function');
      const frames = await p.$$eval('#chart g.frame', (g) => g.length);
      await p.close();
      check(ok, 'sondeFlame lacks flamegraph, tooltip or colorMapper');
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
