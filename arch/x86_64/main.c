/* arch/x86_64/main.c: boot, in order. kmain runs on the boot CPU, on the
 * boot stack, with interrupts off, and ends as that CPU's idle task. */
#include "arch/x86_64/acpi.h"
#include "arch/x86_64/bootinfo.h"
#include "arch/x86_64/ioapic.h"
#include "arch/x86_64/lapic.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/percpu_arch.h"
#include "arch/x86_64/smp.h"
#include "arch/x86_64/trap.h"
#include "arch/x86_64/x86.h"
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
#include "lib/parse.h"
#include "lib/string.h"
#include "mm/pmm.h"

extern char _kernel_phys_start[], _kernel_end[], boot_stack[], boot_stack_top[];

void kmain(int proto, uint32_t info_phys)
{
    cpu_arch_init(0);                                /* GDT, TSS, IST stacks, GS */
    console_init();                                  /* COM1 */
    trap_init();                                     /* IDT: every vector */
    trap_load();
    kprintf("\nSonde booting (%s)\n", proto == BOOT_PVH ? "PVH" : proto == BOOT_MB2 ? "Multiboot2" : "?");
    const char *err = bootinfo_parse(proto, info_phys);
    if (err)
        panic("boot: %s", err);
    const struct cmdline *cmdline = boot_params_parse(boot_info.cmdline);

    uint64_t ignored = pmm_init((const uint64_t (*)[2])boot_info.ram, boot_info.nram,
                                (uint64_t)_kernel_phys_start, virt_to_phys(_kernel_end));
    kprintf("mem: %zu MiB usable", pmm_free_pages() / 256);
    if (ignored)
        kprintf(" (%lu MiB above 4 GiB not used)", ignored >> 20);
    kprintf("\n");
    paging_init();                                   /* unmap page 0 */
    symtab_selftest((uintptr_t)kmain, "kmain");

    err = acpi_init();                               /* MADT: cpus, IOAPIC */
    if (err)
        panic("acpi: %s", err);
    lapic_phys = madt.lapic_phys;
    pic_disable();
    lapic_init();
    cpus[0].hw_id = lapic_id();
    ioapic_init();

    uint64_t per_us = tsc_calibrate();               /* TSC against the PIT */
    cycles_set_rate(per_us);
    time_init(per_us);
    kprintf("tsc: %lu MHz (median of 5 PIT runs)\n", per_us);
    lapic_timer_calibrate();

    boot_param_pmu();
    boot_param_heapprof();
    sha256_boot_choose();                /* the CPU's SHA-256 or the C, before other CPUs */
    sched_init_cpu_stack((uintptr_t)boot_stack, (uintptr_t)boot_stack_top);
    unsigned n = smp_start(boot_param_smp());             /* every other CPU */
    kprintf("smp: %u cpus online (madt lists %u)\n", n, madt.ncpus + madt.cpus_skipped);
    lapic_timer_start(TIMER_HZ);                     /* this CPU's tick */
    console_enable_input_irq();                      /* COM1 receive by IRQ 4 */
    entropy_init();                                  /* RDRAND, else virtio-rng: before the UDP shell */
    net_boot(cmdline);                              /* virtio-net, UDP shell */

    task_spawn("shell", shell_task, 0, 0, 0);
    sched_run();
}
