/* kernel/console_rx.c: the serial console's receive ring (see the header
 * for the protocol). */
#include "kernel/console_rx.h"
#include "hal/console.h"
#include "hal/cpu.h"

static char ring[CONSOLE_RX_RING];
static unsigned head, tail;        /* free-running; head - tail bytes queued */
/* Set by the producer that found the ring full, after masking the UART;
 * cleared by the consumer once it has resumed it. While set, the UART's
 * interrupt is masked, so the consumer is the only producer. */
static bool throttled;
static uint64_t received, overruns, throttles;

static unsigned queued(void)
{
    return __atomic_load_n(&head, __ATOMIC_ACQUIRE) - __atomic_load_n(&tail, __ATOMIC_ACQUIRE);
}

/* Move bytes from the UART while the ring has room. True if the UART may
 * still hold bytes that did not fit. */
static bool fill(void)
{
    unsigned h = __atomic_load_n(&head, __ATOMIC_RELAXED);
    bool full = false;
    for (;;) {
        if (h - __atomic_load_n(&tail, __ATOMIC_ACQUIRE) >= CONSOLE_RX_RING) {
            full = true;
            break;
        }
        int c = uart_getc_nowait();
        if (c < 0)
            break;
        if (c & UART_RX_OVERRUN)
            __atomic_add_fetch(&overruns, 1, __ATOMIC_RELAXED);
        ring[h % CONSOLE_RX_RING] = (char)c;
        h++;
        __atomic_add_fetch(&received, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&head, h, __ATOMIC_RELEASE);
    }
    return full;
}

void console_rx_interrupt(void)
{
    /* Throttled, the consumer is the producer. An interrupt can still get
     * here after the mask: one the interrupt controller latched before it
     * (an edge on x86's IOAPIC), delivered after the handler that masked. */
    if (__atomic_load_n(&throttled, __ATOMIC_ACQUIRE))
        return;
    if (!fill())
        return;
    /* Mask first, then publish: a consumer that sees throttled set knows
     * the interrupt can no longer run fill() behind its back. */
    uart_rx_irq(false);
    __atomic_add_fetch(&throttles, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&throttled, true, __ATOMIC_RELEASE);
}

/* The consumer, with room again: drain what waited in the UART, then let
 * the interrupt take over. A byte that lands between fill()'s last empty
 * read and the unmask raises the (level) interrupt once unmasked. */
static void resume(void)
{
    unsigned long f = irq_save();
    if (!fill()) {
        __atomic_store_n(&throttled, false, __ATOMIC_RELEASE);
        uart_rx_irq(true);
    }
    irq_restore(f);
}

int console_rx_take(void)
{
    unsigned t = __atomic_load_n(&tail, __ATOMIC_RELAXED);
    int c = -1;
    if (__atomic_load_n(&head, __ATOMIC_ACQUIRE) != t) {
        c = (unsigned char)ring[t % CONSOLE_RX_RING];
        __atomic_store_n(&tail, t + 1, __ATOMIC_RELEASE);
    }
    if (__atomic_load_n(&throttled, __ATOMIC_ACQUIRE) && queued() <= CONSOLE_RX_RING / 2)
        resume();
    return c;
}

bool console_rx_ready(void)
{
    return queued() != 0;
}

void console_rx_stats(struct console_rx_stats *s)
{
    s->received = __atomic_load_n(&received, __ATOMIC_RELAXED);
    s->overruns = __atomic_load_n(&overruns, __ATOMIC_RELAXED);
    s->throttles = __atomic_load_n(&throttles, __ATOMIC_RELAXED);
    s->queued = queued();
}

#ifdef SONDE_HOST_TEST
void console_rx_test_reset(void)
{
    head = tail = 0;
    throttled = false;
    received = overruns = throttles = 0;
}
#endif
