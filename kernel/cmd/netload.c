/* kernel/cmd/netload.c: the `netload` command (docs/netload.md): its
 * arguments checked and named when wrong, then net/netload.c's run.
 *
 * Commands: prefix cmd_. */
#include "kernel/shell.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "net/netload.h"
#include "uapi/netload.h"

static bool cmd_netload_port_arg(const char *s, uint16_t *port, struct printer *p)
{
    uint64_t v;
    if (!parse_range(s, 1, 65535, &v)) {
        pr_printf(p, "netload: port '%s' out of range (1-65535)\n", s);
        return false;
    }
    *port = (uint16_t)v;
    return true;
}

static bool cmd_netload_ms_arg(const char *s, uint64_t *ms, struct printer *p)
{
    if (!parse_range(s, 1, NL_MS_MAX, ms)) {
        pr_printf(p, "netload: ms '%s' out of range (1-%d)\n", s, NL_MS_MAX);
        return false;
    }
    return true;
}

static int cmd_netload_send(int argc, char **argv, struct printer *p)
{
    uint32_t ip;
    uint16_t port;
    uint64_t ms, size = NL_SIZE_DEF, pps = 0;
    if (argc < 5 || argc > 7) {
        pr_puts(p, "netload: usage: netload send <ip> <port> <ms> [size] [pps]\n");
        return 1;
    }
    if (!parse_ipv4(argv[2], &ip) || ip == 0 || ip == 0xffffffffu) {
        pr_printf(p, "netload: ip '%s' is not a host address (a.b.c.d)\n", argv[2]);
        return 1;
    }
    if (!cmd_netload_port_arg(argv[3], &port, p) || !cmd_netload_ms_arg(argv[4], &ms, p))
        return 1;
    if (argc > 5 && !parse_range(argv[5], NL_SIZE_MIN, NL_SIZE_MAX, &size)) {
        pr_printf(p, "netload: size '%s' out of range (%d-%d bytes)\n", argv[5],
                  NL_SIZE_MIN, NL_SIZE_MAX);
        return 1;
    }
    if (argc > 6 && !parse_range(argv[6], 1, NL_PPS_MAX, &pps)) {
        pr_printf(p, "netload: pps '%s' out of range (1-%d)\n", argv[6], NL_PPS_MAX);
        return 1;
    }
    return netload_send(ip, port, ms, size, pps, p);
}

static int cmd_netload_recv(int argc, char **argv, struct printer *p)
{
    uint16_t port;
    uint64_t ms;
    if (argc != 4) {
        pr_puts(p, "netload: usage: netload recv <port> <ms>\n");
        return 1;
    }
    if (!cmd_netload_port_arg(argv[2], &port, p) || !cmd_netload_ms_arg(argv[3], &ms, p))
        return 1;
    return netload_recv(port, ms, p);
}

static int cmd_netload(int argc, char **argv, struct printer *p)
{
    if (argc == 1)
        return netload_status(p);
    if (strcmp(argv[1], "send") == 0)
        return cmd_netload_send(argc, argv, p);
    if (strcmp(argv[1], "recv") == 0)
        return cmd_netload_recv(argc, argv, p);
    if (strcmp(argv[1], "stop") == 0 && argc == 2)
        return netload_stop(p);
    pr_puts(p, "netload: usage: netload send <ip> <port> <ms> [size] [pps] | "
               "netload recv <port> <ms> | netload | netload stop\n");
    return 1;
}
SHELL_COMMAND(netload, "netload",
              "netload send <ip> <port> <ms> [size] [pps] | recv <port> <ms> | stop   UDP load test",
              cmd_netload);
