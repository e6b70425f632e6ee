/* kernel/prof/quantile.c: a quantile of the sample costs, for the text
 * report's median (kernel/prof/report.c) and the bench's percentiles
 * (kernel/prof/session.c, prof_cost_permille).
 *
 * Profiler core: prefix prof_ and PROF_. */
#include "kernel/prof/quantile.h"

/* The k-th smallest of a[0..n) (0-based), exactly: Wirth's selection
 * (Hoare's partition around the current k-th, narrowing to the side
 * that holds k), expected linear; a is reordered, and on return nothing
 * below a[k] lies right of k. Signed indexes: j steps below 0. */
uint32_t prof_select(uint32_t *a, uint32_t n, uint32_t k)
{
    int64_t l = 0, m = (int64_t)n - 1, kk = k;
    while (l < m) {
        uint32_t x = a[kk];
        int64_t i = l, j = m;
        do {
            while (a[i] < x)
                i++;
            while (x < a[j])
                j--;
            if (i <= j) {
                uint32_t t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        } while (i <= j);
        if (j < kk)
            l = i;
        if (kk < i)
            m = j;
    }
    return a[kk];
}
