# arch/x86_64/build.mk: toolchain and flags for x86-64.
#
# -pg -mnop-mcount: GCC 12 drops the frame of a leaf function that needs no
# stack even under -fno-omit-frame-pointer, and a sample there would lose
# its caller. An mcount call (patched to a 5-byte nop) makes every function
# a non-leaf, so every function keeps push %rbp; mov %rsp,%rbp.
CROSS        :=
ARCH_CFLAGS  := -mcmodel=kernel -mno-red-zone -pg -mnop-mcount
ARCH_ASFLAGS :=
ARCH_LDFLAGS :=
