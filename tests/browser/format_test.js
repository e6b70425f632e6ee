// tests/browser/format_test.js: web/flame/format.js imported as the module
// it is, in node (no page): how the page of -o FILE.html writes weights in
// each unit, shares of the total, and names put into the tooltip's markup.
'use strict';
const path = require('path');
const { pathToFileURL } = require('url');
const { check } = require('./browser.js');

function load(env) {
  return import(pathToFileURL(path.join(env.root, 'web', 'flame', 'format.js')).href);
}

module.exports = {
  tests: [
    ['format_weights_in_each_unit', async (env) => {
      const { weigher } = await load(env);
      const cases = [
        ['samples', 1, '1 sample'], ['samples', 37, '37 samples'],
        ['ns', 999, '999 ns'], ['ns', 1500000, '1.5 ms'], ['ns', 146000000, '146 ms'],
        ['ns', 2.5e9, '2.5 s'], ['bytes', 512, '512 B'], ['bytes', 1536, '1.5 KiB'],
        ['bytes', 3 * 2 ** 30, '3.0 GiB'],
      ];
      for (const [unit, v, want] of cases) {
        const got = weigher(unit)(v);
        check(got === want, `weigher('${unit}')(${v}) is "${got}", want "${want}"`);
      }
    }],
    ['format_shares_and_escapes', async (env) => {
      const { percent, esc } = await load(env);
      check(percent(200)(97) === '48.5%', `97 of 200 is ${percent(200)(97)}, want 48.5%`);
      check(percent(0)(5) === '0.0%', `a share of nothing is ${percent(0)(5)}, want 0.0%`);
      const e = esc(`</script><b a="x">'&`);
      check(e === '&#60;/script&#62;&#60;b a=&#34;x&#34;&#62;&#39;&#38;', `esc gives ${e}`);
    }],
  ],
};
