#!/usr/bin/env bash
# A MongoDB-compatible server for Herald where no mongod can be downloaded: FerretDB v1, built from the
# Go module proxy (needs `go`), on PostgreSQL when it is installed (on Debian as root it is installed
# from Debian's packages) and on SQLite otherwise. Everything lives under one state directory.
#
#   eval "$(scripts/ferretdb.sh start)"   # starts it; prints `export MONGODB_URI=...` for eval
#   scripts/ferretdb.sh status            # running or not, and where
#   scripts/ferretdb.sh stop              # stops FerretDB and PostgreSQL, removes the state directory
#   scripts/ferretdb.sh bin               # builds FerretDB if needed and prints the binary's path
#
# The state directory is the second argument, default $TMPDIR/herald-ferretdb-<uid> (PostgreSQL's own
# user must be able to reach it when the script runs as root). FERRETDB_BACKEND=sqlite skips PostgreSQL;
# FERRETDB_BIN overrides where the binary is cached. .ci/run uses this script, so every CI run tests it.
set -uo pipefail

FERRETDB_VERSION=v1.24.0
FERRET_BIN="${FERRETDB_BIN:-${HOME}/.cache/herald-ci/ferretdb-${FERRETDB_VERSION}}"
COMMAND="${1:-}"
STATE="${2:-${TMPDIR:-/tmp}/herald-ferretdb-$(id -u)}"

say() { echo "ferretdb.sh: $*" >&2; }
die() { say "$*"; exit 1; }
# shellcheck source=scripts/lib-postgres.sh
. "$(dirname "$0")/lib-postgres.sh"
port_open() { node -e 'require("net").connect(+process.argv[1],"127.0.0.1").on("connect",()=>process.exit(0)).on("error",()=>process.exit(1))' "$1"; }
running() { [ -f "$STATE/supervisor.pid" ] && kill -0 "$(cat "$STATE/supervisor.pid")" 2>/dev/null; }
exports() { echo "export MONGODB_URI=mongodb://127.0.0.1:$(cat "$STATE/port")/"; }

build() {
  [ -x "$FERRET_BIN" ] && return 0
  # `go install .../cmd/ferretdb@v1.x` fetches the module's version list, which some module proxies
  # refuse, and the module archive lacks build/version/version.txt, without which the binary panics at
  # start. So: download the exact version, copy it, write version.txt, and build. Cached per machine.
  command -v go >/dev/null || die "go is needed to build FerretDB (https://go.dev/dl/)"
  local work mod
  work=$(mktemp -d) || die "no temporary directory"
  mod=$(cd "$work" && go mod download -json "github.com/FerretDB/FerretDB@${FERRETDB_VERSION}" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
  [ -d "$mod" ] || { rm -rf "$work"; die "could not download FerretDB ${FERRETDB_VERSION}"; }
  cp -r "$mod" "$work/src" && chmod -R u+w "$work/src"
  echo "$FERRETDB_VERSION" >"$work/src/build/version/version.txt"
  mkdir -p "$(dirname "$FERRET_BIN")"
  say "building FerretDB ${FERRETDB_VERSION} (once per machine)"
  (cd "$work/src" && go build -o "$FERRET_BIN" ./cmd/ferretdb) >&2 || { rm -rf "$work"; die "FerretDB build failed"; }
  rm -rf "$work"
}

start_postgres() {
  local bin port
  bin=$(pg_bin_or_install "$STATE/apt.log")
  [ -n "$bin" ] || return 1
  port=$(pg_free_port)
  # A throwaway cluster (scripts/lib-postgres.sh): no fsync, trust on loopback only.
  pg_start_cluster "$STATE/pg" "$bin" "$port" no &&
    "$bin/psql" -q -h 127.0.0.1 -p "$port" -U postgres -c "CREATE DATABASE ferretdb" >/dev/null || return 1
  # FerretDB holds a PostgreSQL connection per open cursor, and a SIGKILLed client's cursors live on
  # until they time out; with pgx's small default pool the kill tests could leave it waiting forever.
  echo "--handler=pg --postgresql-url=postgres://postgres@127.0.0.1:$port/ferretdb?pool_max_conns=200" >"$STATE/backend"
}

start() {
  if running; then
    exports
    return 0
  fi
  build
  rm -rf "$STATE" && mkdir -p "$STATE/data" || die "cannot create $STATE"
  [ "$(id -u)" != 0 ] || chmod 755 "$STATE"
  if [ "${FERRETDB_BACKEND:-}" = sqlite ] || ! start_postgres; then
    echo "--handler=sqlite --sqlite-url=file:$STATE/data/" >"$STATE/backend"
  fi
  local port
  port=$(pg_free_port)
  echo "$port" >"$STATE/port"
  local backend
  read -r -a backend <"$STATE/backend"
  # FerretDB v1's SQLite backend has crashed under heavy concurrent load (SIGBUS in SQLite); the
  # supervisor restarts it on the same port and files and notes each restart in restarts.log. It runs
  # in a session of its own, so `stop` ends the supervisor and FerretDB together by their group id.
  setsid bash -c '
    while :; do
      "$0" "${@}" >>"'"$STATE"'/ferretdb.log" 2>&1
      echo "ferretdb exited with $? at $(date -u +%T)" >>"'"$STATE"'/restarts.log"
      sleep 0.5
    done' "$FERRET_BIN" "${backend[@]}" --listen-addr="127.0.0.1:$port" --state-dir="$STATE/data" \
    --telemetry=disable --debug-addr=- --log-level=error </dev/null >/dev/null 2>&1 &
  echo $! >"$STATE/supervisor.pid"
  for _ in $(seq 1 200); do
    port_open "$port" && break
    sleep 0.1
  done
  port_open "$port" || die "FerretDB did not start (see $STATE/ferretdb.log)"
  say "FerretDB ${FERRETDB_VERSION} (${backend[0]#--handler=}) on 127.0.0.1:$port; stop it with scripts/ferretdb.sh stop"
  exports
}

stop() {
  if [ -f "$STATE/supervisor.pid" ]; then
    local pid
    pid=$(cat "$STATE/supervisor.pid")
    kill -TERM -- "-$pid" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null
  fi
  pg_stop_cluster "$STATE/pg" immediate
  rm -rf "$STATE"
}

case "$COMMAND" in
  start) start ;;
  stop) stop ;;
  status)
    if running; then echo "running on 127.0.0.1:$(cat "$STATE/port") ($(cut -d' ' -f1 "$STATE/backend"))"; else echo "not running"; exit 1; fi ;;
  bin) build && echo "$FERRET_BIN" ;;
  *) echo "usage: scripts/ferretdb.sh start|stop|status|bin [state-dir]" >&2; exit 2 ;;
esac
