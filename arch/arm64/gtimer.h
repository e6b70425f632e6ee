/* arch/arm64/gtimer.h: the per-CPU tick from the generic timer. */
#pragma once

void gtimer_init(unsigned intid, unsigned hz);   /* boot cpu: PPI (0: 27), rate */
unsigned gtimer_intid(void);
void gtimer_start(void);                         /* this cpu's tick */
void gtimer_rearm(void);                         /* from the tick's handler */
