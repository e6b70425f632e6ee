// LINK: tools/output/trace_json.c tools/output/trace_names.c tools/output/flame_json.c tools/model/trace.c tools/model/model.c uapi/profile_raw.c uapi/trace_raw.c
// LIBS: -ljansson -lm
/* tests/unit/test_output_trace_json.c: the Chrome trace-event writer, read
 * back with jansson: a lane per CPU, runs that tile each CPU's window
 * with the reason each left and the delay and wait before it, a flow per
 * wake whose two ends pair up, interrupts as slices, samples whose
 * stackFrames name their chains (as instant events and as the "samples"
 * array speedscope reads). */
#include "test.h"
#include <jansson.h>
#include <math.h>
#include "trace_fixture.h"
#include "tools/output/trace_json.h"

static json_t *load(const struct sp_trace *t)
{
    size_t len;
    char *buf = tfix_capture(t, sp_trace_json_write, &len);
    json_error_t err;
    json_t *j = json_loadb(buf, len, 0, &err);
    if (!j)
        printf("  json: %s at line %d\n", err.text, err.line);
    free(buf);
    return j;
}

static const char *sget(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* A ts or dur (µs with three decimals) in ns; -1 when absent. */
static int64_t ns_of(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? (int64_t)llround(json_number_value(v) * 1000) : -1;
}

/* The events of phase ph and (unless NULL) category cat, in file order. */
static size_t select_ev(json_t *doc, const char *ph, const char *cat, json_t **out, size_t cap)
{
    size_t n = 0, i;
    json_t *e;
    json_array_foreach(json_object_get(doc, "traceEvents"), i, e) {
        if (strcmp(sget(e, "ph"), ph) != 0 || (cat && (!sget(e, "cat") || strcmp(sget(e, "cat"), cat) != 0)))
            continue;
        if (n < cap)
            out[n] = e;
        n++;
    }
    return n;
}

static int64_t lane(json_t *e)
{
    return json_integer_value(json_object_get(e, "pid")) - 1000000;
}

static json_t *arg(json_t *e, const char *key)
{
    return json_object_get(json_object_get(e, "args"), key);
}

TEST(trace_json_names_a_lane_per_cpu)
{
    struct sp_trace t;
    tfix_load(&t);
    json_t *doc = load(&t), *m[4];
    CHECK(doc);
    CHECK_EQ(select_ev(doc, "M", NULL, m, 4), 2);
    for (int c = 0; c < 2; c++) {
        char want[16];
        snprintf(want, sizeof want, "CPU %d", c);
        CHECK_STR(sget(m[c], "name"), "process_name");
        CHECK_EQ(lane(m[c]), c);
        CHECK_EQ(json_integer_value(json_object_get(m[c], "tid")), 1000000 + c);
        CHECK_STR(json_string_value(arg(m[c], "name")), want);
    }
    CHECK_STR(sget(doc, "displayTimeUnit"), "ns");
    json_decref(doc);
    sp_trace_free(&t);
}

/* Runs of cat (run or idle) on both lanes, each lane's in time order. */
static size_t runs_of(json_t *doc, json_t **out, size_t cap)
{
    json_t *busy[16], *idle[16];
    size_t nb = select_ev(doc, "X", "run", busy, 16), ni = select_ev(doc, "X", "idle", idle, 16);
    size_t n = 0;
    for (size_t i = 0; i < nb && n < cap; i++)
        out[n++] = busy[i];
    for (size_t i = 0; i < ni && n < cap; i++)
        out[n++] = idle[i];
    /* insertion sort by (lane, ts): a handful of runs */
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0; k--) {
            json_t *a = out[k - 1], *b = out[k];
            if (lane(a) < lane(b) || (lane(a) == lane(b) && ns_of(a, "ts") <= ns_of(b, "ts")))
                break;
            out[k - 1] = b;
            out[k] = a;
        }
    return nb + ni;
}

TEST(trace_json_runs_tile_each_cpu_window)
{
    struct sp_trace t;
    tfix_load(&t);
    json_t *doc = load(&t), *r[16];
    size_t n = runs_of(doc, r, 16);
    CHECK_EQ(n, 8);
    int64_t at[2] = { 0, 0 }, busy[2] = { 0, 0 }, idle[2] = { 0, 0 };
    for (size_t i = 0; i < n && i < 16; i++) {
        int64_t c = lane(r[i]);
        CHECK(c == 0 || c == 1);
        if (c != 0 && c != 1)
            continue;
        /* Each run starts where the lane's last one ended: no overlap, no gap. */
        CHECK_EQ(ns_of(r[i], "ts"), at[c]);
        CHECK(ns_of(r[i], "dur") >= 0);
        at[c] += ns_of(r[i], "dur");
        bool is_idle = strcmp(sget(r[i], "cat"), "idle") == 0;
        *(is_idle ? &idle[c] : &busy[c]) += ns_of(r[i], "dur");
        CHECK_STR(sget(r[i], "name"), json_string_value(arg(r[i], "task")));
        CHECK_EQ(is_idle, json_integer_value(arg(r[i], "pid")) == 0);
    }
    for (int c = 0; c < 2; c++) {
        CHECK_EQ(at[c], TFIX_WINDOW_NS);
        CHECK_EQ(busy[c] + idle[c], TFIX_WINDOW_NS);
    }
    CHECK_EQ(busy[1], (5000 - 1900) + (8000 - 7000));
    CHECK_EQ(idle[0], 0);
    json_decref(doc);
    sp_trace_free(&t);
}

