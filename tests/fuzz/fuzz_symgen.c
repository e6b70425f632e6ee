// LINK: tools/symgen/table.c
/* tests/fuzz/fuzz_symgen.c: symgen's reading of `nm -n -S` output
 * (tools/symgen/table.c), which the build feeds it on every link.
 *
 * Invariants: the finished table is strictly ascending by address, holds
 * only text symbols with non-empty names that have no newline in them,
 * and every size is the nm size or the gap to the next symbol; the
 * assembler it emits is printable ASCII, tabs and newlines only, whatever
 * bytes the names hold (they are escaped); and the
 * emitted assembler is a function of the set of symbols: reading every
 * line twice over gives the same bytes (the three-pass link depends on
 * that determinism). */
#include <string.h>
#include "fuzz.h"
#include "tools/symgen/table.h"

static char *table(const uint8_t *d, size_t n, int times, struct sg_table *t)
{
    char *in = malloc(n * times + 1);
    FUZZ_CHECK(in);
    for (int i = 0; i < times; i++)
        memcpy(in + n * i, d, n);
    FILE *f = fmemopen(in, n * times, "r");
    FUZZ_CHECK(f || n == 0);
    memset(t, 0, sizeof *t);
    if (f) {
        symgen_read(f, t);
        fclose(f);
    }
    free(in);
    symgen_finish(t);
    char *out = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&out, &len);
    FUZZ_CHECK(o);
    symgen_emit(t, o);
    fclose(o);
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    /* Lines end in '\n'; a last line without one would merge with the
     * copy's first line. */
    if (n == 0 || d[n - 1] != '\n' || n > 1 << 16)
        return 0;
    struct sg_table t, t2;
    char *once = table(d, n, 1, &t);
    for (size_t i = 0; i < t.n; i++) {
        const struct sg_sym *s = &t.syms[i];
        FUZZ_CHECK(strchr("TtWw", s->type) && s->type);
        FUZZ_CHECK(s->name[0] && !strchr(s->name, '\n'));
        FUZZ_CHECK(i == 0 || t.syms[i - 1].addr < s->addr);
        if (!s->has_size && i + 1 < t.n) {
            uint64_t gap = t.syms[i + 1].addr - s->addr;
            FUZZ_CHECK(s->size == (gap > UINT32_MAX ? UINT32_MAX : gap));
        }
    }
    for (const char *c = once; *c; c++)
        FUZZ_CHECK((*c >= 0x20 && *c < 0x7f) || *c == '\n' || *c == '\t');
    char *twice = table(d, n, 2, &t2);
    FUZZ_CHECK(t.n == t2.n && strcmp(once, twice) == 0);
    symgen_free(&t);
    symgen_free(&t2);
    free(once);
    free(twice);
    return 0;
}
