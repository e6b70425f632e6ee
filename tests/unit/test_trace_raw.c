// LINK: uapi/trace_raw.c
/* tests/unit/test_trace_raw.c: the raw trace's parser (uapi/trace_raw.h):
 * every event kind read back field by field, each rule broken with its
 * message (ranges, CPUs, idle, time order, events=), truncation, and
 * hostile bytes under ASan. */
#include "test.h"
#include "uapi/trace_raw.h"
#include <stdlib.h>

#define BID "0123456789abcdef0123456789abcdef01234567"
#define HDR(n) "# sonde trace build-id=" BID " cpus=2 ms=10 events=" n " dropped=0,3\n"

struct seen {
    unsigned n;
    struct traw_event e[16];
    unsigned line[16];
};

static int collect(void *ctx, const struct traw_event *e, unsigned line, char *err,
                   size_t cap)
{
    struct seen *s = ctx;
    if (s->n < 16) {
        s->e[s->n] = *e;
        s->line[s->n] = line;
    }
    s->n++;
    return 0;
}

static int parse(const char *text, struct seen *s, struct traw_header *h, char *err)
{
    memset(s, 0, sizeof *s);
    return traw_parse(text, strlen(text), h, collect, s, err, TRAW_ERR_MAX);
}

/* The parse fails and the message holds want. */
static int rejects(const char *text, const char *want)
{
    struct seen s;
    struct traw_header h;
    char err[TRAW_ERR_MAX] = "";
    if (parse(text, &s, &h, err) != -1) {
        printf("  accepted: %s", text);
        return 0;
    }
    if (!strstr(err, want)) {
        printf("  message \"%s\" lacks \"%s\"\n", err, want);
        return 0;
    }
    return 1;
}

TEST(trace_raw_good)
{
    struct seen s;
    struct traw_header h;
    char err[TRAW_ERR_MAX] = "";
    const char *t = HDR("7")
        "I 1000 0 1712 32 tick 7\n"
        "W 1400 0 7 burn 8 pong 1\n"
        "W 1400 1 0 <idle> 9 virtio-rx 1 irq=41:device:virtio-net\n"
        "S 1900 1 0 <idle> - 8 pong\n"
        "I 2000 1 2100 41 device 1+2 8\n"
        "S 2400 1 8 pong waitq:burn-pp 0 <idle>\n"
        "P 2500 1 8 pong ffffffff80104a1c ffffffff80104a5b\n";
    CHECK_EQ(parse(t, &s, &h, err), 0);
    CHECK_STR(err, "");
    CHECK_STR(h.th_build_id, BID);
    CHECK_EQ(h.th_cpus, 2);
    CHECK_EQ(h.th_ms, 10);
    CHECK_EQ(h.th_events, 7);
    CHECK_EQ(h.th_dropped[0], 0);
    CHECK_EQ(h.th_dropped[1], 3);
    CHECK_EQ(s.n, 7);
    /* irq */
    CHECK_EQ(s.e[0].te_type, TRAW_IRQ);
    CHECK_EQ(s.e[0].te_ns, 1000);
    CHECK_EQ(s.e[0].te_end, 1712);
    CHECK_EQ(s.e[0].te_vec, 32);
    CHECK_EQ(s.e[0].te_class, TRAW_IRQ_TICK);
    CHECK_STR(s.e[0].te_irq, "");
    CHECK_EQ(s.e[0].te_pid, 7);
    CHECK_EQ(s.line[0], 2);
    /* wake in task context */
    CHECK_EQ(s.e[1].te_type, TRAW_WAKE);
    CHECK_EQ(s.e[1].te_pid, 7);
    CHECK_STR(s.e[1].te_task, "burn");
    CHECK_EQ(s.e[1].te_pid2, 8);
    CHECK_STR(s.e[1].te_task2, "pong");
    CHECK_EQ(s.e[1].te_wcpu, 1);
    CHECK_EQ(s.e[1].te_in_irq, 0);
    /* wake inside an interrupt */
    CHECK_EQ(s.e[2].te_cpu, 1);
    CHECK_EQ(s.e[2].te_pid, 0);
    CHECK_STR(s.e[2].te_task, "<idle>");
    CHECK_EQ(s.e[2].te_in_irq, 1);
    CHECK_EQ(s.e[2].te_vec, 41);
    CHECK_EQ(s.e[2].te_class, TRAW_IRQ_DEVICE);
    CHECK_STR(s.e[2].te_irq, "virtio-net");
    /* switches */
    CHECK_EQ(s.e[3].te_type, TRAW_SWITCH);
    CHECK_EQ(s.e[3].te_left, TRAW_LEFT_NONE);
    CHECK_EQ(s.e[3].te_pid2, 8);
    CHECK_STR(s.e[3].te_name, "");
    /* an irq name of digits alone is still the name */
    CHECK_STR(s.e[4].te_irq, "1+2");
    CHECK_EQ(s.e[4].te_pid, 8);
    CHECK_EQ(s.e[5].te_left, TRAW_LEFT_WAITQ);
    CHECK_STR(s.e[5].te_name, "burn-pp");
    CHECK_EQ(s.e[5].te_pid2, 0);
    /* sample */
    CHECK_EQ(s.e[6].te_type, TRAW_SAMPLE);
    CHECK_EQ(s.e[6].te_depth, 2);
    CHECK_EQ(s.e[6].te_frames[0], 0xffffffff80104a1cull);
    CHECK_EQ(s.e[6].te_frames[1], 0xffffffff80104a5bull);
    CHECK_EQ(s.line[6], 8);
}

