/* net/netload.c: the run behind `netload`, a UDP load test from the
 * kernel's end of the wire (docs/netload.md), so `profile` has network
 * work to look at. The command, which checks and names its arguments, is
 * kernel/cmd/netload.c; it calls netload_send, netload_recv,
 * netload_status and netload_stop (net/netload.h) with values already in
 * range.
 *
 * A run is one killable background task: send and recv return once it
 * is started.
 * Payloads are uapi/netload.c's, the same code the host peer
 * (tools/netload) links, so both ends agree byte for byte.
 *
 * One run at a time, its state in `nl` under nl.lock: the receive handler
 * (network receive task), the run's task and the command all touch it. */
#include "kernel/console.h"
#include "kernel/sched.h"
#include "kernel/spinlock.h"
#include "kernel/time.h"
#include "lib/string.h"
#include "net/net.h"
#include "net/netload.h"
#include "uapi/netload.h"

#define NL_SRC_PORT   9001           /* source port of what `send` sends */
#define NL_WINDOW     (1u << 16)     /* dup/reorder memory, in datagrams */
#define NL_STOP_WAIT_MS 3000

enum nl_mode { NL_NONE, NL_SEND, NL_RECV };

static struct {
    spinlock_t lock;
    bool active;                     /* a run's task exists */
    enum nl_mode mode;
    int pid;
    uint32_t ip;
    uint16_t port, run;
    uint64_t ms, size, pps;
    uint64_t start_ns, end_ns;       /* end_ns 0 while running */
    /* send */
    uint64_t sent, nobuf, errors;
    int last_error;
    /* recv */
    struct nl_track track;
    bool have_run;
    uint16_t rx_run;
    uint64_t foreign, first_ns, last_ns;
} nl = { .lock = SPINLOCK_INIT("netload") };

static uint8_t nl_bits[NL_WINDOW / 8];
static uint8_t nl_txbuf[NL_SIZE_MAX];
static uint16_t nl_run_counter;

/* ---- statistics ---- */

struct nl_figures {
    uint64_t datagrams, bytes, ns;
};

/* "datagrams D bytes B seconds S.SSS dps N mbps M.MM": integer arithmetic
 * only (no floating point in the kernel). */
static void nl_print_rates(struct printer *p, const struct nl_figures *f)
{
    uint64_t ms = f->ns / 1000000;
    uint64_t dps = f->ns ? f->datagrams * 1000000000ull / f->ns : 0;
    /* bits/ns = Gbit/s; x1000 Mbit/s, x100 for two decimals. Overflows
     * only past 2.3e13 bytes, far beyond 600 s at any rate we can reach. */
    uint64_t mbps100 = f->ns ? f->bytes * 800000ull / f->ns : 0;
    pr_printf(p, "datagrams %lu bytes %lu seconds %lu.%03lu dps %lu mbps %lu.%02lu",
              f->datagrams, f->bytes, ms / 1000, ms % 1000, dps, mbps100 / 100, mbps100 % 100);
}

/* Print the run's figures; caller holds nl.lock (the printer is a buffer
 * printer then, never one that sleeps). */
static void nl_print_locked(struct printer *p)
{
    uint64_t now = time_ns();
    uint64_t end = nl.end_ns ? nl.end_ns : now;
    char ip[16];
    if (nl.mode == NL_SEND) {
        struct nl_figures f = { nl.sent, nl.sent * nl.size, end - nl.start_ns };
        pr_printf(p, "netload send %s:%u: ", net_fmt_ip(ip, nl.ip), nl.port);
        nl_print_rates(p, &f);
        pr_printf(p, " size %lu ring-full retries %lu errors %lu run %u\n",
                  nl.size, nl.nobuf, nl.errors, nl.run);
    } else {
        /* The traffic's own span (first to last datagram), as the host
         * sink measures it; 0 with fewer than two datagrams. */
        uint64_t span = nl.track.datagrams > 1 ? nl.last_ns - nl.first_ns : 0;
        struct nl_figures f = { nl.track.datagrams, nl.track.bytes, span };
        pr_printf(p, "netload recv port %u: ", nl.port);
        nl_print_rates(p, &f);
        pr_printf(p, " lost %lu dup %lu reordered %lu foreign %lu run %u\n",
                  nl_track_lost(&nl.track), nl.track.dup, nl.track.reordered,
                  nl.foreign, nl.have_run ? nl.rx_run : 0);
    }
}

/* Into a buffer under the lock, then out through p (which may sleep). */
static void nl_print(struct printer *p)
{
    char buf[320];
    struct buf_printer bp;
    buf_printer_init(&bp, buf, sizeof buf);
    unsigned long f = spin_lock(&nl.lock);
    nl_print_locked(&bp.pr);
    spin_unlock(&nl.lock, f);
    pr_puts(p, buf);
}

