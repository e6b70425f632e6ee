// LINK: kernel/irqname.c lib/printf.c
/* tests/unit/test_irqname.c: the interrupt vectors' names
 * (kernel/irqname.c): set at registration, read back whole, joined where
 * a line is shared, and every refusal (a name too long or not one word,
 * a vector out of range, a vector whose share is full). */
#include "test.h"
#include "kernel/irqname.h"
#include <string.h>

static const char *got(unsigned vec)
{
    static char buf[IRQNAME_TEXT];
    return irqname_get(vec, buf, sizeof buf) ? buf : NULL;
}

TEST(irqname_set_and_read_back)
{
    irqname_reset();
    CHECK(got(48) == NULL);
    CHECK_EQ(irqname_set(48, "virtio-net"), 0);
    CHECK(got(48) && strcmp(got(48), "virtio-net") == 0);
    CHECK(got(49) == NULL);                   /* its neighbour untouched */
    CHECK_EQ(irqname_set(IRQNAME_VECTORS - 1, "uart"), 0);
    CHECK(got(IRQNAME_VECTORS - 1) && strcmp(got(IRQNAME_VECTORS - 1), "uart") == 0);
}

TEST(irqname_registered_twice)
{
    irqname_reset();
    /* The same device again: one name, not "virtio-net+virtio-net". */
    CHECK_EQ(irqname_set(48, "virtio-net"), 0);
    CHECK_EQ(irqname_set(48, "virtio-net"), 0);
    CHECK(got(48) && strcmp(got(48), "virtio-net") == 0);
    /* A second device on a shared line: both, in registration order. */
    CHECK_EQ(irqname_set(48, "virtio-rng"), 0);
    CHECK(got(48) && strcmp(got(48), "virtio-net+virtio-rng") == 0);
    CHECK_EQ(irqname_set(48, "virtio-rng"), 0);
    /* A third: no room, refused; the two stay. */
    CHECK_EQ(irqname_set(48, "uart"), -1);
    CHECK(got(48) && strcmp(got(48), "virtio-net+virtio-rng") == 0);
}

TEST(irqname_unknown_vector)
{
    irqname_reset();
    char buf[IRQNAME_TEXT];
    strcpy(buf, "kept");
    CHECK(!irqname_get(33, buf, sizeof buf));
    CHECK(strcmp(buf, "kept") == 0);          /* untouched */
    CHECK(!irqname_get(IRQNAME_VECTORS, buf, sizeof buf));
    CHECK_EQ(irqname_set(IRQNAME_VECTORS, "virtio-net"), -1);
    CHECK_EQ(irqname_set(~0u, "virtio-net"), -1);
    /* The reports' words: the number where there is no name. */
    irqname_text(33, "device", buf, sizeof buf);
    CHECK(strcmp(buf, "device 33") == 0);
    CHECK_EQ(irqname_set(33, "virtio-rng"), 0);
    irqname_text(33, "device", buf, sizeof buf);
    CHECK(strcmp(buf, "virtio-rng") == 0);
}

TEST(irqname_bad_names)
{
    irqname_reset();
    CHECK_EQ(irqname_set(50, "virtio-net-12345"), -1);   /* 16: one too many */
    CHECK(got(50) == NULL);
    CHECK_EQ(irqname_set(50, "virtio-net-1234"), 0);     /* 15: the most */
    CHECK(got(50) && strcmp(got(50), "virtio-net-1234") == 0);
    CHECK_EQ(irqname_set(51, ""), -1);
    CHECK_EQ(irqname_set(51, NULL), -1);
    CHECK_EQ(irqname_set(51, "virtio net"), -1);         /* two words */
    CHECK_EQ(irqname_set(51, "Virtio"), -1);
    CHECK_EQ(irqname_set(51, "a;b"), -1);
    CHECK(got(51) == NULL);
    /* The longest pair fits the text's buffer; a smaller one is cut, still
     * terminated. */
    CHECK_EQ(irqname_set(50, "abcdefghijklmno"), 0);
    CHECK(got(50) && strcmp(got(50), "virtio-net-1234+abcdefghijklmno") == 0);
    char small[8];
    CHECK(irqname_get(50, small, sizeof small));
    CHECK(strcmp(small, "virtio-") == 0);
}
