// LINK: tools/model/trace.c tools/model/model.c uapi/trace_raw.c uapi/profile_raw.c
/* tests/unit/test_model_trace.c: a raw trace's text into the host's trace
 * model (sp_trace_add_raw): the header kept, every event in order, each
 * sample a chain of the samples' profile on the ELF's map, and a bad
 * text refused with its origin and line. */
#include "test.h"
#include "tools/model/trace.h"

#define BID "0123456789abcdef0123456789abcdef01234567"
#define HDR(n) "# sonde trace build-id=" BID " cpus=2 ms=10 events=" n " dropped=1,0\n"

TEST(trace_add_raw_events_and_samples)
{
    const char *t = HDR("5")
        "I 1000 0 1712 32 tick 7\n"
        "W 1400 0 7 burn 8 pong 1\n"
        "S 1900 1 0 <idle> - 8 pong\n"
        "P 2500 1 8 pong ffffffff80104a1c ffffffff80104a5b\n"
        "P 2600 0 7 burn ffffffff80104b00\n";
    struct sp_trace tr;
    char err[256] = "";
    sp_trace_init(&tr);
    CHECK_EQ(sp_trace_add_raw(&tr, t, strlen(t), "host:9000", "host:9000", "k.elf", err,
                              sizeof err), 0);
    CHECK_STR(err, "");
    CHECK_STR(tr.st_hdr.th_build_id, BID);
    CHECK_EQ(tr.st_hdr.th_cpus, 2);
    CHECK_EQ(tr.st_hdr.th_dropped[0], 1);
    CHECK_STR(tr.st_origin, "host:9000");
    CHECK_STR(tr.st_kernel, "host:9000");
    CHECK_EQ(tr.st_nev, 5);
    CHECK_EQ(tr.st_ev[0].te_type, TRAW_IRQ);
    CHECK_EQ(tr.st_ev[0].te_end, 1712);
    CHECK_EQ(tr.st_ev[1].te_pid2, 8);
    CHECK_EQ(tr.st_ev[2].te_type, TRAW_SWITCH);
    /* Not a sample: no chain. */
    CHECK(sp_trace_sample(&tr, 0) == NULL);
    CHECK(sp_trace_sample(&tr, 2) == NULL);
    CHECK(sp_trace_sample(&tr, 5) == NULL);
    const struct sp_chain *c = sp_trace_sample(&tr, 3);
    CHECK(c != NULL);
    CHECK_EQ(c->c_depth, 2);
    CHECK_EQ(c->c_pid, 8);
    CHECK_EQ(c->c_cpu, 1);
    CHECK_STR(c->c_task, "pong");
    CHECK_EQ(c->c_count, 1);
    CHECK_EQ(c->c_input, tr.st_input);
    /* The samples' profile: one input on the ELF's map, a chain each. */
    CHECK_EQ(tr.st_prof.ninputs, 1);
    CHECK_EQ(tr.st_prof.nchains, 2);
    CHECK_EQ(tr.st_prof.inputs[tr.st_input].pi_map, tr.st_map);
    CHECK_STR(tr.st_prof.maps[tr.st_map].pm_path, "k.elf");
    const struct sp_chain *c2 = sp_trace_sample(&tr, 4);
    CHECK(c2 != NULL && c2 != c);
    CHECK_EQ(c2->c_depth, 1);
    sp_trace_free(&tr);
}

TEST(trace_add_raw_empty_window)
{
    struct sp_trace tr;
    char err[256] = "";
    sp_trace_init(&tr);
    CHECK_EQ(sp_trace_add_raw(&tr, HDR("0"), strlen(HDR("0")), "f.raw", "k", "k.elf", err,
                              sizeof err), 0);
    CHECK_EQ(tr.st_nev, 0);
    CHECK_EQ(tr.st_hdr.th_ms, 10);
    CHECK_EQ(tr.st_prof.ninputs, 1);
    sp_trace_free(&tr);
}

TEST(trace_add_raw_refuses_with_origin_and_line)
{
    const char *t = HDR("2") "P 2500 1 8 pong ff\nP 2400 1 8 pong ff\n";
    struct sp_trace tr;
    char err[256] = "";
    sp_trace_init(&tr);
    CHECK_EQ(sp_trace_add_raw(&tr, t, strlen(t), "10.0.0.1:9000", "k", "k.elf", err,
                              sizeof err), -1);
    CHECK_STR(err, "10.0.0.1:9000: line 3: out of time order (before the line above)");
    sp_trace_free(&tr);
}
