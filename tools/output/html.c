/* tools/output/html.c: the page around the flame graph's JSON: the page
 * web/build.js made (tools/output/web_assets.h) with the title and the
 * JSON written into it. Host pipeline: prefix sp_. */
#include "tools/output/html.h"
#include "tools/output/flame_json.h"
#include "tools/output/web_assets.h"
#include <string.h>

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

/* Writes the page from *at up to marker and moves *at past the marker.
 * web/build.js leaves each marker in the page exactly once, in order (and
 * makes no page without them); were one missing, the rest of the page
 * would be written whole and nothing put in the marker's place. */
static void page_upto(FILE *f, const char **at, const char *marker)
{
    const char *m = strstr(*at, marker);
    if (!m)
        m = *at + strlen(*at);
    fwrite(*at, 1, (size_t)(m - *at), f);
    *at = *m ? m + strlen(marker) : m;
}

/* Everything of page up to its JSON's marker, which the caller writes;
 * then page_end with what this returns. */
static const char *page_start(FILE *f, const struct sp_web_asset *page, const char *title,
                              const char *json_marker)
{
    const char *at = page->data;
    page_upto(f, &at, "<!--SONDE_TITLE-->");
    html_text(f, title);
    page_upto(f, &at, json_marker);
    return at;
}

static int page_end(FILE *f, const char *rest)
{
    fputs(rest, f);
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
    const char *rest = page_start(f, &sp_web_flame_html, title, "<!--SONDE_PROFILE-->");
    int rc = sp_fj_write(p, per_kernel || several_kernels(p), title, f);
    if (page_end(f, rest) || rc) {
        snprintf(err, errcap, "write error");
        return -1;
    }
    return 0;
}

int sp_html_write_diff(const struct sp_diff *d, unsigned kind, const char *title, FILE *f)
{
    const char *rest = page_start(f, &sp_web_flame_html, title, "<!--SONDE_PROFILE-->");
    int rc = sp_fj_write_diff(d, kind, title, f);
    return page_end(f, rest) || rc ? -1 : 0;
}

/* The JSON is copied with "<", ">" and "&" as \u escapes. In valid JSON
 * they occur only inside strings, where the escape means the same
 * character, so the document reads the same; and whatever its writer
 * did, no name in it can end the <script> element ("</script") or open a
 * comment ("<!--") in it. */
int sp_html_write_trace(FILE *f, const char *title, const char *json)
{
    const char *rest = page_start(f, &sp_web_trace_html, title, "<!--SONDE_TRACE-->");
    for (const char *s = json; *s; s++) {
        switch (*s) {
        case '<': fputs("\\u003C", f); break;
        case '>': fputs("\\u003E", f); break;
        case '&': fputs("\\u0026", f); break;
        default: fputc(*s, f);
        }
    }
    return page_end(f, rest);
}