/* The run of task on lane cpu starting at ns, or NULL. */
static json_t *run_at(json_t *doc, int cpu, int64_t ns)
{
    json_t *r[16];
    size_t n = runs_of(doc, r, 16);
    for (size_t i = 0; i < n && i < 16; i++)
        if (lane(r[i]) == cpu && ns_of(r[i], "ts") == ns)
            return r[i];
    return NULL;
}

static int64_t arg_ns(json_t *e, const char *key)
{
    return json_is_number(arg(e, key)) ? (int64_t)llround(json_number_value(arg(e, key)) * 1000) : -1;
}

TEST(trace_json_runs_carry_reason_delay_and_wait)
{
    struct sp_trace t;
    tfix_load(&t);
    json_t *doc = load(&t);
    /* pong: woken at 1400, ran at 1900, waited on the waitq */
    json_t *r = run_at(doc, 1, 1900);
    CHECK(r);
    CHECK_STR(sget(r, "name"), "pong");
    CHECK_STR(json_string_value(arg(r, "left")), "waitq:pingpong");
    CHECK_EQ(arg_ns(r, "delay_us"), 500);
    CHECK_EQ(arg_ns(r, "wait_us"), 0);      /* never seen leaving before */
    /* pong again: left at 5000, woken at 6500, ran at 7000, exited */
    r = run_at(doc, 1, 7000);
    CHECK(r);
    CHECK_STR(json_string_value(arg(r, "left")), "exit");
    CHECK_EQ(arg_ns(r, "delay_us"), 500);
    CHECK_EQ(arg_ns(r, "wait_us"), 1500);
    /* net: woken by the interrupt at 3000, ran at 4000, slept */
    r = run_at(doc, 0, 4000);
    CHECK(r);
    CHECK_STR(sget(r, "name"), "net");
    CHECK_STR(json_string_value(arg(r, "left")), "sleep");
    CHECK_EQ(arg_ns(r, "delay_us"), 1000);
    /* burn: preempted at 4000, back at 6000 with no wake, to the end */
    r = run_at(doc, 0, 6000);
    CHECK(r);
    CHECK_STR(sget(r, "name"), "burn");
    CHECK_EQ(arg_ns(r, "delay_us"), 2000);
    CHECK_EQ(arg_ns(r, "wait_us"), 0);
    CHECK_STR(json_string_value(arg(r, "left")), "");
    CHECK_EQ(ns_of(r, "dur"), TFIX_WINDOW_NS - 6000);
    CHECK_STR(json_string_value(arg(run_at(doc, 0, 0), "left")), "preempted");
    /* idle, before pong's first run */
    r = run_at(doc, 1, 0);
    CHECK(r);
    CHECK_STR(sget(r, "name"), "<idle>");
    CHECK_STR(sget(r, "cat"), "idle");
    CHECK_STR(json_string_value(arg(r, "left")), "-");
    json_decref(doc);
    sp_trace_free(&t);
}

TEST(trace_json_flows_pair_waker_to_wakee)
{
    struct sp_trace t;
    tfix_load(&t);
    json_t *doc = load(&t), *s[8], *f[8];
    size_t ns = select_ev(doc, "s", "wake", s, 8), nf = select_ev(doc, "f", "wake", f, 8);
    CHECK_EQ(ns, TFIX_WAKES);
    CHECK_EQ(nf, TFIX_WAKES);
    int irq_wakes = 0;
    for (size_t i = 0; i < ns && i < 8; i++) {
        json_int_t id = json_integer_value(json_object_get(s[i], "id"));
        size_t match = 0, k_at = 0;
        for (size_t k = 0; k < nf && k < 8; k++)
            if (json_integer_value(json_object_get(f[k], "id")) == id) {
                match++;
                k_at = k;
            }
        CHECK_EQ(match, 1);
        if (match != 1)
            continue;
        json_t *end = f[k_at];
        CHECK_STR(sget(end, "bp"), "e");
        CHECK(ns_of(end, "ts") >= ns_of(s[i], "ts"));
        /* The end is where a run of the wakee starts, on its lane. */
        json_t *r = run_at(doc, (int)lane(end), ns_of(end, "ts"));
        CHECK(r);
        const char *wakee = json_string_value(arg(s[i], "wakee"));
        CHECK_STR(r ? sget(r, "name") : NULL, wakee);
        CHECK_STR(json_string_value(arg(end, "wakee")), wakee);
        const char *waker = json_string_value(arg(s[i], "waker"));
        if (waker && strcmp(waker, "irq virtio-net") == 0) {
            irq_wakes++;
            CHECK_STR(wakee, "net");
            CHECK_EQ(ns_of(s[i], "ts"), 3000);
        } else {
            CHECK_STR(waker, "burn");
            CHECK_EQ(lane(s[i]), 0);
        }
    }
    CHECK_EQ(irq_wakes, 1);
    json_decref(doc);
    sp_trace_free(&t);
}

