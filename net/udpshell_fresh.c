/* net/udpshell_fresh.c: the authenticated UDP shell's window of accepted
 * nonces and its recent requests (net/udpshell_fresh.h says why this
 * shape). A request costs a pass over 64 nonces and 8 requests: nothing
 * next to the HMAC that came before it. */
#include "net/udpshell_fresh.h"

void ushf_init(struct ushf *f)
{
    *f = (struct ushf){ 0 };
}

bool ushf_fresh(const struct ushf *f, uint64_t nonce)
{
    if (nonce <= f->floor)
        return false;               /* also nonce 0, which no request may use */
    for (unsigned i = 0; i < f->nkept; i++)
        if (f->kept[i] == nonce)
            return false;
    return true;
}

/* Where the lowest kept nonce is. */
static unsigned ushf_lowest(const struct ushf *f)
{
    unsigned m = 0;
    for (unsigned i = 1; i < f->nkept; i++)
        if (f->kept[i] < f->kept[m])
            m = i;
    return m;
}

void ushf_accept(struct ushf *f, const struct ushf_req *r)
{
    if (r->nonce > f->highest)
        f->highest = r->nonce;
    if (f->nkept < USHF_NONCES) {
        f->kept[f->nkept++] = r->nonce;
    } else {
        /* Full: the lower of the lowest kept nonce and the new one goes
         * under the floor. Everything kept stays above the floor, and the floor
         * only rises, so a nonce once refused stays refused. */
        unsigned m = ushf_lowest(f);
        if (r->nonce < f->kept[m]) {
            f->floor = r->nonce;
        } else {
            f->floor = f->kept[m];
            f->kept[m] = r->nonce;
        }
    }
    f->recent[f->next_recent] = *r;
    f->next_recent = (f->next_recent + 1) % USHF_RECENT;
    if (f->nrecent < USHF_RECENT)
        f->nrecent++;
}

bool ushf_recent(const struct ushf *f, const struct ushf_req *r)
{
    for (unsigned i = 0; i < f->nrecent; i++) {
        const struct ushf_req *q = &f->recent[i];
        if (q->nonce == r->nonce && q->ip == r->ip && q->port == r->port && q->seq == r->seq)
            return true;
    }
    return false;
}
