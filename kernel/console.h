/* kernel/console.h: the console on serial: kprintf for the kernel, a
 * printer for the serial shell, and input for it. Output of one kprintf
 * (or one line of the shell printer) is never interleaved with another
 * CPU's; the panicking CPU writes even if another holds the lock. */
#pragma once
#include "lib/printf.h"

void console_init(void);
void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
struct printer *console_printer(void);   /* line-buffered, for the serial shell */
void console_enable_input_irq(void);
int console_getc(void);                   /* blocks (sleeps) until a byte arrives */
