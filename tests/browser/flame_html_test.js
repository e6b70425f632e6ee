// tests/browser/flame_html_test.js: `sonde-prof -o FILE.html` on a real profile
// of `burn` (tests/browser/burn_profile.py records it from a QEMU kernel),
// opened in chromium as a person would open the file: burn_spin is the
// widest frame under burn, a click on it zooms it to the full width,
// searching burn_spin reports the share the .txt report gives it (within a
// point), tooltips, the icicle view, one root frame per kernel, a task
// name made of markup shown as text, `diff -o FILE.html` (burn's frames
// red against a base without burn) and an off-CPU profile's weights in time. The page must ask for nothing over
// the network and raise no error.
//
// A screenshot of the real run goes to build/browser/flame-html.png;
// with SONDE_DOCS_SHOTS=1 also to docs/img/flame-html.png (the one
// docs/sonde-prof.md shows).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { check, screenshot } = require('./browser.js');

const HOSTILE = '</script><b>x';

function sh(env, cmd, args, timeout) {
  const r = spawnSync(cmd, args, { cwd: env.root, encoding: 'utf8', timeout: timeout * 1000 });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')}: ${r.error ? r.error.message : 'exit ' + r.status}: ` +
      `${(r.stdout || '').trim()} ${(r.stderr || '').trim()}`);
  return r.stdout;
}

function report(env, inputs, out, extra) {
  const args = ['report'];
  for (const i of inputs)
    args.push('-i', i);
  args.push(...(extra || []), '-e', 'build/x86_64/kernel.elf', '-o', out);
  sh(env, 'build/host/sonde-prof', args, 60);
}

// The share the .txt report gives chains whose leaf is burn_spin.
function txtShare(txt) {
  let share = 0;
  for (const m of txt.matchAll(/^ *([0-9.]+)% +\d+ burn_spin\+/gm))
    share += parseFloat(m[1]);
  return share;
}

// Every drawn frame: name, left, top, width (pixels, on screen).
function frames(p) {
  return p.$$eval('#chart g.frame', (gs) => gs.map((g) => {
    const r = g.querySelector('rect').getBoundingClientRect();
    return { name: g.getAttribute('name'), x: r.left, y: r.top, w: r.width };
  }));
}

function frame(fs_, name) {
  return fs_.filter((f) => f.name === name).sort((a, b) => b.w - a.w)[0];
}

// Waits until the transitions are over: the frame's width stops changing.
async function settle(p) {
  let last = null;
  for (let i = 0; i < 40; i++) {
    const now = JSON.stringify(await frames(p));
    if (now === last)
      return;
    last = now;
    await p.waitForTimeout(100);
  }
}

async function open(env, b, file) {
  const url = 'file://' + path.join(env.dir, file || 'burn.html');
  const p = await b.openPage(url);
  await p.waitForSelector('#chart g.frame');
  await settle(p);
  return p;
}

function clean(p) {
  check(p.errors.length === 0, `page errors: ${p.errors.join('; ')}`);
  check(p.refused.length === 0, `the page asked the network for ${p.refused.join(', ')}`);
}

async function chartWidth(p) {
  return p.$eval('#chart svg', (s) => s.getBoundingClientRect().width);
}

