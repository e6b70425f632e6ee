// web/serve/kernels.js: the kernels' table and the filters' choices of
// serve's page, both from /api/status.
import { S, $, COLORS, fmtNum, clock } from './state.js';

function lastRate(k) {
  const t = S.timeline && S.timeline.kernels.find((x) => x.index === k.index);
  if (!t || t.rate.length < 2)
    return '';
  return fmtNum(t.rate[t.rate.length - 2]);     // the last whole second
}

export function renderKernels(st) {
  const body = document.querySelector('#kernels tbody');
  body.textContent = '';
  for (const k of st.kernels) {
    const tr = document.createElement('tr');
    tr.dataset.index = k.index;
    tr.className = k.state;
    const ago = k.last_ms === null ? '' : ` (${((st.now_ms - k.last_ms) / 1000).toFixed(1)} s ago)`;
    const cells = [
      // A kernel whose stream did not start says why, not only in a tooltip.
      k.name, k.state === 'failed' && k.note ? `failed: ${k.note}` : k.state, k.last_ms === null ? 'none yet' : clock(k.last_ms) + ago,
      k.authenticated ? 'authenticated (HMAC key)' : 'open (no key)',
      k.source || '', lastRate(k), fmtNum(k.lost + k.dropped),
    ];
    const cls = ['name', 'state', 'last', 'auth', 'source', 'rate', 'lost'];
    cells.forEach((c, i) => {
      const td = document.createElement('td');
      td.className = cls[i];
      td.textContent = c;
      if (i === 0) {
        const sw = document.createElement('span');
        sw.className = 'swatch';
        sw.style.background = COLORS[k.index % COLORS.length];
        td.prepend(sw);
      }
      if (i === 1 && k.note)
        td.title = k.note;
      tr.appendChild(td);
    });
    body.appendChild(tr);
  }
}

// Fills a select with [value, text] options, keeping what was chosen.
function options(sel, opts) {
  const keep = sel.value;
  const same = sel.options.length === opts.length &&
    opts.every(([v, t], i) => sel.options[i].value === v && sel.options[i].text === t);
  if (same)
    return;
  sel.textContent = '';
  for (const [v, t] of opts) {
    const o = document.createElement('option');
    o.value = v;
    o.text = t;
    sel.appendChild(o);
  }
  if (opts.some(([v]) => v === keep))
    sel.value = keep;
}

export function renderFilters(st) {
  options($('kind'), st.kinds.map((k) => [k, { cpu: 'CPU', offcpu: 'off-CPU', heap: 'heap' }[k] || k]));
  options($('kernel'), [['all', 'all']].concat(st.kernels.map((k) => [String(k.index), k.name])));
  const tasks = new Map();
  let cpus = 0;
  for (const k of st.kernels) {
    for (const t of k.tasks)
      tasks.set(t.pid, tasks.has(t.pid) && tasks.get(t.pid) !== t.name
        ? tasks.get(t.pid) + '/' + t.name : t.name);
    cpus = Math.max(cpus, k.cpus || 0);
  }
  const pids = [...tasks.keys()].sort((a, b) => a - b);
  options($('pid'), [['all', 'all']].concat(pids.map((p) => [String(p), `${p} ${tasks.get(p)}`])));
  const cs = [['all', 'all']];
  for (let c = 0; c < cpus; c++)
    cs.push([String(c), String(c)]);
  options($('cpu'), cs);
  $('listen').textContent = st.listen;
  const pub = $('public');
  pub.hidden = !st.public;
  pub.textContent = st.public ? `Listening on ${st.listen} (--public): anyone who reaches ` +
    'it can read these profiles.' : '';
}
