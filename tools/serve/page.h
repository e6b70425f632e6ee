/* tools/serve/page.h: the page `sonde-prof serve` serves at /: web/serve/'s
 * template with its modules and the flame-graph library bundled and
 * inlined (tools/output/web_assets.h), so that it needs nothing but
 * serve's API.
 * Serve layer: prefix sv_. */
#pragma once
#include <stddef.h>

/* The page, made once; *len its length. */
const char *sv_page_html(size_t *len);
