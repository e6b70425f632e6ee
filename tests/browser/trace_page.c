/* tests/browser/trace_page.c: the page of a trace's JSON written by
 * sp_html_write_trace, the writer record --trace -o FILE.html calls, so
 * that the trace page's browser test (trace_html_test.js) opens what
 * sonde-prof writes, made from a trace the test made itself.
 *   trace_page TITLE IN.json OUT.html */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/output/html.h"

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: trace_page TITLE IN.json OUT.html\n");
        return 2;
    }
    FILE *in = fopen(argv[2], "r");
    if (!in) {
        fprintf(stderr, "trace_page: %s: %s\n", argv[2], strerror(errno));
        return 1;
    }
    char *json = NULL;
    size_t cap = 0, len = 0, n;
    do {
        if (len + 65536 + 1 > cap && !(json = realloc(json, cap = 2 * cap + 65536 + 1)))
            return 1;
        n = fread(json + len, 1, cap - len - 1, in);
        len += n;
    } while (n > 0);
    json[len] = '\0';
    fclose(in);
    FILE *out = fopen(argv[3], "w");
    if (!out || sp_html_write_trace(out, argv[1], json) != 0 || fclose(out) != 0) {
        fprintf(stderr, "trace_page: %s: cannot write\n", argv[3]);
        return 1;
    }
    free(json);
    return 0;
}