module.exports = {
  setup(env) {
    env.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sonde-flame-html.'));
    const out = sh(env, 'python3', ['tests/browser/burn_profile.py', env.dir], 120).trim();
    console.log(`    recorded burn from a QEMU kernel: ${out}`);
    const raw = path.join(env.dir, 'burn.raw');
    env.txt = fs.readFileSync(path.join(env.dir, 'burn.txt'), 'utf8');
    env.share = txtShare(env.txt);
    // The same samples as two kernels: a root frame each.
    report(env, [raw, raw], path.join(env.dir, 'two.html'), ['--kernel', 'k-one', '--kernel', 'k-two']);
    // burn's task named as markup.
    const hostile = fs.readFileSync(raw, 'utf8').replace(/^(\d+ \d+) burn /gm, `$1 ${HOSTILE} `);
    fs.writeFileSync(path.join(env.dir, 'hostile.raw'), hostile);
    report(env, [path.join(env.dir, 'hostile.raw')], path.join(env.dir, 'hostile.html'));
    // A diff against the same profile without burn: burn's frames all growth.
    const text = fs.readFileSync(raw, 'utf8');
    const [header, ...chains] = text.trimEnd().split('\n');
    const kept = chains.filter((l) => !/^\d+ \d+ burn /.test(l));
    const sum = kept.reduce((n, l) => n + parseInt(l, 10), 0);
    fs.writeFileSync(path.join(env.dir, 'base.raw'),
      [header.replace(/ samples=\d+ /, ` samples=${sum} `), ...kept].join('\n') + '\n');
    sh(env, 'build/host/sonde-prof', ['diff', path.join(env.dir, 'base.raw'), raw, '-e',
      'build/x86_64/kernel.elf', '-o', path.join(env.dir, 'diff.html')], 60);
    // The same chains as an off-CPU profile: each sample 1.5 ms off the
    // CPU, preempted (a reason with no waker, so the chain stays the same).
    fs.writeFileSync(path.join(env.dir, 'off.raw'), [header + ' kind=offcpu',
      ...chains.map((l) => l.replace(/^(\d+) (\d+) (\S+) (\d+) /,
        (all, c, pid, task, cpu) => `${c}:${c * 1500000} ${pid} ${task} ${cpu} why=preempted `))]
      .join('\n') + '\n');
    report(env, [path.join(env.dir, 'off.raw')], path.join(env.dir, 'off.html'));
    // No samples at all.
    fs.writeFileSync(path.join(env.dir, 'empty.raw'), header.replace(/ samples=\d+ /, ' samples=0 ') +
      '\n');
    report(env, [path.join(env.dir, 'empty.raw')], path.join(env.dir, 'empty.html'));
  },
  async teardown(env) {
    fs.rmSync(env.dir, { recursive: true, force: true });
  },
  tests: [
    ['html_burn_spin_widest_under_burn', async (env, b) => {
      const p = await open(env, b);
      const fs_ = await frames(p);
      await p.close();
      clean(p);
      const burn = frame(fs_, 'burn'), spin = frame(fs_, 'burn_spin');
      check(burn && spin, `no burn or burn_spin frame among ${fs_.length} frames`);
      // Under burn: inside its span, above it. A frame with nothing drawn
      // right above it is where samples were taken (its width: its self).
      const under = fs_.filter((f) => f !== burn && f.y < burn.y && f.x >= burn.x - 0.5 &&
        f.x + f.w <= burn.x + burn.w + 0.5);
      const tops = under.filter((f) => !under.some((g) => g.y < f.y - 1 && g.y > f.y - 30 &&
        g.x < f.x + f.w && g.x + g.w > f.x));
      const widest = tops.sort((a, c) => c.w - a.w)[0];
      const level = under.filter((f) => Math.abs(f.y - spin.y) < 1).sort((a, c) => c.w - a.w)[0];
      console.log(`    burn ${burn.w.toFixed(1)} px, burn_spin ${spin.w.toFixed(1)} px, ` +
        `${under.length} frames under burn, ${tops.length} on top`);
      check(widest === spin, `the widest frame on top under burn is ${widest && widest.name}, ` +
        'not burn_spin');
      check(level === spin, `the widest frame at burn_spin's level is ${level.name}`);
      check(spin.w >= 0.9 * burn.w, `burn_spin is ${spin.w} px of burn's ${burn.w} px`);
    }],
    ['html_click_zooms_burn_spin_to_full_width', async (env, b) => {
      const p = await open(env, b);
      const full = await chartWidth(p);
      const before = frame(await frames(p), 'burn_spin').w;
      await p.click('#chart g.frame[name="burn_spin"]');
      await settle(p);
      const zoomed = frame(await frames(p), 'burn_spin');
      await p.click('#sonde-reset');
      await settle(p);
      const after = frame(await frames(p), 'burn_spin').w;
      await p.close();
      clean(p);
      console.log(`    burn_spin ${before.toFixed(1)} px, zoomed ${zoomed.w.toFixed(1)} px of ` +
        `${full.toFixed(1)}, reset ${after.toFixed(1)} px`);
      check(before < full - 10, `burn_spin is already ${before} px of ${full}: nothing to zoom`);
      check(Math.abs(zoomed.w - full) <= 1, `zoomed burn_spin is ${zoomed.w} px, not the ` +
        `chart's ${full} px`);
      check(Math.abs(after - before) <= 1, `after Reset zoom burn_spin is ${after} px, was ${before}`);
    }],
    ['html_search_share_matches_txt_report', async (env, b) => {
      const p = await open(env, b);
      const term = async (t) => {
        await p.fill('#sonde-search', t);
        await p.press('#sonde-search', 'Enter');
        return p.textContent('#sonde-matched');
      };
      const spin = await term('burn_spin');
      const lit = await p.$$eval('#chart g.frame rect', (rs) =>
        rs.filter((r) => r.getAttribute('fill') === '#E600E6').length);
      const either = await term('^burn_(spin|inner)$');
      const bad = await term('burn_spin(');
      const none = await term('');
      await p.close();
      clean(p);
      const m = /matched (\d+\.\d)%/.exec(spin);
      console.log(`    page "${spin}"; .txt burn_spin ${env.share.toFixed(1)}%`);
      check(m, `no "matched NN.N%" after searching burn_spin: "${spin}"`);
      check(env.share > 0, `the .txt report gives burn_spin no samples:\n${env.txt}`);
      check(Math.abs(parseFloat(m[1]) - env.share) <= 1, `matched ${m[1]}%, the .txt report ` +
        `${env.share}%`);
      check(lit >= 1, 'no frame highlighted');
      // burn_inner holds burn_spin: the regex matches no more than burn_inner.
      const e = /matched (\d+\.\d)%/.exec(either);
      check(e && parseFloat(e[1]) >= parseFloat(m[1]), `"^burn_(spin|inner)$": "${either}"`);
      check(/matched 0\.0%.*searched as text/.test(bad), `"burn_spin(" (no regex): "${bad}"`);
      check(none === '', `an empty search still says "${none}"`);
    }],
    ['html_tooltip_samples_self_total_file_line', async (env, b) => {
      const p = await open(env, b);
      await p.hover('#chart g.frame[name="burn_spin"]');
      await p.waitForSelector('.d3-flame-graph-tip', { state: 'visible' });
      const tip = await p.textContent('.d3-flame-graph-tip');
      const details = await p.textContent('#sonde-details');
      await p.close();
      clean(p);
      console.log(`    tooltip: ${tip.replace(/\s+/g, ' ')}`);
      check(/total\s*\d+ samples \(\d+\.\d%\)/.test(tip), `no total with samples and percent: ${tip}`);
      check(/self\s*\d+ samples \(\d+\.\d%\)/.test(tip), `no self with samples and percent: ${tip}`);
      check(/kernel\/cmd\/burn\.c:\d+/.test(tip), `no file:line (kernel/cmd/burn.c:N): ${tip}`);
      check(/^burn_spin: total/.test(details), `the details line says "${details}"`);
    }],
    ['html_icicle_toggle', async (env, b) => {
      const p = await open(env, b);
      const y = async () => {
        const f = await frames(p);
        return frame(f, 'burn_spin').y - frame(f, 'burn').y;
      };
      const flame = await y();
      await p.click('#sonde-invert');
      await settle(p);
      const icicle = await y();
      await p.click('#sonde-invert');
      await settle(p);
      const back = await y();
      await p.close();
      clean(p);
      check(flame < 0, `burn_spin is not above burn in the flame graph (${flame} px)`);
      check(icicle > 0, `burn_spin is not below burn in the icicle (${icicle} px)`);
      check(Math.abs(back - flame) <= 1, `toggled back, burn_spin is ${back} px from burn, was ${flame}`);
    }],
    ['html_root_frame_per_kernel', async (env, b) => {
      const p = await open(env, b, 'two.html');
      const fs_ = await frames(p);
      const all = frame(fs_, 'all');
      const one = frame(fs_, 'k-one'), two = frame(fs_, 'k-two');
      const summary = await p.textContent('#sonde-summary');
      await p.close();
      clean(p);
      check(one && two, `no k-one and k-two frames: ${fs_.map((f) => f.name).join(' ')}`);
      check(Math.abs(one.y - two.y) < 1 && one.y < all.y, 'the kernels are not the level above all');
      check(Math.abs(one.w - all.w / 2) <= 1, `k-one is ${one.w} px of all's ${all.w}, not half`);
      check(/kernel k-one:/.test(summary) && /kernel k-two:/.test(summary), `summary: ${summary}`);
    }],
    ['html_markup_in_names_is_text', async (env, b) => {
      const p = await open(env, b, 'hostile.html');
      const names = (await frames(p)).map((f) => f.name);
      const injected = await p.$$eval('#chart b, body > b', (x) => x.length);
      await p.close();
      clean(p);
      check(names.includes(HOSTILE), `no frame named ${HOSTILE}: ${names.join(' ')}`);
      check(injected === 0, 'a <b> from the task name became markup');
    }],
    ['html_diff_burn_grew', async (env, b) => {
      const p = await open(env, b, 'diff.html');
      const fill = (name) => p.$eval(`#chart g.frame[name="${name}"] rect`,
        (r) => getComputedStyle(r).fill);
      const spin = await fill('burn_spin'), idle = await fill('cpu_idle');
      const summary = await p.textContent('#sonde-summary');
      await p.hover('#chart g.frame[name="burn_spin"]');
      await p.waitForSelector('.d3-flame-graph-tip', { state: 'visible' });
      const tip = await p.textContent('.d3-flame-graph-tip');
      await p.close();
      clean(p);
      const rgb = (c) => (/rgb\((\d+), (\d+), (\d+)\)/.exec(c) || []).slice(1).map(Number);
      const [r, g, bl] = rgb(spin), [ir, ig, ib] = rgb(idle);
      console.log(`    burn_spin ${spin}, cpu_idle ${idle}; ${tip.replace(/\s+/g, ' ')}`);
      check(r === 255 && g < 60 && bl < 60, `burn_spin (all growth) is ${spin}, not red`);
      check(ir === 255 && ig === 255 && ib === 255, `cpu_idle (unchanged) is ${idle}, not white`);
      check(/^differential CPU samples: base \d+ samples, new \d+ samples/.test(summary),
        `summary: ${summary}`);
      check(/base\s*0 samples/.test(tip) && /change\s*\+\d+ samples/.test(tip), `tooltip: ${tip}`);
    }],
    ['html_offcpu_weights_in_time', async (env, b) => {
      const p = await open(env, b, 'off.html');
      const summary = await p.textContent('#sonde-summary');
      await p.hover('#chart g.frame[name="burn_spin"]');
      await p.waitForSelector('.d3-flame-graph-tip', { state: 'visible' });
      const tip = await p.textContent('.d3-flame-graph-tip');
      await p.fill('#sonde-search', 'burn_spin');
      await p.press('#sonde-search', 'Enter');
      const m = await p.textContent('#sonde-matched');
      await p.close();
      clean(p);
      // Every sample weighs the same, so the shares are the CPU profile's.
      const share = /matched (\d+\.\d)% \((\d+) ms,/.exec(m);
      console.log(`    ${summary.split('kernel')[0]}; ${m}`);
      check(/^off-CPU time: \d+ ms/.test(summary), `summary: ${summary}`);
      check(/total\s*\d+ ms \(\d+\.\d%\)/.test(tip), `tooltip: ${tip}`);
      check(share && Math.abs(parseFloat(share[1]) - env.share) <= 1, `"${m}": want ` +
        `${env.share}% in ms`);
    }],
    ['html_no_samples', async (env, b) => {
      const p = await b.openPage('file://' + path.join(env.dir, 'empty.html'));
      await p.waitForSelector('#sonde-empty');
      const text = await p.textContent('#sonde-empty');
      const disabled = await p.$$eval('#sonde-controls input, #sonde-controls button',
        (cs) => cs.every((c) => c.disabled));
      await p.keyboard.press('Escape');
      await p.setViewportSize({ width: 900, height: 600 });
      await p.waitForTimeout(200);
      await p.close();
      clean(p);
      check(text === 'No samples: nothing to draw.', `the empty page says "${text}"`);
      check(disabled, 'the controls of an empty page are not disabled');
    }],
    ['html_screenshot', async (env, b) => {
      const p = await open(env, b);
      await p.fill('#sonde-search', 'burn_spin');
      await p.press('#sonde-search', 'Enter');
      await p.hover('#chart g.frame[name="burn_inner"]');
      await p.waitForSelector('.d3-flame-graph-tip', { state: 'visible' });
      await p.waitForTimeout(300);
      await screenshot(p, 'flame-html');
      await p.close();
      clean(p);
    }],
  ],
};
