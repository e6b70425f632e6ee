/* net/icmp.c: ICMP (RFC 792), echo only: a request to our address gets a
 * reply with the same identifier, sequence and data. Everything else ICMP
 * (unreachables, echo replies to pings we never send, broadcast pings) is
 * counted as ignored. */
#include "net/net.h"
#include "net/pkt.h"

void icmp_input(uint32_t src, uint32_t dst, const uint8_t *pkt, size_t len)
{
    if (len < ICMP_HLEN) {
        NET_COUNT(drop_truncated);
        return;
    }
    /* The checksum covers the whole message, header and data. */
    if (inet_fold(inet_sum(pkt, len, 0)) != 0) {
        NET_COUNT(drop_bad_csum);
        return;
    }
    const struct icmp_hdr *ic = (const struct icmp_hdr *)pkt;
    if (ic->type != ICMP_ECHO_REQUEST || ic->code != 0 || dst != net_ip_addr) {
        NET_COUNT(rx_ignored);
        return;
    }
    if (len > IP_PAYLOAD_MAX) {           /* a jumbo frame we cannot echo in one */
        NET_COUNT(drop_no_buffer);
        return;
    }

    uint8_t frame[ETH_FRAME_BUF];
    struct icmp_hdr *re = (struct icmp_hdr *)(frame + TX_L4_OFF);
    memcpy(re, pkt, len);
    re->type = ICMP_ECHO_REPLY;
    re->csum = 0;
    re->csum = htons(inet_fold(inet_sum(re, len, 0)));
    ipv4_output(frame, src, IP_PROTO_ICMP, len);   /* failures are counted below */
}
