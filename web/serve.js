// web/serve.js: the live view `sonde-prof serve` serves (web/serve.html).
// Every second it reads /api/status (the kernels), /api/timeline (records
// per second per kernel) and the selection's flame graph (/api/flame, or
// /api/diff against a base range), and draws them with d3-flame-graph
// (window.sondeFlame, the bundle sonde-prof inlines). A range dragged on
// the timeline replaces the live view (the last 10 s) until "live" is
// pressed; "set selection as base" keeps it for the diff. Times are ms on
// serve's clock (0 at its start), printed as times of day.
'use strict';
(function () {
  const F = window.sondeFlame;
  const $ = (id) => document.getElementById(id);
  const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b',
                  '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
  const S = {
    status: null,
    sel: null,           // {from, to} in ms, or null: live
    base: null,          // {from, to}, or null
    flame: null,         // the last /api/flame or /api/diff answer
    timeline: null,
    dragging: null,
    chart: null,
    refreshes: 0,
    zoomPath: null,      // the zoomed frame's names from the root, or null
    seq: 0,              // flame requests made
  };
  window.sondeServe = S;   // for whoever wants to look (the browser tests)

  const fmtNum = (n) => n.toLocaleString('en-US');
  function clock(ms) {
    if (!S.status)
      return '';
    return new Date(S.status.started_unix_ms + ms).toLocaleTimeString('en-GB');
  }

  function filterParams() {
    const p = new URLSearchParams();
    for (const k of ['kind', 'kernel', 'pid', 'cpu'])
      if ($(k).value)
        p.set(k, $(k).value);
    return p;
  }

  function selParams() {
    const p = filterParams();
    if (S.sel) {
      p.set('from', S.sel.from);
      p.set('to', S.sel.to);
    }
    return p;
  }

  async function getJSON(url) {
    const r = await fetch(url, { cache: 'no-store' });
    const j = await r.json();
    if (!r.ok)
      throw new Error(j.error || `${url}: HTTP ${r.status}`);
    return j;
  }

  // ---- kernels and filters ------------------------------------------------

  function lastRate(k) {
    const t = S.timeline && S.timeline.kernels.find((x) => x.index === k.index);
    if (!t || t.rate.length < 2)
      return '';
    return fmtNum(t.rate[t.rate.length - 2]);     // the last whole second
  }

  function renderKernels(st) {
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

  function renderFilters(st) {
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

  // ---- the timeline -------------------------------------------------------

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

  function liveRange() {
    const now = S.status.now_ms;
    return { from: Math.max(0, now - S.status.live_ms), to: now };
  }

  function renderTimeline() {
    const svg = $('timeline');
    if (!S.timeline || !S.status || S.dragging)
      return;
    const w = svg.clientWidth || 1200, h = svg.clientHeight || 110, top = 6, bottom = 16;
    svg.textContent = '';
    const [a, b] = tlRange();
    svg.dataset.fromMs = a;
    svg.dataset.toMs = b;
    let max = 1;
    for (const k of S.timeline.kernels)
      for (const r of k.rate)
        max = Math.max(max, r);
    for (const k of S.timeline.kernels) {
      const pts = k.rate.map((r, i) => {
        const x = xOf((S.timeline.from_s + i + 0.5) * 1000, w);
        const y = top + (h - top - bottom) * (1 - r / max);
        return `${x.toFixed(1)},${y.toFixed(1)}`;
      });
      el('polyline', { points: pts.join(' '), fill: 'none', 'stroke-width': 1.5,
                       stroke: COLORS[k.index % COLORS.length], class: 'rate' }, svg)
        .dataset.kernel = k.index;
    }
    const axis = (ms, anchor) => {
      el('text', { x: xOf(ms, w), y: h - 3, class: 'axis', 'text-anchor': anchor }, svg)
        .textContent = clock(ms);
    };
    axis(a, 'start');
    axis(b, 'end');
    el('text', { x: 4, y: 14, class: 'axis' }, svg).textContent = `${fmtNum(max)} samples/s`;
    const band = (r, cls) => {
      const x0 = xOf(r.from, w), x1 = xOf(r.to, w);
      el('rect', { x: x0, y: 0, width: Math.max(1, x1 - x0), height: h, class: cls }, svg);
    };
    if (S.base)
      band(S.base, 'base');
    band(S.sel || liveRange(), 'sel');
  }

  function dragStart(ev) {
    if (!S.timeline || ev.button !== 0)
      return;
    const svg = $('timeline');
    const x = ev.clientX - svg.getBoundingClientRect().left;
    S.dragging = { x0: x, x1: x, rect: el('rect', { x, y: 0, width: 1, height: svg.clientHeight || 110,
                                                     class: 'sel' }, svg) };
    svg.setPointerCapture(ev.pointerId);
  }

  function dragMove(ev) {
    const d = S.dragging;
    if (!d)
      return;
    const svg = $('timeline');
    d.x1 = ev.clientX - svg.getBoundingClientRect().left;
    d.rect.setAttribute('x', Math.min(d.x0, d.x1));
    d.rect.setAttribute('width', Math.max(1, Math.abs(d.x1 - d.x0)));
  }

  function dragEnd() {
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

  // ---- the flame graph ------------------------------------------------------

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

  async function refreshFlame() {
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

  // ---- every second -------------------------------------------------------

  async function refresh() {
    try {
      S.status = await getJSON('/api/status');
      renderFilters(S.status);
      S.timeline = await getJSON('/api/timeline?' + new URLSearchParams({ kind: $('kind').value || 'cpu' }));
      renderKernels(S.status);
      renderTimeline();
      await refreshFlame();
      S.refreshes++;
    } catch (e) {
      $('error').textContent = `serve does not answer: ${e.message}`;
    }
    setTimeout(refresh, 1000);
  }

  function wire() {
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
})();
