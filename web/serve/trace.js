// web/serve/trace.js: the page of `serve --kind trace`: the chosen kernel's
// last 2 s of trace (/api/trace), shown as the trace page shows one
// (web/lib/trace_view.js): the timeline, a brushed range's reasons and
// flame graph. The kernel's trace is taken when the page first has a
// kernel, when another is chosen, and on "the last 2 s again", never on
// the page's every refresh: a brushed range stays while it is read.
// <body data-trace-kernel> names the kernel shown, data-traces counts the
// traces taken.
import { S, $, getJSON } from './state.js';
import { traceModel } from '../lib/trace_model.js';
import { traceView } from '../lib/trace_view.js';

let view = null, shown = null, taking = false, taken = 0;

// Whether serve keeps a trace (and nothing else).
export function traceMode(st) {
  return !!st && st.kinds.length === 1 && st.kinds[0] === 'trace';
}

// The profile's controls make no sense here: hidden, the trace's shown.
function layout() {
  for (const id of ['timeline', 'summary', 'chart', 'details'])
    $(id).hidden = true;
  for (const el of document.querySelectorAll('#controls > *'))
    el.hidden = !el.contains($('kernel'));
  $('trace-box').hidden = false;
}

export async function refreshTrace(force) {
  layout();
  const sel = $('kernel');
  const ks = S.kernels ? S.kernels.kernels : S.status.kernels;
  const name = sel.value && sel.value !== 'all' ? sel.selectedOptions[0].text
    : ks.length ? ks[0].name : null;
  if (!name || taking || (!force && shown === name))
    return;
  taking = true;
  try {
    const j = await getJSON('/api/trace?' + new URLSearchParams({ kernel: name }));
    const m = traceModel(j);
    if (view)
      view.destroy();
    view = traceView($('trace-view'), m);
    shown = name;
    document.body.dataset.traceKernel = name;
    document.body.dataset.traces = String(++taken);
    $('trace-kernel').textContent = `${name}: ${m.runs.length} runs, ${m.wakes.length} wakes, ` +
      `${m.samples.length} samples on ${m.lanes.length} CPUs`;
    $('error').textContent = '';
  } catch (e) {
    $('trace-kernel').textContent = `${name}: ${e.message}`;
  } finally {
    taking = false;
  }
}
