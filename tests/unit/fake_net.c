/* tests/unit/fake_net.c: see fake_net.h. */
#include <stdlib.h>
#include <string.h>
#include "fake_net.h"
#include "kernel/sched.h"
#include "kernel/time.h"

struct fake_dgram *fake_sent;
size_t fake_nsent;
int fake_send_fail;
int fake_send_fail_rc = NET_ERR_NOBUF;
uint64_t fake_now_ns = 1000000000ull;
udp_handler fake_bound_fn;
void *fake_bound_ctx;
uint16_t fake_bound_port;
struct net_app_stats *fake_app_stats;
static size_t sent_cap;

uint64_t time_ns(void) { return fake_now_ns; }
void sleep_ms(uint64_t ms) { fake_now_ns += ms * 1000000; }
void yield(void) { fake_now_ns += 1000; }

int udp_bind(uint16_t port, udp_handler fn, void *ctx)
{
    if (port == 0 || !fn)
        return NET_ERR_INVAL;
    fake_bound_port = port;
    fake_bound_fn = fn;
    fake_bound_ctx = ctx;
    return 0;
}

int udp_unbind(uint16_t port)
{
    if (port != fake_bound_port || !fake_bound_fn)
        return NET_ERR_INVAL;
    fake_bound_fn = NULL;
    return 0;
}

int udp_send(uint32_t dst_ip, uint16_t src_port, uint16_t dst_port, const void *data, size_t len)
{
    if (len > UDP_PAYLOAD_MAX || dst_port == 0 || dst_ip == 0)
        return NET_ERR_INVAL;
    if (fake_send_fail > 0) {
        fake_send_fail--;
        return fake_send_fail_rc;
    }
    if (fake_nsent == sent_cap) {
        sent_cap = sent_cap ? sent_cap * 2 : 64;
        fake_sent = realloc(fake_sent, sent_cap * sizeof *fake_sent);
        if (!fake_sent)
            abort();
    }
    struct fake_dgram *d = &fake_sent[fake_nsent++];
    d->ip = dst_ip;
    d->sport = src_port;
    d->dport = dst_port;
    d->len = len;
    d->data = malloc(len ? len : 1);
    if (!d->data)
        abort();
    memcpy(d->data, data, len);
    return 0;
}

void net_app_stats_register(struct net_app_stats *s) { fake_app_stats = s; }

void fake_net_clear(void)
{
    for (size_t i = 0; i < fake_nsent; i++)
        free(fake_sent[i].data);
    free(fake_sent);
    fake_sent = NULL;
    fake_nsent = sent_cap = 0;
}

void fake_net_deliver(uint32_t ip, uint16_t port, const void *data, size_t len)
{
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        abort();
    memcpy(copy, data, len);
    fake_bound_fn(fake_bound_ctx, ip, port, copy, len);
    free(copy);
}
