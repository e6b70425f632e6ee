// LINK: kernel/prof/sample.c kernel/prof/trace.c kernel/prof/trace_hooks.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/stream_encode.c kernel/prof/report.c kernel/prof/lockreport.c kernel/prof/export.c kernel/prof/fold.c kernel/prof/fold_order.c kernel/prof/quantile.c kernel/prof/fold_index.c kernel/cmd/profile.c kernel/cmd/profile_say.c kernel/cmd/profile_stream.c uapi/stream_ctl.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c kernel/symtab.c tests/unit/fake_profiler.c kernel/stacks.c kernel/stacktrace.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c lib/printf.c lib/parse.c uapi/profile_raw.c kernel/cmd/profile_heap.c kernel/prof/heapview.c mm/heapprof.c tests/unit/fake_heap_table.c kernel/irqname.c
/* tests/unit/test_cmd_profile_stream.c: the stream commands' answers
 * (kernel/cmd/profile_stream.c) lead with their control line
 * (uapi/stream_ctl.h), parsed here with the collector's parser: what
 * each op and result says, the stream's id only to its destination, the
 * counts and the end's reason, and the text for people after it. */
#include "test.h"
#include "fake_hal.h"
#include "fake_profiler.h"
#include "stream_fixture.h"
#include "kernel/cmd/profile.h"
#include "kernel/prof/stream.h"
#include <stdlib.h>

/* The last answer's control line, which must be its first line. */
static struct sctl_line ctl(void)
{
    struct sctl_line l;
    const char *t = got();
    CHECK(strncmp(t, "stream v=1 ", 11) == 0);
    CHECK_EQ(sctl_parse(t, strlen(t), &l), 0);
    return l;
}

#define CHECK_LINE(l, op, res, st)                                         \
    do {                                                                   \
        CHECK_EQ((l).sl_op, op);                                           \
        CHECK_EQ((l).sl_result, res);                                      \
        CHECK_EQ((l).sl_state, st);                                        \
    } while (0)

