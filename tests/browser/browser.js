// tests/browser/browser.js: what the browser tests share. Debian's chromium
// (/usr/bin/chromium, scripts/deps.sh) driven by playwright-core from
// web/node_modules (pinned in web/package-lock.json; no browser is ever
// downloaded), headless, with a fresh profile directory each run and
// every background service off: this machine may have no network, and
// a page under test must need none. openPage() fails a test whose page
// asks for anything but its own URL.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const ROOT = path.resolve(__dirname, '..', '..');
const CHROMIUM = process.env.SONDE_CHROMIUM || '/usr/bin/chromium';
const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

function playwright() {
  return require(path.join(ROOT, 'web', 'node_modules', 'playwright-core'));
}

class Browser {
  async start() {
    if (!fs.existsSync(CHROMIUM))
      throw new Error(`${CHROMIUM} is missing: bash scripts/deps.sh installs Debian's chromium`);
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sonde-chromium.'));
    this.ctx = await playwright().chromium.launchPersistentContext(this.dir, {
      executablePath: CHROMIUM, headless: true, args: ARGS,
      viewport: { width: 1280, height: 800 },
    });
  }

  // A new page; requests for anything but the page itself (allowed: the
  // URL given, data: and about:) are refused and kept in page.refused.
  // With opts.sameOrigin, the page's own server is allowed too (serve's
  // page reads its API).
  async openPage(url, opts = {}) {
    const page = await this.ctx.newPage();
    page.refused = [];
    page.errors = [];
    page.on('pageerror', (e) => page.errors.push(String(e)));
    const origin = opts.sameOrigin && url ? new URL(url).origin + '/' : null;
    await page.route('**/*', (route) => {
      const u = route.request().url();
      if (u === url || (origin && u.startsWith(origin)) || u.startsWith('data:') ||
          u.startsWith('about:'))
        return route.continue();
      page.refused.push(u);
      return route.abort();
    });
    if (url)
      await page.goto(url);
    return page;
  }

  async close() {
    if (this.ctx)
      await this.ctx.close().catch(() => {});
    if (this.dir)
      fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

class Fail extends Error {}

function check(cond, msg) {
  if (!cond)
    throw new Fail(msg);
}

// A screenshot of page p's #sonde-page, the width of the window, as
// build/browser/NAME.png; with SONDE_DOCS_SHOTS=1 also as
// docs/img/NAME.png (what the docs show). Fails unless a PNG was written.
async function screenshot(p, name) {
  const shot = path.join(ROOT, 'build', 'browser', name + '.png');
  fs.mkdirSync(path.dirname(shot), { recursive: true });
  const clip = await p.$eval('#sonde-page', (e) => ({
    x: 0, y: 0, width: document.documentElement.clientWidth,
    height: Math.ceil(e.getBoundingClientRect().bottom + 12),
  }));
  await p.screenshot({ path: shot, clip });
  const png = fs.readFileSync(shot);
  check(png.length > 10000 && png.subarray(1, 4).toString() === 'PNG', `${shot} is no screenshot`);
  if (process.env.SONDE_DOCS_SHOTS === '1') {
    fs.mkdirSync(path.join(ROOT, 'docs', 'img'), { recursive: true });
    fs.copyFileSync(shot, path.join(ROOT, 'docs', 'img', name + '.png'));
  }
}

module.exports = { Browser, Fail, check, screenshot, ROOT };
