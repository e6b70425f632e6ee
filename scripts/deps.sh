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
# sonde-prof: libdw/libelf (names, file:line, inlines), protobuf-c and
# pprof's schema (the pprof writer), zlib (gzip); go tool pprof and
# xmllint read its outputs in tests/tools/check_sonde_prof.sh.
[ -f /usr/include/elfutils/libdw.h ] || need+=(libdw-dev)
[ -f /usr/include/libelf.h ] || need+=(libelf-dev)
[ -f /usr/include/protobuf-c/protobuf-c.h ] || need+=(libprotobuf-c-dev)
command -v protoc-c >/dev/null || need+=(protobuf-c-compiler)
[ -f /usr/include/zlib.h ] || need+=(zlib1g-dev)
# sonde-prof top: ncurses draws the terminal; tmux runs it in its test.
[ -f /usr/include/ncurses.h ] || need+=(libncurses-dev)
command -v tmux >/dev/null || need+=(tmux)
# sonde-prof serve: libmicrohttpd answers HTTP, jansson writes and reads the
# page's JSON.
[ -f /usr/include/microhttpd.h ] || need+=(libmicrohttpd-dev)
[ -f /usr/include/jansson.h ] || need+=(libjansson-dev)
# sonde-prof serve's store: libsqlite3 (its file) and libpq (PostgreSQL);
# the tests make a throwaway cluster of Debian's postgresql 15
# (scripts/pg.sh) and read stores back with the sqlite3 and psql shells.
[ -f /usr/include/sqlite3.h ] || need+=(libsqlite3-dev)
command -v sqlite3 >/dev/null || need+=(sqlite3)
[ -f /usr/include/postgresql/libpq-fe.h ] || need+=(libpq-dev)
[ -x /usr/lib/postgresql/15/bin/initdb ] || need+=(postgresql)
# test_sha256 checks lib/sha256.c against libcrypto (the tests only).
[ -f /usr/include/openssl/hmac.h ] || need+=(libssl-dev)
command -v go >/dev/null || need+=(golang-go)
[ -f /usr/share/gocode/src/github.com/google/pprof/proto/profile.proto ] ||
  need+=(golang-github-google-pprof-dev)
command -v xmllint >/dev/null || need+=(libxml2-utils)
# make fuzz and the fuzz stage of make test: clang's libFuzzer and its
# sanitizer runtimes.
command -v clang >/dev/null || need+=(clang)
compgen -G '/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a' >/dev/null ||
  need+=(libclang-rt-14-dev)
# sonde-prof's web pages: node and npm build them from npm packages
# (web/package.json); the browser tests (tests/browser/) drive Debian's
# chromium, whose text needs a font.
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
command -v chromium >/dev/null || need+=(chromium)
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
if [ ${#need[@]} -ne 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "deps: missing ${need[*]}; run as root or: sudo apt-get install ${need[*]}" >&2
    exit 1
  fi
  echo "deps: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# The npm packages, exactly as web/package-lock.json pins them: installed
# when web/node_modules is missing or older than the lock file (the same
# stamp as the Makefile's, which does this too for a plain `make`).
cd "$(dirname "$0")/.."
stamp=web/node_modules/.sonde-npm-ci
if [ ! -f "$stamp" ] || [ web/package-lock.json -nt "$stamp" ] || [ web/package.json -nt "$stamp" ]; then
  echo "deps: npm ci in web/"
  (cd web && npm ci --prefer-offline --no-audit --no-fund --loglevel=error >/dev/null)
  touch "$stamp"
fi
