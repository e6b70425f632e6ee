/* arch/x86_64/uart.c: the 16550 on COM1. Transmit is polled; receive is
 * interrupt-driven once the IOAPIC routes IRQ 4. */
#include "arch/x86_64/ioapic.h"
#include "arch/x86_64/trap.h"
#include "arch/x86_64/x86.h"
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
#define LSR_THRE  0x20

static void (*rx_fn)(char c);

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

int uart_getc_nowait(void)
{
    if (inb(COM1 + LSR) & LSR_DATA)
        return inb(COM1 + RBR);
    return -1;
}

static void uart_irq(struct trap_frame *tf, void *arg)
{
    int c;
    while ((c = uart_getc_nowait()) >= 0)
        rx_fn((char)c);
}

void uart_enable_rx_irq(void (*on_byte)(char c))
{
    rx_fn = on_byte;
    irq_set_handler(VEC_IRQ_BASE + 4, uart_irq, 0);
    ioapic_route_isa(4, VEC_IRQ_BASE + 4);
    outb(COM1 + IER, 0x01);          /* received data available */
}
