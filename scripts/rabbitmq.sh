#!/usr/bin/env bash
# RabbitMQ for Herald's broker destinations: a throwaway node of Debian's `rabbitmq-server` package (not
# the system service), run as the calling user with its database, logs, Erlang cookie and its own epmd
# under one state directory, every listener on loopback (AMQP, Erlang distribution, epmd).
#
#   eval "$(scripts/rabbitmq.sh start)"   # starts it; prints `export RABBITMQ_URL=amqp://...` for eval
#   scripts/rabbitmq.sh status            # running or not, and where
#   scripts/rabbitmq.sh stop              # stops it and removes the state directory
#   scripts/rabbitmq.sh halt [state] [--kill]  # stops it, keeping its data (--kill: as a crash would)
#   scripts/rabbitmq.sh resume [state]    # starts a halted node again, same ports and data
#   scripts/rabbitmq.sh bin               # installs the package if needed and prints rabbitmqctl's path
#   scripts/rabbitmq.sh ctl ARGS...       # rabbitmqctl against this node (list_queues, ...)
#   scripts/rabbitmq.sh client            # prints the directory of RabbitMQ's Java client jars (tests'
#                                         # independent publisher and consumer), fetched once by Maven
#
# The state directory is the second argument (for ctl: RABBITMQ_STATE), default
# $TMPDIR/herald-rabbitmq-<uid>. RABBITMQ_PORT picks the AMQP port (a test that stops and restarts the
# broker keeps it). `guest` may connect because RabbitMQ lets it in from loopback only.
# RABBITMQ_TLS_CERT and RABBITMQ_TLS_KEY (PEM files: the server certificate, its chain after it, and
# its key) at start add an amqps listener on loopback with them (copied into the state directory, so
# resume keeps it); start then also prints `export RABBITMQ_TLS_URL=amqps://...`. Clients are not asked
# for certificates.
set -uo pipefail

RMQ_BIN=/usr/lib/rabbitmq/bin
AMQP_CLIENT_VERSION=5.37.1
COMMAND="${1:-}"
if [ "$COMMAND" = ctl ]; then
  STATE="${RABBITMQ_STATE:-${TMPDIR:-/tmp}/herald-rabbitmq-$(id -u)}"
else
  STATE="${2:-${TMPDIR:-/tmp}/herald-rabbitmq-$(id -u)}"
fi

say() { echo "rabbitmq.sh: $*" >&2; }
die() { say "$*"; exit 1; }
# shellcheck source=scripts/lib-brokers.sh
. "$(dirname "$0")/lib-brokers.sh"
# The vhost is spelled out: by the AMQP URI spec a bare trailing `/` names the empty vhost (RabbitMQ's
# Java client refuses it), while amqplib reads it as `/`.
exports() {
  echo "export RABBITMQ_URL=amqp://guest:guest@127.0.0.1:$(cat "$STATE/port")/%2f"
  [ -f "$STATE/tls_port" ] && echo "export RABBITMQ_TLS_URL=amqps://guest:guest@127.0.0.1:$(cat "$STATE/tls_port")/%2f"
  return 0
}

install() {
  [ -x "$RMQ_BIN/rabbitmq-server" ] && return 0
  if [ "${RABBITMQ_INSTALL:-}" != no ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing RabbitMQ from Debian's packages"
    # policy-rc.d or not, the system service is not what the tests use: it is stopped if apt started it.
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends rabbitmq-server) >&2 ||
      die "could not install rabbitmq-server"
    command -v service >/dev/null && service rabbitmq-server stop >/dev/null 2>&1
  fi
  [ -x "$RMQ_BIN/rabbitmq-server" ] || die "RabbitMQ is not installed (Debian: apt-get install rabbitmq-server)"
}

# The environment both the server and rabbitmqctl read (RabbitMQ's documented RABBITMQ_* variables).
node_env() {
  local port epmd dist
  read -r port epmd dist <"$STATE/ports"
  export HOME="$STATE" RABBITMQ_NODENAME="herald$port@localhost" RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
    RABBITMQ_NODE_PORT="$port" RABBITMQ_DIST_PORT="$dist" ERL_EPMD_ADDRESS=127.0.0.1 ERL_EPMD_PORT="$epmd" \
    RABBITMQ_MNESIA_BASE="$STATE/mnesia" RABBITMQ_LOG_BASE="$STATE/log" \
    RABBITMQ_CONFIG_FILE="$STATE/rabbitmq.conf" RABBITMQ_ENABLED_PLUGINS_FILE="$STATE/enabled_plugins" \
    RABBITMQ_PID_FILE="$STATE/rabbitmq.pid" \
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}" \
    RABBITMQ_CTL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
}

ctl() { (node_env && "$RMQ_BIN/rabbitmqctl" "$@"); }

# Ready means the node finished booting and its AMQP listener answers the protocol header with
# Connection.Start (a method frame, type 1).
amqp_answers() {
  node -e '
    const s = require("net").connect(+process.argv[1], "127.0.0.1", () => s.write(Buffer.from("AMQP\x00\x00\x09\x01", "latin1")));
    s.on("data", (d) => process.exit(d[0] === 1 && d.readUInt16BE(7) === 10 && d.readUInt16BE(9) === 10 ? 0 : 1));
    s.on("error", () => process.exit(1));
    setTimeout(() => process.exit(1), 3000);
  ' "$1"
}

