// web/lib/timeline.js: a trace's timeline (web/lib/trace_model.js's model),
// drawn with d3: one lane per CPU with each task's runs coloured by task
// and idle pale, the interrupts as red marks above the runs, the wakes as
// arrows from the waker's lane to the wakee's. d3-zoom zooms (wheel,
// double-click) and pans (drag) the time axis down to a microsecond across
// the lanes (d3-axis draws it); d3-brush picks a range on the strip under
// the axis. Hover shows a slice's details; a click selects it.
//   const tl = timeline(holder, model, { onRange, onSelect });
//   onRange([from, to]) or onRange(null) (the range cleared), in µs;
//   onSelect(slice): a run, an interrupt or a wake, clicked;
//   tl.zoomTo(from, to), tl.reset(), tl.setRange([from, to] | null),
//   tl.resize() (after the holder's width changed), tl.destroy().
// What a run or an interrupt says of itself is describe(slice)'s, for
// the page's panel and the tooltip alike. Names from the trace enter the
// page as text, never as markup.
import { select, pointer } from 'd3-selection';
import { zoom, zoomIdentity } from 'd3-zoom';
import { brushX } from 'd3-brush';
import { axisTop } from 'd3-axis';
import { scaleLinear, scaleOrdinal } from 'd3-scale';
import { lowerBound, duration } from './trace_model.js';

const LEFT = 64, RIGHT = 34;            // the lane labels' margin; room for the last tick's label
const AXIS = 36, STRIP = 22;            // the axis's height, the brush strip's
const LANE = 30, IRQ = 6;               // a lane's height, its interrupt marks'
const MIN_SPAN_US = 1;                  // the deepest zoom: 1 µs across the lanes
const MAX_WAKES = 3000;                 // more arrows than this say "zoom in"
const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#edc948', '#76b7b2',
  '#ff9da7', '#9c755f', '#2f6f4f', '#d37295', '#8cd17d', '#a0cbe8', '#ffbe7d',
  '#499894', '#86bcb6', '#e15759', '#b6992d', '#79706e', '#d4a6c8', '#f1ce63'];

// Rows of [label, value], what a slice says of itself.
export function describe(s) {
  const at = `${duration(s.ts)}, lasting ${duration(s.dur)}`;
  if (s.kind === 'irq')
    return [['interrupt', s.name], ['on', s.lane.name], ['at', at],
      ['vector', String(s.args.vector ?? '')], ['during', s.task || '-']];
  if (s.kind === 'wake')
    return [['wake', `${s.waker ?? '?'} woke ${s.wakee ?? '?'}`],
      ['from', `${s.from.lane.name} at ${duration(s.from.ts)}`],
      ['to', `${s.to.lane.name}, running at ${duration(s.to.ts)}`]];
  if (s.idle)
    return [['task', 'idle'], ['on', s.lane.name], ['at', at]];
  return [['task', `${s.task}[${s.pid}]`], ['on', s.lane.name], ['at', at],
    ['left', s.left || '-'], ['scheduling delay', duration(s.delay)],
    ['blocked before', duration(s.wait)]];
}

// An interrupt's class (trace_json.h: tick, device, ipi, nmi...) as a
// word a class attribute can hold, for its mark's colour.
const irqClass = (q) => String(q.args.class ?? 'other').toLowerCase().replace(/[^a-z0-9]/g, '') || 'other';

// The tick labels' decimals: enough for the step between ticks, in ms.
function tickFormat(ticks) {
  const step = ticks.length > 1 ? ticks[1] - ticks[0] : 1000;
  const dec = Math.max(0, Math.min(7, Math.ceil(-Math.log10(step / 1000) - 1e-9)));
  return (us) => `${(us / 1000).toFixed(dec)} ms`;
}

