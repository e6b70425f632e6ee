// web/flame-lib.js: the flame-graph library every sonde-prof page uses,
// bundled by esbuild (Makefile) into build/web/flame.js with its stylesheet
// beside it in build/web/flame.css. A page inlines both and then finds the
// library under one global, so that any page (the -o FILE.html file, the
// live view of `serve`) uses the same build without a module loader:
//   sondeFlame.flamegraph()     d3-flame-graph's chart
//   sondeFlame.tooltip()        its tooltip (defaultFlamegraphTooltip)
//   sondeFlame.colorMapper      its colour mappers (differential, off-CPU, ...)
//   sondeFlame.select, .format  d3-selection's select, d3-format's format
import flamegraph, { tooltip, colorMapper } from 'd3-flame-graph';
import { select, selectAll } from 'd3-selection';
import { format } from 'd3-format';

globalThis.sondeFlame = {
  flamegraph,
  tooltip: tooltip.defaultFlamegraphTooltip,
  colorMapper,
  select,
  selectAll,
  format,
};
