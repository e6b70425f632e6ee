/* arch/x86_64/uart.c: the 16550 on COM1. Transmit is polled; receive is
 * interrupt-driven once the IOAPIC routes IRQ 4. */
#include "arch/x86_64/ioapic.h"
#include "arch/x86_64/trap.h"
#include "arch/x86_64/x86.h"
#include "kernel/irqname.h"
#include "hal/console.h"

#define COM1 0x3f8
#define RBR 0
#define THR 0
#define IER 1
#define FCR 2
#define LCR 3
#define MCR 4
#define LSR 5
#define LSR_DATA  0x01
#define LSR_OE    0x02             /* overrun: a byte was lost before this one */
#define LSR_THRE  0x20
#define IER_RDA   0x01             /* received data available */

static void (*rx_fn)(void);

void uart_init(void)
{
    outb(COM1 + IER, 0);
    outb(COM1 + LCR, 0x80);          /* divisor latch */
    outb(COM1 + 0, 1);               /* 115200 baud */
    outb(COM1 + 1, 0);
    outb(COM1 + LCR, 0x03);          /* 8N1 */
    outb(COM1 + FCR, 0x07);          /* FIFO on, cleared */
    outb(COM1 + MCR, 0x0b);          /* DTR, RTS, OUT2 (IRQ line) */
}

void uart_putc(char c)
{
    for (int i = 0; i < 100000 && !(inb(COM1 + LSR) & LSR_THRE); i++)
        pause();
    outb(COM1 + THR, (uint8_t)c);
}

/* Reading LSR clears OE, so the overrun is reported with the byte that
 * follows the loss. */
int uart_getc_nowait(void)
{
    uint8_t lsr = inb(COM1 + LSR);
    if (!(lsr & LSR_DATA))
        return -1;
    return inb(COM1 + RBR) | (lsr & LSR_OE ? UART_RX_OVERRUN : 0);
}

static void uart_irq(struct trap_frame *tf, void *arg)
{
    rx_fn();
}

void uart_rx_irq(bool on)
{
    outb(COM1 + IER, on ? IER_RDA : 0);
}

void uart_enable_rx_irq(void (*on_rx)(void))
{
    rx_fn = on_rx;
    irq_set_handler(VEC_IRQ_BASE + 4, uart_irq, 0);
    (void)irqname_set(VEC_IRQ_BASE + 4, "uart");
    ioapic_route_isa(4, VEC_IRQ_BASE + 4);
    uart_rx_irq(true);
}
