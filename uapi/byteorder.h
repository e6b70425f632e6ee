/* uapi/byteorder.h: reading and writing big-endian (network order) fields
 * at any alignment, for every wire format in the tree.
 *
 * A field inside a datagram sits wherever the format puts it, and both
 * the kernel (x86-64, arm64) and the host tools build this same code, so
 * it may not assume an alignment or a host byte order: bytes, or a
 * __builtin_memcpy (alignment-free) of a value swapped only where the
 * host is little-endian. Freestanding: nothing but <stdint.h>. */
#pragma once
#include <stdint.h>

static inline uint16_t get_be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t get_be64(const uint8_t *p)
{
    return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}

static inline void put_be16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);  p[3] = (uint8_t)v;
}
/* One swap and one store: compilers merge put_be32's four byte stores
 * into a store, but not put_be64's eight, which cost 20 instructions a
 * frame in the profile stream's encoder. __builtin_memcpy of 8 bytes is a
 * single store at any alignment, in the kernel too (-ffreestanding would
 * make plain memcpy a call). */
static inline void put_be64(uint8_t *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    __builtin_memcpy(p, &v, sizeof v);
}
