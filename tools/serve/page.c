/* tools/serve/page.c: the page (tools/serve/page.h), as web/build.js made
 * it: the bundle of web/serve/ already inlined, nothing left to fill.
 * Serve layer: prefix sv_. */
#include "tools/serve/page.h"
#include "tools/output/web_assets.h"

const char *sv_page_html(size_t *len)
{
    *len = sp_web_serve_html.len;
    return sp_web_serve_html.data;
}
