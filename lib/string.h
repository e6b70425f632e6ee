/* lib/string.h: the few C string and memory routines the kernel uses.
 *
 * In the kernel these are lib/string.c (there is no libc). Host unit tests
 * compile portable code with -DSONDE_HOST_TEST and get the C library's
 * versions instead: lib/string.c is never linked into them. strlcpy, which
 * not every C library has, is written once, below, for both.
 *
 * There is deliberately no strcpy: use strlcpy, which takes the size of
 * the destination and always terminates it. */
#pragma once
#include <stddef.h>

#ifdef SONDE_HOST_TEST
#include <string.h>
#else
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);
#endif

/* Copies at most size-1 bytes of src and terminates dst (if size > 0).
 * Returns strlen(src): a result >= size means dst was truncated.
 * Written here once for both builds, under a name of its own: glibc
 * before 2.38 has no strlcpy, and a newer one declares its own. */
static inline size_t lib_strlcpy(char *dst, const char *src, size_t size)
{
    size_t n = strlen(src);
    if (size) {
        size_t c = n < size - 1 ? n : size - 1;
        memcpy(dst, src, c);
        dst[c] = '\0';
    }
    return n;
}
#define strlcpy lib_strlcpy
