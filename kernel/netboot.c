/* kernel/netboot.c: bring up networking from the boot parameters. Board
 * glue, beside the rest of the boot-time wiring: it probes the buses for a
 * device, then hands it to net/, which knows nothing of buses.
 *
 *   ip=A.B.C.D mask=A.B.C.D gw=A.B.C.D   (defaults: QEMU user networking)
 *   udpshell=PORT                        start the UDP shell on PORT
 *   ushkey=<64 hex digits>               ... requiring that key (docs/udpshell.md)
 *   ushid=NAME                           ... and this kernel's id in every tag
 *
 * A bad value is reported by name and replaced by the default: a typo on
 * the command line should cost a message, not the network. Except ushkey=:
 * a bad key leaves the UDP shell stopped, since its default, no
 * authentication, is exactly what the key was given to prevent; so does a
 * bad ushid=, or one without a key, which would bind nothing. So does a
 * good key on a machine with no entropy source (hal/entropy.h, brought up
 * before net_boot): the authenticated shell's epoch needs one.
 *
 * The device: the first virtio-net on PCI (x86: 1af4:1000), else the
 * first on a virtio-mmio transport the machine describes (arm64: the
 * device tree). The driver is the same over either. */
#include "drivers/virtio.h"
#include "drivers/virtio_net.h"
#include "hal/entropy.h"
#include "kernel/bootparams.h"
#include "kernel/console.h"
#include "kernel/netboot.h"
#include "kernel/shell.h"
#include "lib/parse.h"
#include "lib/sha256.h"
#include "lib/string.h"
#include "net/net.h"
#include "net/udpshell.h"

#define DEF_IP   0x0a00020fu             /* 10.0.2.15 */
#define DEF_MASK 0xffffff00u             /* 255.255.255.0 */
#define DEF_GW   0x0a000202u             /* 10.0.2.2 */

static bool mask_ok(uint32_t m)
{
    /* Contiguous ones from the top, at least one: ~m + 1 is a power of two. */
    uint32_t inv = ~m;
    return m != 0 && (inv & (inv + 1)) == 0;
}

static uint32_t param_addr(const struct cmdline *cl, const char *key, uint32_t def,
                           bool (*valid)(uint32_t), const char *what)
{
    const char *s = cmdline_get(cl, key);
    uint32_t v;
    char buf[16];
    if (!s)
        return def;
    if (!parse_ipv4(s, &v) || (valid && !valid(v))) {
        kprintf("net: %s='%s' is not %s: using %s\n", key, s, what, net_fmt_ip(buf, def));
        return def;
    }
    return v;
}

static bool host_ok(uint32_t ip) { return ip != 0 && ip != 0xffffffffu && (ip >> 24) != 127; }

/* udpshell=, with ushkey='s outcome k (boot_param_ushkey) and key. */
static void udpshell_boot(const struct cmdline *cl, int k, const uint8_t *key)
{
    const char *s = cmdline_get(cl, "udpshell");
    uint64_t port;
    char id[USHP_ID_MAX + 1];
    int ki = boot_param_ushid(id);
    if (!s)
        return;
    if (!parse_range(s, 1, 65535, &port)) {
        kprintf("net: udpshell='%s' is not a port (1-65535): UDP shell not started\n", s);
        return;
    }
    udpshell_set_runner(shell_run_line);
    if (k < 0) {
        kprintf("net: UDP shell not started: ushkey= is not usable (see above), and "
                "without it the shell would be open to anyone\n");
    } else if (ki < 0) {
        kprintf("net: UDP shell not started: ushid= is not usable (see above)\n");
    } else if (ki > 0 && k == 0) {
        kprintf("net: UDP shell not started: ushid= names the kernel to key holders, and "
                "without ushkey= there are none (give both, or neither)\n");
    } else if (k > 0 && !entropy_source()) {
        /* The authenticated shell tags with a boot epoch drawn from a real
         * entropy source (docs/udpshell.md); without one it cannot keep a
         * request captured before a reboot from running again. */
        kprintf("net: UDP shell not started: ushkey= needs an entropy source for the boot "
                "epoch, and this machine has none (no RDRAND/RNDR, no virtio-rng device: "
                "give QEMU -device virtio-rng-pci or virtio-rng-device)\n");
    } else if (k > 0) {
        if (udpshell_start_auth((uint16_t)port, key, ki > 0 ? id : NULL) == 0)
            kprintf("net: UDP shell on port %lu, authenticated (HMAC-SHA256, ushkey=%s%s)\n",
                    port, ki > 0 ? ", ushid=" : "", ki > 0 ? id : "");
    } else if (udpshell_start((uint16_t)port) == 0) {
        kprintf("net: UDP shell on port %lu with no authentication: open to anyone who can "
                "reach it (ushkey= requires a key; docs/udpshell.md)\n", port);
    }
}

static void net_boot_dev(const struct cmdline *cl, int k, const uint8_t *key)
{
    uint32_t ip = param_addr(cl, "ip", DEF_IP, host_ok, "a host address (a.b.c.d)");
    uint32_t mask = param_addr(cl, "mask", DEF_MASK, mask_ok,
                               "a netmask (a.b.c.d, contiguous ones, e.g. 255.255.255.0)");
    uint32_t gw = param_addr(cl, "gw", DEF_GW, host_ok, "a host address (a.b.c.d)");
    char b1[16], b2[16], b3[16];
    if ((gw & mask) != (ip & mask)) {
        kprintf("net: gw=%s is not on %s/%s: no gateway (off-subnet traffic fails)\n",
                net_fmt_ip(b1, gw), net_fmt_ip(b2, ip), net_fmt_ip(b3, mask));
        gw = 0;
    }

    struct virtio_transport *t = virtio_pci_probe(VIRTIO_PCI_VENDOR, VIRTIO_PCI_ID_NET);
    if (!t)
        t = virtio_mmio_probe(VIRTIO_ID_NET);
    struct netdev *dev = virtio_net_probe(t);
    if (!dev) {
        kprintf("net: no usable network device (virtio-net-pci 1af4:1000 or virtio-mmio): "
                "networking off\n");
        return;
    }
    net_init(dev, ip, mask, gw);
    if (virtio_net_start() < 0)
        return;
    const uint8_t *m = dev->mac;
    kprintf("net: mac %02x:%02x:%02x:%02x:%02x:%02x ip %s mask %s gw %s\n",
            m[0], m[1], m[2], m[3], m[4], m[5], net_fmt_ip(b1, ip), net_fmt_ip(b2, mask),
            gw ? net_fmt_ip(b3, gw) : "none");

    udpshell_boot(cl, k, key);
}

void net_boot(const struct cmdline *cl)
{
    /* Taken first and wiped on every way out: with no device, or no
     * udpshell=, the decoded key would otherwise stay in memory for good. */
    uint8_t key[USHP_KEY_LEN];
    int k = boot_param_ushkey(key);
    net_boot_dev(cl, k, key);
    secure_zero(key, sizeof key);
}