/* The console as a printer: a run's summary is printed when it ends, long
 * after its command returned. */
static void nl_console_write(struct printer *p, const char *s, size_t n)
{
    while (n) {
        int k = n > 200 ? 200 : (int)n;
        kprintf("%.*s", k, s);
        s += k;
        n -= (size_t)k;
    }
}

static void nl_finish(void)
{
    struct printer console = { nl_console_write };
    unsigned long f = spin_lock(&nl.lock);
    nl.end_ns = time_ns();
    spin_unlock(&nl.lock, f);
    nl_print(&console);
    f = spin_lock(&nl.lock);
    nl.active = false;
    spin_unlock(&nl.lock, f);
}

static bool nl_time_left(uint64_t deadline)
{
    return time_ns() < deadline && !task_should_stop();
}

/* ---- send ---- */

static void nl_send_task(void *arg)
{
    uint64_t start = time_ns();
    uint64_t deadline = start + nl.ms * 1000000;
    uint64_t size = nl.size, pps = nl.pps;
    uint32_t seq = 0;
    nl_fill_pattern(nl_txbuf, size);
    nl.start_ns = start;

    while (nl_time_left(deadline)) {
        if (pps) {
            /* An absolute schedule, so a late datagram does not slow the
             * rest; sleep_ms has tick resolution, so at high rates the
             * datagrams go in small bursts with the right average. */
            uint64_t due = start + (uint64_t)seq * 1000000000ull / pps;
            if (due >= deadline)
                break;
            uint64_t now = time_ns();
            if (due > now + 1000000) {
                sleep_ms((due - now) / 1000000);
                continue;
            }
        }
        nl_build(nl_txbuf, nl.run, seq, time_ns());
        int rc = udp_send(nl.ip, NL_SRC_PORT, nl.port, nl_txbuf, size);
        if (rc == 0 || rc == NET_QUEUED) {
            unsigned long f = spin_lock(&nl.lock);
            nl.sent++;
            spin_unlock(&nl.lock, f);
            seq++;
        } else if (rc == NET_ERR_NOBUF || rc == NET_ERR_NOARP) {
            /* The device (or ARP) is behind: the same datagram again. */
            unsigned long f = spin_lock(&nl.lock);
            nl.nobuf++;
            spin_unlock(&nl.lock, f);
            yield();
        } else {
            unsigned long f = spin_lock(&nl.lock);
            nl.errors++;
            nl.last_error = rc;
            spin_unlock(&nl.lock, f);
            kprintf("netload: send failed (error %d): run ended\n", rc);
            break;
        }
    }
    nl_finish();
}

/* ---- recv ---- */

/* In the network receive task, per datagram: count, under the lock. */
static void nl_input(void *ctx, uint32_t src_ip, uint16_t src_port,
                     const void *data, size_t len)
{
    struct nl_hdr h = { 0 };
    bool ok = nl_parse(data, len, &h);
    uint64_t now = time_ns();
    unsigned long f = spin_lock(&nl.lock);
    if (ok && !nl.have_run) {
        nl.have_run = true;
        nl.rx_run = h.run;           /* lock onto the first run we see */
    }
    if (!ok || h.run != nl.rx_run) {
        nl.foreign++;
    } else {
        if (nl.track.datagrams == 0)
            nl.first_ns = now;
        nl.last_ns = now;
        nl_track_seq(&nl.track, h.seq, len);
    }
    spin_unlock(&nl.lock, f);
}

static void nl_recv_task(void *arg)
{
    uint64_t deadline = nl.start_ns + nl.ms * 1000000;
    while (nl_time_left(deadline)) {
        uint64_t left = (deadline - time_ns()) / 1000000;
        sleep_ms(left < 10 ? (left ? left : 1) : 10);   /* polls the stop flag */
    }
    udp_unbind(nl.port);             /* waits out a handler call in progress */
    nl_finish();
}

/* ---- the command ---- */

/* Take the single run slot, set its parameters and reset the figures,
 * all under the lock `netload` reads them with. False if taken. */
static bool nl_take_slot(enum nl_mode mode, uint32_t ip, uint16_t port, uint64_t ms,
                     uint64_t size, uint64_t pps, int *busy_pid)
{
    unsigned long f = spin_lock(&nl.lock);
    if (nl.active) {
        *busy_pid = nl.pid;
        spin_unlock(&nl.lock, f);
        return false;
    }
    nl.active = true;
    nl.mode = mode;
    nl.ip = ip;
    nl.port = port;
    nl.ms = ms;
    nl.size = size;
    nl.pps = pps;
    nl.pid = 0;
    nl.sent = nl.nobuf = nl.errors = 0;
    nl.last_error = 0;
    nl_track_init(&nl.track, nl_bits, NL_WINDOW);
    nl.have_run = false;
    nl.rx_run = 0;
    nl.foreign = nl.first_ns = nl.last_ns = 0;
    nl.start_ns = time_ns();
    nl.end_ns = 0;
    nl.run = (uint16_t)(++nl_run_counter ^ (uint16_t)(nl.start_ns >> 10));
    spin_unlock(&nl.lock, f);
    return true;
}

