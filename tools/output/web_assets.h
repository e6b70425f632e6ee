/* tools/output/web_assets.h: the files sonde-prof's web pages are made
 * of, carried inside the program so that a page needs no network and no
 * file beside it. They are built from web/ by the Makefile: the library
 * (d3-flame-graph and its d3 modules, pinned in web/package-lock.json) is
 * bundled by esbuild into build/web/flame.js and build/web/flame.css, and
 * web/embed.js turns every asset into build/web/assets.c, one symbol each;
 * an asset holds no "</script", "</style" or "<!--" (embed.js refuses it),
 * so it can be inlined as it is.
 *
 * flame_js defines one global, sondeFlame (web/flame-lib.js says what it
 * holds): a page inlines flame_css and flame_js, then its own script.
 *
 * Host pipeline: prefix sp_. */
#pragma once
#include <stddef.h>

struct sp_web_asset {
    const char *name;           /* the NAME it was embedded under */
    const char *data;           /* len bytes of text, then a NUL */
    size_t len;
};

extern const struct sp_web_asset sp_web_flame_js;     /* the library */
extern const struct sp_web_asset sp_web_flame_css;    /* its stylesheet */
/* The page of -o FILE.html (tools/output/html.c): web/flame-page.js, .css. */
extern const struct sp_web_asset sp_web_flame_page_js;
extern const struct sp_web_asset sp_web_flame_page_css;
/* serve's page (tools/serve/page.c): web/serve.html and web/serve.js. */
extern const struct sp_web_asset sp_web_serve_html;
extern const struct sp_web_asset sp_web_serve_js;
