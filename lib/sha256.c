/* lib/sha256.c: SHA-256 as FIPS 180-4 section 6.2 specifies it, and HMAC
 * over it as RFC 2104 does. The C block function is written for clarity
 * over speed (~3,500 arm64 instructions a block); a kernel whose CPU has
 * SHA-256 instructions installs its own at boot (sha256_blocks_install).
 *
 * Freestanding: nothing but memcpy and memset (GCC's builtins), which
 * every freestanding GCC target must provide (the kernel's lib/string.c),
 * so that the kernel, the host tools and the unit tests can all link this
 * same file. */
#include "lib/sha256.h"

/* FIPS 180-4 4.2.2: the first 32 bits of the fractional parts of the cube
 * roots of the first 64 primes. */
static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, unsigned n) { return x >> n | x << (32 - n); }

/* 6.2.2: one 512-bit block into the hash state. */
static void block_c(uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
               (uint32_t)p[4 * t + 2] << 8 | p[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = ror(w[t - 15], 7) ^ ror(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = ror(w[t - 2], 17) ^ ror(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t S1 = ror(e, 6) ^ ror(e, 11) ^ ror(e, 25);
        uint32_t ch = (e & f) ^ (~e & g);
        uint32_t t1 = k + S1 + ch + K[t] + w[t];
        uint32_t S0 = ror(a, 2) ^ ror(a, 13) ^ ror(a, 22);
        uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
        uint32_t t2 = S0 + maj;
        k = g; g = f; f = e; e = d + t1;
        d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d;
    h[4] += e; h[5] += f; h[6] += g; h[7] += k;
}

void sha256_blocks_c(uint32_t h[8], const uint8_t *p, size_t nblocks)
{
    for (; nblocks > 0; nblocks--, p += SHA256_BLOCK)
        block_c(h, p);
}

/* Set once at boot before anything else hashes (sha256_blocks_install),
 * so a plain read is enough. */
static sha256_blocks_fn *blocks_fn = sha256_blocks_c;

void sha256_blocks_install(sha256_blocks_fn *fn) { blocks_fn = fn ? fn : sha256_blocks_c; }
sha256_blocks_fn *sha256_blocks_installed(void) { return blocks_fn; }
void sha256_blocks(uint32_t h[8], const uint8_t *p, size_t nblocks) { blocks_fn(h, p, nblocks); }

void sha256_init(struct sha256 *s)
{
    /* 5.3.3: the fractional parts of the square roots of the first 8 primes. */
    static const uint32_t H0[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
    for (int i = 0; i < 8; i++)
        s->h[i] = H0[i];
    s->bytes = 0;
    s->fill = 0;
}

/* Top up a partial block first; then every whole block of the input in
 * one call, straight from the input (the block function's loop, not this
 * one, runs per block: one call per datagram); the tail into buf. */
static void update_with(sha256_blocks_fn *fn, struct sha256 *s, const uint8_t *p, size_t n)
{
    s->bytes += n;
    if (n == 0)                          /* (p may then be NULL) */
        return;
    if (s->fill > 0) {
        size_t take = SHA256_BLOCK - s->fill < n ? SHA256_BLOCK - s->fill : n;
        __builtin_memcpy(s->buf + s->fill, p, take);
        s->fill += take;
        p += take;
        n -= take;
        if (s->fill < SHA256_BLOCK)
            return;
        fn(s->h, s->buf, 1);
        s->fill = 0;
    }
    size_t whole = n / SHA256_BLOCK;
    if (whole > 0) {
        fn(s->h, p, whole);
        p += whole * SHA256_BLOCK;
        n -= whole * SHA256_BLOCK;
    }
    __builtin_memcpy(s->buf, p, n);      /* fill is 0 here */
    s->fill = n;
}

void sha256_update(struct sha256 *s, const void *data, size_t n)
{
    update_with(blocks_fn, s, data, n);
}

static void final_with(sha256_blocks_fn *fn, struct sha256 *s, uint8_t out[SHA256_LEN])
{
    /* 5.1.1: a 1 bit, zeros up to 56 mod 64 bytes, the length in bits. */
    uint64_t bits = s->bytes * 8;
    s->buf[s->fill++] = 0x80;
    if (s->fill > 56) {
        __builtin_memset(s->buf + s->fill, 0, SHA256_BLOCK - s->fill);
        fn(s->h, s->buf, 1);
        s->fill = 0;
    }
    __builtin_memset(s->buf + s->fill, 0, 56 - s->fill);
    for (int i = 0; i < 8; i++)
        s->buf[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
    fn(s->h, s->buf, 1);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(s->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)s->h[i];
    }
    secure_zero(s, sizeof *s);           /* the state of a keyed hash is key material */
}

void sha256_final(struct sha256 *s, uint8_t out[SHA256_LEN])
{
    final_with(blocks_fn, s, out);
}

void sha256_with(sha256_blocks_fn *fn, const void *data, size_t n, uint8_t out[SHA256_LEN])
{
    struct sha256 s;
    sha256_init(&s);
    update_with(fn, &s, data, n);
    final_with(fn, &s, out);
}

void sha256(const void *data, size_t n, uint8_t out[SHA256_LEN])
{
    struct sha256 s;
    sha256_init(&s);
    sha256_update(&s, data, n);
    sha256_final(&s, out);
}

/* RFC 2104 section 2: H(K ^ opad, H(K ^ ipad, text)), a key longer than
 * the block hashed first, a shorter one padded with zeros. */
void hmac_sha256_init(struct hmac_sha256 *m, const void *key, size_t keylen)
{
    uint8_t k[SHA256_BLOCK] = { 0 }, ikey[SHA256_BLOCK];
    if (keylen > SHA256_BLOCK) {
        sha256(key, keylen, k);
    } else {
        for (size_t i = 0; i < keylen; i++)
            k[i] = ((const uint8_t *)key)[i];
    }
    for (int i = 0; i < SHA256_BLOCK; i++) {
        ikey[i] = k[i] ^ 0x36;
        m->okey[i] = k[i] ^ 0x5c;
    }
    sha256_init(&m->inner);
    sha256_update(&m->inner, ikey, sizeof ikey);
    secure_zero(k, sizeof k);
    secure_zero(ikey, sizeof ikey);
}

void hmac_sha256_update(struct hmac_sha256 *m, const void *data, size_t n)
{
    sha256_update(&m->inner, data, n);
}

void hmac_sha256_final(struct hmac_sha256 *m, uint8_t out[SHA256_LEN])
{
    uint8_t ih[SHA256_LEN];
    struct sha256 o;
    sha256_final(&m->inner, ih);
    sha256_init(&o);
    sha256_update(&o, m->okey, sizeof m->okey);
    sha256_update(&o, ih, sizeof ih);
    sha256_final(&o, out);
    secure_zero(m, sizeof *m);
    secure_zero(ih, sizeof ih);
}

void hmac_sha256(const void *key, size_t keylen, const void *data, size_t n,
                 uint8_t out[SHA256_LEN])
{
    struct hmac_sha256 m;
    hmac_sha256_init(&m, key, keylen);
    hmac_sha256_update(&m, data, n);
    hmac_sha256_final(&m, out);
}

bool ct_equal(const void *a, const void *b, size_t n)
{
    /* OR of every difference: no early exit, no data-dependent branch. */
    const volatile uint8_t *x = a, *y = b;
    uint8_t d = 0;
    for (size_t i = 0; i < n; i++)
        d |= x[i] ^ y[i];
    return d == 0;
}

/* Words where the pointer allows: a hash's state is 100-200 bytes, and
 * a byte at a time cost the stream's tag ~1,500 instructions a datagram. */
typedef uint64_t __attribute__((may_alias)) sha256_word;

void secure_zero(void *p, size_t n)
{
    volatile uint8_t *v = p;     /* volatile stores are never elided */
    for (; n > 0 && ((uintptr_t)v & 7); n--)
        *v++ = 0;
    for (; n >= 8; n -= 8, v += 8)
        *(volatile sha256_word *)(uintptr_t)v = 0;
    for (; n > 0; n--)
        *v++ = 0;
}
