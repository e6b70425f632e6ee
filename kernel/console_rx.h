/* kernel/console_rx.h: the serial console's receive ring (kernel/console_rx.c).
 *
 * Single producer, single consumer, and never silently lossy. The producer
 * is the UART interrupt, or, while the ring is throttled, the consumer
 * itself; the consumer is the serial shell's task. When the ring fills,
 * the interrupt stops draining the UART and masks its receive interrupt,
 * so bytes wait in the UART (and behind it, in the sender) instead of
 * being thrown away; the consumer drains the UART itself once it has made
 * room, and unmasks. What is still lost (the UART's own FIFO overflowed)
 * is counted. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define CONSOLE_RX_RING 4096   /* a pasted screenful and more */

struct console_rx_stats {
    uint64_t received;         /* bytes put in the ring */
    uint64_t overruns;         /* times the UART said it lost bytes */
    uint64_t throttles;        /* times the ring filled and the UART was masked */
    unsigned queued;           /* bytes in the ring now */
};

/* Interrupt context, from the UART's receive interrupt: move bytes from
 * the UART into the ring while there is room. No lock: the ring has one
 * producer at a time (see above). */
void console_rx_interrupt(void);

/* Task context: take one byte, or -1 if the ring is empty. Interrupts
 * may be on. Resumes a throttled UART once the ring is half empty. */
int console_rx_take(void);

bool console_rx_ready(void);
void console_rx_stats(struct console_rx_stats *s);

#ifdef SONDE_HOST_TEST
void console_rx_test_reset(void);
#endif