TEST(trace_json_interrupts_are_slices)
{
    struct sp_trace t;
    tfix_load(&t);
    json_t *doc = load(&t), *q[8];
    CHECK_EQ(select_ev(doc, "X", "irq", q, 8), TFIX_IRQS);
    CHECK_STR(sget(q[0], "name"), "irq tick 32");
    CHECK_EQ(ns_of(q[0], "ts"), 1000);
    CHECK_EQ(ns_of(q[0], "dur"), 712);
    CHECK_STR(json_string_value(arg(q[0], "class")), "tick");
    CHECK_STR(json_string_value(arg(q[0], "task")), "burn");
    CHECK_STR(sget(q[1], "name"), "irq virtio-net");
    CHECK_EQ(json_integer_value(arg(q[1], "vector")), 48);
    CHECK_STR(json_string_value(arg(q[1], "class")), "device");
    CHECK_STR(sget(q[3], "name"), "irq nmi 2");
    CHECK_EQ(ns_of(q[3], "dur"), 100);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(lane(q[i]), 0);
    json_decref(doc);
    sp_trace_free(&t);
}

/* A sample's stack, leaf first, as "name@category" joined by ' '. */
static void stack_of(json_t *doc, json_t *sample, char *buf, size_t cap)
{
    json_t *frames = json_object_get(doc, "stackFrames");
    char id[32];
    snprintf(id, sizeof id, "%lld", (long long)json_integer_value(json_object_get(sample, "sf")));
    buf[0] = 0;
    for (int guard = 0; guard < 64; guard++) {
        json_t *fr = json_object_get(frames, id);
        if (!fr)
            break;
        size_t l = strlen(buf);
        snprintf(buf + l, cap - l, "%s%s@%s", l ? " " : "", sget(fr, "name"), sget(fr, "category"));
        if (!sget(fr, "parent"))
            break;
        snprintf(id, sizeof id, "%s", sget(fr, "parent"));
    }
}

TEST(trace_json_samples_name_their_stacks)
{
    struct sp_trace t;
    tfix_load(&t);
    json_t *doc = load(&t), *p[8];
    CHECK_EQ(select_ev(doc, "i", "sample", p, 8), TFIX_SAMPLES);
    char st[512];
    stack_of(doc, p[0], st, sizeof st);
    CHECK_STR(st, "step@a.h:5 spin@a.c:12 caller@a.c:30 top@b.c:7");
    CHECK_STR(sget(p[0], "s"), "t");
    CHECK_STR(json_string_value(arg(p[0], "task")), "burn");
    CHECK_EQ(json_integer_value(arg(p[0], "pid")), 7);
    CHECK_EQ(ns_of(p[0], "ts"), 1200);
    stack_of(doc, p[1], st, sizeof st);
    CHECK_STR(st, "spin@a.c:14 caller@a.c:30");
    CHECK_EQ(lane(p[1]), 1);
    stack_of(doc, p[2], st, sizeof st);
    CHECK_STR(st, "step@a.h:5 spin@a.c:12");
    /* one node per distinct path: 4 + 2 + 2, none shared across roots */
    CHECK_EQ(json_object_size(json_object_get(doc, "stackFrames")), 8);
    /* the "samples" array speedscope reads: the same samples, lanes and
     * stacks as the instant events */
    json_t *arr = json_object_get(doc, "samples");
    CHECK_EQ(json_array_size(arr), TFIX_SAMPLES);
    for (size_t i = 0; i < json_array_size(arr) && i < 3; i++) {
        json_t *x = json_array_get(arr, i);
        char a[256], b[256];
        stack_of(doc, x, a, sizeof a);
        stack_of(doc, p[i], b, sizeof b);
        CHECK(a[0] != 0);
        CHECK_STR(a, b);
        CHECK_EQ(ns_of(x, "ts"), ns_of(p[i], "ts"));
        CHECK_EQ(lane(x), json_integer_value(json_object_get(x, "cpu")));
        CHECK_EQ(json_integer_value(json_object_get(x, "tid")),
                 json_integer_value(json_object_get(x, "pid")));
        CHECK_EQ(lane(x), lane(p[i]));
    }
    json_decref(doc);
    sp_trace_free(&t);
}

