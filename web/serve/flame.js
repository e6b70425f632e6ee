// web/serve/flame.js: the flame graph of serve's page: the selection's
// (/api/flame) or its diff against the base (/api/diff), drawn with
// d3-flame-graph (web/lib/flame.js), and the figures and links beside it.
import * as F from '../lib/flame.js';
import { S, $, fmtNum, clock, selParams, liveRange, getJSON } from './state.js';

function diffColor(d) {
  const delta = d.data.delta || 0;
  const v = Math.max(d.data.value || 0, Math.abs(delta), 1);
  const c = Math.round(235 * (1 - Math.min(1, Math.abs(delta) / v)));
  if (delta > 0)
    return `rgb(255,${c},${c})`;
  if (delta < 0)
    return `rgb(${c},${c},255)`;
  return 'rgb(225,225,225)';
}

function makeChart(w) {
  const unit = () => (S.flame ? S.flame.unit : 'samples');
  const tip = F.tooltip().text((d) => {
    const root = S.flame ? S.flame.tree.value || 1 : 1;
    let s = `${d.data.name}: ${fmtNum(d.data.value)} ${unit()} ` +
            `(${(100 * d.data.value / root).toFixed(1)}%)`;
    if (d.data.delta !== undefined)
      s += `, ${d.data.delta >= 0 ? '+' : ''}${fmtNum(d.data.delta)} over the base`;
    return s;
  });
  // A click zooms; the frame's path from the root is kept so that the
  // next refresh (new data, a new hierarchy) zooms to it again.
  return F.flamegraph().width(w).cellHeight(18).minFrameSize(1).transitionDuration(0)
    .sort(true).tooltip(tip).setDetailsElement($('details'))
    .onClick((d) => {
      const path = [];
      for (let n = d; n && n.parent; n = n.parent)
        path.unshift(n.data.name);
      S.zoomPath = path.length ? path : null;
    });
}

// The frame at the zoomed path; failing that (a task's name came in a
// later META: "pid-6" became "burn"), the first frame of the same name
// at the same depth.
function rezoom() {
  const path = S.zoomPath;
  if (!path)
    return;
  const root = F.select('#chart').datum();
  let n = root;
  for (const name of path)
    n = n && n.children && n.children.find((c) => c.data.name === name);
  if (!n)
    n = root.descendants().find((d) => d.depth === path.length &&
                                       d.data.name === path[path.length - 1]);
  if (n)
    S.chart.zoomTo(n);
}

// A chart of its own for every answer: d3-flame-graph fixes its height
// at the first tree it draws (a deeper one later would be drawn off the
// top), and a fresh chart has nothing of the last tree left over.
function renderFlame(j, diff) {
  S.flame = j;
  const tree = j.tree;
  if (S.chart)
    S.chart.destroy();
  $('chart').textContent = '';
  S.chart = makeChart(Math.max(600, $('chart').clientWidth || 1200));
  S.chart.setColorMapper(diff ? diffColor : (d, original) => original);
  F.select('#chart').datum(tree).call(S.chart);
  rezoom();
  if ($('search').value)
    S.chart.search($('search').value);
  document.body.classList.toggle('diff', diff);
  const r = diff ? j.new : j;
  $('range').textContent = S.sel ? `${clock(r.from_ms)} to ${clock(r.to_ms)}`
                                 : `live, ${clock(r.from_ms)} to ${clock(r.to_ms)}`;
  $('sample-count').textContent = fmtNum(r.samples);
  $('sample-count').dataset.samples = r.samples;
  $('unit').textContent = r.samples === 1 ? 'sample' : 'samples';
  // The stream carries sampled allocations and no frees: say so.
  $('kind-note').textContent = j.kind !== 'heap' ? '' :
    'heap: bytes allocated in the range' + (j.objects !== undefined
      ? ` (${fmtNum(r.weight)} bytes, ${fmtNum(j.objects)} objects)` : '') +
    ', from the sampled allocations the stream carries; frees are not streamed, ' +
    'so this is not the heap in use';
  $('base-summary').textContent = diff
    ? `against the base ${clock(j.base.from_ms)} to ${clock(j.base.to_ms)}: ` +
      `${fmtNum(j.base.samples)} samples` : '';
  if (r.over)
    $('base-summary').textContent += ` (${fmtNum(r.over)} over the stack bound, not drawn)`;
  const q = selParams().toString();
  $('dl-pprof').href = '/download/selection.pb.gz' + (q ? '?' + q : '');
  $('dl-folded').href = '/download/selection.folded' + (q ? '?' + q : '');
}

export async function refreshFlame() {
  const diff = $('diff').checked && S.base !== null;
  let url;
  if (diff) {
    const p = selParams();
    p.set('base_from', S.base.from);
    p.set('base_to', S.base.to);
    if (!S.sel) {
      const r = liveRange();
      p.set('from', r.from);
      p.set('to', Math.max(r.to, r.from + 1));
    }
    url = '/api/diff?' + p;
  } else {
    url = '/api/flame?' + selParams();
  }
  // The timer's refresh and a change of filter can both be waiting for
  // an answer: only the latest request's is drawn.
  const seq = ++S.seq;
  try {
    const j = await getJSON(url);
    if (seq !== S.seq)
      return;
    renderFlame(j, diff);
    $('error').textContent = '';
  } catch (e) {
    if (seq === S.seq)
      $('error').textContent = e.message;
  }
}
