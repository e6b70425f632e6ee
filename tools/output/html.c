/* tools/output/html.c: the page around the flame graph's JSON.
 * Host pipeline: prefix sp_. */
#include "tools/output/html.h"
#include "tools/output/flame_json.h"
#include "tools/output/web_assets.h"
#include <string.h>

/* The page may run its own inline scripts and styles and nothing else: no
 * request leaves it, whatever a name in the profile says. */
#define CSP "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'"

static void html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void asset(FILE *f, const char *tag, const struct sp_web_asset *a)
{
    fprintf(f, "<%s>\n", tag);
    fwrite(a->data, 1, a->len, f);
    fprintf(f, "\n</%s>\n", tag);
}

/* Everything up to the JSON, which the caller writes; then page_end. */
static void page_start(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"" CSP "\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"sonde-prof\">\n<title>", f);
    html_text(f, title);
    fputs("</title>\n", f);
    asset(f, "style", &sp_web_flame_css);
    asset(f, "style", &sp_web_flame_page_css);
    fputs("</head>\n<body>\n<noscript>This flame graph is drawn by JavaScript: allow it "
          "for this file.</noscript>\n<div id=\"sonde-page\"></div>\n"
          "<script type=\"application/json\" id=\"sonde-profile\">", f);
}

static int page_end(FILE *f)
{
    fputs("</script>\n", f);
    asset(f, "script", &sp_web_flame_js);
    asset(f, "script", &sp_web_flame_page_js);
    fputs("</body>\n</html>\n", f);
    return ferror(f) ? -1 : 0;
}

/* Two kernels of one name are one kernel (a profile merged from files). */
static bool several_kernels(const struct sp_profile *p)
{
    for (unsigned i = 1; i < p->ninputs; i++)
        if (strcmp(p->inputs[i].pi_kernel, p->inputs[0].pi_kernel) != 0)
            return true;
    return false;
}

int sp_html_write(const struct sp_profile *p, bool per_kernel, const char *title,
                  FILE *f, char *err, size_t errcap)
{
    for (unsigned i = 1; i < p->ninputs; i++) {
        const char *a = sp_fj_view(&p->inputs[0]), *b = sp_fj_view(&p->inputs[i]);
        if (strcmp(a, b) != 0) {
            snprintf(err, errcap, "%s is %s and %s is %s: one flame graph shows one "
                     "kind; make a page of each", p->inputs[0].pi_origin, a,
                     p->inputs[i].pi_origin, b);
            return -1;
        }
    }
    page_start(f, title);
    int rc = sp_fj_write(p, per_kernel || several_kernels(p), title, f);
    if (page_end(f) || rc) {
        snprintf(err, errcap, "write error");
        return -1;
    }
    return 0;
}

int sp_html_write_diff(const struct sp_diff *d, unsigned kind, const char *title, FILE *f)
{
    page_start(f, title);
    int rc = sp_fj_write_diff(d, kind, title, f);
    return page_end(f) || rc ? -1 : 0;
}