TEST(trace_raw_names)
{
    CHECK_STR(traw_left_name(TRAW_LEFT_NONE), "-");
    CHECK_STR(traw_left_name(TRAW_LEFT_YIELD), "yield");
    CHECK(traw_left_name(TRAW_LEFT_MAX + 1) == NULL);
    CHECK(traw_class_name(0) == NULL);
    CHECK_STR(traw_class_name(TRAW_IRQ_NMI), "nmi");
    CHECK(traw_class_name(TRAW_CLASS_MAX + 1) == NULL);
}

TEST(trace_raw_limits)
{
    struct seen s;
    struct traw_header h;
    char err[TRAW_ERR_MAX] = "";
    /* The largest of each: 64 cpus, 2000 ms, 2^64-1 ns, pid 2^31-1,
     * vector 1023, 8 frames, 31-character names. */
    char t[2048] = "# sonde trace build-id=" BID " cpus=64 ms=2000 events=2 dropped=4294967295";
    for (int i = 1; i < 64; i++)
        strcat(t, ",0");
    strcat(t, "\nI 18446744073709551615 63 18446744073709551615 1023 nmi 2147483647\n"
              "P 18446744073709551615 0 2147483647 abcdefghijklmnopqrstuvwxyz01234 "
              "ffffffffffffffff 1 2 3 4 5 6 7\n");
    CHECK_EQ(parse(t, &s, &h, err), 0);
    CHECK_STR(err, "");
    CHECK_EQ(h.th_cpus, 64);
    CHECK_EQ(h.th_dropped[0], 4294967295u);
    CHECK_EQ(s.e[0].te_cpu, 63);
    CHECK_EQ(s.e[0].te_vec, 1023);
    CHECK_EQ(s.e[1].te_pid, 2147483647u);
    CHECK_EQ(s.e[1].te_depth, 8);
    CHECK_EQ(s.e[1].te_frames[7], 7);
    /* An empty trace is a trace. */
    CHECK_EQ(parse(HDR("0"), &s, &h, err), 0);
    CHECK_EQ(s.n, 0);
}

TEST(trace_raw_bad_header)
{
    CHECK(rejects("", "line 1: empty input"));
    CHECK(rejects("# sonde raw build-id=" BID " cpus=2 ms=10 events=0 dropped=0,0\n",
                  "line 1: expected \"# sonde trace build-id=\""));
    CHECK(rejects("# sonde trace build-id=0123 cpus=2 ms=10 events=0 dropped=0,0\n",
                  "build-id is not 40 hex digits"));
    CHECK(rejects("# sonde trace build-id=" BID " cpus=0 ms=10 events=0 dropped=\n",
                  "cpus is out of range (1-64)"));
    CHECK(rejects("# sonde trace build-id=" BID " cpus=65 ms=10 events=0 dropped=0\n",
                  "cpus is out of range (1-64)"));
    CHECK(rejects("# sonde trace build-id=" BID " cpus=1 ms=0 events=0 dropped=0\n",
                  "ms is out of range (1-2000)"));
    CHECK(rejects("# sonde trace build-id=" BID " cpus=1 ms=2001 events=0 dropped=0\n",
                  "ms is out of range (1-2000)"));
    CHECK(rejects("# sonde trace build-id=" BID " cpus=1 ms=01 events=0 dropped=0\n",
                  "ms has a leading zero"));
    CHECK(rejects("# sonde trace build-id=" BID " cpus=2 ms=10 events=0 dropped=0\n",
                  "dropped= has 1 numbers but cpus=2"));
    CHECK(rejects("# sonde trace build-id=" BID " cpus=1 ms=10 events=0 dropped=0,0\n",
                  "dropped= has more numbers than cpus="));
    CHECK(rejects("# sonde trace build-id=" BID " cpus=1 ms=10 events=0 dropped=4294967296\n",
                  "dropped is out of range"));
    CHECK(rejects("# sonde trace build-id=" BID " cpus=1 ms=10 events=0 dropped=0 x\n",
                  "unexpected text after dropped="));
    CHECK(rejects("# sonde trace build-id=" BID " cpus=1 ms=10 events=0 dropped=0",
                  "line 1: truncated"));
}

