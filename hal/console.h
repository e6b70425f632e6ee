/* hal/console.h: the serial port, as the console needs it. */
#pragma once
#include <stdbool.h>

void uart_init(void);
void uart_putc(char c);              /* polled transmit */
int uart_getc_nowait(void);          /* -1 if no byte waiting */
void uart_enable_rx_irq(void (*on_byte)(char c));  /* interrupt-driven receive */
