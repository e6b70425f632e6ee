// LINK: kernel/console_rx.c
/* Host tests of kernel/console_rx.c against a fake UART: a 16-byte FIFO
 * fed by a "sender" that, like QEMU's chardev, only delivers while the
 * FIFO has room, and whose receive interrupt is modelled as a level:
 * pending while unmasked with bytes in the FIFO. */
#include "test.h"
#include "fake_hal.h"
#include "hal/console.h"
#include "kernel/console_rx.h"
#include <stdbool.h>

#define FIFO 16

static unsigned char fifo[FIFO];
static unsigned f_head, f_tail;
static bool irq_on = true, overrun_next;
static unsigned masks, unmasks;

static const char *src;          /* what the sender still has to send */
static size_t src_len, src_pos;

void uart_init(void) {}
void uart_putc(char c) { (void)c; }
void uart_enable_rx_irq(void (*on_rx)(void)) { (void)on_rx; }
void uart_rx_irq(bool on) { irq_on = on; on ? unmasks++ : masks++; }

int uart_getc_nowait(void)
{
    if (f_head == f_tail)
        return -1;
    int c = fifo[f_tail++ % FIFO];
    if (overrun_next) {
        overrun_next = false;
        c |= UART_RX_OVERRUN;
    }
    return c;
}

/* The sender: fills the FIFO as far as it has room (backpressure). */
static void line_deliver(void)
{
    while (src_pos < src_len && f_head - f_tail < FIFO)
        fifo[f_head++ % FIFO] = (unsigned char)src[src_pos++];
}

/* Runs the interrupt if its level is up, as the CPU would. */
static void maybe_interrupt(void)
{
    if (irq_on && f_head != f_tail)
        console_rx_interrupt();
}

static void reset(const char *s)
{
    console_rx_test_reset();
    f_head = f_tail = 0;
    irq_on = true;
    overrun_next = false;
    masks = unmasks = 0;
    src = s;
    src_len = strlen(s);
    src_pos = 0;
}

static char big[3 * CONSOLE_RX_RING + 123];

static void fill_big(void)
{
    for (size_t i = 0; i < sizeof big - 1; i++)
        big[i] = (char)('a' + i % 26);
    big[sizeof big - 1] = 0;
}

/* A paste three times the ring, read by a consumer that only starts once
 * the ring has filled: every byte arrives, in order; the UART was masked
 * (throttled) instead of anything being thrown away. */
TEST(console_rx_paste_larger_than_ring_loses_nothing)
{
    fill_big();
    reset(big);
    /* The consumer is asleep: the sender and the interrupt run until the
     * interrupt gives up (masked, ring full, FIFO full). */
    for (int i = 0; i < 100000 && src_pos < src_len; i++) {
        line_deliver();
        maybe_interrupt();
        if (!irq_on && f_head - f_tail == FIFO)
            break;
    }
    CHECK(!irq_on);
    struct console_rx_stats st;
    console_rx_stats(&st);
    CHECK_EQ(st.queued, CONSOLE_RX_RING);
    CHECK_EQ(st.throttles, 1);
    /* Now the consumer reads everything, the sender keeps sending. */
    size_t got = 0;
    bool in_order = true;
    for (int i = 0; i < 10000000 && got < src_len; i++) {
        int c = console_rx_take();
        line_deliver();
        maybe_interrupt();
        if (c < 0)
            continue;
        if (c != (unsigned char)big[got])
            in_order = false;
        got++;
    }
    CHECK_EQ(got, src_len);
    CHECK(in_order);
    CHECK(irq_on);                  /* resumed once the paste was through */
    console_rx_stats(&st);
    CHECK_EQ(st.received, src_len);
    CHECK_EQ(st.overruns, 0);
    CHECK_EQ(st.queued, 0);
    CHECK(masks >= 1 && unmasks >= 1);
}

/* While throttled, an interrupt that still arrives (latched before the
 * mask) must not touch the ring: the consumer is the producer then. */
TEST(console_rx_late_interrupt_while_throttled_is_ignored)
{
    fill_big();
    reset(big);
    for (int i = 0; i < 100000 && irq_on; i++) {
        line_deliver();
        maybe_interrupt();
    }
    CHECK(!irq_on);
    unsigned before_tail = f_tail;
    console_rx_interrupt();         /* the late one */
    CHECK_EQ(f_tail, before_tail);  /* nothing read from the UART */
    struct console_rx_stats st;
    console_rx_stats(&st);
    CHECK_EQ(st.queued, CONSOLE_RX_RING);
}

/* A consumer that takes bytes does not resume the UART until half the
 * ring is free: resuming at every byte would thrash the mask. */
TEST(console_rx_resumes_at_half)
{
    fill_big();
    reset(big);
    for (int i = 0; i < 100000 && irq_on; i++) {
        line_deliver();
        maybe_interrupt();
    }
    CHECK(!irq_on);
    for (unsigned i = 0; i < CONSOLE_RX_RING / 2 - 1; i++)
        CHECK(console_rx_take() >= 0);
    CHECK(!irq_on);
    CHECK(console_rx_take() >= 0);
    CHECK(irq_on);
}

/* Bytes the UART itself lost are counted, never silent. */
TEST(console_rx_counts_uart_overrun)
{
    reset("abc");
    line_deliver();
    overrun_next = true;
    maybe_interrupt();
    CHECK_EQ(console_rx_take(), 'a');
    CHECK_EQ(console_rx_take(), 'b');
    CHECK_EQ(console_rx_take(), 'c');
    CHECK_EQ(console_rx_take(), -1);
    struct console_rx_stats st;
    console_rx_stats(&st);
    CHECK_EQ(st.overruns, 1);
    CHECK_EQ(st.received, 3);
}
