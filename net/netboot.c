/* net/netboot.c: bring up networking from the boot parameters. */
#include "lib/parse.h"

void net_boot(const struct cmdline *cl)
{
    (void)cl;
}
