// web/flame/main.js: the interactive flame graph of `sonde-prof -o FILE.html`,
// the entry esbuild bundles into the page (web/flame/page.html). The page
// holds the profile as JSON in <script id="sonde-profile">
// (tools/output/flame_json.h: the format); this module builds the
// controls and draws the graph with d3-flame-graph (web/lib/flame.js):
//   click a frame to zoom into it, "Reset zoom" (or Escape) to come back;
//   search by name or regular expression: matches turn magenta and the
//   share of the profile they hold is shown ("matched 37.2%");
//   hover for a frame's total and self weight, share and source lines;
//   "Icicle" turns the graph upside down (roots at the top).
// Everything taken from the profile enters the page as text, never as
// markup (esc() where the tooltip needs markup around it).
import * as F from '../lib/flame.js';
import { esc, weigher, percent } from './format.js';
import { el } from '../lib/dom.js';
import './page.css';

const data = JSON.parse(document.getElementById('sonde-profile').textContent);
const page = document.getElementById('sonde-page');
const total = data.total;
const weight = weigher(data.unit);
const pct = percent(total);

// ---- the header: title, what was profiled, the controls ----
const head = el('header', { id: 'sonde-head' });
head.append(el('h1', { id: 'sonde-title' }, data.title));
const summary = el('div', { id: 'sonde-summary' });
const what = data.diff
  ? `differential ${data.view}: base ${weight(data.base_total)}, new ${weight(total)}; ` +
    'sized by new, red where it grew, blue where it shrank'
  : `${data.view}: ${weight(total)}`;
summary.append(el('div', {}, what));
for (const k of data.kernels) {
  // A heap in-use profile is a snapshot: it has no window (ms=0).
  let line = `kernel ${k.name}: ${k.source}, ${k.ms ? k.ms + ' ms' : 'a snapshot'}, ` +
    `${k.samples} samples, ${k.dropped} dropped`;
  if (k.lost !== undefined)
    line += `, ${k.lost} lost on the wire`;
  if (k.note)
    line += ` (${k.note})`;
  summary.append(el('div', { class: 'sonde-kernel' }, line));
}
head.append(summary);

const bar = el('div', { id: 'sonde-controls' });
const search = el('input', {
  id: 'sonde-search', type: 'search', size: '32', spellcheck: 'false',
  placeholder: 'search: a name or a regular expression',
});
const matched = el('span', { id: 'sonde-matched' });
const reset = el('button', { id: 'sonde-reset', type: 'button' }, 'Reset zoom');
const invert = el('button', { id: 'sonde-invert', type: 'button', 'aria-pressed': 'false' },
  'Icicle');
bar.append(search, matched, reset, invert);
head.append(bar);
const details = el('div', { id: 'sonde-details' }, '\u00a0');
head.append(details);
page.append(head);
const holder = el('div', { id: 'chart' });
page.append(holder);

// ---- the graph ----
if (data.diff)
  (function delta(n) {
    n.delta = n.v - n.b;
    (n.c || []).forEach(delta);
  })(data.root);

function ownWeight(d) {
  let s = d.data.v;
  for (const c of d.data.c || [])
    s -= c.v;
  return s;
}

function where(x) {
  if (x.k === 'kernel')
    return 'kernel';
  if (x.k === 'task')
    return 'task';
  if (!x.f)
    return '';
  const lines = (x.ln || []).map((l, i) =>
    (i ? ':' : x.f + ':') + l[0] + (x.ln.length > 1 ? ` (${pct(l[1])})` : ''));
  return lines.length ? lines.join(', ') : x.f;
}

function label(d) {
  const x = d.data;
  let s = `${x.n}: total ${weight(x.v)} (${pct(x.v)}), self ${weight(ownWeight(d))} ` +
    `(${pct(ownWeight(d))})`;
  if (data.diff)
    s += `, base ${weight(x.b)}, ${x.v >= x.b ? '+' : '-'}${weight(Math.abs(x.v - x.b))}`;
  const at = where(x);
  return at && at !== 'task' && at !== 'kernel' ? s + ', ' + at : s;
}

