/* tools/output/web_assets.h: sonde-prof's web pages, carried inside the
 * program so that a page needs no network and no file beside it. The
 * Makefile builds them from web/: web/build.js bundles each page's ES
 * modules with esbuild (d3-flame-graph and its d3 modules, pinned in
 * web/package-lock.json) and inlines the bundle into the page's template,
 * one whole HTML file each; web/embed.js turns them into build/web/assets.c.
 * A page holds no comment but the markers of what sonde-prof fills in as
 * it writes the page, each exactly once (web/build.js checks both).
 *
 * Host pipeline: prefix sp_. */
#pragma once
#include <stddef.h>

struct sp_web_asset {
    const char *name;           /* the NAME it was embedded under */
    const char *data;           /* len bytes of text, then a NUL */
    size_t len;
};

/* The page of -o FILE.html (tools/output/html.c; web/flame/): the title,
 * as HTML text, goes in place of <!--SONDE_TITLE-->, the profile's JSON
 * (tools/output/flame_json.h) in place of <!--SONDE_PROFILE-->. */
extern const struct sp_web_asset sp_web_flame_html;
/* The page of record --trace -o FILE.html (tools/output/html.c;
 * web/trace/): the title, as HTML text, in place of <!--SONDE_TITLE-->,
 * the trace's JSON (tools/output/trace_json.h) in place of
 * <!--SONDE_TRACE-->. */
extern const struct sp_web_asset sp_web_trace_html;
/* serve's page (tools/serve/page.c; web/serve/), served as it is. */
extern const struct sp_web_asset sp_web_serve_html;
