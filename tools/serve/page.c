/* tools/serve/page.c: the page, put together (tools/serve/page.h).
 * Serve layer: prefix sv_. */
#include "tools/serve/page.h"

const char *sv_page_html(size_t *len)
{
    *len = 0;
    return NULL;
}
