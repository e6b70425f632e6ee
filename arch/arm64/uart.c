/* arch/arm64/uart.c: the PL011 (hal/console.h). Transmit is polled;
 * receive is interrupt-driven once the GIC routes its SPI. The base and
 * the interrupt come from the device tree (pl011_set); QEMU virt's are
 * the defaults, so the console works before the tree is read. */
#include "arch/arm64/arm64.h"
#include "arch/arm64/gic.h"
#include "hal/console.h"
#include "kernel/irqname.h"

#define DR      0x00
#define FR      0x18
#define LCR_H   0x2c
#define CR      0x30
#define IMSC    0x38
#define ICR     0x44
#define DR_OE   (1u << 11)               /* overrun: bytes lost before this one */
#define FR_RXFE (1u << 4)
#define FR_TXFF (1u << 5)
#define INT_RX  (1u << 4)
#define INT_RT  (1u << 6)

static uint64_t base = 0x09000000;
static unsigned intid = 33;             /* SPI 1 */
static void (*rx_fn)(void);

void pl011_set(uint64_t pa, unsigned irq)
{
    base = pa;
    intid = irq;
}

uint64_t pl011_base(void) { return base; }

void uart_init(void)
{
    mmio_write32(base + CR, 0);
    mmio_write32(base + LCR_H, 0x70);   /* 8 bits, FIFOs on */
    mmio_write32(base + IMSC, 0);
    mmio_write32(base + ICR, 0x7ff);
    mmio_write32(base + CR, 0x301);     /* UART, transmit and receive enabled */
}

void uart_putc(char c)
{
    for (int i = 0; i < 100000 && (mmio_read32(base + FR) & FR_TXFF); i++)
        __asm__ volatile("yield");
    mmio_write32(base + DR, (uint8_t)c);
}

int uart_getc_nowait(void)
{
    if (mmio_read32(base + FR) & FR_RXFE)
        return -1;
    uint32_t dr = mmio_read32(base + DR);
    return (int)(dr & 0xff) | (dr & DR_OE ? UART_RX_OVERRUN : 0);
}

/* Interrupt context: clear, then let the console drain. Draining the
 * FIFO is what drops the receive and timeout interrupts; the explicit
 * clear comes first, never after the drain: a byte landing between the
 * last empty check and a late clear would lose its interrupt, and QEMU's
 * PL011 raises RX only when the FIFO goes from empty to one byte, so every
 * later byte would wait too (the shell hangs with a line half received).
 * The same rule is why a throttled console drains the FIFO itself before
 * it unmasks (kernel/console_rx.c), rather than waiting for an interrupt
 * that a full FIFO never raises again. */
static void uart_irq(struct trap_frame *tf, void *arg)
{
    mmio_write32(base + ICR, INT_RX | INT_RT);
    rx_fn();
}

void uart_rx_irq(bool on)
{
    mmio_write32(base + IMSC, on ? INT_RX | INT_RT : 0);
}

void uart_enable_rx_irq(void (*on_rx)(void))
{
    rx_fn = on_rx;
    gic_set_handler(intid, uart_irq, 0);
    (void)irqname_set(intid, "uart");
    gic_enable_spi(intid, false);
    uart_rx_irq(true);
}
