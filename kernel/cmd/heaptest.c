/* kernel/cmd/heaptest.c: `heaptest`, a workload with known allocation
 * sites for heap profiling's tests (docs/profiling.md):
 *
 *   heaptest keep          site A keeps 4 MiB in 4 KiB blocks, site B
 *                          keeps 1 MiB in 64-byte objects, site D keeps
 *                          2 MiB in 2-page blocks straight from the page
 *                          allocator (page_alloc), then site C allocates
 *                          and frees 64 MiB in 256-byte objects
 *   heaptest free          frees what keep kept
 *   heaptest churn [ms]    site C alone, in a task of its own after ms
 *                          (0-2000) of sleep, so a `profile allocs`
 *                          window can be opened around it
 *   heaptest leak <n>      site L leaks n 128-byte objects (1-100000)
 *   heaptest stress <ms>   one task per CPU allocates and frees mixed
 *                          sizes for ms (1-10000), kmalloc's and whole
 *                          pages', everything freed
 *   heaptest status        what churn and stress have done
 *
 * Each site is a function of its own (noinline), so its calls to
 * kmalloc or page_alloc fold under its name. */
#include "hal/cpu.h"
#include "kernel/shell.h"
#include "kernel/task.h"
#include "kernel/time.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "mm/heap.h"
#include "mm/pmm.h"

#define HT_A_SIZE   4096u
#define HT_A_COUNT  1024u               /* 4 MiB */
#define HT_B_SIZE   64u
#define HT_B_COUNT  16384u              /* 1 MiB */
#define HT_D_PAGES  2u
#define HT_D_COUNT  256u                /* 2 MiB */
#define HT_C_SIZE   256u
#define HT_C_COUNT  262144u             /* 64 MiB */
#define HT_L_SIZE   128u
#define HT_LEAK_MAX 100000u
#define HT_DELAY_MAX 2000u
#define HT_STRESS_MAX 10000u

static void **ht_a, **ht_b, **ht_d;     /* what keep kept, or NULL */
static volatile int ht_churn_state;     /* 0 never, 1 running, 2 done, -1 no memory */
static volatile uint64_t ht_churn_ms;
static volatile unsigned ht_stress_running, ht_stress_done;
static volatile uint64_t ht_stress_pairs, ht_stress_fails;

static __attribute__((noinline)) bool heaptest_site_a(void **keep)
{
    for (unsigned i = 0; i < HT_A_COUNT; i++)
        if (!(keep[i] = kmalloc(HT_A_SIZE)))
            return false;
    return true;
}

static __attribute__((noinline)) bool heaptest_site_b(void **keep)
{
    for (unsigned i = 0; i < HT_B_COUNT; i++)
        if (!(keep[i] = kmalloc(HT_B_SIZE)))
            return false;
    return true;
}

static __attribute__((noinline)) bool heaptest_site_d(void **keep)
{
    for (unsigned i = 0; i < HT_D_COUNT; i++)
        if (!(keep[i] = page_alloc(HT_D_PAGES)))
            return false;
    return true;
}

static __attribute__((noinline)) bool heaptest_site_c(void)
{
    for (unsigned i = 0; i < HT_C_COUNT; i++) {
        volatile char *p = kmalloc(HT_C_SIZE);
        if (!p)
            return false;
        p[0] = (char)i;                 /* touched: the pair is not elided */
        kfree((void *)p);
    }
    return true;
}

static __attribute__((noinline)) bool heaptest_site_leak(unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (!kmalloc(HT_L_SIZE))
            return false;
    return true;
}

static void ht_free_kept(void)
{
    for (unsigned i = 0; ht_a && i < HT_A_COUNT; i++)
        kfree(ht_a[i]);
    for (unsigned i = 0; ht_b && i < HT_B_COUNT; i++)
        kfree(ht_b[i]);
    for (unsigned i = 0; ht_d && i < HT_D_COUNT && ht_d[i]; i++)
        page_free(ht_d[i], HT_D_PAGES);
    kfree(ht_a);
    kfree(ht_b);
    kfree(ht_d);
    ht_a = ht_b = ht_d = NULL;
}

