// web/serve/main.js: the live view `sonde-prof serve` serves, the entry
// esbuild bundles into the page (web/serve/page.html). Every second it
// reads /api/status (the kernels), /api/timeline (records per second per
// kernel) and the selection's flame graph (/api/flame, or /api/diff
// against a base range), and draws them with d3-flame-graph. A range
// dragged on the timeline replaces the live view (the last 10 s) until
// "live" is pressed; "set selection as base" keeps it for the diff. Times
// are ms on serve's clock (0 at its start), printed as times of day.
// Each refresh done adds one to <body data-refreshes>.
import { S, $, liveRange, getJSON } from './state.js';
import { renderKernels, renderFilters } from './kernels.js';
import { renderTimeline, dragStart, dragMove, dragEnd } from './timeline.js';
import { refreshFlame } from './flame.js';
import './page.css';

async function refresh() {
  try {
    S.status = await getJSON('/api/status');
    renderFilters(S.status);
    S.timeline = await getJSON('/api/timeline?' + new URLSearchParams({ kind: $('kind').value || 'cpu' }));
    renderKernels(S.status);
    renderTimeline();
    await refreshFlame();
    S.refreshes++;
    document.body.dataset.refreshes = S.refreshes;
  } catch (e) {
    $('error').textContent = `serve does not answer: ${e.message}`;
  }
  setTimeout(refresh, 1000);
}

function wire() {
  document.body.dataset.refreshes = S.refreshes;
  const tl = $('timeline');
  tl.setAttribute('width', Math.max(600, document.body.clientWidth - 8));
  tl.addEventListener('pointerdown', dragStart);
  tl.addEventListener('pointermove', dragMove);
  tl.addEventListener('pointerup', dragEnd);
  for (const id of ['kind', 'kernel', 'pid', 'cpu', 'diff'])
    $(id).addEventListener('change', () => { renderTimeline(); refreshFlame(); });
  $('live').addEventListener('click', () => { S.sel = null; renderTimeline(); refreshFlame(); });
  $('reset-zoom').addEventListener('click', () => {
    S.zoomPath = null;
    if (S.chart)
      S.chart.resetZoom();
  });
  $('set-base').addEventListener('click', () => {
    S.base = S.sel ? { ...S.sel } : liveRange();
    $('diff').disabled = false;
    renderTimeline();
  });
  $('search').addEventListener('input', () => {
    if (!S.chart)
      return;
    if ($('search').value)
      S.chart.search($('search').value);
    else
      S.chart.clear();
  });
}

wire();
refresh();
