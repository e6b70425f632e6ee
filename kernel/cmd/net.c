/* kernel/cmd/net.c: the network's and the devices' shell commands. The
 * network (net/) and the drivers know no shell: they expose what they
 * can print, and this file names it a command.
 *
 * Commands: prefix cmd_. */
#include "drivers/virtio_net.h"
#include "hal/pci.h"
#include "kernel/shell.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "net/net.h"

/* A command that takes no arguments, printing what fn prints. */
static int cmd_noargs(int argc, char **argv, struct printer *p, void (*fn)(struct printer *))
{
    if (argc != 1) {
        pr_printf(p, "%s: takes no arguments\n", argv[0]);
        return 1;
    }
    fn(p);
    return 0;
}

static int cmd_net(int argc, char **argv, struct printer *p)
{
    return cmd_noargs(argc, argv, p, net_print);
}
SHELL_COMMAND(net, "net", "net", cmd_net);

static int cmd_arp(int argc, char **argv, struct printer *p)
{
    return cmd_noargs(argc, argv, p, arp_print);
}
SHELL_COMMAND(arp, "arp", "arp", cmd_arp);

static int cmd_pci(int argc, char **argv, struct printer *p)
{
    return cmd_noargs(argc, argv, p, pci_print);
}
SHELL_COMMAND(pci, "pci", "pci              PCI devices: bus:dev.fn vendor:device class BARs irq", cmd_pci);

static int cmd_vnet(int argc, char **argv, struct printer *p)
{
    if (argc != 1) {
        pr_puts(p, "vnet: takes no arguments\n");
        return 1;
    }
    return virtio_net_print(p);
}
SHELL_COMMAND(vnet, "vnet", "vnet             virtio-net driver: queues, interrupts, frames, full ring", cmd_vnet);

/* `lines N`: N numbered lines, a diagnostic that makes output of a known
 * size and order (the UDP shell's reassembly test uses it). */
static int cmd_lines(int argc, char **argv, struct printer *p)
{
    uint64_t n;
    if (argc != 2 || !parse_range(argv[1], 0, 1000000, &n)) {
        pr_printf(p, "lines: usage: lines <n>  (n 0-1000000)\n");
        return 1;
    }
    for (uint64_t i = 1; i <= n; i++)
        pr_printf(p, "line %lu\n", i);
    return 0;
}
SHELL_COMMAND(lines, "lines", "lines <n>        print n numbered lines (a diagnostic)", cmd_lines);
