#!/usr/bin/env bash
# Installs what the build, `make run` and `make test` need, if missing.
# Idempotent, and silent when everything is already there.
set -e
need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
command -v qemu-system-aarch64 >/dev/null || need+=(qemu-system-arm)
command -v aarch64-linux-gnu-gcc >/dev/null || need+=(gcc-aarch64-linux-gnu)
command -v gcc >/dev/null || need+=(gcc)
command -v make >/dev/null || need+=(make)
command -v python3 >/dev/null || need+=(python3)
command -v nm >/dev/null || need+=(binutils)
command -v grub-mkrescue >/dev/null || need+=(grub-common)
[ -d /usr/lib/grub/i386-pc ] || need+=(grub-pc-bin)
command -v xorriso >/dev/null || need+=(xorriso)
command -v mformat >/dev/null || need+=(mtools)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "deps: missing ${need[*]}; run as root or: sudo apt-get install ${need[*]}" >&2
  exit 1
fi
echo "deps: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
