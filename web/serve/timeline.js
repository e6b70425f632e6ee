// web/serve/timeline.js: the timeline of serve's page (/api/timeline):
// the fleet's records per second as one line, and the busiest kernels'
// (per 10-s bucket) beside it, with the selection and the base drawn
// over them; a range dragged on it becomes the selection.
import { S, $, COLORS, fmtNum, clock, liveRange } from './state.js';
import { refreshFlame } from './flame.js';

const SVGNS = 'http://www.w3.org/2000/svg';
function el(name, attrs, parent) {
  const e = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs))
    e.setAttribute(k, v);
  parent.appendChild(e);
  return e;
}

function tlRange() {
  const t = S.timeline;
  return [t.from_s * 1000, Math.max(t.to_s * 1000, t.from_s * 1000 + 1000)];
}

function xOf(ms, w) {
  const [a, b] = tlRange();
  return Math.max(0, Math.min(w, (ms - a) / (b - a) * w));
}

function msOf(x, w) {
  const [a, b] = tlRange();
  return Math.round(a + Math.max(0, Math.min(1, x / w)) * (b - a));
}

export function renderTimeline() {
  const svg = $('timeline');
  if (!S.timeline || !S.status || S.dragging)
    return;
  const w = svg.clientWidth || 1200, h = svg.clientHeight || 110, top = 6, bottom = 16;
  svg.textContent = '';
  const [a, b] = tlRange();
  svg.dataset.fromMs = a;
  svg.dataset.toMs = b;
  let max = 1;
  for (const r of S.timeline.total)
    max = Math.max(max, r);
  const yOf = (r) => (top + (h - top - bottom) * (1 - r / max)).toFixed(1);
  const line = (rate, t0, step) => rate.map((r, i) =>
    `${xOf((t0 + (i + 0.5) * step) * 1000, w).toFixed(1)},${yOf(r)}`).join(' ');
  el('polyline', { points: line(S.timeline.total, S.timeline.from_s, 1), class: 'total' }, svg);
  for (const k of S.timeline.kernels)
    el('polyline', { points: line(k.rate, S.timeline.from_bucket_s, S.timeline.bucket_s),
                     fill: 'none', 'stroke-width': 1.5,
                     stroke: COLORS[k.index % COLORS.length], class: 'rate' }, svg)
      .dataset.kernel = k.index;
  const axis = (ms, anchor) => {
    el('text', { x: xOf(ms, w), y: h - 3, class: 'axis', 'text-anchor': anchor }, svg)
      .textContent = clock(ms);
  };
  axis(a, 'start');
  axis(b, 'end');
  el('text', { x: 4, y: 14, class: 'axis' }, svg).textContent =
    `${fmtNum(max)} samples/s, every kernel (black); the busiest, per 10 s`;
  const band = (r, cls) => {
    const x0 = xOf(r.from, w), x1 = xOf(r.to, w);
    el('rect', { x: x0, y: 0, width: Math.max(1, x1 - x0), height: h, class: cls }, svg);
  };
  if (S.base)
    band(S.base, 'base');
  band(S.sel || liveRange(), 'sel');
}

export function dragStart(ev) {
  if (!S.timeline || ev.button !== 0)
    return;
  const svg = $('timeline');
  const x = ev.clientX - svg.getBoundingClientRect().left;
  S.dragging = { x0: x, x1: x, rect: el('rect', { x, y: 0, width: 1, height: svg.clientHeight || 110,
                                                   class: 'sel' }, svg) };
  svg.setPointerCapture(ev.pointerId);
}

export function dragMove(ev) {
  const d = S.dragging;
  if (!d)
    return;
  const svg = $('timeline');
  d.x1 = ev.clientX - svg.getBoundingClientRect().left;
  d.rect.setAttribute('x', Math.min(d.x0, d.x1));
  d.rect.setAttribute('width', Math.max(1, Math.abs(d.x1 - d.x0)));
}

export function dragEnd() {
  const d = S.dragging;
  if (!d)
    return;
  S.dragging = null;
  const w = $('timeline').clientWidth || 1200;
  if (Math.abs(d.x1 - d.x0) >= 3) {
    const a = msOf(Math.min(d.x0, d.x1), w), b = msOf(Math.max(d.x0, d.x1), w);
    const now = S.status.now_ms;
    S.sel = { from: Math.min(a, now - 1), to: Math.min(Math.max(b, a + 1), now) };
    if (S.sel.from < 0)
      S.sel.from = 0;
  }
  renderTimeline();
  refreshFlame();
}