TEST(trace_raw_bad_events)
{
    CHECK(rejects(HDR("1") "X 1 0 7 burn ff\n", "line 2: an event is S, W, I or P"));
    CHECK(rejects(HDR("1") "P\n", "an event is S, W, I or P"));
    CHECK(rejects(HDR("1") "P 1 2 7 burn ff\n", "cpu 2 is not below cpus=2"));
    CHECK(rejects(HDR("1") "P -1 0 7 burn ff\n", "time is not a decimal number"));
    CHECK(rejects(HDR("1") "P 18446744073709551616 0 7 burn ff\n", "time is out of range"));
    CHECK(rejects(HDR("1") "P 1 0 2147483648 burn ff\n", "pid is out of range"));
    CHECK(rejects(HDR("1") "P 1 0 7 a;b ff\n", "task has a character"));
    CHECK(rejects(HDR("1") "P 1 0 7 abcdefghijklmnopqrstuvwxyz012345 ff\n",
                  "task is longer than 31 characters"));
    CHECK(rejects(HDR("1") "P 1 0 0 burn ff\n", "pid 0 (idle) with a task other than <idle>"));
    CHECK(rejects(HDR("1") "P 1 0 7 <idle> ff\n", "task <idle> with a pid other than 0"));
    CHECK(rejects(HDR("1") "P 1 0 7 burn 0xff\n", "pc is not lowercase hex"));
    CHECK(rejects(HDR("1") "P 1 0 7 burn\n", "missing space before pc"));
    CHECK(rejects(HDR("1") "P 1 0 7 burn 1 2 3 4 5 6 7 8 9\n",
                  "more than 8 frames (pc and at most 7 return addresses)"));
    CHECK(rejects(HDR("1") "P 1 0 7 burn ff \n", "return address is missing"));
    /* switch */
    CHECK(rejects(HDR("1") "S 1 0 7 burn slept 8 pong\n", "left is not -, sleep"));
    CHECK(rejects(HDR("1") "S 1 0 7 burn - 8 pong\n", "left - is idle's alone"));
    CHECK(rejects(HDR("1") "S 1 0 0 <idle> sleep 8 pong\n", "idle (pid 0) left for a reason"));
    CHECK(rejects(HDR("1") "S 1 0 7 burn sleep:x 8 pong\n",
                  "only a waitq or mutex reason has a :NAME"));
    CHECK(rejects(HDR("1") "S 1 0 7 burn waitq: 8 pong\n", "the wait's name after ':' is missing"));
    CHECK(rejects(HDR("1") "S 1 0 7 burn mutex:a:b 8 pong\n", "the wait's name has a character"));
    CHECK(rejects(HDR("1") "S 1 0 7 burn sleep 8\n", "missing space before task"));
    CHECK(rejects(HDR("1") "S 1 0 7 burn sleep 8 pong x\n", "unexpected text at the line's end"));
    /* wake */
    CHECK(rejects(HDR("1") "W 1 0 7 burn 8 pong 2\n", "the wakee's cpu 2 is not below cpus=2"));
    CHECK(rejects(HDR("1") "W 1 0 7 burn 8 pong\n", "missing space before the wakee's cpu"));
    CHECK(rejects(HDR("1") "W 1 0 7 burn 8 pong 1 irq=1024:device\n", "vector is out of range"));
    CHECK(rejects(HDR("1") "W 1 0 7 burn 8 pong 1 irq=41:disk\n", "class is not tick, device"));
    CHECK(rejects(HDR("1") "W 1 0 7 burn 8 pong 1 irq=41\n", "missing ':' before the class"));
    CHECK(rejects(HDR("1") "W 1 0 7 burn 8 pong 1 irq=41:device:Virtio\n",
                  "the interrupt's name has a character outside"));
    CHECK(rejects(HDR("1") "W 1 0 7 burn 8 pong 1 irq=41:device:\n",
                  "the interrupt's name is missing"));
    CHECK(rejects(HDR("1") "W 1 0 7 burn 8 pong 1 via=41\n", "expected \" irq=\""));
    /* irq */
    CHECK(rejects(HDR("1") "I 10 0 9 32 tick 7\n", "the exit is before the entry"));
    CHECK(rejects(HDR("1") "I 10 0 19 32 timer 7\n", "class is not tick, device"));
    CHECK(rejects(HDR("1") "I 10 0 19 32 tick\n", "missing space before pid"));
    CHECK(rejects(HDR("1") "I 10 0 19 32 tick a b 7\n", "pid is not a decimal number"));
    CHECK(rejects(HDR("1") "I 10 0 19 32 tick VIRTIO 7\n", "the interrupt's name has a"));
    CHECK(rejects(HDR("1") "I 10 0 19 32 tick net 7 8\n", "unexpected text at the line's end"));
}