start() {
  if running; then
    exports
    return 0
  fi
  install
  FIXED_PORT="${RABBITMQ_PORT:-}" with_retries start_once || die "RabbitMQ did not start (see $STATE/log)"
  say "RabbitMQ $(dpkg-query -W -f '${Version}' rabbitmq-server 2>/dev/null) on 127.0.0.1:$(cat "$STATE/port"); stop it with scripts/rabbitmq.sh stop"
  exports
}

start_once() {
  [ -f "$STATE/ports" ] && (node_env && epmd -port "$ERL_EPMD_PORT" -kill >/dev/null 2>&1)
  rm -rf "$STATE" && mkdir -p "$STATE/mnesia" "$STATE/log" || die "cannot create $STATE"
  local port
  port="${RABBITMQ_PORT:-$(free_port)}"
  echo "$port" >"$STATE/port"
  echo "$port $(free_port) $(free_port)" >"$STATE/ports"
  echo "[]." >"$STATE/enabled_plugins"
  cat >"$STATE/rabbitmq.conf" <<EOF
listeners.tcp.1 = 127.0.0.1:$port
loopback_users.guest = true
log.file.level = warning
log.console = false
disk_free_limit.absolute = 50MB
EOF
  tls_listener || return 1
  launch
}

# With RABBITMQ_TLS_CERT and RABBITMQ_TLS_KEY, an amqps listener on loopback presenting that certificate.
tls_listener() {
  [ -n "${RABBITMQ_TLS_CERT:-}" ] || [ -n "${RABBITMQ_TLS_KEY:-}" ] || return 0
  [ -r "${RABBITMQ_TLS_CERT:-}" ] && [ -r "${RABBITMQ_TLS_KEY:-}" ] ||
    die "RABBITMQ_TLS_CERT and RABBITMQ_TLS_KEY must both name readable PEM files"
  mkdir -p "$STATE/tls" && cp "$RABBITMQ_TLS_CERT" "$STATE/tls/cert.pem" && cp "$RABBITMQ_TLS_KEY" "$STATE/tls/key.pem" ||
    die "cannot copy the certificate into $STATE/tls"
  free_port >"$STATE/tls_port"
  cat >>"$STATE/rabbitmq.conf" <<EOF
listeners.ssl.1 = 127.0.0.1:$(cat "$STATE/tls_port")
ssl_options.certfile = $STATE/tls/cert.pem
ssl_options.keyfile = $STATE/tls/key.pem
ssl_options.verify = verify_none
ssl_options.fail_if_no_peer_cert = false
EOF
}

# Starts the node on the state directory's configuration and data and waits until it is ready.
launch() {
  local port
  port=$(cat "$STATE/port")
  (node_env && daemon "$STATE" "$STATE/server.log" "$RMQ_BIN/rabbitmq-server")
  # The AMQP listener opens late in the boot; await_startup then waits for the boot's last steps (it
  # fails at once while the node has not yet registered with epmd, hence this order). Bounded for a
  # loaded machine.
  if ! wait_until 120 amqp_answers "$port" || ! ctl -q await_startup --timeout 60 >"$STATE/await.log" 2>&1; then
    tail -n 20 "$STATE/server.log" "$STATE/await.log" "$STATE"/log/*.log >&2 2>/dev/null
    say "RabbitMQ did not become ready on 127.0.0.1:$port (it exited, or the bound passed)"
    return 1
  fi
}

stop() {
  [ -f "$STATE/ports" ] || { rm -rf "$STATE"; return 0; }
  running && ctl -q stop --timeout 20 >/dev/null 2>&1
  stop_daemon "$STATE"
  # The node's own epmd daemonises out of the node's process group.
  (node_env && epmd -port "$ERL_EPMD_PORT" -kill >/dev/null 2>&1)
  rm -rf "$STATE"
}

case "$COMMAND" in
  start) start ;;
  stop) stop ;;
  halt)
    [ "${3:-}" = --kill ] || { running && ctl -q stop --timeout 20 >/dev/null 2>&1; }
    stop_daemon "$STATE" "$(halt_signal "${3:-}")" ;;
  resume)
    running || { [ -f "$STATE/ports" ] || die "nothing to resume in $STATE"; launch || die "RabbitMQ did not resume"; }
    exports ;;
  status)
    if running; then
      echo "running on 127.0.0.1:$(cat "$STATE/port")$([ -f "$STATE/tls_port" ] && echo " (amqps: $(cat "$STATE/tls_port"))")"
    else echo "not running"; exit 1; fi ;;
  bin) install && echo "$RMQ_BIN/rabbitmqctl" ;;
  ctl) shift && ctl "$@" ;;
  client)
    maven_fetch "$HERALD_CACHE/amqp-client-$AMQP_CLIENT_VERSION" "com.rabbitmq:amqp-client:$AMQP_CLIENT_VERSION" &&
      echo "$HERALD_CACHE/amqp-client-$AMQP_CLIENT_VERSION/lib" ;;
  *) echo "usage: scripts/rabbitmq.sh start|stop|halt|resume|status|bin [state-dir] | ctl ARGS... | client" >&2; exit 2 ;;
esac
