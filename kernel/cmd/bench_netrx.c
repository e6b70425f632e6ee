/* kernel/cmd/bench_netrx.c: `bench_netrx PORT [size]`, what the network
 * stack's receive path costs a datagram, with lockstat off and on
 * (bench/lock.py boots under -icount shift=0, where the clock counts guest
 * instructions).
 *
 * netload receive is the kernel's lock-heaviest workload: each datagram
 * takes udp-binds (the port's handler) and netload (its figures), and the
 * issue that added lockstat bounds its slowdown with lockstat on. Against
 * a live NIC that slowdown drowns in the host's timing (docs/bench.md,
 * "Locks"), so this bench hands the stack the same frames the NIC would:
 * one built netload datagram, addressed to this kernel's MAC and address
 * and PORT (a `netload recv PORT ...` must be running), passed to net_rx
 * in batches, each with the next sequence number, exactly as the
 * virtio-rx task calls it. The path timed is net_rx down to netload's
 * count: Ethernet, IPv4 (header checksum), UDP (no checksum, as
 * `netload blast` sends), the handler lookup and netload's tracking. The
 * driver's share (the ring, the wake of virtio-rx: its locks and their
 * counts are in lockstat's table) is outside it.
 *
 * The fastest of BENCH_NETRX_BATCHES batches of BENCH_NETRX_FRAMES,
 * lockstat off and on interleaved batch by batch, so that a slow stretch
 * of the host hits both alike.
 *
 * Commands: prefix cmd_ and bench_. */
#include "hal/cpu.h"
#include "kernel/lockstat.h"
#include "kernel/shell.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "net/net.h"
#include "net/pkt.h"
#include "uapi/byteorder.h"
#include "uapi/netload.h"

#define BENCH_NETRX_FRAMES 100
#define BENCH_NETRX_BATCHES 100
#define BENCH_NETRX_RUN 0xbe00      /* the run id the datagrams carry */
#define BENCH_NETRX_SRC 0x0a000202  /* 10.0.2.2, QEMU user networking's host */

/* One run at a time (the serial shell and the UDP shell may both ask):
 * the frame is the run's. */
static uint8_t bench_netrx_frame[ETH_FRAME_MAX];
static bool bench_netrx_busy;

/* One netload datagram of size bytes for port, as the NIC hands it up. */
static size_t bench_netrx_build(uint16_t port, size_t size)
{
    uint8_t *f = bench_netrx_frame;
    struct eth_hdr *eh = (struct eth_hdr *)f;
    memcpy(eh->dst, net_dev->mac, ETH_ALEN);
    static const uint8_t src_mac[ETH_ALEN] = { 0x52, 0x55, 0x0a, 0x00, 0x02, 0x02 };
    memcpy(eh->src, src_mac, ETH_ALEN);
    eh->type = htons(ETHERTYPE_IPV4);

    struct ipv4_hdr *ip = (struct ipv4_hdr *)(f + ETH_HLEN);
    memset(ip, 0, sizeof *ip);
    ip->ver_ihl = 0x45;
    ip->total_len = htons((uint16_t)(IP_HLEN + UDP_HLEN + size));
    ip->ttl = IP_TTL;
    ip->proto = IP_PROTO_UDP;
    put_be32(ip->src, BENCH_NETRX_SRC);
    put_be32(ip->dst, net_ip());
    ip->csum = htons(inet_fold(inet_sum(ip, IP_HLEN, 0)));

    struct udp_hdr *uh = (struct udp_hdr *)(f + ETH_HLEN + IP_HLEN);
    uh->sport = htons(9000);
    uh->dport = htons(port);
    uh->len = htons((uint16_t)(UDP_HLEN + size));
    uh->csum = 0;                    /* none, as netload blast sends */
    nl_fill_pattern((uint8_t *)(uh + 1), size);
    return ETH_HLEN + IP_HLEN + UDP_HLEN + size;
}

/* One batch: its time in cycles_now() units. Only the sequence number
 * changes between frames (netload's tracking sees each datagram once). */
static __attribute__((noinline)) uint64_t bench_netrx_batch(size_t len, uint32_t *seq)
{
    uint8_t *payload = bench_netrx_frame + ETH_HLEN + IP_HLEN + UDP_HLEN;
    uint64_t t0 = cycles_now();
    for (unsigned i = 0; i < BENCH_NETRX_FRAMES; i++) {
        nl_build(payload, BENCH_NETRX_RUN, (*seq)++, 0);
        net_rx(bench_netrx_frame, len);
    }
    return cycles_now() - t0;
}

static int cmd_bench_netrx(int argc, char **argv, struct printer *p)
{
    uint64_t port, size = 64;
    if (argc < 2 || argc > 3) {
        pr_puts(p, "bench_netrx: usage: bench_netrx PORT [size] (a `netload recv PORT ms` "
                   "running)\n");
        return 1;
    }
    if (!parse_range(argv[1], 1, 65535, &port)) {
        pr_printf(p, "bench_netrx: port '%s' out of range (1-65535)\n", argv[1]);
        return 1;
    }
    if (argc == 3 && !parse_range(argv[2], NL_SIZE_MIN, NL_SIZE_MAX, &size)) {
        pr_printf(p, "bench_netrx: size '%s' out of range (%d-%d bytes)\n", argv[2],
                  NL_SIZE_MIN, NL_SIZE_MAX);
        return 1;
    }
    if (!net_dev) {
        pr_puts(p, "bench_netrx: no network device\n");
        return 1;
    }
    if (lockstat_on()) {
        pr_puts(p, "bench_netrx: lockstat is on; lockstat off first (the off figures need it "
                   "off)\n");
        return 1;
    }
    if (__atomic_exchange_n(&bench_netrx_busy, true, __ATOMIC_ACQUIRE)) {
        pr_puts(p, "bench_netrx: busy (another shell's run)\n");
        return 1;
    }
    size_t len = bench_netrx_build((uint16_t)port, size);
    uint64_t before = net_get_stats()->rx_frames;
    uint32_t seq = 0;
    uint64_t min[2] = { UINT64_MAX, UINT64_MAX };
    for (unsigned b = 0; b < BENCH_NETRX_BATCHES; b++)
        for (int on = 0; on < 2; on++) {
            lockstat_set(on);
            uint64_t d = bench_netrx_batch(len, &seq);
            if (d < min[on])
                min[on] = d;
        }
    lockstat_set(false);
    __atomic_store_n(&bench_netrx_busy, false, __ATOMIC_RELEASE);
    pr_printf(p, "netrx: %u datagrams of %lu bytes to port %lu, %lu frames counted\n", seq,
              (unsigned long)size, (unsigned long)port,
              (unsigned long)(net_get_stats()->rx_frames - before));
    pr_printf(p, "netrx off: batch min %lu %s per %u datagrams\n", (unsigned long)min[0],
              cycles_unit(), BENCH_NETRX_FRAMES);
    pr_printf(p, "netrx on: batch min %lu %s per %u datagrams\n", (unsigned long)min[1],
              cycles_unit(), BENCH_NETRX_FRAMES);
    return 0;
}

SHELL_COMMAND(bench_netrx, "bench_netrx", "bench_netrx PORT [size]  the stack's receive path, "
              "lockstat off and on", cmd_bench_netrx);
