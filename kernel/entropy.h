/* kernel/entropy.h: what the entropy core (kernel/entropy.c) offers the
 * kernel beyond hal/entropy.h, the contract portable code uses. */
#pragma once

struct printer;

/* `lscpu`'s line: the source, the words drawn and the instruction's empty
 * tries; or none, and whether a source failed its checks. */
void entropy_print(struct printer *p);
