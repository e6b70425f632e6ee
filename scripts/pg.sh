#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the store's tests, never the
# system's: initdb and pg_ctl (Debian's postgresql 15) in a temporary
# directory, on a free port of 127.0.0.1 and a socket in that directory.
# The server runs as the `postgres` user when this runs as root (the
# server refuses root), as the current user otherwise.
#
#   scripts/pg.sh start   prints "PGDIR=DIR" and "PGURI=postgresql://..."
#                         (the database `sonde` made, empty)
#   scripts/pg.sh stop DIR   stops it (immediate) and removes DIR
#   scripts/pg.sh run CMD ...  starts one, runs CMD with $SONDE_PG_URI set,
#                         stops it whatever CMD did (trap), exits CMD's status
set -eu
BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
start() {
  [ -x "$BIN/initdb" ] || { echo "pg.sh: $BIN/initdb missing: install postgresql (bash scripts/deps.sh)" >&2; exit 2; }
  local dir port user
  dir=$(mktemp -d /tmp/sonde-pg.XXXXXX)
  chmod 755 "$dir"
  user=$(id -un)
  if [ "$(id -u)" -eq 0 ]; then chown postgres "$dir"; user=postgres; fi
  port=$(free_port)
  as_owner "$BIN/initdb" -A trust -U "$user" -D "$dir/data" > "$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; exit 2; }
  as_owner "$BIN/pg_ctl" -D "$dir/data" -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off" \
    -l "$dir/log" -w start > /dev/null || { cat "$dir/log" >&2; exit 2; }
  as_owner "$BIN/createdb" -h 127.0.0.1 -p "$port" -U "$user" sonde
  echo "PGDIR=$dir"
  echo "PGURI=postgresql://$user@127.0.0.1:$port/sonde"
}
stop() {
  local dir=$1
  [ -d "$dir/data" ] || return 0
  as_owner "$BIN/pg_ctl" -D "$dir/data" -m immediate stop > /dev/null 2>&1 || true
  rm -rf "$dir"
}
case "${1:-}" in
start) start ;;
stop) stop "${2:?pg.sh stop DIR}" ;;
run)
  shift
  out=$(start)
  dir=$(printf '%s\n' "$out" | sed -n 's/^PGDIR=//p')
  trap 'stop "$dir"' EXIT INT TERM
  SONDE_PG_URI=$(printf '%s\n' "$out" | sed -n 's/^PGURI=//p') "$@"
  ;;
*) echo "usage: scripts/pg.sh start | stop DIR | run CMD ..." >&2; exit 2 ;;
esac
