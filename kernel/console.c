/* kernel/console.c: kprintf, the serial shell's printer, serial input. */
#include "kernel/console.h"
#include "hal/console.h"
#include "kernel/panic.h"
#include "kernel/percpu.h"
#include "kernel/sched.h"
#include "kernel/spinlock.h"

static spinlock_t console_lock = SPINLOCK_INIT;

/* The panicking CPU writes regardless: the CPU holding the lock may be the
 * one that is stopped. Everyone else serialises whole lines. */
static bool console_take(unsigned long *f)
{
    if (panic_cpu == (int)cpu_index()) {
        *f = irq_save();
        return false;
    }
    *f = spin_lock(&console_lock);
    return true;
}

static void console_give(bool taken, unsigned long f)
{
    if (taken)
        spin_unlock(&console_lock, f);
    else
        irq_restore(f);
}

static void raw_write(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n')
            uart_putc('\r');
        uart_putc(s[i]);
    }
}

void console_init(void) { uart_init(); }

void kprintf(const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    int n = fmt_vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 1)
        n = sizeof buf - 1;
    unsigned long f;
    bool taken = console_take(&f);
    raw_write(buf, (size_t)n);
    console_give(taken, f);
}

/* The shell's printer collects a line and writes it whole. */
static struct {
    struct printer pr;
    char line[256];
    size_t len;
} shell_pr;

static void flush_line(void)
{
    unsigned long f;
    bool taken = console_take(&f);
    raw_write(shell_pr.line, shell_pr.len);
    console_give(taken, f);
    shell_pr.len = 0;
}

static void shell_write(struct printer *p, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        shell_pr.line[shell_pr.len++] = s[i];
        if (s[i] == '\n' || shell_pr.len == sizeof shell_pr.line)
            flush_line();
    }
    /* A prompt or an echo has no newline: it must still appear now. */
    if (shell_pr.len)
        flush_line();
}

struct printer *console_printer(void)
{
    shell_pr.pr.write = shell_write;
    return &shell_pr.pr;
}

/* Input: the UART interrupt fills a ring; the shell task sleeps on it. */
#define RX_RING 256
static char rx_ring[RX_RING];
static volatile unsigned rx_head, rx_tail;
static struct waitq rx_wait = WAITQ_INIT;
static bool rx_irq;

static void on_byte(char c)
{
    unsigned h = rx_head;
    if (h - rx_tail < RX_RING) {
        rx_ring[h % RX_RING] = c;
        __atomic_store_n(&rx_head, h + 1, __ATOMIC_RELEASE);
    }
    waitq_wake_all(&rx_wait);
}

void console_enable_input_irq(void)
{
    uart_enable_rx_irq(on_byte);
    rx_irq = true;
}

static bool rx_ready(void *arg)
{
    return __atomic_load_n(&rx_head, __ATOMIC_ACQUIRE) != rx_tail;
}

int console_getc(void)
{
    if (!rx_irq) {
        int c;
        while ((c = uart_getc_nowait()) < 0)
            cpu_relax();
        return c;
    }
    waitq_wait(&rx_wait, rx_ready, 0);
    char c = rx_ring[rx_tail % RX_RING];
    __atomic_store_n(&rx_tail, rx_tail + 1, __ATOMIC_RELEASE);
    return (unsigned char)c;
}