function tip(d) {
  const x = d.data;
  const rows = [
    ['total', `${weight(x.v)} (${pct(x.v)})`],
    ['self', `${weight(ownWeight(d))} (${pct(ownWeight(d))})`],
  ];
  if (data.diff)
    rows.push(['base', weight(x.b)],
      ['change', `${x.v >= x.b ? '+' : '-'}${weight(Math.abs(x.v - x.b))}`]);
  const at = where(x);
  if (at)
    rows.push([at === 'task' || at === 'kernel' ? 'frame' : 'at', at === 'task' ||
      at === 'kernel' ? `the ${at}` : at + (x.l === 'inlined' ? ' (inlined)' : '')]);
  return `<div class="sonde-tip-name">${esc(x.n)}</div><table>` +
    rows.map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(v)}</td></tr>`).join('') +
    '</table>';
}

// Kernel and task frames grey, so that the code stands out; a diff's
// frames red as they grew, blue as they shrank (as `diff -o FILE.svg`).
function colour(d, original) {
  if (d.highlight)
    return original;
  const x = d.data;
  if (data.diff) {
    const big = Math.max(x.v, x.b);
    const r = big ? (x.v - x.b) / big : 0;
    const red = r < 0 ? Math.round(255 * (1 + r)) : 255;
    const blue = r > 0 ? Math.round(255 * (1 - r)) : 255;
    return `rgb(${red},${r > 0 ? blue : red},${blue})`;
  }
  if (x.k === 'kernel')
    return 'rgb(170,170,190)';
  if (x.k === 'task')
    return 'rgb(200,200,210)';
  return original;
}

function width() {
  return Math.max(400, holder.clientWidth || document.documentElement.clientWidth - 20);
}

const tooltip = F.tooltip().html(tip);
const chart = F.flamegraph()
  .width(width())
  .cellHeight(18)
  .minFrameSize(1)
  .sort(true)
  .transitionDuration(300)
  .tooltip(tooltip)
  .getName((d) => d.data.n)
  .setLabelHandler(label)
  .setColorMapper(colour)
  .setDetailsHandler((s) => { details.textContent = s || '\u00a0'; });

// The matched share counts each sample once: a match inside another
// match adds nothing (d3-flame-graph's sum is of the outermost matches).
chart.setSearchHandler((results, sum, all) => {
  matched.textContent = search.value
    ? `matched ${all ? (100 * sum / all).toFixed(1) : '0.0'}% (${weight(sum)}, ` +
      `${results.length} frame${results.length === 1 ? '' : 's'})`
    : '';
});

// A term is a regular expression; one that is not (an unmatched "(")
// is searched for as text, and said so.
let pattern = null;
chart.setSearchMatch((d, term) => term && pattern !== null && pattern.test(d.data.n));
function doSearch() {
  const term = search.value;
  matched.classList.remove('sonde-literal');
  if (!term) {
    pattern = null;
    chart.clear();
    matched.textContent = '';
    return;
  }
  try {
    pattern = new RegExp(term);
  } catch (e) {
    pattern = new RegExp(term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    matched.classList.add('sonde-literal');
  }
  chart.search(term);
  if (matched.classList.contains('sonde-literal'))
    matched.textContent += ' (not a regular expression: searched as text)';
}
let timer = null;
search.addEventListener('input', () => {
  clearTimeout(timer);
  timer = setTimeout(doSearch, 150);
});
search.addEventListener('keydown', (e) => {
  if (e.key === 'Enter') {
    clearTimeout(timer);
    doSearch();
  }
});
reset.addEventListener('click', () => chart.resetZoom());
invert.addEventListener('click', () => {
  const on = !chart.inverted();
  chart.inverted(on).update();
  invert.setAttribute('aria-pressed', String(on));
  invert.textContent = on ? 'Flame' : 'Icicle';
});
document.addEventListener('keydown', (e) => {
  if (!total)
    return;
  if (e.key === 'Escape' && document.activeElement !== search)
    chart.resetZoom();
  if ((e.ctrlKey || e.metaKey) && e.key === 'f') {
    e.preventDefault();
    search.focus();
  }
});
window.addEventListener('resize', () => {
  const w = width();
  if (!total)
    return;
  if (w !== chart.width())
    chart.width(w).update();
});

if (total) {
  F.select(holder).datum(data.root).call(chart);
} else {
  // Nothing drawn: the chart has no selection for the controls to act on.
  holder.append(el('p', { id: 'sonde-empty' }, 'No samples: nothing to draw.'));
  for (const c of [search, reset, invert])
    c.disabled = true;
}