static int ht_keep(struct printer *p)
{
    if (ht_a) {
        pr_puts(p, "heaptest: keep already holds its blocks (heaptest free first)\n");
        return 1;
    }
    ht_a = kzalloc(HT_A_COUNT * sizeof *ht_a);
    ht_b = kzalloc(HT_B_COUNT * sizeof *ht_b);
    ht_d = kzalloc(HT_D_COUNT * sizeof *ht_d);
    if (!ht_a || !ht_b || !ht_d || !heaptest_site_a(ht_a) || !heaptest_site_b(ht_b) ||
        !heaptest_site_d(ht_d) || !heaptest_site_c()) {
        ht_free_kept();
        pr_puts(p, "heaptest: out of memory (everything freed)\n");
        return 1;
    }
    pr_printf(p, "heaptest: kept A %u x %u bytes, B %u x %u bytes, D %u x %lu bytes "
              "in pages; C %u x %u bytes allocated and freed\n", HT_A_COUNT, HT_A_SIZE,
              HT_B_COUNT, HT_B_SIZE, HT_D_COUNT, (unsigned long)(HT_D_PAGES * PAGE_SIZE),
              HT_C_COUNT, HT_C_SIZE);
    return 0;
}

static void ht_churn_task(void *arg)
{
    sleep_ms((uintptr_t)arg);
    uint64_t t0 = time_ns();
    bool ok = heaptest_site_c();
    ht_churn_ms = (time_ns() - t0) / 1000000;
    ht_churn_state = ok ? 2 : -1;
    task_exit();
}

/* Mixed sizes, small and large from kmalloc, and every eighth slot one
 * or two whole pages from page_alloc, a few live at a time. */
static void ht_stress_free(void *p, size_t pages)
{
    if (p && pages)
        page_free(p, pages);
    else
        kfree(p);
}

static void ht_stress_task(void *arg)
{
    uint64_t end = time_ns() + (uintptr_t)arg * 1000000ull;
    uint64_t x = time_ns() ^ ((uint64_t)cpu_index() << 32) ^ 0x9e3779b97f4a7c15ull;
    void *live[32] = { 0 };
    size_t pages[32] = { 0 };           /* a page_alloc block's pages, or 0 */
    uint64_t pairs = 0, fails = 0;
    while (time_ns() < end && !task_should_stop()) {
        for (unsigned i = 0; i < 32; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            ht_stress_free(live[i], pages[i]);
            pages[i] = i % 8 == 7 ? 1 + (x >> 8) % 2 : 0;
            size_t sz = x & 1 ? (x >> 8) % 2048 : (x >> 8) % 20000;
            live[i] = pages[i] ? page_alloc(pages[i]) : kmalloc(sz);
            fails += live[i] == NULL;
            pairs++;
        }
        yield();
    }
    for (unsigned i = 0; i < 32; i++)
        ht_stress_free(live[i], pages[i]);
    __atomic_add_fetch(&ht_stress_pairs, pairs, __ATOMIC_RELAXED);
    __atomic_add_fetch(&ht_stress_fails, fails, __ATOMIC_RELAXED);
    __atomic_add_fetch(&ht_stress_done, 1, __ATOMIC_RELEASE);
    __atomic_sub_fetch(&ht_stress_running, 1, __ATOMIC_RELEASE);
    task_exit();
}

static int ht_stress(const char *arg, struct printer *p)
{
    uint64_t ms;
    if (!arg || !parse_range(arg, 1, HT_STRESS_MAX, &ms)) {
        pr_printf(p, "heaptest: stress time '%s' out of range (1-%u ms)\n",
                  arg ? arg : "", HT_STRESS_MAX);
        return 1;
    }
    if (ht_stress_running) {
        pr_puts(p, "heaptest: stress already running\n");
        return 1;
    }
    ht_stress_done = 0;
    ht_stress_pairs = ht_stress_fails = 0;
    pr_printf(p, "heaptest: stress %lu ms, pids", (unsigned long)ms);
    for (unsigned c = 0; c < cpu_count(); c++) {
        if (!cpu_online(c))
            continue;
        __atomic_add_fetch(&ht_stress_running, 1, __ATOMIC_RELAXED);
        struct task *t = task_spawn("heapstress", ht_stress_task, (void *)(uintptr_t)ms,
                                    (int)c, TASK_KILLABLE);
        if (!t) {
            __atomic_sub_fetch(&ht_stress_running, 1, __ATOMIC_RELAXED);
            pr_puts(p, " (out of memory)");
            break;
        }
        pr_printf(p, " %d", task_pid(t));
    }
    pr_puts(p, "\n");
    return 0;
}

