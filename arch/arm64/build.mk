# arch/arm64/build.mk: toolchain and flags for arm64 (QEMU virt).
#
# -mno-omit-leaf-frame-pointer: aarch64 GCC drops the frame record of a
# leaf function even under -fno-omit-frame-pointer, and a sample taken in
# a leaf (burn_spin) would then lose its caller: every function keeps
# stp x29, x30 / mov x29, sp.
# The default small code model is PC-relative (adrp), so the kernel links
# high (0xffff000040200000, inside the direct map) without -mcmodel=large;
# absolute pointers in data are plain 64-bit relocations.
# -mno-outline-atomics: Debian's GCC calls libgcc helpers (__aarch64_swp4_*)
# for atomics by default; a freestanding kernel has no libgcc, so they are
# inlined as LDAXR/STLXR loops (Armv8.0, no LSE needed).
# -ffixed-x18: x18 is AAPCS64's platform register, which the kernel has no
# other use for; it holds this CPU's heap-profiling countdown, so that
# kmalloc's count is `subs x18, x18, n; b.mi` (arch/arm64/cpu_inline.h).
# No compiled code may use it as a scratch register: every object is built
# with the flag, and nothing else is linked (-nostdlib, no libgcc).
CROSS        := aarch64-linux-gnu-
ARCH_CFLAGS  := -mno-omit-leaf-frame-pointer -mno-outline-atomics -march=armv8-a -ffixed-x18
ARCH_ASFLAGS := -march=armv8-a
ARCH_LDFLAGS :=
