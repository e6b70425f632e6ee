// web/trace/main.js: the page of `sonde-prof record --trace -o FILE.html`,
// the entry esbuild bundles into web/trace/page.html. The page holds the
// trace as Chrome trace-event JSON in <script id="sonde-trace">
// (tools/output/trace_json.h): a header says what was traced, and the
// trace's view below it (web/lib/trace_view.js) shows it, the timeline on
// top and what a brushed range holds under it.
import { traceModel, duration } from '../lib/trace_model.js';
import { traceView } from '../lib/trace_view.js';
import { el } from '../lib/dom.js';
import './page.css';

const page = document.getElementById('sonde-page');

// ---- the header: title, what was traced ----
function header(m) {
  page.append(el('h1', { id: 'sonde-title' }, document.title));
  const summary = el('div', { id: 'sonde-summary' });
  const meta = m.meta;
  const irqs = m.lanes.reduce((n, l) => n + l.irqs.length, 0);
  summary.append(el('div', {}, `kernel ${meta.kernel ?? '?'}` +
    (meta.build_id ? ` (build ${meta.build_id})` : '') + `: ${duration(m.end - m.start)}, ` +
    `${m.lanes.length} CPU${m.lanes.length === 1 ? '' : 's'}; ${m.runs.length} runs, ` +
    `${irqs} interrupts, ${m.wakes.length} wakes, ${m.samples.length} samples`));
  const dropped = Array.isArray(meta.dropped) ? meta.dropped : [];
  const lost = dropped.reduce((n, d) => n + (Number(d) || 0), 0);
  summary.append(el('div', { class: lost ? 'sonde-warn' : '' },
    `${lost} records dropped` + (dropped.length ? ` (per CPU: ${dropped.join(', ')})` : '') +
    (m.unpaired ? `; ${m.unpaired} wakes without both ends` : '')));
  page.append(summary);
}

let trace = null;
try {
  trace = traceModel(JSON.parse(document.getElementById('sonde-trace').textContent));
} catch (e) {
  page.append(el('p', { id: 'sonde-error' }, `This page's trace cannot be read: ${e.message}`));
}
if (trace) {
  header(trace);
  traceView(page, trace);
}
