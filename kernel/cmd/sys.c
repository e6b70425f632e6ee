/* kernel/cmd/sys.c: version, mem, echo, uptime, panic. */
#include "hal/cpu.h"
#include "hal/pmu.h"
#include "kernel/backtrace.h"
#include "kernel/buildid.h"
#include "kernel/entropy.h"
#include "kernel/panic.h"
#include "kernel/sha256_boot.h"
#include "kernel/shell.h"
#include "kernel/time.h"
#include "lib/string.h"
#include "mm/heap.h"
#include "mm/heapprof.h"
#include "mm/pmm.h"

#define SONDE_VERSION "0.1"
#if defined(__aarch64__)
#define SONDE_ARCH "arm64"
#else
#define SONDE_ARCH "x86_64"
#endif

static int cmd_version(int argc, char **argv, struct printer *p)
{
    pr_printf(p, "Sonde %s (%s), built %s %s\n", SONDE_VERSION, SONDE_ARCH, __DATE__, __TIME__);
    const char *id = build_id();
    pr_printf(p, "build-id %s\n", id[0] ? id : "none (linked without --build-id)");
    return 0;
}
SHELL_COMMAND(version, "version", "version          kernel version", cmd_version);

static int cmd_mem(int argc, char **argv, struct printer *p)
{
    struct heap_stats hs;
    heap_stats(&hs);
    size_t total = pmm_total_pages(), free = pmm_free_pages();
    pr_printf(p, "total %zu KiB, free %zu KiB, heap in use %zu bytes (%zu pages, %zu allocs, %zu frees)\n",
              total * 4, free * 4, hs.in_use, hs.pages, hs.allocs, hs.frees);
    struct heapprof_stats st;
    heapprof_copy_table(NULL, 0, &st);
    if (st.hs_rate)
        pr_printf(p, "heap profiling on, rate %u bytes: ", st.hs_rate);
    else
        pr_puts(p, "heap profiling off: ");
    pr_printf(p, "%u sampled blocks live (table %u), %lu samples, %lu did not fit, "
              "%lu retired\n", st.hs_live, HEAPPROF_BLOCKS, (unsigned long)st.hs_samples,
              (unsigned long)st.hs_overflow, (unsigned long)st.hs_retired);
    if (st.hs_missing)      /* a marked block freed with no entry: a bug */
        pr_printf(p, "heap profiling: %lu sampled frees found no entry\n",
                  (unsigned long)st.hs_missing);
    return 0;
}
SHELL_COMMAND(mem, "mem", "mem              memory: total, free, heap in use", cmd_mem);

static int cmd_echo(int argc, char **argv, struct printer *p)
{
    for (int i = 1; i < argc; i++)
        pr_printf(p, "%s%s", argv[i], i + 1 < argc ? " " : "");
    pr_puts(p, "\n");
    return 0;
}
SHELL_COMMAND(echo, "echo", "echo [words...]  print the words", cmd_echo);

static int cmd_uptime(int argc, char **argv, struct printer *p)
{
    uint64_t ns = time_ns();
    pr_printf(p, "up %lu.%03lu s (%lu ns), %u cpus\n", ns / 1000000000,
              ns / 1000000 % 1000, ns, cpu_count());
    return 0;
}
SHELL_COMMAND(uptime, "uptime", "uptime           time since boot (monotonic clock)", cmd_uptime);

#if !defined(__aarch64__)
/* A known chain for `panic divzero`: a test finds these names, in order,
 * in the backtrace. noipa keeps each a frame of its own under its own
 * name (no inlining, and no .constprop/.isra clone of a static). */
static volatile int zero, sink;
/* The call after the division keeps this frame set up at the fault: with
 * nothing after it, GCC pops %rbp before the idiv and the walk would skip
 * panic_chain_middle (the known limit of frame-pointer walks). */
static __attribute__((noipa)) void panic_chain_sink(int x) { sink = x; }
static __attribute__((noipa)) int panic_chain_inner(int x)
{
    int r = x / zero;
    panic_chain_sink(r);
    return r + 1;
}
static __attribute__((noipa)) int panic_chain_middle(int x) { return panic_chain_inner(x + 1) + 1; }
static __attribute__((noipa)) int panic_chain_outer(int x) { return panic_chain_middle(x + 1) + 1; }
#endif

static int cmd_panic(int argc, char **argv, struct printer *p)
{
    const char *kind = argc > 1 ? argv[1] : "direct";
    if (argc > 2) {
        pr_printf(p, "panic: too many arguments (usage: panic [direct|pagefault|divzero|ud|nmi])\n");
        return 1;
    }
    if (strcmp(kind, "direct") == 0)
        panic("requested from the shell");
    if (strcmp(kind, "pagefault") == 0)
        return *(volatile int *)0x00007f0000000000ul;       /* never mapped */
    if (strcmp(kind, "divzero") == 0) {
#if defined(__aarch64__)
        /* sdiv by zero gives 0 on arm64: there is no exception to raise. */
        pr_printf(p, "panic: divzero: arm64 does not trap integer division by zero "
                     "(sdiv returns 0); try 'panic ud' or 'panic pagefault'\n");
        return 1;
#else
        return panic_chain_outer(1);
#endif
    }
    if (strcmp(kind, "ud") == 0)
        __builtin_trap();
    if (strcmp(kind, "nmi") == 0) {
        cpu_send_nmi_self();                                 /* nobody expects it */
        for (;;)
            cpu_relax();
    }
    pr_printf(p, "panic: unknown kind '%s' (direct, pagefault, divzero, ud, nmi)\n", kind);
    return 1;
}
SHELL_COMMAND(panic, "panic", "panic [direct|pagefault|divzero|ud|nmi]  stop the machine", cmd_panic);

static int cmd_lscpu(int argc, char **argv, struct printer *p)
{
    if (argc > 1) {
        pr_printf(p, "lscpu: takes no arguments\n");
        return 1;
    }
    cpu_describe(p);
    pmu_describe(p);
    entropy_print(p);
    sha256_boot_print(p);
    return 0;
}
SHELL_COMMAND(lscpu, "lscpu", "lscpu            the cpu, its performance counter, the profile source, "
              "the entropy source, the SHA-256", cmd_lscpu);
