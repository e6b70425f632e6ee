// web/flame/format.js: how the page of `sonde-prof -o FILE.html` writes
// numbers and names (web/flame/main.js), apart from the page so that a
// test can import it.

// A string made safe to put inside markup (the tooltip's).
export function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => '&#' + c.charCodeAt(0) + ';');
}

// v in the largest of steps ([divisor, name], largest first) it reaches.
function human(v, steps) {
  for (const [div, name] of steps)
    if (v >= div)
      return (v / div).toFixed(v / div >= 100 ? 0 : 1) + ' ' + name;
  return v + ' ' + steps[steps.length - 1][1];
}

// The writer of a weight in the profile's unit (flame_json.h: "unit"):
// time off the CPU (ns), bytes, or samples.
export function weigher(unit) {
  if (unit === 'ns')
    return (v) => human(v, [[1e9, 's'], [1e6, 'ms'], [1e3, 'µs'], [1, 'ns']]);
  if (unit === 'bytes')
    return (v) => human(v, [[1 << 30, 'GiB'], [1 << 20, 'MiB'], [1 << 10, 'KiB'], [1, 'B']]);
  return (v) => v + (v === 1 ? ' sample' : ' samples');
}

// The writer of a weight as a share of total, one decimal.
export function percent(total) {
  return (v) => (total ? (100 * v / total).toFixed(1) + '%' : '0.0%');
}
