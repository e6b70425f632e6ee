/* kernel/netboot.h: networking from the boot parameters (kernel/netboot.c):
 * find the NIC on whatever bus the board has, configure IPv4, start the
 * UDP shell. Called once by the boot CPU, after the scheduler is up. */
#pragma once

struct cmdline;
void net_boot(const struct cmdline *cl);