// The timeline's elements, drawn on by timeline(): the axis on top, the
// brush's strip under it, then the lanes (clipped to the plot), each with
// its runs under its interrupt marks, and the wakes over them all.
function skeleton(holder, m) {
  const root = select(holder).append('div').attr('class', 'sonde-tl');
  const svg = root.append('svg').attr('class', 'sonde-tl-svg');
  const tip = root.append('div').attr('class', 'sonde-tl-tip').style('display', 'none');
  const plotTop = AXIS + STRIP + 4;
  const height = plotTop + m.lanes.length * LANE + 6;
  svg.attr('height', height);
  const clipId = 'sonde-tl-clip-' + Math.random().toString(36).slice(2);
  const clip = svg.append('defs').append('clipPath').attr('id', clipId).append('rect');
  svg.select('defs').append('marker').attr('id', clipId + '-arrow').attr('viewBox', '0 0 8 8')
    .attr('refX', 7).attr('refY', 4).attr('markerWidth', 6).attr('markerHeight', 6)
    .attr('orient', 'auto').append('path').attr('d', 'M0,0L8,4L0,8z').attr('class', 'sonde-arrow');
  const axisG = svg.append('g').attr('class', 'sonde-axis').attr('transform', `translate(0,${AXIS})`);
  const span = svg.append('text').attr('class', 'sonde-span').attr('x', LEFT).attr('y', 11);
  const strip = svg.append('g').attr('class', 'sonde-strip')
    .attr('transform', `translate(0,${AXIS + 2})`);
  strip.append('text').attr('class', 'sonde-strip-label').attr('x', 4).attr('y', STRIP - 7)
    .text('range');
  const plot = svg.append('g').attr('class', 'sonde-plot');
  const bg = plot.append('rect').attr('class', 'sonde-bg').attr('y', plotTop)
    .attr('height', m.lanes.length * LANE);
  const body = plot.append('g').attr('clip-path', `url(#${clipId})`);
  const shade = body.append('rect').attr('class', 'sonde-shade').attr('y', plotTop)
    .attr('height', m.lanes.length * LANE);
  const lanes = body.selectAll('g.sonde-lane').data(m.lanes).join('g')
    .attr('class', 'sonde-lane').attr('data-cpu', (l) => l.cpu)
    .attr('transform', (l) => `translate(0,${plotTop + l.index * LANE})`);
  lanes.append('g').attr('class', 'sonde-runs');
  lanes.append('g').attr('class', 'sonde-irqs');
  const wakesG = body.append('g').attr('class', 'sonde-wakes');
  plot.selectAll('text.sonde-lane-label').data(m.lanes).join('text')
    .attr('class', 'sonde-lane-label').attr('x', 4)
    .attr('y', (l) => plotTop + l.index * LANE + LANE / 2 + 4).text((l) => l.name);
  return { root, svg, tip, clip, clipId, axisG, span, strip, plot, bg, shade, lanes, wakesG, plotTop,
           height };
}

