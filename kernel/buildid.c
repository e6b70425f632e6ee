/* kernel/buildid.c: find the GNU build-id note and print it as hex.
 *
 * An ELF note is a header of three 32-bit words (namesz, descsz, type),
 * then the name and then the descriptor, each padded to 4 bytes. The
 * build id is type 3 (NT_GNU_BUILD_ID) with the name "GNU\0". */
#include "kernel/buildid.h"
#include "kernel/once.h"
#include "lib/string.h"

#define NT_GNU_BUILD_ID 3

static size_t align4(size_t n) { return (n + 3) & ~(size_t)3; }

int build_id_parse(const void *note, size_t len, char *hex, size_t cap)
{
    static const char digits[] = "0123456789abcdef";
    const uint8_t *p = note, *end = p + len;
    if (cap)
        hex[0] = 0;
    while ((size_t)(end - p) >= 12) {
        uint32_t w[3];
        memcpy(w, p, sizeof w);
        size_t name = align4(w[0]), desc = align4(w[1]);
        p += 12;
        /* The sums cannot wrap: both are at most 2^32 + 3. */
        if (name + desc > (size_t)(end - p))
            return -1;
        if (w[2] == NT_GNU_BUILD_ID && w[0] == 4 && memcmp(p, "GNU", 4) == 0) {
            const uint8_t *id = p + name;
            if (w[1] == 0 || w[1] > BUILD_ID_MAX || 2 * (size_t)w[1] + 1 > cap)
                return -1;
            for (uint32_t i = 0; i < w[1]; i++) {
                hex[2 * i] = digits[id[i] >> 4];
                hex[2 * i + 1] = digits[id[i] & 15];
            }
            hex[2 * w[1]] = 0;
            return (int)w[1];
        }
        p += name + desc;
    }
    return -1;
}

#ifndef SONDE_HOST_TEST
extern const char __build_id_note[], __build_id_note_end[];   /* linker.ld */

static char build_id_hex[2 * BUILD_ID_MAX + 1];
static int build_id_state;                /* kernel/once.h */

static void build_id_read(void)
{
    build_id_parse(__build_id_note, (size_t)(__build_id_note_end - __build_id_note),
                   build_id_hex, sizeof build_id_hex);
}

const char *build_id(void)
{
    once(&build_id_state, build_id_read);
    return build_id_hex;
}
#endif
