/* hal/console.h: the serial port, as the console needs it. */
#pragma once
#include <stdbool.h>

void uart_init(void);
void uart_putc(char c);              /* polled transmit */

/* One received byte (0-255), UART_RX_OVERRUN or'ed in when the UART
 * reports that bytes were lost before it (its receive FIFO overflowed),
 * or -1 if none is waiting. */
#define UART_RX_OVERRUN 0x100
int uart_getc_nowait(void);

/* Interrupt-driven receive: on_rx runs in interrupt context whenever the
 * UART has received bytes, after the UART's own interrupt status is
 * cleared; it drains them with uart_getc_nowait. */
void uart_enable_rx_irq(void (*on_rx)(void));

/* Mask or unmask the receive interrupt at the UART. Masked, received bytes
 * stay in its FIFO, and a full FIFO holds the sender off (QEMU stops
 * reading its chardev; a real line relies on the sender's flow control):
 * the console's backpressure. */
void uart_rx_irq(bool on);
