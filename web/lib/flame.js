// web/lib/flame.js: the flame-graph library both pages draw with, as one
// module of the pieces they use. A page's entry imports it and esbuild
// bundles it in (web/bundle.js); importing it also brings d3-flame-graph's
// stylesheet into the page's bundled CSS.
//   flamegraph()     d3-flame-graph's chart
//   tooltip()        its tooltip (defaultFlamegraphTooltip)
//   colorMapper      its colour mappers (differential, off-CPU, ...)
//   select, selectAll, format   from d3-selection and d3-format
import flamegraph, { tooltip as tooltips, colorMapper } from 'd3-flame-graph';

export { flamegraph, colorMapper };
export { select, selectAll } from 'd3-selection';
export { format } from 'd3-format';
export const tooltip = tooltips.defaultFlamegraphTooltip;
