#!/usr/bin/env bash
# A throwaway PostgreSQL server for Herald's tests and benchmarks: a new cluster from the machine's
# binaries (Debian's /usr/lib/postgresql/*/bin, or initdb and pg_ctl on PATH; as root, Debian's
# `postgresql` package is installed when there are none), trusted on loopback only, on a free port.
#
#   eval "$(scripts/postgres.sh start)"        # starts it; prints `export DATABASE_URL=...` for eval
#   eval "$(scripts/postgres.sh start --durable)"  # the same with fsync and synchronous_commit on
#   scripts/postgres.sh status                 # running or not, and where
#   scripts/postgres.sh stop                   # stops it and removes the state directory
#
# The state directory is the argument after the command, default $TMPDIR/herald-postgres-<uid> (as root,
# PostgreSQL's own user must be able to reach it). The tests need no durability, so by default fsync,
# synchronous_commit and full_page_writes are off; --durable (or POSTGRES_DURABLE=1) keeps them on, as
# the benchmark's PostgreSQL is configured. POSTGRES_PORT picks the port; POSTGRES_SHARED_BUFFERS
# overrides shared_buffers (256MB); PG_BIN names the binaries' directory; POSTGRES_INSTALL=no never
# installs. The URL's database, `postgres`, is where tests run CREATE DATABASE. test/support/global-setup.ts
# and .ci/run use this script, so every test run tests it.
set -uo pipefail

say() { echo "postgres.sh: $*" >&2; }
die() { say "$*"; exit 1; }
# shellcheck source=scripts/lib-postgres.sh
. "$(dirname "$0")/lib-postgres.sh"

DURABLE=no
case "${POSTGRES_DURABLE:-}" in 1 | yes | true) DURABLE=yes ;; esac
ARGS=()
for arg in "$@"; do
  if [ "$arg" = --durable ]; then DURABLE=yes; else ARGS+=("$arg"); fi
done
COMMAND="${ARGS[0]:-}"
STATE="${ARGS[1]:-${TMPDIR:-/tmp}/herald-postgres-$(id -u)}"

exports() { echo "export DATABASE_URL=postgres://postgres@127.0.0.1:$(cat "$STATE/port")/postgres"; }

start() {
  if pg_cluster_running "$STATE"; then
    exports
    return 0
  fi
  rm -rf "$STATE" && mkdir -p "$STATE" || die "cannot create $STATE"
  local bin
  bin=$(pg_bin_or_install "$STATE/apt.log")
  [ -n "$bin" ] || die "no PostgreSQL server binaries (initdb, pg_ctl): install PostgreSQL (Debian: apt-get install postgresql)"
  if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    die "running as root needs the 'postgres' OS user to run the server as (Debian's postgresql package makes it)"
  fi
  # A free port can be taken before the server binds it: a few tries, each with a new cluster.
  local port tries=0
  while :; do
    port="${POSTGRES_PORT:-$(pg_free_port)}"
    pg_start_cluster "$STATE" "$bin" "$port" "$DURABLE" && break
    tries=$((tries + 1))
    if [ -n "${POSTGRES_PORT:-}" ] || [ "$tries" -ge 3 ]; then
      die "PostgreSQL did not start (see $STATE/initdb.log and $STATE/postgres.log)"
    fi
    pg_stop_cluster "$STATE" immediate
    pg_as_owner rm -rf "$STATE/data"
  done
  echo "$DURABLE" >"$STATE/durable"
  say "PostgreSQL $("$bin/pg_ctl" --version | sed -n 's/^pg_ctl (PostgreSQL) \([0-9.]*\).*/\1/p') on 127.0.0.1:$port ($( [ "$DURABLE" = yes ] && echo durable || echo "durability off")); stop it with scripts/postgres.sh stop${ARGS[1]:+ $STATE}"
  exports
}

stop() {
  pg_stop_cluster "$STATE" immediate
  rm -rf "$STATE"
}

case "$COMMAND" in
  start) start ;;
  stop) stop ;;
  status)
    if pg_cluster_running "$STATE"; then
      echo "running on 127.0.0.1:$(cat "$STATE/port") ($( [ "$(cat "$STATE/durable" 2>/dev/null)" = yes ] && echo durable || echo "durability off"))"
    else
      echo "not running"
      exit 1
    fi ;;
  *) echo "usage: scripts/postgres.sh start|stop|status [state-dir] [--durable]" >&2; exit 2 ;;
esac