TEST(trace_json_other_data_says_kernel_window_and_drops)
{
    struct sp_trace t;
    tfix_load(&t);
    json_t *doc = load(&t), *o = json_object_get(doc, "otherData");
    CHECK_STR(sget(o, "kernel"), "k1");
    CHECK_STR(sget(o, "build_id"), FIX_BID);
    CHECK_EQ(json_integer_value(json_object_get(o, "ms")), 10);
    CHECK_EQ(json_integer_value(json_object_get(o, "cpus")), 2);
    json_t *d = json_object_get(o, "dropped");
    CHECK_EQ(json_array_size(d), 2);
    CHECK_EQ(json_integer_value(json_array_get(d, 0)), 0);
    CHECK_EQ(json_integer_value(json_array_get(d, 1)), 3);
    json_decref(doc);
    sp_trace_free(&t);
}

/* A function name that could end the page's <script> (FILE.html embeds
 * this JSON) or is not UTF-8 is escaped, and reads back. */
TEST(trace_json_escapes_names)
{
    struct sp_trace t;
    tfix_load(&t);
    for (size_t i = 0; i < t.st_prof.nlocs; i++)
        if (t.st_prof.locs[i]->pl_addr == 0x1020)
            t.st_prof.locs[i]->pl_frames[0].pf_func = "a\"</script><b>\xff";
    size_t len;
    char *buf = tfix_capture(&t, sp_trace_json_write, &len);
    CHECK(!strstr(buf, "</script>"));
    CHECK(!strstr(buf, "\xff"));
    json_error_t err;
    json_t *doc = json_loadb(buf, len, 0, &err), *p[8];
    CHECK(doc);
    CHECK_EQ(select_ev(doc, "i", "sample", p, 8), TFIX_SAMPLES);
    char st[512];
    stack_of(doc, p[1], st, sizeof st);
    CHECK_STR(st, "a\"</script><b>\xef\xbf\xbd@a.c:14 caller@a.c:30");
    json_decref(doc);
    free(buf);
    sp_trace_free(&t);
}

TEST(trace_json_empty_trace_is_lanes_alone)
{
    struct sp_trace t;
    tfix_begin(&t, 3);
    json_t *doc = load(&t), *m[4];
    CHECK(doc);
    CHECK_EQ(select_ev(doc, "M", NULL, m, 4), 3);
    CHECK_EQ(json_array_size(json_object_get(doc, "traceEvents")), 3);
    CHECK_EQ(json_object_size(json_object_get(doc, "stackFrames")), 0);
    CHECK_EQ(json_array_size(json_object_get(doc, "samples")), 0);
    CHECK(json_is_array(json_object_get(doc, "samples")));
    json_decref(doc);
    sp_trace_free(&t);
}

/* An event past the window (the kernel stops a window a little after
 * it asked to): the runs tile up to it, and a CPU with no event has no
 * run at all, rather than an idle one the trace never showed. */
TEST(trace_json_runs_reach_an_event_past_the_window)
{
    struct sp_trace t;
    tfix_begin(&t, 2);
    tfix_switch(&t, 5000, 0, 7, "burn", TRAW_LEFT_YIELD, "", 8, "pong");
    tfix_irq(&t, 11990000, 0, 12000000, 32, TRAW_IRQ_TICK, "", 8, "pong");
    json_t *doc = load(&t), *r[16];
    CHECK_EQ(runs_of(doc, r, 16), 2);
    CHECK_EQ(lane(r[0]), 0);
    CHECK_EQ(lane(r[1]), 0);
    CHECK_EQ(ns_of(r[0], "dur"), 5000);
    CHECK_STR(json_string_value(arg(r[0], "left")), "yield");
    CHECK_EQ(ns_of(r[1], "ts") + ns_of(r[1], "dur"), 12000000);
    CHECK_STR(json_string_value(arg(r[1], "left")), "");
    json_decref(doc);
    sp_trace_free(&t);
}

TEST(trace_json_reports_a_write_error)
{
    struct sp_trace t;
    tfix_load(&t);
    FILE *f = fopen("/dev/full", "w");
    CHECK(f);
    if (f) {
        setvbuf(f, NULL, _IONBF, 0);
        CHECK_EQ(sp_trace_json_write(&t, f), -1);
        fclose(f);
    }
    sp_trace_free(&t);
}