static void nl_release(void)
{
    unsigned long f = spin_lock(&nl.lock);
    nl.active = false;
    nl.mode = NL_NONE;
    spin_unlock(&nl.lock, f);
}

static void nl_set_pid(int pid)
{
    unsigned long f = spin_lock(&nl.lock);
    nl.pid = pid;
    spin_unlock(&nl.lock, f);
}

/* ---- the operations kernel/cmd/netload.c runs (net/netload.h) ---- */

int netload_send(uint32_t ip, uint16_t port, uint64_t ms, uint64_t size, uint64_t pps,
                 struct printer *p)
{
    if (!net_ip()) {
        pr_puts(p, "netload: no network device\n");
        return 1;
    }
    int busy;
    if (!nl_take_slot(NL_SEND, ip, port, ms, size, pps, &busy)) {
        pr_printf(p, "netload: busy (pid %d)\n", busy);
        return 1;
    }
    struct task *t = task_spawn("netload", nl_send_task, NULL, TASK_ANY_CPU, TASK_KILLABLE);
    if (!t) {
        nl_release();
        pr_puts(p, "netload: no memory for the task\n");
        return 1;
    }
    nl_set_pid(task_pid(t));
    char b[16];
    pr_printf(p, "netload: sending %lu-byte datagrams to %s:%u for %lu ms", size,
              net_fmt_ip(b, ip), port, ms);
    if (pps)
        pr_printf(p, " at %lu/s", pps);
    pr_printf(p, " (pid %d, run %u)\n", task_pid(t), nl.run);
    return 0;
}


int netload_recv(uint16_t port, uint64_t ms, struct printer *p)
{
    if (!net_ip()) {
        pr_puts(p, "netload: no network device\n");
        return 1;
    }
    int busy;
    if (!nl_take_slot(NL_RECV, 0, port, ms, 0, 0, &busy)) {
        pr_printf(p, "netload: busy (pid %d)\n", busy);
        return 1;
    }
    int rc = udp_bind(port, nl_input, NULL);
    if (rc != 0) {
        nl_release();
        pr_printf(p, "netload: port %u %s\n", port,
                  rc == NET_ERR_BUSY ? "is in use (udpshell or another binding)"
                                     : "cannot be bound (binding table full)");
        return 1;
    }
    struct task *t = task_spawn("netload", nl_recv_task, NULL, TASK_ANY_CPU, TASK_KILLABLE);
    if (!t) {
        udp_unbind(port);
        nl_release();
        pr_puts(p, "netload: no memory for the task\n");
        return 1;
    }
    nl_set_pid(task_pid(t));
    pr_printf(p, "netload: receiving on port %u for %lu ms (pid %d)\n", port, ms, task_pid(t));
    return 0;
}


static bool nl_is_active(void)
{
    return __atomic_load_n(&nl.active, __ATOMIC_ACQUIRE);
}

int netload_stop(struct printer *p)
{
    unsigned long f = spin_lock(&nl.lock);
    int pid = nl.active ? nl.pid : 0;
    spin_unlock(&nl.lock, f);
    if (!pid) {
        pr_puts(p, "netload: no run in progress\n");
        return 1;
    }
    task_kill(pid);
    /* Wait for the task to unbind and print, so the port is free and a
     * new run can start as soon as this command returns. */
    uint64_t give_up = time_ms() + NL_STOP_WAIT_MS;
    while (nl_is_active() && time_ms() < give_up)
        sleep_ms(10);
    if (nl_is_active()) {
        pr_printf(p, "netload: pid %d asked to stop, still running\n", pid);
        return 1;
    }
    pr_printf(p, "netload: stopped pid %d\n", pid);
    nl_print(p);
    return 0;
}


int netload_status(struct printer *p)
{
    unsigned long f = spin_lock(&nl.lock);
    enum nl_mode mode = nl.mode;
    bool active = nl.active;
    int pid = nl.pid;
    spin_unlock(&nl.lock, f);
    if (mode == NL_NONE) {
        pr_puts(p, "netload: no run yet\n");
        return 0;
    }
    if (active)
        pr_printf(p, "netload: running (pid %d)\n", pid);
    else
        pr_puts(p, "netload: last run (finished)\n");
    nl_print(p);
    return 0;
}
