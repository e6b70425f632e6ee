#!/usr/bin/env bash
# make run: boot Sonde in QEMU (TCG) with 4 CPUs and 512 MiB, serial on
# this terminal, the UDP shell on 127.0.0.1:9000 and netload on 9001, and
# a virtio-rng device: the kernel's entropy source (the UDP shell's boot
# epoch) where the CPU has no RDRAND/RNDR, as QEMU's default CPUs do not.
# scripts/run.sh arm64: QEMU virt (GICv3, cortex-a72), the same networking
# with virtio-net on a virtio-mmio transport.
set -e
arch=${1:-x86_64}
kernel=build/$arch/kernel.elf
ushell=${SONDE_UDP_PORT:-9000}
nload=${SONDE_NETLOAD_PORT:-9001}
fwd="hostfwd=udp:127.0.0.1:$ushell-:9000,hostfwd=udp:127.0.0.1:$nload-:9001"
if [ "$arch" = arm64 ]; then
  echo "Sonde arm64 (QEMU virt): quit with Ctrl-A X. UDP shell: build/host/sonde-sh -p $ushell 127.0.0.1 <command>"
  echo "(the UDP shell has no authentication: it listens on the host's loopback only)"
  exec qemu-system-aarch64 -M virt,gic-version=3 -cpu cortex-a72 -smp 4 -m 512M \
    -display none -serial mon:stdio -no-reboot -kernel "$kernel" \
    -netdev user,id=n0,$fwd -device virtio-net-device,netdev=n0 \
    -device virtio-rng-device \
    -append "udpshell=9000 ${SONDE_APPEND:-}"
fi
echo "Sonde: quit with Ctrl-A X. UDP shell: build/host/sonde-sh -p $ushell 127.0.0.1 <command>"
echo "(the UDP shell has no authentication: it listens on the host's loopback only)"
exec qemu-system-x86_64 -kernel "$kernel" -smp 4 -m 512M \
  -display none -serial mon:stdio -no-reboot \
  -netdev user,id=n0,$fwd \
  -device virtio-net-pci,netdev=n0,disable-modern=on \
  -device virtio-rng-pci \
  -append "udpshell=9000 ${SONDE_APPEND:-}"
