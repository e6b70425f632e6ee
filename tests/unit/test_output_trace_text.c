// LINK: tools/output/trace_text.c tools/model/trace.c tools/model/model.c uapi/trace_raw.c uapi/profile_raw.c
/* tests/unit/test_output_trace_text.c: the trace's .txt (record --trace):
 * the shell's timehist rows with each run's wait, delay and length as
 * the kernel's fold computes them, a wake inside an interrupt named, and
 * each CPU's summary (busy plus idle adding up to the window, slices,
 * the longest tasks, the functions sampled). */
#include "test.h"
#include "tools/output/trace_text.h"
#include <stdlib.h>

#define BID "0123456789abcdef0123456789abcdef01234567"

static char *text_of(struct sp_trace *tr, const char *raw)
{
    char err[256] = "";
    sp_trace_init(tr);
    CHECK_EQ(sp_trace_add_raw(tr, raw, strlen(raw), "k:9000", "k:9000", "k.elf", err,
                              sizeof err), 0);
    CHECK_STR(err, "");
    /* The ELF's names, as sp_elf_symbolize would give them. */
    for (size_t i = 0; i < tr->st_prof.nchains; i++)
        tr->st_prof.chains[i].c_locs[0]->pl_sym =
            tr->st_prof.chains[i].c_locs[0]->pl_addr == 0x10 ? "burn_spin" : "idle_loop";
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK_EQ(sp_trace_text_write(tr, f), 0);
    fclose(f);
    return buf;
}

static int has(const char *text, const char *want)
{
    if (strstr(text, want))
        return 1;
    printf("  no \"%s\" in:\n%s", want, text);
    return 0;
}

/* cpu 0: 7 runs from the start, leaves for idle at 100 us; 9 on cpu 1
 * wakes it at 300 us, it runs at 350 us and sleeps at 500 us; the
 * window is 1 ms. */
TEST(trace_text_rows_and_summary)
{
    struct sp_trace tr;
    char *t = text_of(&tr, "# sonde trace build-id=" BID " cpus=2 ms=1 events=9 dropped=0,4\n"
        "P 50000 0 7 burn 10\n"
        "S 100000 0 7 burn waitq:q 0 <idle>\n"
        "I 200000 1 205000 240 tick 9\n"
        "W 300000 1 9 pong 7 burn 0\n"
        "S 350000 0 0 <idle> - 7 burn\n"
        "I 400000 0 410000 240 tick 7\n"
        "I 420000 0 450000 41 device virtio-net 7\n"
        "P 430000 0 7 burn 10\n"
        "S 500000 0 7 burn sleep 0 <idle>\n");
    CHECK(has(t, "trace: 1.000 ms, 2 cpus, kernel k:9000, build-id " BID "\n"));
    CHECK(has(t, "   time (ms)    cpu  task[pid]               wait (ms) delay (ms)   "
                 "run (ms)   left => next\n"));
    CHECK(has(t, "       0.100 [0000]  burn[7]                     0.000      0.000"
                 "      0.100+  waitq q => <idle>\n"));
    CHECK(has(t, "       0.350 [0000]  <idle>                      0.000      0.000"
                 "      0.250   - => burn[7]\n"));
    /* out at 100, woken at 300 (wait 200 us), in at 350 (delay 50 us) */
    CHECK(has(t, "       0.500 [0000]  burn[7]                     0.200      0.050"
                 "      0.150   sleep => <idle>\n"));
    CHECK(has(t, "3 switches shown; per cpu (+: ran from the window's start):\n"));
    /* busy 250 us + idle 750 us = the window */
    CHECK(has(t, "cpu 0: busy 25.0% (0.250 ms), idle 0.750 ms, interrupts 4.0% (0.040 ms), "
                 "switches 3, wakes 0, samples 2, dropped 0\n"
                 "  slices: tick 1 (10.000-10.000 us); device 1 (30.000-30.000 us)\n"
                 "  longest: burn[7] 0.250 ms (2 runs, max delay 0.050 ms)\n"
                 "  hottest: burn_spin 2\n"));
    CHECK(has(t, "cpu 1: busy 100.0% (1.000 ms), idle 0.000 ms, interrupts 0.5% (0.005 ms), "
                 "switches 0, wakes 1, samples 0, dropped 4\n"
                 "  slices: tick 1 (5.000-5.000 us)\n"
                 "  longest: pong[9] 1.000 ms (1 runs, max delay 0.000 ms)\n"
                 "  hottest: none\n"));
    free(t);
    sp_trace_free(&tr);
}

/* A run begun by a wake inside the network interrupt says so, with the
 * task it interrupted; the tick's wakes (a sleep's end) do not. A CPU
 * with no event says so. */
TEST(trace_text_woken_by_irq)
{
    struct sp_trace tr;
    char *t = text_of(&tr, "# sonde trace build-id=" BID " cpus=3 ms=2 events=7 dropped=0,0,0\n"
        "S 100000 1 12 virtio-rx waitq:virtio-rx 0 <idle>\n"
        "W 200000 0 8 burn 12 virtio-rx 1 irq=41:device:virtio-net\n"
        "S 250000 1 0 <idle> - 12 virtio-rx\n"
        "S 400000 1 12 virtio-rx waitq:virtio-rx 0 <idle>\n"
        "W 500000 1 0 <idle> 12 virtio-rx 1 irq=240:tick\n"
        "S 600000 1 0 <idle> - 12 virtio-rx\n"
        "S 700000 1 12 virtio-rx sleep 0 <idle>\n");
    CHECK(has(t, "  waitq virtio-rx => <idle> (woken by irq virtio-net on CPU 0, during burn[8])\n"));
    CHECK(has(t, "       0.700 [0001]  virtio-rx[12]               0.100      0.100"
                 "      0.100   sleep => <idle>\n"));
    CHECK(!strstr(t, "woken by irq tick"));
    CHECK(has(t, "cpu 2: nothing recorded in the window, dropped 0\n"));
    CHECK(has(t, "5 switches shown"));
    free(t);
    sp_trace_free(&tr);
}
