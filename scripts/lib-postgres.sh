# shellcheck shell=bash
# Starting and stopping a throwaway PostgreSQL cluster, shared by scripts/postgres.sh and
# scripts/ferretdb.sh (sourced, not run). The sourcing script defines `say` and `die`.
#
# A cluster lives in one directory DIR: DIR/data (the cluster), DIR/postgres.log, DIR/pg_bin (the
# binaries' directory), DIR/port. Its settings are written into DIR/data/postgresql.conf, so a plain
# `pg_ctl start -D DIR/data` brings it back on the same port with the same settings (the PostgreSQL
# outage test stops and starts a cluster of its own this way).
#
# Environment: PG_BIN, the directory holding initdb and pg_ctl (default: the newest Debian
# /usr/lib/postgresql/*/bin, else where `initdb` on PATH lives); POSTGRES_INSTALL=no never installs.

# Runs a command as the cluster's owner: PostgreSQL refuses to run as root, so as root it is `postgres`.
pg_as_owner() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

# The directory of the PostgreSQL server binaries, or nothing.
pg_bin_dir() {
  if [ -n "${PG_BIN:-}" ]; then
    [ -x "$PG_BIN/initdb" ] && echo "$PG_BIN"
    return 0
  fi
  local debian on_path
  debian=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  if [ -n "$debian" ] && [ -x "$debian/initdb" ]; then
    echo "$debian"
    return 0
  fi
  on_path=$(command -v initdb 2>/dev/null) || return 0
  dirname "$(readlink -f "$on_path")"
}

# The binaries' directory, installing Debian's `postgresql` package first when there are none and this
# runs as root with apt-get (unless POSTGRES_INSTALL=no). LOG receives apt's output.
pg_bin_or_install() {
  local log="$1" bin
  bin=$(pg_bin_dir)
  if [ -z "$bin" ] && [ "${POSTGRES_INSTALL:-}" != no ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing PostgreSQL from Debian's packages"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >"$log" 2>&1 ||
      say "could not install PostgreSQL (see $log)"
    bin=$(pg_bin_dir)
  fi
  echo "$bin"
}

pg_free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

# pg_start_cluster DIR BIN PORT DURABLE: a new cluster in DIR/data, trusted on loopback only, started on
# 127.0.0.1:PORT (its socket in DIR). DURABLE=yes keeps fsync and synchronous_commit on (benchmarks);
# otherwise durability is off, which a throwaway test database does not need. POSTGRES_SHARED_BUFFERS
# overrides shared_buffers (256MB). Answers non-zero when initdb or the start fails (see DIR/*.log).
pg_start_cluster() {
  local dir="$1" bin="$2" port="$3" durable="$4" durability
  mkdir -p "$dir" || return 1
  # The owner must reach DIR from wherever it is (mktemp makes 0700 directories).
  if [ "$(id -u)" = 0 ]; then chmod 755 "$dir" && chown postgres "$dir" || return 1; fi
  # The C locale: the same sort order on every machine, and no locale package needed.
  pg_as_owner "$bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 || return 1
  if [ "$durable" = yes ]; then
    durability="fsync = on
synchronous_commit = on
full_page_writes = on"
  else
    durability="fsync = off
synchronous_commit = off
full_page_writes = off"
  fi
  pg_as_owner tee -a "$dir/data/postgresql.conf" >/dev/null <<EOF

# Written by scripts/lib-postgres.sh: a throwaway cluster on loopback.
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
$durability
max_connections = 300
shared_buffers = ${POSTGRES_SHARED_BUFFERS:-256MB}
EOF
  echo "$bin" >"$dir/pg_bin" && echo "$port" >"$dir/port" || return 1
  pg_as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 start >/dev/null
}

# pg_stop_cluster DIR [MODE]: stops the cluster in DIR (MODE: fast, the default, or immediate).
pg_stop_cluster() {
  local dir="$1" mode="${2:-fast}"
  [ -f "$dir/pg_bin" ] || return 0
  pg_as_owner "$(cat "$dir/pg_bin")/pg_ctl" -D "$dir/data" -m "$mode" -w -t 60 stop >/dev/null 2>&1
}

# pg_cluster_running DIR: whether the cluster in DIR runs.
pg_cluster_running() {
  [ -f "$1/pg_bin" ] || return 1
  pg_as_owner "$(cat "$1/pg_bin")/pg_ctl" -D "$1/data" status >/dev/null 2>&1
}
