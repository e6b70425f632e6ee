/* tools/serve/api_trace.c: serve's /api/trace (api.h): a kernel's trace
 * over a range, as the page's timeline reads it. */
#include "tools/serve/api.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/output/trace_json.h"
#include "tools/serve/query.h"

/* The request's kernel and range, checked: 0, or -1 with the 4xx in out. */
static int trace_args(const struct sv_state *st, const struct sv_arg *args, unsigned n,
                      unsigned *kernel, uint64_t *from, uint64_t *to, struct sv_reply *out)
{
    const char *name = NULL, *f = NULL, *t = NULL;
    for (unsigned i = 0; i < n; i++) {
        const char *k = args[i].key;
        const char **slot = strcmp(k, "kernel") == 0 ? &name : strcmp(k, "from") == 0 ? &f
                          : strcmp(k, "to") == 0 ? &t : NULL;
        if (!slot) {
            sv_api_errorf(out, 400, "/api/trace: unknown argument %.40s (known: kernel, from, "
                          "to)", k);
            return -1;
        }
        *slot = args[i].value;
    }
    if (!st->tr) {
        sv_api_error(out, 404, "no trace here: serve keeps one with --kind trace");
        return -1;
    }
    if (!name) {
        sv_api_error(out, 400, "/api/trace needs kernel=NAME (one of /api/kernels' names)");
        return -1;
    }
    for (*kernel = 0; *kernel < st->n && strcmp(st->k[*kernel].name, name) != 0; (*kernel)++)
        ;
    if (*kernel == st->n) {
        sv_api_errorf(out, 404, "kernel=%.80s: no such kernel (see /api/kernels)", name);
        return -1;
    }
    struct sv_trace_span sp;
    sv_trace_span(st->tr, *kernel, &sp);
    uint64_t now = sv_hist_now(st->h);
    const char *bad = f && sv_api_parse_u64(f, now, from) ? "from"
                    : t && sv_api_parse_u64(t, now, to) ? "to" : NULL;
    if (bad) {
        sv_api_errorf(out, 400, "%s=%.40s out of range (0-%" PRIu64 " ms since the Unix epoch)",
                    bad, bad[0] == 'f' ? f : t, now);
        return -1;
    }
    /* Without them: the last SV_API_TRACE_DEFAULT_MS it holds, or up to to. */
    if (!t)
        *to = f && *from > sp.to_ms ? *from : sp.to_ms;
    if (!f)
        *from = *to >= SV_API_TRACE_DEFAULT_MS ? *to - SV_API_TRACE_DEFAULT_MS + 1 : 0;
    if (*from > *to) {
        sv_api_errorf(out, 400, "from=%" PRIu64 " is after to=%" PRIu64, *from, *to);
        return -1;
    }
    return 0;
}

void sv_api_trace(const struct sv_state *st, const struct sv_arg *args, unsigned nargs,
                  struct sv_reply *out)
{
    memset(out, 0, sizeof *out);
    unsigned k;
    uint64_t from, to;
    sv_lock_take(st->lock);
    if (trace_args(st, args, nargs, &k, &from, &to, out)) {
        sv_lock_give(st->lock);
        return;
    }
    /* Counted first, under the lock but without copying: a range too
     * large is refused before it costs serve its memory and the
     * collector its lock. */
    size_t n = sv_trace_count(st->tr, k, from, to);
    if (n > SV_API_TRACE_EVENTS) {
        sv_lock_give(st->lock);
        sv_api_errorf(out, 413, "%" PRIu64 " to %" PRIu64 " holds %zu events, more than %u: ask a "
                      "shorter range (from, to)", from, to, n, SV_API_TRACE_EVENTS);
        return;
    }
    struct sp_trace tr;
    sp_trace_init(&tr);
    sv_query_maps(st, &tr.st_prof);
    const struct sp_stream *s = st->k[k].stream;
    int rc = s ? sv_trace_select(st->tr, k, from, to, s, st->k[k].map, st->k[k].name, &tr) : -1;
    sv_lock_give(st->lock);
    if (rc) {
        sp_trace_free(&tr);
        sv_api_errorf(out, 409, "kernel=%.80s: no META has come from it yet (no build id)",
                    st->k[k].name);
        return;
    }
    sv_query_name(st, &tr.st_prof);
    char *body = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&body, &len);
    int wrc = f ? sp_trace_json_write(&tr, f) : -1;
    if (f && fclose(f) != 0)
        wrc = -1;
    if (wrc) {
        free(body);
        sp_trace_free(&tr);
        sv_api_error(out, 500, "the trace could not be written");
        return;
    }
    sp_trace_free(&tr);
    out->status = 200;
    out->type = "application/json";
    out->body = body;
    out->len = len;
}
