/* tests/unit/fake_klog.h: kprintf for a host test that checks what the
 * code under test prints: every call appends to klog, cut where it is
 * full (FAKE_KLOG_LEN bytes, 4096 unless the test defines it before the
 * include). A test clears it with klog[0] = 0. */
#pragma once
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#ifndef FAKE_KLOG_LEN
#define FAKE_KLOG_LEN 4096
#endif

static char klog[FAKE_KLOG_LEN];

void kprintf(const char *fmt, ...);
void kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = strlen(klog);
    vsnprintf(klog + n, sizeof klog - n, fmt, ap);
    va_end(ap);
}
