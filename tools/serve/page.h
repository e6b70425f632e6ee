/* tools/serve/page.h: the page `sonde-prof serve` serves at /: its own
 * HTML and script (web/serve.html, web/serve.js) with the flame-graph
 * library's bundle (tools/output/web_assets.h) inlined, so that it
 * needs nothing but serve's API.
 * Serve layer: prefix sv_. */
#pragma once
#include <stddef.h>

/* The page, made once; *len its length. */
const char *sv_page_html(size_t *len);
