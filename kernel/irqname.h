/* kernel/irqname.h: which device an interrupt vector belongs to, for the
 * words of `trace` and `profile off`.
 *
 * The vector is what the trap path records (x86-64: the IDT vector;
 * arm64: the GIC INTID). Registration names it (arch code, at attach
 * time, before the vector is unmasked); readers are task context only
 * and take no lock. The interrupt path never reads the table: the
 * records carry the vector, the name is found when they are printed.
 *
 * Prefix irqname_. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#define IRQNAME_VECTORS 1024   /* covers x86-64's 256 vectors and the GIC's 1020 INTIDs */
#define IRQNAME_SHARE   2      /* devices named on one vector (a shared PCI line) */
#define IRQNAME_LEN     15     /* characters in one name */
/* The longest text irqname_text() writes, with its NUL: the shared
 * names joined by '+', or the fallback "CLASS N". */
#define IRQNAME_TEXT    (IRQNAME_SHARE * (IRQNAME_LEN + 1))

/* Name vec's device. name must live as long as the kernel (a string
 * literal): the table keeps the pointer. 1-IRQNAME_LEN characters of
 * [a-z0-9._-], so that it is one word in the shell's grammars. Naming a
 * vector with a name it has already is a no-op. 0, or -1: vec out of
 * range (0-IRQNAME_VECTORS-1), a name empty, too long or with another
 * character, or IRQNAME_SHARE names on the vector already. */
int irqname_set(unsigned vec, const char *name);

/* vec's name(s) into buf (joined by '+' where shared); false, buf
 * untouched, when none is registered or vec is out of range. */
bool irqname_get(unsigned vec, char *buf, size_t n);

/* The words for an interrupt in a report: its device's name, or where
 * vec is unnamed "CLASS N" (class: the trace's word, "device"). */
void irqname_text(unsigned vec, const char *class, char *buf, size_t n);

/* Forget every name (host tests: a fresh table per test). */
void irqname_reset(void);
