// LINK: kernel/buildid.c
/* Host tests of kernel/buildid.c's note parser: a well-formed note list,
 * the id behind another note, and hostile lengths (the parser reads the
 * kernel's own image, but it is the same code a tool would run on a
 * file it did not build). */
#include "test.h"
#include "kernel/buildid.h"

/* Appends one note (header, name padded, desc padded) at buf + *n. */
static void put_note(uint8_t *buf, size_t *n, uint32_t namesz, uint32_t descsz,
                     uint32_t type, const char *name, const uint8_t *desc)
{
    uint32_t h[3] = { namesz, descsz, type };
    memcpy(buf + *n, h, 12);
    *n += 12;
    memset(buf + *n, 0, (namesz + 3) & ~3u);
    memcpy(buf + *n, name, namesz);
    *n += (namesz + 3) & ~3u;
    memset(buf + *n, 0, (descsz + 3) & ~3u);
    memcpy(buf + *n, desc, descsz);
    *n += (descsz + 3) & ~3u;
}

static const uint8_t sha1[20] = {
    0xdf, 0x33, 0x89, 0xfb, 0x6d, 0x86, 0xbd, 0x69, 0x41, 0x8a,
    0xe7, 0x58, 0xd0, 0x3f, 0x62, 0xee, 0x80, 0xba, 0xce, 0x41,
};
#define SHA1_HEX "df3389fb6d86bd69418ae758d03f62ee80bace41"

TEST(buildid_one_note)
{
    uint8_t buf[64];
    size_t n = 0;
    char hex[129];
    put_note(buf, &n, 4, 20, 3, "GNU", sha1);
    CHECK_EQ(n, 36);
    CHECK_EQ(build_id_parse(buf, n, hex, sizeof hex), 20);
    CHECK_STR(hex, SHA1_HEX);
}

TEST(buildid_behind_other_notes)
{
    uint8_t buf[128];
    size_t n = 0;
    char hex[129];
    const uint8_t xen[5] = { 1, 2, 3, 4, 5 };
    put_note(buf, &n, 4, 5, 18, "Xen", xen);         /* another owner */
    put_note(buf, &n, 4, 4, 1, "GNU", xen);          /* GNU, not type 3 */
    put_note(buf, &n, 4, 20, 3, "GNU", sha1);
    CHECK_EQ(build_id_parse(buf, n, hex, sizeof hex), 20);
    CHECK_STR(hex, SHA1_HEX);
}

TEST(buildid_absent_or_wrong_owner)
{
    uint8_t buf[64];
    size_t n = 0;
    char hex[129] = "stale";
    put_note(buf, &n, 4, 20, 3, "GNX", sha1);
    CHECK_EQ(build_id_parse(buf, n, hex, sizeof hex), -1);
    CHECK_STR(hex, "");
    CHECK_EQ(build_id_parse(buf, 0, hex, sizeof hex), -1);
}

/* Lengths that point past the list must be refused before they are used:
 * a parser that trusted descsz would read (and print) past the note. */
TEST(buildid_hostile_lengths)
{
    uint8_t buf[64];
    size_t n = 0;
    char hex[129];
    put_note(buf, &n, 4, 20, 3, "GNU", sha1);
    CHECK_EQ(build_id_parse(buf, n - 1, hex, sizeof hex), -1);  /* desc cut */
    CHECK_EQ(build_id_parse(buf, 11, hex, sizeof hex), -1);     /* header cut */
    uint32_t huge[3] = { 0xffffffffu, 0xffffffffu, 3 };
    memcpy(buf, huge, 12);
    CHECK_EQ(build_id_parse(buf, n, hex, sizeof hex), -1);
}

/* An id that does not fit the caller's buffer is refused, not cut. */
TEST(buildid_small_buffer)
{
    uint8_t buf[64];
    size_t n = 0;
    char hex[40];
    put_note(buf, &n, 4, 20, 3, "GNU", sha1);
    CHECK_EQ(build_id_parse(buf, n, hex, sizeof hex), -1);
    CHECK_STR(hex, "");
    char exact[41];
    CHECK_EQ(build_id_parse(buf, n, exact, sizeof exact), 20);
    CHECK_STR(exact, SHA1_HEX);
}
