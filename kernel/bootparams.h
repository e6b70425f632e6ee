/* kernel/bootparams.h: the kernel command line and the boot checks that
 * are the same on every architecture (each arch's main.c calls them). */
#pragma once
#include <stdint.h>
#include "lib/parse.h"

/* Parse key=value words; report unknown keys and dropped words once.
 * The value of ushkey= is decoded, then overwritten with 'x' both in text
 * (in place: the caller's copy of the command line) and in the parsed copy,
 * so no later reader of either (a message, a command) can show it. */
const struct cmdline *boot_params_parse(char *text);
/* Where the kernel parses a copy of the loader's line (x86: the loader's
 * memory may be reused): copy text's whole words into dst (size bytes),
 * then wipe ushkey='s value in text, remembering how many ushkey words
 * the whole line had. boot_params_parse(dst) then refuses the key if the
 * copy lost any of them, as it does for words it drops itself. */
void boot_params_copy(char *dst, size_t size, char *text);
/* ushkey=: 1 and key filled (once; the stored copy is then wiped), 0 if
 * absent, -1 if given but unusable (already reported) or already taken. */
int boot_param_ushkey(uint8_t key[32]);
/* ushid=NAME (uapi/udpshell.h, USHP_ID_RULE): 1 and NAME copied to id
 * (USHP_ID_MAX + 1 bytes), 0 if absent, -1 if bad (reported, naming the
 * allowed form): the UDP shell then refuses to start, as for a bad key. */
int boot_param_ushid(char *id);
/* smp=N (1..MAX_CPUS), else MAX_CPUS; a bad value is reported. */
unsigned boot_param_smp(void);
/* pmu=auto|off|assume, handed to pmu_set_mode; a bad value is reported. */
void boot_param_pmu(void);
/* heapprof=R|off: heap profiling's sampling rate in bytes
 * (HEAPPROF_RATE_MIN..MAX, default HEAPPROF_RATE_DEF) or off, set in
 * mm/heapprof.h; a bad value is reported and the default used. */
void boot_param_heapprof(void);
/* The table the three-pass link baked in must name its own functions:
 * fn+1 must resolve to name+0x1, and name to fn. Panics otherwise. */
void symtab_selftest(uintptr_t fn, const char *name);
