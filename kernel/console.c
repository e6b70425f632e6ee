/* kernel/console.c: kprintf, the serial shell's printer, serial input
 * (the ring itself is kernel/console_rx.c), the `console` command. */
#include "kernel/console.h"
#include "kernel/console_rx.h"
#include "hal/console.h"
#include "kernel/panic.h"
#include "kernel/percpu.h"
#include "kernel/sched.h"
#include "kernel/spinlock.h"

static spinlock_t console_lock = SPINLOCK_INIT("console");

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

/* Input: the UART interrupt fills the receive ring (console_rx.c); the
 * shell task sleeps until it has a byte. */
static struct waitq rx_wait = WAITQ_INIT("console-rx");
static bool rx_irq;

static void on_rx(void)
{
    console_rx_interrupt();
    waitq_wake_all(&rx_wait);
}

void console_enable_input_irq(void)
{
    uart_enable_rx_irq(on_rx);
    rx_irq = true;
}

static bool rx_ready(void *arg)
{
    return console_rx_ready();
}

int console_getc(void)
{
    int c;
    if (!rx_irq) {
        while ((c = uart_getc_nowait()) < 0)
            cpu_relax();
        return c & 0xff;
    }
    while ((c = console_rx_take()) < 0)
        waitq_wait(&rx_wait, rx_ready, 0);
    return c;
}
