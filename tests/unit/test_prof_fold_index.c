// LINK: kernel/prof/sample.c kernel/prof/trace.c kernel/prof/trace_hooks.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/stream_encode.c kernel/prof/report.c kernel/prof/lockreport.c kernel/prof/export.c kernel/prof/fold.c kernel/prof/fold_order.c kernel/prof/quantile.c kernel/prof/fold_index.c kernel/cmd/profile.c kernel/cmd/profile_say.c kernel/cmd/profile_stream.c uapi/stream_ctl.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c kernel/symtab.c tests/unit/fake_profiler.c kernel/stacks.c kernel/stacktrace.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c lib/printf.c lib/parse.c uapi/profile_raw.c kernel/cmd/profile_heap.c kernel/prof/heapview.c mm/heapprof.c tests/unit/fake_heap_table.c kernel/irqname.c
/* Host test of the fold's storage (kernel/prof/fold_index.c): items in
 * chunks that double keep their place as they grow, across every chunk
 * boundary; a chunk or an index that cannot be allocated changes nothing;
 * the index finds every item again after it doubles; nothing is left
 * allocated after the free. */
#include "test.h"
#include "fake_hal.h"
#include "fake_profiler.h"

#include "kernel/prof/fold_index.h"

struct item {
    uint64_t hash;              /* first, as the index's growth reads it */
    uint32_t value;
};

static uint64_t hash_of(uint32_t v)
{
    return (v + 1) * 0x9e3779b97f4a7c15ull;
}

/* The item holding v, appended if new; NULL: no memory. */
static struct item *find_or_add(struct prof_items *t, struct prof_index *ix, uint32_t v)
{
    uint64_t h = hash_of(v);
    uint32_t mask = 2 * ix->fx_cap - 1, *slot = NULL;
    for (uint32_t i = prof_index_first(ix, h);; i = (i + 1) & mask) {
        uint32_t e = ix->fx_slot[i];
        if (!e) {
            slot = &ix->fx_slot[i];
            break;
        }
        struct item *it = prof_item(t, e - 1);
        if (it->value == v)
            return it;
    }
    slot = prof_index_room(ix, t, h, slot);
    struct item *it = slot ? prof_items_push(t) : NULL;
    if (!it)
        return NULL;
    it->hash = h;
    it->value = v;
    *slot = ++t->fi_n;
    return it;
}

TEST(items_keep_their_place_across_chunks)
{
    reset();
    long before = live_allocs;
    struct prof_items t = { .fi_size = sizeof(struct item) };
    struct item *first[1000];
    for (uint32_t i = 0; i < 1000; i++) {
        struct item *it = prof_items_push(&t);
        CHECK(it != NULL);
        if (!it)
            return;
        it->hash = hash_of(i);
        it->value = i;
        first[i] = it;
        t.fi_n++;
    }
    /* Chunks of 64, 128, 256, 512: 960 items, then a fifth chunk. */
    CHECK(t.fi_chunk[4] != NULL && t.fi_chunk[5] == NULL);
    CHECK((char *)prof_item(&t, 63) == t.fi_chunk[0] + 63 * sizeof(struct item));
    CHECK((char *)prof_item(&t, 64) == t.fi_chunk[1]);
    CHECK((char *)prof_item(&t, 191) == t.fi_chunk[1] + 127 * sizeof(struct item));
    CHECK((char *)prof_item(&t, 192) == t.fi_chunk[2]);
    CHECK((char *)prof_item(&t, 960) == t.fi_chunk[4]);
    for (uint32_t i = 0; i < 1000; i++) {
        struct item *it = prof_item(&t, i);
        CHECK(it == first[i]);          /* never moved by a later chunk */
        CHECK_EQ(it->value, i);
    }
    prof_items_free(&t);
    CHECK_EQ(live_allocs, before);
}

TEST(a_chunk_that_cannot_be_allocated_changes_nothing)
{
    reset();
    long before = live_allocs;
    struct prof_items t = { .fi_size = sizeof(struct item) };
    for (uint32_t i = 0; i < 64; i++) {
        CHECK(prof_items_push(&t) != NULL);
        t.fi_n++;
    }
    kmalloc_fail = 1;
    CHECK(prof_items_push(&t) == NULL);
    CHECK_EQ(t.fi_n, 64);
    CHECK(t.fi_chunk[1] == NULL);
    CHECK((char *)prof_items_push(&t) == t.fi_chunk[1]);   /* and the next try works */
    prof_items_free(&t);
    CHECK_EQ(live_allocs, before);
}

TEST(index_finds_every_item_after_it_doubles)
{
    reset();
    long before = live_allocs;
    struct prof_items t = { .fi_size = sizeof(struct item) };
    struct prof_index ix = { 0 };
    CHECK(prof_index_init(&ix, 64));
    for (uint32_t v = 0; v < 3000; v += 3)
        CHECK(find_or_add(&t, &ix, v) != NULL);
    CHECK_EQ(t.fi_n, 1000);
    CHECK_EQ(ix.fx_cap, 1024);          /* 64 doubled four times */
    for (uint32_t v = 0; v < 3000; v++) {
        struct item *it = find_or_add(&t, &ix, v);
        CHECK(it != NULL && it->value == v);
    }
    CHECK_EQ(t.fi_n, 3000);             /* only the 2000 missing were added */
    prof_index_free(&ix);
    prof_items_free(&t);
    CHECK_EQ(live_allocs, before);
}

TEST(an_index_that_cannot_grow_changes_nothing)
{
    reset();
    long before = live_allocs;
    struct prof_items t = { .fi_size = sizeof(struct item) };
    struct prof_index ix = { 0 };
    CHECK(prof_index_init(&ix, 64));
    for (uint32_t v = 0; v < 64; v++)
        CHECK(find_or_add(&t, &ix, v) != NULL);
    uint32_t *slots = ix.fx_slot;
    kzalloc_fail = 1;
    CHECK(find_or_add(&t, &ix, 64) == NULL);
    CHECK_EQ(t.fi_n, 64);
    CHECK(ix.fx_slot == slots && ix.fx_cap == 64);
    for (uint32_t v = 0; v < 64; v++) {
        struct item *it = find_or_add(&t, &ix, v);
        CHECK(it != NULL && it->value == v);
    }
    CHECK(find_or_add(&t, &ix, 64) != NULL);    /* memory back: it grows */
    CHECK_EQ(ix.fx_cap, 128);
    prof_index_free(&ix);
    prof_items_free(&t);
    CHECK_EQ(live_allocs, before);
}
