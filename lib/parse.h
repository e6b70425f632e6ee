/* lib/parse.h: strict number parsing and word splitting for the shell and
 * the kernel command line. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decimal, or hex with 0x. The whole string must be a number that fits:
 * no sign, no trailing bytes, no overflow. */
bool parse_u64(const char *s, uint64_t *out);
/* parse_u64 and lo <= value <= hi. */
bool parse_range(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
/* Dotted quad "a.b.c.d" to a host-order u32. */
bool parse_ipv4(const char *s, uint32_t *out);

/* A hex digit's value (either case), or -1. */
static inline int parse_hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Split line in place on spaces/tabs into at most max words; returns the
 * count, or -1 if there were more than max words. */
int split_words(char *line, char **argv, int max);

/* The kernel command line: key=value words. */
#define CMDLINE_MAX_PARAMS 32
struct cmdline {
    char buf[512];                 /* private copy, split in place */
    int n;
    struct { const char *key, *val; } p[CMDLINE_MAX_PARAMS];
    int dropped;                   /* words beyond CMDLINE_MAX_PARAMS or buf */
};
void cmdline_parse(struct cmdline *cl, const char *text);
/* NULL if absent; "" for a bare word without '='. */
const char *cmdline_get(const struct cmdline *cl, const char *key);
/* Overwrite with 'x', in place, the value of every key=VALUE word of a raw
 * command line (a secret must not outlive its parsing). Returns how many
 * words had that key. */
int cmdline_wipe(char *text, const char *key);
/* How many words of a raw command line have this key: key=VALUE or the
 * bare word key, as cmdline_parse would store them. */
int cmdline_count(const char *text, const char *key);
/* Copy src into dst (size bytes): all of it if it fits, else the whole
 * words that fit, never part of one; terminated unless size is 0. Returns
 * how many words were left out. */
int cmdline_copy(char *dst, size_t size, const char *src);
