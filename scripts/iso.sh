#!/usr/bin/env bash
# make iso: a GRUB (Multiboot2) ISO of the kernel, for KVM hosts and real
# machines: build/x86_64/sonde.iso.
set -e
b=$1
rm -rf "$b/iso"
mkdir -p "$b/iso/boot/grub"
cp "$b/kernel.elf" "$b/iso/boot/kernel.elf"
cat > "$b/iso/boot/grub/grub.cfg" <<'CFG'
set timeout=0
serial --unit=0 --speed=115200
terminal_input serial console
terminal_output serial console
menuentry "Sonde" {
    multiboot2 /boot/kernel.elf udpshell=9000
    boot
}
CFG
grub-mkrescue -o "$b/sonde.iso" "$b/iso" 2>/dev/null
echo "built $b/sonde.iso"
