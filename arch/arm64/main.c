/* arch/arm64/main.c: boot, in order. kmain runs on the boot CPU, on the
 * boot stack, MMU on, interrupts masked, and ends as that CPU's idle task.
 *
 * The device tree: QEMU passes its address in x0 only when it boots a
 * Linux Image; for an ELF -kernel x0 is 0 and the tree sits at the start
 * of RAM (0x40000000) when there is room below the kernel (there is: the
 * kernel is loaded 2 MiB up). Both places are tried, x0 first; the tree
 * is used in place, and its pages are kept out of the page allocator. */
#include "arch/arm64/arm64.h"
#include "arch/arm64/dt.h"
#include "arch/arm64/gic.h"
#include "arch/arm64/gtimer.h"
#include "arch/arm64/percpu_arch.h"
#include "arch/arm64/smp.h"
#include "hal/mem.h"
#include "hal/entropy.h"
#include "hal/pmu.h"
#include "kernel/bootparams.h"
#include "kernel/console.h"
#include "kernel/netboot.h"
#include "kernel/panic.h"
#include "kernel/percpu.h"
#include "kernel/sched.h"
#include "kernel/sha256_boot.h"
#include "kernel/shell.h"
#include "kernel/symtab.h"
#include "kernel/time.h"
#include "kernel/timer.h"
#include "lib/fdt.h"
#include "lib/parse.h"
#include "lib/string.h"
#include "mm/pmm.h"

extern char _stext[], _kernel_end[], boot_stack[], boot_stack_top[];
struct fdt boot_fdt;
struct fdt_machine boot_dt;

#define RAM_GUESS   0x40000000ull   /* QEMU virt's RAM base: where it puts the tree */
#define DTB_MAX     (2ull << 20)    /* QEMU's trees are 1 MiB; never read past 2 */

/* The tree's physical address: x0 if it holds one, else the start of RAM. */
static uint64_t find_dtb(uint64_t x0)
{
    uint64_t kernel_pa = virt_to_phys(_stext);
    const uint64_t cand[2] = { x0, RAM_GUESS };
    for (int i = 0; i < 2; i++) {
        uint64_t pa = cand[i];
        /* Only RAM below the kernel or in the 4 GiB the direct map covers. */
        if (!pa || (pa & 7) || pa >= PMM_MAX_PHYS || pa < RAM_GUESS ||
            (pa >= kernel_pa && pa < virt_to_phys(_kernel_end)))
            continue;
        if (fdt_be32(phys_to_virt(pa)) == 0xd00dfeed)
            return pa;
    }
    return 0;
}

/* RAM from the tree, less the tree itself (the kernel image is the
 * reserved range pmm_init takes). */
static int ram_regions(uint64_t (*ram)[2], int max, uint64_t dtb_lo, uint64_t dtb_hi)
{
    int n = 0;
    for (int i = 0; i < boot_dt.nmem; i++) {
        uint64_t lo = boot_dt.mem[i][0], hi = lo + boot_dt.mem[i][1];
        if (dtb_lo >= lo && dtb_lo < hi) {
            if (dtb_lo > lo && n < max) {
                ram[n][0] = lo;
                ram[n++][1] = dtb_lo - lo;
            }
            lo = dtb_hi < hi ? dtb_hi : hi;
        }
        if (hi > lo && n < max) {
            ram[n][0] = lo;
            ram[n++][1] = hi - lo;
        }
    }
    return n;
}

static unsigned current_el(void) { return (unsigned)(read_sysreg(CurrentEL) >> 2) & 3; }