static int ht_churn(const char *arg, struct printer *p)
{
    uint64_t delay = 0;
    if (arg && !parse_range(arg, 0, HT_DELAY_MAX, &delay)) {
        pr_printf(p, "heaptest: churn delay '%s' out of range (0-%u ms)\n", arg,
                  HT_DELAY_MAX);
        return 1;
    }
    if (ht_churn_state == 1) {
        pr_puts(p, "heaptest: churn already running\n");
        return 1;
    }
    ht_churn_state = 1;
    struct task *t = task_spawn("heapchurn", ht_churn_task, (void *)(uintptr_t)delay,
                                TASK_ANY_CPU, 0);
    if (!t) {
        ht_churn_state = -1;
        pr_puts(p, "heaptest: out of memory for the churn task\n");
        return 1;
    }
    pr_printf(p, "heaptest: churn pid %d in %lu ms\n", task_pid(t), (unsigned long)delay);
    return 0;
}

static int ht_leak(const char *arg, struct printer *p)
{
    uint64_t n;
    if (!arg || !parse_range(arg, 1, HT_LEAK_MAX, &n)) {
        pr_printf(p, "heaptest: leak count '%s' out of range (1-%u)\n", arg ? arg : "",
                  HT_LEAK_MAX);
        return 1;
    }
    if (!heaptest_site_leak((unsigned)n)) {
        pr_puts(p, "heaptest: out of memory while leaking\n");
        return 1;
    }
    pr_printf(p, "heaptest: leaked %lu x %u bytes\n", (unsigned long)n, HT_L_SIZE);
    return 0;
}

static int ht_status(struct printer *p)
{
    static const char *const st[] = { "no memory", "never run", "running", "done" };
    pr_printf(p, "heaptest: churn %s", st[ht_churn_state + 1]);
    if (ht_churn_state == 2)
        pr_printf(p, " in %lu ms", (unsigned long)ht_churn_ms);
    pr_printf(p, "; stress %u running, %u done, %lu pairs, %lu failed; keep %s\n",
              ht_stress_running, ht_stress_done, (unsigned long)ht_stress_pairs,
              (unsigned long)ht_stress_fails, ht_a ? "holds its blocks" : "holds nothing");
    return 0;
}

#define HT_USAGE "heaptest keep|free|churn [ms]|leak <n>|stress <ms>|status"

static int cmd_heaptest(int argc, char **argv, struct printer *p)
{
    const char *w = argc > 1 ? argv[1] : "", *arg = argc > 2 ? argv[2] : NULL;
    if (argc < 2 || argc > 3) {
        pr_puts(p, "heaptest: usage: " HT_USAGE "\n");
        return 1;
    }
    bool takes_arg = !strcmp(w, "churn") || !strcmp(w, "leak") || !strcmp(w, "stress");
    if (arg && !takes_arg) {
        pr_printf(p, "heaptest: %s takes no argument (usage: " HT_USAGE ")\n", w);
        return 1;
    }
    if (!strcmp(w, "keep"))
        return ht_keep(p);
    if (!strcmp(w, "free")) {
        ht_free_kept();
        pr_puts(p, "heaptest: freed\n");
        return 0;
    }
    if (!strcmp(w, "churn"))
        return ht_churn(arg, p);
    if (!strcmp(w, "leak"))
        return ht_leak(arg, p);
    if (!strcmp(w, "stress"))
        return ht_stress(arg, p);
    if (!strcmp(w, "status"))
        return ht_status(p);
    pr_printf(p, "heaptest: unknown '%s' (usage: " HT_USAGE ")\n", w);
    return 1;
}
SHELL_COMMAND(heaptest, "heaptest", HT_USAGE "  heap profiling's test workload", cmd_heaptest);
