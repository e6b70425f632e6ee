// web/lib/trace_view.js: a trace shown whole, the trace page's body and
// serve's trace view alike: on top the timeline (web/lib/timeline.js), a
// lane per CPU, zoom and pan, hover and click for a slice's task, the
// reason it left and its scheduling delay; below it what the range brushed
// on the timeline holds (the whole window until one is): why tasks left
// the CPU and how long they stayed off it, and the flame graph of the
// samples taken in it alone (FlameScope's idea).
//   const v = traceView(page, model);   v.destroy() takes it away again.
import * as F from './flame.js';
import { timeline, describe } from './timeline.js';
import { samplesIn, stackTree, reasonsIn, duration } from './trace_model.js';
import { esc, weigher, percent } from '../flame/format.js';
import { el } from './dom.js';
import './trace_view.css';

const weight = weigher('samples');

// ---- the flame graph of a range's samples ----
function flameView(holder, count) {
  let pct = percent(0), drawn = false;
  const tip = (d) => {
    const x = d.data;
    const rows = [['samples', `${weight(x.v)} (${pct(x.v)})`]];
    if (x.f)
      rows.push(['at', x.f]);
    else if (x.k)
      rows.push(['frame', `the ${x.k}`]);
    return `<div class="sonde-tip-name">${esc(x.n)}</div><table>` +
      rows.map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(v)}</td></tr>`).join('') + '</table>';
  };
  // Task frames and kernel frames grey, as on the flame page.
  const chart = F.flamegraph().cellHeight(18).minFrameSize(1).sort(true).transitionDuration(0)
    .tooltip(F.tooltip().html(tip)).getName((d) => d.data.n)
    .setColorMapper((d, original) => (d.data.k && !d.highlight ? 'rgb(190,190,205)' : original));
  const width = () => Math.max(400, holder.clientWidth);
  window.addEventListener('resize', () => {
    if (drawn && width() !== chart.width())
      chart.width(width()).update();
  });
  return (tree) => {
    pct = percent(tree.v);
    count.dataset.samples = String(tree.v);
    count.textContent = weight(tree.v);
    const empty = holder.querySelector('#sonde-empty');
    if (!tree.v) {
      // d3-flame-graph cannot size a graph of nothing: it goes, and the
      // next range with samples draws it anew.
      if (drawn)
        chart.destroy();
      drawn = false;
      if (!empty)
        holder.append(el('p', { id: 'sonde-empty' }, 'No samples in this range.'));
      return;
    }
    if (empty)
      empty.remove();
    chart.width(width());
    if (drawn)
      chart.update(tree);
    else
      F.select(holder).datum(tree).call(chart);
    drawn = true;
  };
}

// ---- the off-CPU reasons of a range ----
function showReasons(table, rows) {
  table.textContent = '';
  const head = el('tr');
  for (const h of ['left for', 'switches', 'off the CPU'])
    head.append(el('th', {}, h));
  table.append(head);
  for (const r of rows) {
    const tr = el('tr', { 'data-reason': r.reason, 'data-switches': r.switches, 'data-off-us': r.off });
    tr.append(el('td', {}, r.reason), el('td', {}, String(r.switches)), el('td', {}, duration(r.off)));
    table.append(tr);
  }
  if (!rows.length)
    table.append(el('tr', {}, 'no task left the CPU or stayed off it here'));
}

function showSlice(panel, s) {
  panel.textContent = '';
  for (const [k, v] of describe(s)) {
    const span = el('span');
    span.append(el('span', { class: 'sonde-k' }, k + ' '), document.createTextNode(v));
    panel.append(span);
  }
}

// ---- the view: controls, timeline, then the range's views ----
export function traceView(page, m) {
  const bar = el('div', { id: 'sonde-controls' });
  const resetZoom = el('button', { id: 'sonde-tl-reset', type: 'button' }, 'Reset zoom');
  const whole = el('button', { id: 'sonde-range-clear', type: 'button' }, 'Whole window');
  const rangeText = el('span', { id: 'sonde-range' });
  const legend = el('span', { id: 'sonde-legend' }, 'interrupts:');
  for (const c of ['tick', 'device', 'ipi', 'nmi'])
    legend.append(el('i', { class: `sonde-swatch sonde-irq-${c}` }), c);
  bar.append(resetZoom, whole, rangeText, legend,
    el('span', { class: 'sonde-hint' }, 'wheel: zoom, drag: pan, drag on the range strip: a range'));
  const tlHolder = el('div', { id: 'sonde-timeline' });
  const slice = el('div', { id: 'sonde-slice' }, '\u00a0');
  const reasons = el('table', { id: 'sonde-reasons' });
  const reasonsBox = el('div', { id: 'sonde-reasons-box' });
  reasonsBox.append(el('h2', {}, 'Off the CPU, by reason'), reasons);
  const count = el('div', { id: 'sonde-flame-count' });
  const holder = el('div', { id: 'sonde-chart' });
  const flameBox = el('div', { id: 'sonde-flame-box' });
  flameBox.append(el('h2', {}, 'CPU samples in the range'), count, holder);
  const below = el('div', { id: 'sonde-below' });
  below.append(reasonsBox, flameBox);
  page.append(bar, tlHolder, slice, below);
  const flame = flameView(holder, count);

  const showRange = (r) => {
    const [from, to] = r || [m.start, m.end];
    rangeText.dataset.fromUs = String(from);
    rangeText.dataset.toUs = String(to);
    rangeText.textContent = r ? `range ${duration(from)} to ${duration(to)} (${duration(to - from)})`
      : `the whole window, ${duration(m.end - m.start)}`;
    showReasons(reasons, reasonsIn(m, from, to));
    flame(stackTree(m, samplesIn(m, from, to)));
  };
  const tl = timeline(tlHolder, m, { onRange: showRange, onSelect: (s) => showSlice(slice, s) });
  resetZoom.addEventListener('click', () => tl.reset());
  whole.addEventListener('click', () => tl.setRange(null));
  const onResize = () => tl.resize();
  window.addEventListener('resize', onResize);
  showRange(null);
  return {
    destroy() {
      window.removeEventListener('resize', onResize);
      tl.destroy();
      for (const n of [bar, tlHolder, slice, below])
        n.remove();
    },
  };
}
