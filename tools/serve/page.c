/* tools/serve/page.c: the page, put together (tools/serve/page.h).
 * Serve layer: prefix sv_. */
#define _GNU_SOURCE
#include "tools/serve/page.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/output/web_assets.h"

/* Writes a script or stylesheet into the page. "</" of "</script" or
 * "</style" would end the element early; inside a script it only occurs in
 * strings, regular expressions and comments, where "<\/" means the same. */
static void put_inline(FILE *f, const char *open, const struct sp_web_asset *a,
                       const char *close)
{
    fputs(open, f);
    for (size_t i = 0; i < a->len; i++) {
        if (a->data[i] == '<' && i + 1 < a->len && a->data[i + 1] == '/' &&
            (strncasecmp(a->data + i + 2, "script", 6) == 0 ||
             strncasecmp(a->data + i + 2, "style", 5) == 0)) {
            fputs("<\\/", f);
            i++;
            continue;
        }
        fputc(a->data[i], f);
    }
    fputs(close, f);
}

static const struct {
    const char *marker, *open, *close;
    const struct sp_web_asset *asset;
} parts[] = {
    { "<!--SONDE_FLAME_CSS-->", "<style>\n", "</style>", &sp_web_flame_css },
    { "<!--SONDE_FLAME_JS-->", "<script>\n", "</script>", &sp_web_flame_js },
    { "<!--SONDE_SERVE_JS-->", "<script>\n", "</script>", &sp_web_serve_js },
};

const char *sv_page_html(size_t *len)
{
    static char *page;
    static size_t n;
    if (page) {
        *len = n;
        return page;
    }
    FILE *f = open_memstream(&page, &n);
    if (!f) {
        fprintf(stderr, "sonde-prof: out of memory\n");
        exit(2);
    }
    const char *at = sp_web_serve_html.data;
    for (;;) {
        /* The next marker in the page, whichever it is. */
        const char *next = NULL;
        unsigned which = 0;
        for (unsigned i = 0; i < sizeof parts / sizeof *parts; i++) {
            const char *m = strstr(at, parts[i].marker);
            if (m && (!next || m < next)) {
                next = m;
                which = i;
            }
        }
        if (!next) {
            fputs(at, f);
            break;
        }
        fwrite(at, 1, (size_t)(next - at), f);
        put_inline(f, parts[which].open, parts[which].asset, parts[which].close);
        at = next + strlen(parts[which].marker);
    }
    fclose(f);
    *len = n;
    return page;
}
