// web/serve/kernels.js: the kernels' table and the filters' choices of
// serve's page. A fleet's list is paged and searched by serve
// (/api/kernels?offset=&limit=&q=): the table shows one page, the
// counts by state come with /api/status, and the kernel filter offers
// the kernels of the page shown (and keeps the one chosen).
import { S, $, COLORS, fmtNum, clock, getJSON } from './state.js';

export async function refreshKernels() {
  const p = new URLSearchParams({ offset: S.kpage.offset, limit: S.kpage.limit });
  if (S.kpage.q)
    p.set('q', S.kpage.q);
  S.kernels = await getJSON('/api/kernels?' + p);
  // The list got shorter (a search): back to its last page.
  if (S.kernels.offset > 0 && S.kernels.offset >= S.kernels.matched) {
    S.kpage.offset = Math.max(0, S.kernels.matched - S.kpage.limit);
    return refreshKernels();
  }
}

export function renderKernels(st) {
  const body = document.querySelector('#kernels tbody');
  body.textContent = '';
  const page = S.kernels;
  for (const k of page.kernels) {
    const tr = document.createElement('tr');
    tr.dataset.index = k.index;
    tr.className = k.state;
    const ago = k.last_ms === null ? '' : ` (${((st.now_ms - k.last_ms) / 1000).toFixed(1)} s ago)`;
    const cells = [
      // A kernel whose stream did not start says why, not only in a tooltip.
      k.name, k.state === 'failed' && k.note ? `failed: ${k.note}` : k.state, k.last_ms === null ? 'none yet' : clock(k.last_ms) + ago,
      k.authenticated ? 'authenticated (HMAC key)' : 'open (no key)',
      k.source || '', fmtNum(k.rate), fmtNum(k.lost + k.dropped),
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
  const first = page.matched ? page.offset + 1 : 0;
  const last = page.offset + page.kernels.length;
  $('kernels-page').textContent = `${fmtNum(first)}-${fmtNum(last)} of ${fmtNum(page.matched)}` +
    (page.matched !== page.total ? ` found (${fmtNum(page.total)} kernels)` : ' kernels');
  $('kernels-prev').disabled = page.offset === 0;
  $('kernels-next').disabled = last >= page.matched;
  $('kernel-states').textContent = Object.entries(st.kernel_states || {})
    .map(([s, n]) => `${fmtNum(n)} ${s}`).join(', ');
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
  options($('kind'), st.kinds.map((k) => [k, { cpu: 'CPU', offcpu: 'off-CPU', heap: 'heap', lock: 'lock waits' }[k] || k]));
  const ks = S.kernels ? S.kernels.kernels : st.kernels;
  const kopts = [['all', 'all']].concat(ks.map((k) => [String(k.index), k.name]));
  // The kernel chosen stays offered when the page shows others.
  const chosen = $('kernel').value;
  if (chosen && chosen !== 'all' && !kopts.some(([v]) => v === chosen))
    kopts.push([chosen, $('kernel').selectedOptions[0].text]);
  options($('kernel'), kopts);
  const tasks = new Map();
  let cpus = 0;
  for (const k of ks) {
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
