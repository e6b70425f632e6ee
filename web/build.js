// web/build.js: makes sonde-prof's pages, each one self-contained HTML file
// (the Makefile runs it; so does `npm run build`):
//   node web/build.js OUTDIR [PAGE ...]        (every page when none named)
// A page is a folder of web/: PAGE/page.html its template, PAGE/main.js
// the module esbuild bundles into it (web/bundle.js); OUTDIR/PAGE.html
// the page. web/embed.js then carries the pages inside sonde-prof.
import fs from 'node:fs';
import path from 'node:path';
import { WEB, bundle, assemble } from './bundle.js';

// The markers each page leaves for sonde-prof to fill as it writes it.
const PAGES = {
  // `-o FILE.html`: tools/output/html.c writes the title as HTML text
  // and the profile's JSON (tools/output/flame_json.h).
  flame: ['SONDE_TITLE', 'SONDE_PROFILE'],
  // `record --trace -o FILE.html`: html.c writes the title and the
  // trace's Chrome JSON (tools/output/trace_json.h).
  trace: ['SONDE_TITLE', 'SONDE_TRACE'],
  // serve's page at / (tools/serve/page.c): served as it is.
  serve: [],
};

function fail(msg) {
  process.stderr.write('build.js: ' + msg + '\n');
  process.exit(2);
}

const [out, ...names] = process.argv.slice(2);
if (!out)
  fail(`usage: node web/build.js OUTDIR [PAGE ...]; PAGE one of ${Object.keys(PAGES).join(', ')}`);
for (const n of names)
  if (!Object.hasOwn(PAGES, n))
    fail(`${n}: no such page (pages: ${Object.keys(PAGES).join(', ')})`);
fs.mkdirSync(out, { recursive: true });
for (const name of names.length ? names : Object.keys(PAGES)) {
  const dir = path.join(WEB, name);
  let page;
  try {
    const template = fs.readFileSync(path.join(dir, 'page.html'), 'utf8');
    page = assemble(`web/${name}/page.html`, template, await bundle(path.join(dir, 'main.js')),
                    PAGES[name]);
  } catch (e) {
    fail(`${name}: ${e.message}`);
  }
  const file = path.join(out, name + '.html');
  fs.writeFileSync(file + '.tmp', page);
  fs.renameSync(file + '.tmp', file);
}