TEST(trace_raw_bad_whole)
{
    CHECK(rejects(HDR("2") "P 5 0 7 burn ff\nP 4 1 7 burn ff\n",
                  "line 3: out of time order"));
    /* An irq is ordered by its entry, not its exit. */
    struct seen s;
    struct traw_header h;
    char err[TRAW_ERR_MAX] = "";
    CHECK_EQ(parse(HDR("2") "I 4 0 90 32 tick 7\nP 5 0 7 burn ff\n", &s, &h, err), 0);
    CHECK(rejects(HDR("2") "P 5 0 7 burn ff\nI 4 0 90 32 tick 7\n", "line 3: out of time order"));
    CHECK(rejects(HDR("1") "P 5 0 7 burn ff\nP 6 0 7 burn ff\n",
                  "line 3: more event lines than the header's events="));
    CHECK(rejects(HDR("3") "P 5 0 7 burn ff\nP 6 0 7 burn ff\n",
                  "line 3: 2 event lines but the header says events=3 (lines missing?)"));
    CHECK(rejects(HDR("1") "P 5 0 7 burn ff\r\n", "line 2: carriage return"));
    CHECK(rejects(HDR("1") "P 5 0 7 burn ff", "line 2: truncated"));
    const char nul[] = HDR("1") "P 5 0 7 b\0rn ff\n";
    struct traw_header h2;
    CHECK_EQ(traw_parse(nul, sizeof nul - 1, &h2, NULL, NULL, err, sizeof err), -1);
    CHECK(strstr(err, "line 2: NUL byte") != NULL);
    /* A message cut to a small buffer is still terminated. */
    char small[8];
    CHECK_EQ(traw_parse("x\n", 2, &h2, NULL, NULL, small, sizeof small), -1);
    CHECK_EQ(strlen(small), 7);
}

static int stop_at_two(void *ctx, const struct traw_event *e, unsigned line, char *err,
                       size_t cap)
{
    (*(unsigned *)ctx)++;
    if (line == 3) {
        strcpy(err, "stopped");
        return 5;
    }
    return 0;
}

TEST(trace_raw_callback_stops)
{
    unsigned n = 0;
    struct traw_header h;
    char err[TRAW_ERR_MAX] = "";
    const char *t = HDR("3") "P 5 0 7 burn ff\nP 6 0 7 burn ff\nP 7 0 7 burn ff\n";
    CHECK_EQ(traw_parse(t, strlen(t), &h, stop_at_two, &n, err, sizeof err), 5);
    CHECK_EQ(n, 2);
    CHECK_STR(err, "stopped");
}

TEST(trace_raw_hostile_mutations_never_crash)
{
    const char good[] = HDR("4") "I 1000 0 1712 32 tick 7\n"
                        "W 1400 0 7 burn 8 pong 1 irq=41:device:virtio-net\n"
                        "S 1900 1 8 pong waitq:pp 0 <idle>\n"
                        "P 2500 1 8 pong ffffffff80104a1c 1 2\n";
    size_t n = sizeof good - 1;
    unsigned seed = 4321;
    static const char alphabet[] = " \n\r\t0123456789abcdefx;:-#=<>,\0\xff";
    unsigned ok = 0;
    for (int round = 0; round < 20000; round++) {
        size_t len = n;
        char *t = malloc(n);
        memcpy(t, good, n);
        int edits = 1 + round % 4;
        for (int k = 0; k < edits; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            seed = seed * 1103515245u + 12345u;
            t[at] = alphabet[(seed >> 8) % (sizeof alphabet - 1)];
        }
        seed = seed * 1103515245u + 12345u;
        if (round % 3 == 0)
            len = (seed >> 8) % (n + 1);
        struct traw_header h;
        char err[TRAW_ERR_MAX];
        int rc = traw_parse(t, len, &h, NULL, NULL, err, sizeof err);
        CHECK(rc == 0 || rc == -1);
        if (rc == -1)
            CHECK(strncmp(err, "line ", 5) == 0);
        ok += rc == 0;
        free(t);
    }
    /* Some edits keep the text valid (a digit for a digit): the parse
     * is not simply refusing everything. */
    CHECK(ok > 0);
}
