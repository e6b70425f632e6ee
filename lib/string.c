/* lib/string.c: memory and string routines for the kernel (no libc).
 *
 * GCC emits calls to memcpy, memset, memmove and memcmp on its own (struct
 * copies, large initialisers) even under -ffreestanding, so these must
 * exist with exactly these names and C semantics.
 *
 * Kernel only: host unit tests use the C library's (see lib/string.h). */
#include <stdint.h>
#include "lib/string.h"

/* GCC recognises a byte-copy or byte-fill loop and replaces it with a call
 * to memcpy/memset, which inside memcpy/memset is infinite recursion.
 * This attribute turns that pattern matching off for the loops below. */
#define NO_LIBCALL __attribute__((optimize("no-tree-loop-distribute-patterns")))

/* x86-64: rep movsb / rep stosb. On every CPU with ERMSB (Ivy Bridge on,
 * Zen 3 on) these are as fast as a hand-tuned loop for all but tiny sizes,
 * and they are the shortest correct code. The direction flag is clear on
 * entry to C code (SysV ABI, and our trap entry clears it). */

NO_LIBCALL void *memcpy(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__)
    void *ret = dst;
    __asm__ volatile("rep movsb"
                     : "+D"(dst), "+S"(src), "+c"(n)
                     :
                     : "memory");
    return ret;
#else
    /* Four words at a time whatever the alignment, bytes for the edges.
     * arm64 allows unaligned loads and stores to Normal memory while
     * SCTLR_EL1.A is clear, as boot.S leaves it, and no C runs before the
     * MMU is on (Device memory, all of it before then, would fault). Only
     * the stores are aligned. Copying words only when source and
     * destination shared their alignment left a UDP payload (at offset
     * 42 in its frame) and a virtio slot (after a 10 or 12-byte header)
     * to the byte loop: ~4 instructions a byte, twice per datagram sent.
     * The 8-byte __builtin_memcpy calls are single loads and stores, never
     * calls back into this function. */
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (n >= 16) {
        for (; (uintptr_t)d & 7; n--)
            *d++ = *s++;
        for (; n >= 32; n -= 32, d += 32, s += 32) {
            uint64_t a, b, c, e;
            __builtin_memcpy(&a, s, 8);
            __builtin_memcpy(&b, s + 8, 8);
            __builtin_memcpy(&c, s + 16, 8);
            __builtin_memcpy(&e, s + 24, 8);
            __builtin_memcpy(d, &a, 8);
            __builtin_memcpy(d + 8, &b, 8);
            __builtin_memcpy(d + 16, &c, 8);
            __builtin_memcpy(d + 24, &e, 8);
        }
        for (; n >= 8; n -= 8, d += 8, s += 8) {
            uint64_t a;
            __builtin_memcpy(&a, s, 8);
            __builtin_memcpy(d, &a, 8);
        }
    }
    while (n--)
        *d++ = *s++;
    return dst;
#endif
}

NO_LIBCALL void *memset(void *dst, int c, size_t n)
{
#if defined(__x86_64__)
    void *ret = dst;
    __asm__ volatile("rep stosb"
                     : "+D"(dst), "+c"(n)
                     : "a"(c)
                     : "memory");
    return ret;
#else
    /* Eight words a turn (four paired stores on arm64) once aligned: a
     * page is 64 turns. Pages are zeroed by the page allocator and task
     * stacks painted by stack_register, so a 16 KiB stack costs ~1,400
     * instructions here where a word a turn cost ~6,000. */
    unsigned char *d = dst;
    uint64_t w = 0x0101010101010101ull * (unsigned char)c;
    for (; n && ((uintptr_t)d & 7); n--)
        *d++ = (unsigned char)c;
    for (; n >= 64; n -= 64, d += 64) {
        uint64_t *q = (uint64_t *)d;
        q[0] = w; q[1] = w; q[2] = w; q[3] = w;
        q[4] = w; q[5] = w; q[6] = w; q[7] = w;
    }
    for (; n >= 8; n -= 8, d += 8)
        *(uint64_t *)d = w;
    while (n--)
        *d++ = (unsigned char)c;
    return dst;
#endif
}

/* Overlap-safe: copy backwards when dst lies inside [src, src+n). */
NO_LIBCALL void *memmove(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (d == s || n == 0)
        return dst;
    if ((uintptr_t)d - (uintptr_t)s >= n)   /* no harmful overlap */
        return memcpy(dst, src, n);
    while (n--)
        d[n] = s[n];
    return dst;
}

NO_LIBCALL int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (; n; n--, x++, y++)
        if (*x != *y)
            return *x - *y;
    return 0;
}

NO_LIBCALL size_t strlen(const char *s)
{
    const char *p = s;
    while (*p)
        p++;
    return (size_t)(p - s);
}

NO_LIBCALL size_t strnlen(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n])
        n++;
    return n;
}

/* Bytes compare as unsigned char, as C requires. */
int strcmp(const char *a, const char *b)
{
    const unsigned char *x = (const unsigned char *)a;
    const unsigned char *y = (const unsigned char *)b;
    while (*x && *x == *y) {
        x++;
        y++;
    }
    return *x - *y;
}

int strncmp(const char *a, const char *b, size_t n)
{
    const unsigned char *x = (const unsigned char *)a;
    const unsigned char *y = (const unsigned char *)b;
    for (; n; n--, x++, y++) {
        if (*x != *y)
            return *x - *y;
        if (!*x)
            return 0;
    }
    return 0;
}

/* strchr(s, 0) finds the terminator, as C requires. */
char *strchr(const char *s, int c)
{
    for (;; s++) {
        if (*s == (char)c)
            return (char *)s;
        if (!*s)
            return NULL;
    }
}
