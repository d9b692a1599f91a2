#!/usr/bin/env bash
# Start a throwaway PostgreSQL on loopback for the ledger tests and print its
# URL. Installs Debian's postgresql when it is missing. Idempotent: a server
# already running in $PGDIR is reused.
set -euo pipefail
PGDIR=${PLANEXEC_PGDIR:-/tmp/planexec-pg}
PGPORT=${PLANEXEC_PGPORT:-55432}

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq >&2
  $SUDO apt-get install -y -qq postgresql >&2
fi
BIN=$(dirname "$(ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -1)")

# PostgreSQL refuses to run as root: run it as the `postgres` user when we are root.
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

if [ ! -f "$PGDIR/PG_VERSION" ]; then
  mkdir -p "$PGDIR"
  [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$PGDIR"
  as_pg "$BIN/initdb" -D "$PGDIR" -U postgres --auth=trust -E UTF8 >&2
fi
if ! as_pg "$BIN/pg_ctl" -D "$PGDIR" status >/dev/null 2>&1; then
  as_pg "$BIN/pg_ctl" -D "$PGDIR" -l "$PGDIR/server.log" -w \
    -o "-p $PGPORT -c listen_addresses=127.0.0.1 -k $PGDIR" start >&2
fi
echo "postgres://postgres@127.0.0.1:$PGPORT/postgres"
