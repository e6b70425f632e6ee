// web/serve/state.js: what the modules of serve's page (web/serve/main.js)
// share: the page's state, its elements by id, the kernels' colours, how
// times and numbers are written, and the requests' parameters.

export const $ = (id) => document.getElementById(id);
export const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b',
                       '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
export const S = {
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
  kernels: null,       // the last /api/kernels page
  kpage: { offset: 0, limit: 50, q: '' },   // the kernel list's page and search
};

export const fmtNum = (n) => n.toLocaleString('en-US');
// Every time the API gives is Unix ms.
export function clock(ms) {
  return new Date(ms).toLocaleTimeString('en-GB');
}

export function filterParams() {
  const p = new URLSearchParams();
  for (const k of ['kind', 'kernel', 'pid', 'cpu', 'by'])
    if ($(k).value)
      p.set(k, $(k).value);
  return p;
}

export function selParams() {
  const p = filterParams();
  if (S.sel) {
    p.set('from', S.sel.from);
    p.set('to', S.sel.to);
  }
  return p;
}

export async function getJSON(url) {
  const r = await fetch(url, { cache: 'no-store' });
  const j = await r.json();
  if (!r.ok)
    throw new Error(j.error || `${url}: HTTP ${r.status}`);
  return j;
}

export function liveRange() {
  const now = S.status.now_ms;
  return { from: Math.max(0, now - S.status.live_ms), to: now };
}
