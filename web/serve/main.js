// web/serve/main.js: the live view `sonde-prof serve` serves, the entry
// esbuild bundles into the page (web/serve/page.html). Every second it
// reads /api/status (the counts), a page of /api/kernels (the list, paged
// and searched), /api/timeline (the fleet's records per second, and the
// busiest kernels') and the selection's flame graph (/api/flame, or /api/diff
// against a base range), and draws them with d3-flame-graph. A range
// dragged on the timeline replaces the live view (the last 10 s) until
// "live" is pressed; "set selection as base" keeps it for the diff. Times
// are ms on serve's clock (0 at its start), printed as times of day.
// A serve of --kind trace shows a kernel's trace instead (./trace.js).
// Each refresh done adds one to <body data-refreshes>.
import { S, $, liveRange, getJSON } from './state.js';
import { refreshKernels, renderKernels, renderFilters } from './kernels.js';
import { renderTimeline, dragStart, dragMove, dragEnd } from './timeline.js';
import { refreshFlame } from './flame.js';
import { traceMode, refreshTrace } from './trace.js';
import './page.css';

async function refresh() {
  try {
    S.status = await getJSON('/api/status');
    await refreshKernels();
    renderFilters(S.status);
    if (traceMode(S.status)) {
      renderKernels(S.status);
      await refreshTrace(false);
      S.refreshes++;
      document.body.dataset.refreshes = S.refreshes;
      setTimeout(refresh, 1000);
      return;
    }
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

// The kernel list's page and search, drawn at once (not at the next
// refresh).
async function kernelsNow() {
  try {
    await refreshKernels();
    if (S.status) {
      renderKernels(S.status);
      renderFilters(S.status);
    }
  } catch (e) {
    $('error').textContent = `serve does not answer: ${e.message}`;
  }
}

function wire() {
  document.body.dataset.refreshes = S.refreshes;
  const tl = $('timeline');
  tl.setAttribute('width', Math.max(600, document.body.clientWidth - 8));
  tl.addEventListener('pointerdown', dragStart);
  tl.addEventListener('pointermove', dragMove);
  tl.addEventListener('pointerup', dragEnd);
  $('kernel-search').addEventListener('input', () => {
    S.kpage.q = $('kernel-search').value.trim();
    S.kpage.offset = 0;
    kernelsNow();
  });
  $('kernels-prev').addEventListener('click', () => {
    S.kpage.offset = Math.max(0, S.kpage.offset - S.kpage.limit);
    kernelsNow();
  });
  $('kernels-next').addEventListener('click', () => {
    S.kpage.offset += S.kpage.limit;
    kernelsNow();
  });
  for (const id of ['kind', 'kernel', 'pid', 'cpu', 'by', 'diff'])
    $(id).addEventListener('change', () => {
      if (traceMode(S.status))
        refreshTrace(true);
      else {
        renderTimeline();
        refreshFlame();
      }
    });
  $('trace-refresh').addEventListener('click', () => refreshTrace(true));
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
