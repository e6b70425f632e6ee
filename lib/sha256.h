/* lib/sha256.h: SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the
 * UDP shell's request and reply tags and the profile stream's datagram
 * tags (docs/udpshell.md, "Authentication").
 *
 * Portable and freestanding (nothing but <stddef.h> and <stdint.h>): the
 * kernel, the host tools and the host unit tests link this one file. The
 * compression of whole blocks goes through one function that the kernel
 * may replace at boot with the CPU's own instructions (hal/sha256.h,
 * kernel/sha256_boot.c); everything else always runs the C here. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN   32
#define SHA256_BLOCK 64

struct sha256 {
    uint32_t h[8];
    uint64_t bytes;              /* message length so far */
    uint8_t buf[SHA256_BLOCK];   /* a partial block */
    size_t fill;
};

/* A block function: nblocks consecutive 64-byte blocks at p (any
 * alignment) compressed into the state h, in order (FIPS 180-4 6.2.2). */
typedef void sha256_blocks_fn(uint32_t h[8], const uint8_t *p, size_t nblocks);

/* The portable C block function. */
void sha256_blocks_c(uint32_t h[8], const uint8_t *p, size_t nblocks);
/* Whole blocks through the block function in use: sha256_blocks_c until
 * sha256_blocks_install names another. */
void sha256_blocks(uint32_t h[8], const uint8_t *p, size_t nblocks);
/* Make fn the block function every hash from now on uses. Once, at boot,
 * before any other CPU or task runs: the pointer is then read without
 * ordering by every CPU, and never changes under a hash in progress. */
void sha256_blocks_install(sha256_blocks_fn *fn);
/* The block function in use (the boot line and lscpu name it). */
sha256_blocks_fn *sha256_blocks_installed(void);
/* The digest of data computed with fn as the block function, whatever is
 * installed: the boot check compares a candidate with sha256_blocks_c. */
void sha256_with(sha256_blocks_fn *fn, const void *data, size_t n, uint8_t out[SHA256_LEN]);

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t n);
void sha256_final(struct sha256 *s, uint8_t out[SHA256_LEN]);
void sha256(const void *data, size_t n, uint8_t out[SHA256_LEN]);

/* HMAC-SHA256, incrementally: init with the key (any length), update with
 * the message in as many pieces as it comes, final for the tag. */
struct hmac_sha256 {
    struct sha256 inner;
    uint8_t okey[SHA256_BLOCK];  /* key ^ opad, for the outer hash */
};
void hmac_sha256_init(struct hmac_sha256 *m, const void *key, size_t keylen);
void hmac_sha256_update(struct hmac_sha256 *m, const void *data, size_t n);
void hmac_sha256_final(struct hmac_sha256 *m, uint8_t out[SHA256_LEN]);
void hmac_sha256(const void *key, size_t keylen, const void *data, size_t n,
                 uint8_t out[SHA256_LEN]);

/* Equal n bytes, in time that depends on n only: a tag check must not
 * tell a forger how many leading bytes of its guess were right. */
bool ct_equal(const void *a, const void *b, size_t n);
/* Overwrite n bytes with zeros in a way the compiler may not drop as a
 * dead store (a key on its way out of scope). */
void secure_zero(void *p, size_t n);
