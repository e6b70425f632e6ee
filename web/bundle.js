// web/bundle.js: how a page of sonde-prof is made, for web/build.js and for
// the browser tests that bundle modules of their own:
//   bundle(entry)      esbuild bundles a module with all it imports (the
//                      d3 packages from web/node_modules too) into one
//                      minified script and one stylesheet;
//   assemble(...)      puts them into a page's template in place of its
//                      <!--SONDE_STYLE--> and <!--SONDE_SCRIPT--> markers.
// Both pages (web/PAGE/page.html, entry web/PAGE/main.js) are made so.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

export const WEB = path.dirname(fileURLToPath(import.meta.url));

// Text that would end the element a script or stylesheet is inlined in,
// or change how the browser reads it (the HTML standard's restrictions on
// the contents of script elements). esbuild writes "</script" in a string
// as "<\/script"; a bundle that still holds one of these is refused.
const UNSAFE = /<\/(script|style)|<!--/i;

// entry: a module's path, or { contents, resolveDir } for a module given
// as text (its imports resolved from resolveDir). Returns { js, css },
// each ending in a newline; css is '' when nothing imports a stylesheet.
export async function bundle(entry) {
  const input = typeof entry === 'string'
    ? { entryPoints: [entry] }
    : { stdin: { contents: entry.contents, resolveDir: entry.resolveDir, sourcefile: 'entry.js' } };
  const r = await esbuild.build({
    ...input,
    bundle: true,
    minify: true,
    format: 'iife',
    target: 'es2020',
    write: false,
    outfile: path.join(WEB, 'page.js'),     // names the outputs; nothing is written
    logLevel: 'warning',
  });
  const out = { js: '', css: '' };
  for (const f of r.outputFiles) {
    const kind = path.extname(f.path).slice(1);
    if (kind !== 'js' && kind !== 'css')
      throw new Error(`esbuild wrote ${f.path}, neither a script nor a stylesheet`);
    out[kind] = f.text;
  }
  for (const [kind, text] of Object.entries(out)) {
    const bad = UNSAFE.exec(text);
    if (bad)
      throw new Error(`the bundled ${kind} holds "${bad[0]}", which would break the element ` +
                      'it is inlined in');
  }
  return out;
}

// The page of template with { js, css } inlined. A comment of the template
// is dropped (the page carries none); a marker named in holes is left as
// it is, for sonde-prof to fill when it writes the page. Each marker, the
// two of the bundle and those of holes, must be there exactly once.
export function assemble(name, template, { js, css }, holes = []) {
  const fill = {
    SONDE_STYLE: `<style>\n${css}</style>`,
    SONDE_SCRIPT: `<script>\n${js}</script>`,
  };
  const seen = new Map();
  const page = template.replace(/<!--([\s\S]*?)-->(\n?)/g, (all, inner, nl) => {
    if (!/^SONDE_/.test(inner))
      return '';
    if (!(inner in fill) && !holes.includes(inner))
      throw new Error(`${name}: <!--${inner}-->: no such marker (want SONDE_STYLE, ` +
                      `SONDE_SCRIPT${holes.map((h) => ', ' + h).join('')})`);
    seen.set(inner, (seen.get(inner) || 0) + 1);
    return (fill[inner] || all.slice(0, all.length - nl.length)) + nl;
  });
  for (const m of [...Object.keys(fill), ...holes])
    if (seen.get(m) !== 1)
      throw new Error(`${name}: <!--${m}--> is there ${seen.get(m) || 0} times, want once`);
  return page;
}
