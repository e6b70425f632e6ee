#!/usr/bin/env bash
# make run: boot Sonde in QEMU (TCG) with 4 CPUs and 512 MiB, serial on
# this terminal, the UDP shell on 127.0.0.1:9000 and netload on 9001.
set -e
arch=${1:-x86_64}
kernel=build/$arch/kernel.elf
ushell=${SONDE_UDP_PORT:-9000}
nload=${SONDE_NETLOAD_PORT:-9001}
echo "Sonde: quit with Ctrl-A X. UDP shell: build/host/sonde-sh -p $ushell 127.0.0.1 <command>"
echo "(the UDP shell has no authentication: it listens on the host's loopback only)"
exec qemu-system-x86_64 -kernel "$kernel" -smp 4 -m 512M \
  -display none -serial mon:stdio -no-reboot \
  -netdev user,id=n0,hostfwd=udp:127.0.0.1:$ushell-:9000,hostfwd=udp:127.0.0.1:$nload-:9001 \
  -device virtio-net-pci,netdev=n0,disable-modern=on \
  -append "udpshell=9000 ${SONDE_APPEND:-}"