TEST(every_stream_answer_leads_with_its_control_line)
{
    reset();
    struct sctl_line l;
    /* Nothing since boot. */
    stream_from(5555);
    CHECK_EQ(run_cmd("profile status"), 0);
    l = ctl();
    CHECK_LINE(l, SCTL_OP_STATUS, SCTL_OK, SCTL_ST_NONE);
    CHECK_EQ(l.sl_have, 0);
    CHECK_STR(said(), "profile: no stream since boot\n");
    CHECK_EQ(run_cmd("profile stop"), 1);
    l = ctl();
    CHECK_LINE(l, SCTL_OP_STOP, SCTL_NONE, SCTL_ST_NONE);
    CHECK_STR(said(), "profile: no stream running\n");
    CHECK_EQ(run_cmd("profile keepalive 0x1"), 1);
    l = ctl();
    CHECK_LINE(l, SCTL_OP_KEEPALIVE, SCTL_NONE, SCTL_ST_NONE);
    /* Refusals before anything starts: invalid, or not over the UDP shell. */
    CHECK_EQ(run_cmd("profile stream 0"), 1);
    l = ctl();
    CHECK_LINE(l, SCTL_OP_START, SCTL_INVALID, SCTL_ST_NONE);
    CHECK_STR(said(), "profile: port 0 out of range (1-65535)\n");
    CHECK_EQ(run_cmd("profile keepalive zz"), 1);
    CHECK_LINE(ctl(), SCTL_OP_KEEPALIVE, SCTL_INVALID, SCTL_ST_NONE);
    CHECK_EQ(run_cmd("profile status now"), 1);
    CHECK_LINE(ctl(), SCTL_OP_STATUS, SCTL_INVALID, SCTL_ST_NONE);
    CHECK_STR(said(), "profile: status takes no arguments\n");
    fake_requester = false;
    CHECK_EQ(run_cmd("profile stream 5555"), 1);
    CHECK_LINE(ctl(), SCTL_OP_START, SCTL_FAILED, SCTL_ST_NONE);

    /* A start from the destination names its id; from elsewhere not. */
    stream_from(5555);
    CHECK_EQ(run_cmd("profile wall stream 5555 2000 all"), 0);
    l = ctl();
    CHECK_LINE(l, SCTL_OP_START, SCTL_OK, SCTL_ST_STREAMING);
    CHECK(l.sl_have & SCTL_HAVE_ID);
    uint32_t id = l.sl_id;
    CHECK(id != 0);
    CHECK_EQ(l.sl_to_ip, 0x0a000202);
    CHECK_EQ(l.sl_to_port, 5555);
    CHECK_EQ(l.sl_kind, SCTL_KIND_WALL);
    CHECK_EQ(l.sl_cpus, 4);
    CHECK_EQ(l.sl_len, 2000);
    CHECK_EQ(l.sl_confirmed, 0);
    CHECK(!(l.sl_have & SCTL_HAVE_KA));
    char want[200];
    snprintf(want, sizeof want, "profile: streaming id 0x%08x to 10.0.2.2:5555 "
             "(tick 100Hz and off-CPU, 4 cpus)\n", id);
    CHECK_STR(said(), want);
    char id_hex[16];
    snprintf(id_hex, sizeof id_hex, "%08x", id);
    /* Busy, to the destination and to anyone else. */
    CHECK_EQ(run_cmd("profile stream 5556"), 1);
    l = ctl();
    CHECK_LINE(l, SCTL_OP_START, SCTL_BUSY, SCTL_ST_STREAMING);
    CHECK_EQ(l.sl_id, id);
    snprintf(want, sizeof want, "profile: busy (streaming id 0x%08x to 10.0.2.2:5555)\n", id);
    CHECK_STR(said(), want);
    stream_from(40000);
    CHECK_EQ(run_cmd("profile stream 5556"), 1);
    l = ctl();
    CHECK_LINE(l, SCTL_OP_START, SCTL_BUSY, SCTL_ST_STREAMING);
    CHECK(!(l.sl_have & (SCTL_HAVE_ID | SCTL_HAVE_LAST)));
    CHECK(strstr(got(), id_hex) == NULL);
    /* Keep-alives: refused from elsewhere (and counted), the wrong id,
     * the right one. */
    CHECK_EQ(stream_keepalive(id), 1);
    l = ctl();
    CHECK_LINE(l, SCTL_OP_KEEPALIVE, SCTL_REFUSED, SCTL_ST_STREAMING);
    CHECK(!(l.sl_have & SCTL_HAVE_ID));
    CHECK(strstr(got(), id_hex) == NULL);
    stream_from(5555);
    CHECK_EQ(stream_keepalive(id ^ 4), 1);
    l = ctl();
    CHECK_LINE(l, SCTL_OP_KEEPALIVE, SCTL_OTHER, SCTL_ST_STREAMING);
    CHECK_EQ(l.sl_id, id);
    CHECK_EQ(stream_keepalive(id), 0);
    l = ctl();
    CHECK_LINE(l, SCTL_OP_KEEPALIVE, SCTL_OK, SCTL_ST_STREAMING);
    CHECK_EQ(l.sl_confirmed, 1);
    CHECK(l.sl_have & SCTL_HAVE_KA);
    /* The status, with its counters. */
    CHECK_EQ(run_cmd("profile status"), 0);
    l = ctl();
    CHECK_LINE(l, SCTL_OP_STATUS, SCTL_OK, SCTL_ST_STREAMING);
    CHECK_EQ(l.sl_id, id);
    CHECK_EQ(l.sl_have & SCTL_HAVE_COUNTS, SCTL_HAVE_COUNTS);
    CHECK_EQ(l.sl_karefused, 1);
    CHECK(strstr(said(), ", 1 keep-alives refused\n") != NULL);
    /* Stop: no task ends it here, so it is still ending (its task has
     * not looked yet: still streaming); then it ends. */
    CHECK_EQ(run_cmd("profile stop"), 1);
    l = ctl();
    CHECK_LINE(l, SCTL_OP_STOP, SCTL_ENDING, SCTL_ST_STREAMING);
    CHECK_EQ(l.sl_id, id);
    prof_stream_test_task(NULL);
    CHECK_EQ(run_cmd("profile status"), 0);
    l = ctl();
    CHECK_LINE(l, SCTL_OP_STATUS, SCTL_OK, SCTL_ST_ENDED);
    CHECK_EQ(l.sl_have & (SCTL_HAVE_ID | SCTL_HAVE_LAST), SCTL_HAVE_LAST);
    CHECK_EQ(l.sl_last, id);
    CHECK_EQ(l.sl_reason, SCTL_END_STOPPED);
    CHECK_EQ(l.sl_kind, SCTL_KIND_WALL);
    CHECK(l.sl_datagrams > 0);
    CHECK_EQ(l.sl_karefused, 1);
    /* The last one, to anyone else: no id. */
    stream_from(40000);
    CHECK_EQ(run_cmd("profile status"), 0);
    l = ctl();
    CHECK_LINE(l, SCTL_OP_STATUS, SCTL_OK, SCTL_ST_ENDED);
    CHECK(!(l.sl_have & (SCTL_HAVE_ID | SCTL_HAVE_LAST)));
    CHECK(strstr(got(), id_hex) == NULL);
    CHECK_EQ(run_cmd("profile keepalive 0x1"), 1);
    CHECK_LINE(ctl(), SCTL_OP_KEEPALIVE, SCTL_NONE, SCTL_ST_ENDED);
}

/* Stopped from its destination while its task runs (the task is us
 * here, so the stop's wait sees it still ending, and says so with its
 * id); the status after it names the stream, its kind and reason. */
static uint32_t stopping_id;
static void stop_from_destination(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    stream_from(5555);
    CHECK_EQ(run_cmd("profile stop"), 1);
    struct sctl_line l = ctl();
    CHECK_LINE(l, SCTL_OP_STOP, SCTL_ENDING, SCTL_ST_STREAMING);
    CHECK_EQ(l.sl_id, stopping_id);
}

TEST(a_stop_names_the_stream_it_ends)
{
    reset();
    char started[256];
    uint32_t id = stream_start_confirmed("profile off stream 5555 0", 5555, started,
                                         sizeof started);
    stopping_id = id;
    each_sleep = stop_from_destination;
    prof_stream_test_task(NULL);
    each_sleep = NULL;
    /* The stop that waited saw it still ending; the status has it all. */
    CHECK_EQ(run_cmd("profile status"), 0);
    struct sctl_line l = ctl();
    CHECK_LINE(l, SCTL_OP_STATUS, SCTL_OK, SCTL_ST_ENDED);
    CHECK_EQ(l.sl_last, id);
    CHECK_EQ(l.sl_kind, SCTL_KIND_OFF);
    CHECK_EQ(l.sl_reason, SCTL_END_STOPPED);
    /* Nothing runs now: a stop says none, and the last one is named. */
    CHECK_EQ(run_cmd("profile stop"), 1);
    l = ctl();
    CHECK_LINE(l, SCTL_OP_STOP, SCTL_NONE, SCTL_ST_ENDED);
    CHECK_EQ(l.sl_last, id);
}