export function timeline(holder, m, opts = {}) {
  const { root, svg, tip, clip, clipId, axisG, span, strip, plot, bg, shade, lanes, wakesG, plotTop,
          height } = skeleton(holder, m);
  const colour = scaleOrdinal(PALETTE);
  const key = (r) => `${r.pid} ${r.task}`;
  const x0 = scaleLinear().domain([m.start, m.end]);
  let x = x0.copy(), range = null, selected = null, width = 0;
  const zoomer = zoom().on('zoom', (ev) => {
    x = ev.transform.rescaleX(x0);
    draw();
  });
  const brusher = brushX().on('brush end', (ev) => {
    if (!ev.sourceEvent)
      return;                   // moved by draw(): the range stays as it is
    range = ev.selection ? ev.selection.map((px) => x.invert(px)) : null;
    drawShade();
    if (ev.type === 'end' && opts.onRange)
      opts.onRange(range && range.slice());
  });

  // The runs of a lane in view, as bars: a run a pixel wide or more is a
  // bar of its own; narrower ones share their pixel, coloured as the one
  // that holds most of it (so a dense second stays one bar a pixel).
  function bars(l, a, b) {
    const out = [];
    let bin = null;
    for (let i = lowerBound(l.runs, a, (r) => r.end); i < l.runs.length && l.runs[i].ts < b; i++) {
      const r = l.runs[i], px0 = x(r.ts), px1 = x(r.end);
      if (px1 - px0 >= 1) {
        bin = null;
        out.push({ run: r, x: px0, w: px1 - px0 });
        continue;
      }
      const col = Math.floor(px0);
      if (bin && bin.col === col) {
        bin.n++;
        if (r.dur > bin.run.dur)
          bin.run = r;
      } else {
        bin = { run: r, x: col, w: 1, col, n: 1 };
        out.push(bin);
      }
    }
    return out;
  }

  function drawLanes(a, b) {
    lanes.select('g.sonde-runs').selectAll('rect').data((l) => bars(l, a, b)).join('rect')
      .attr('class', (d) => 'sonde-run' + (d.run.idle ? ' sonde-idle' : '') + (d.n ? ' sonde-dense' : '') +
        (d.run === selected ? ' sonde-selected' : ''))
      .attr('x', (d) => d.x).attr('width', (d) => d.w).attr('y', IRQ + 1).attr('height', LANE - IRQ - 4)
      .attr('fill', (d) => (d.run.idle ? null : colour(key(d.run))))
      .attr('data-task', (d) => d.run.task).attr('data-pid', (d) => d.run.pid)
      .attr('data-ts', (d) => d.run.ts);
    // One mark a pixel: at a glance an interrupt's place matters, not its count.
    lanes.select('g.sonde-irqs').selectAll('rect').data((l) => {
      const out = [];
      let last = -Infinity;
      for (let i = lowerBound(l.irqs, a, (q) => q.end); i < l.irqs.length && l.irqs[i].ts < b; i++) {
        const q = l.irqs[i], px = x(q.ts);
        if (Math.floor(px) > last) {
          out.push({ run: q, x: px, w: Math.max(1, x(q.end) - px) });
          last = Math.floor(px + Math.max(1, x(q.end) - px) - 1);
        }
      }
      return out;
    }).join('rect').attr('class', (d) => `sonde-irq sonde-irq-${irqClass(d.run)}` +
      (d.run === selected ? ' sonde-selected' : ''))
      .attr('x', (d) => d.x).attr('width', (d) => d.w).attr('y', 0).attr('height', IRQ)
      .attr('data-name', (d) => d.run.name);
  }

  // The wakes in view, or how many there are when too many to draw.
  function drawWakes(a, b) {
    const mid = (l) => plotTop + l.index * LANE + LANE / 2;
    const seen = m.wakes.filter((w) => Math.max(w.from.ts, w.to.ts) >= a && Math.min(w.from.ts, w.to.ts) < b);
    const shown = seen.length > MAX_WAKES ? [] : seen;
    const d = (w) => {
      const xa = x(w.from.ts), ya = mid(w.from.lane), xb = x(w.to.ts), yb = mid(w.to.lane);
      // Within a lane an arrow would lie on the bars: it arcs above them.
      const cy = ya === yb ? ya - LANE * 0.6 : (ya + yb) / 2;
      return `M${xa},${ya}Q${(xa + xb) / 2},${cy} ${xb},${yb}`;
    };
    // Each arrow under a wide stroke of nothing, so that a hand can hover it.
    const g = wakesG.selectAll('g').data(shown).join((enter) => {
      const e = enter.append('g');
      e.append('path').attr('class', 'sonde-wake').attr('marker-end', `url(#${clipId}-arrow)`);
      e.append('path').attr('class', 'sonde-wake-hit');
      return e;
    });
    g.select('path.sonde-wake').attr('d', d);
    g.select('path.sonde-wake-hit').attr('d', d);
    return seen.length > MAX_WAKES ? `; ${seen.length} wakes in view: zoom in to see them` : '';
  }

  function drawShade() {
    const [a, b] = range ? range.map(x) : [0, 0];
    shade.attr('x', Math.min(a, b)).attr('width', range ? Math.max(1, Math.abs(b - a)) : 0);
  }

  function draw() {
    const [a, b] = x.domain();
    svg.attr('data-from-us', a).attr('data-to-us', b);
    const n = Math.max(2, Math.floor((width - LEFT) / 110));
    axisG.call(axisTop(x).ticks(n).tickFormat(tickFormat(x.ticks(n))));
    drawLanes(a, b);
    span.text(`showing ${duration(b - a)} of ${duration(m.end - m.start)}${drawWakes(a, b)}`);
    drawShade();
    if (range) {
      const [pa, pb] = range.map(x);
      const lo = Math.max(LEFT, pa), hi = Math.min(width - RIGHT, pb);
      strip.call(brusher.move, hi - lo >= 1 ? [lo, hi] : null);
    } else
      strip.call(brusher.move, null);
  }

  function layout() {
    const keep = x.domain();
    width = Math.max(300, holder.clientWidth || 800);
    svg.attr('width', width);
    const ext = [[LEFT, 0], [width - RIGHT, height]];
    x0.range([LEFT, width - RIGHT]);
    clip.attr('x', LEFT).attr('y', 0).attr('width', width - RIGHT - LEFT).attr('height', height);
    bg.attr('x', LEFT).attr('width', width - RIGHT - LEFT);
    zoomer.scaleExtent([1, Math.max(1, (m.end - m.start) / MIN_SPAN_US)])
      .extent(ext).translateExtent(ext);
    brusher.extent([[LEFT, 0], [width - RIGHT, STRIP]]);
    strip.call(brusher);
    plot.call(zoomer);
    api.zoomTo(keep[0], keep[1]);
  }

  // Hover and click: a bar's datum carries its slice (d.run; d.n when
  // runs share its pixel), a wake's is the wake. A slice clicked stays
  // outlined until another is.
  function hit(ev) {
    const c = ev.target.classList;
    if (!c || !(c.contains('sonde-run') || c.contains('sonde-irq') || c.contains('sonde-wake-hit')))
      return null;
    const d = select(ev.target).datum();
    return d.kind === 'wake' ? { run: d } : d;
  }
  plot.on('mousemove', (ev) => {
    const d = hit(ev);
    if (!d) {
      tip.style('display', 'none');
      return;
    }
    const [px, py] = pointer(ev, holder);
    tip.style('display', null).style('left', `${Math.max(0, Math.min(px + 14, width - 280))}px`)
      .style('top', `${py + 16}px`);
    const rows = describe(d.run).map(([k, v]) => `${k}: ${v}`);
    if (d.n > 1)
      rows.push(`(${d.n} runs share this pixel: zoom in)`);
    tip.selectAll('div').data(rows).join('div').text((t) => t);
  }).on('mouseleave', () => tip.style('display', 'none'));
  plot.on('click', (ev) => {
    const d = hit(ev);
    if (!d)
      return;
    selected = d.run;
    draw();
    if (opts.onSelect)
      opts.onSelect(selected);
  });

  const api = {
    zoomTo(a, b) {
      a = Math.max(m.start, a);
      b = Math.min(m.end, Math.max(b, a + MIN_SPAN_US));
      const k = (m.end - m.start) / (b - a);
      const t = zoomIdentity.translate(LEFT - k * x0(a), 0).scale(k);
      plot.call(zoomer.transform, t);
    },
    reset() {
      api.zoomTo(m.start, m.end);
    },
    setRange(r) {
      range = r ? r.slice() : null;
      draw();
      if (opts.onRange)
        opts.onRange(range && range.slice());
    },
    resize: layout,
    // Gone from the holder, for a page that draws another trace there.
    destroy() {
      root.remove();
    },
    colour: (r) => colour(key(r)),
  };
  layout();
  return api;
}