void kmain(uint64_t x0, uint64_t entry_el)
{
    cpu_arch_init(0, read_sysreg(mpidr_el1));       /* vectors, TPIDR_EL1 */
    console_init();                                  /* PL011 at virt's address */
    kprintf("\nSonde booting (arm64, EL%u%s)\n", current_el(),
            entry_el == 2 ? ", entered at EL2" : "");

    uint64_t dtb = find_dtb(x0);
    if (!dtb)
        panic("boot: no device tree (x0 0x%lx, nothing at 0x%llx either)", x0, RAM_GUESS);
    const char *err = fdt_machine_read(phys_to_virt(dtb), DTB_MAX, &boot_dt);
    if (!err)
        err = fdt_open(&boot_fdt, phys_to_virt(dtb), DTB_MAX);
    if (err)
        panic("boot: device tree at 0x%lx: %s", dtb, err);
    if (boot_dt.uart && boot_dt.uart != pl011_base()) {
        pl011_set(boot_dt.uart, boot_dt.uart_intid ? boot_dt.uart_intid : 33);
        console_init();
    } else if (boot_dt.uart_intid) {
        pl011_set(pl011_base(), boot_dt.uart_intid);
    }
    /* Writable on purpose: parsing wipes ushkey='s value in the blob itself
     * (same length, so the tree stays valid). */
    static char no_args[1];
    const struct cmdline *cmdline =
        boot_params_parse(boot_dt.bootargs ? (char *)boot_dt.bootargs : no_args);

    uint64_t ram[FDT_MAX_MEM + 1][2];
    uint64_t dtb_end = (dtb + fdt_be32((const uint8_t *)phys_to_virt(dtb) + 4) + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
    int nram = ram_regions(ram, FDT_MAX_MEM + 1, dtb & ~(PAGE_SIZE - 1), dtb_end);
    uint64_t ignored = pmm_init((const uint64_t (*)[2])ram, nram,
                                virt_to_phys(_stext), virt_to_phys(_kernel_end));
    kprintf("mem: %zu MiB usable", pmm_free_pages() / 256);
    if (ignored)
        kprintf(" (%lu MiB above 4 GiB not used)", ignored >> 20);
    kprintf("\n");
    symtab_selftest((uintptr_t)kmain, "kmain");

    if (boot_dt.gic_version != 3)
        panic("boot: the device tree names no GICv3 (arm,gic-v3): run with -M virt,gic-version=3");
    gic_set_base(boot_dt.gicd, boot_dt.gicr, boot_dt.gicr_size);
    pmu_set_ppi(boot_dt.pmu_intid);                  /* the pseudo-NMI, before gic_init_cpu */
    err = gic_init();
    if (!err)
        err = gic_init_cpu();
    if (err)
        panic("gic: %s", err);
    ipi_init();

    uint64_t freq = read_sysreg(cntfrq_el0);
    if (!freq)
        panic("timer: CNTFRQ_EL0 is 0 (the firmware did not set the counter frequency)");
    cycles_init(freq);
    time_init(cycles_per_us());
    gtimer_init(boot_dt.timer_intid[FDT_TIMER_VIRT], TIMER_HZ);
    kprintf("timer: generic timer %lu Hz, virtual timer PPI INTID %u, %u Hz tick\n",
            freq, gtimer_intid(), TIMER_HZ);

    boot_param_pmu();
    boot_param_heapprof();
    sha256_boot_choose();                /* the CPU's SHA-256 or the C, before other CPUs */
    sched_init_cpu_stack((uintptr_t)boot_stack, (uintptr_t)boot_stack_top);
    unsigned n = smp_start(&boot_dt, boot_param_smp());       /* every other CPU */
    kprintf("smp: %u cpus online (device tree lists %u, psci %s)\n", n,
            boot_dt.ncpus + boot_dt.cpus_skipped, boot_dt.psci_method[0] ? boot_dt.psci_method : "none");
    gtimer_start();                                  /* this CPU's tick */
    console_enable_input_irq();                      /* PL011 receive by its SPI */
    entropy_init();                                  /* RNDR, else virtio-rng: before the UDP shell */
    net_boot(cmdline);                              /* virtio-net on virtio-mmio, if any */

    task_spawn("shell", shell_task, 0, 0, 0);
    sched_run();
}
