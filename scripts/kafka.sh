#!/usr/bin/env bash
# Apache Kafka for Herald's broker destinations: one KRaft node (broker and controller in one JVM) from
# Kafka's Maven Central artifacts, on the machine's Java 17+, listening on loopback only. Everything but
# the cached jars lives under one state directory.
#
#   eval "$(scripts/kafka.sh start)"   # starts it; prints `export KAFKA_BROKERS=127.0.0.1:<port>` for eval
#   scripts/kafka.sh status            # running or not, and where
#   scripts/kafka.sh stop              # stops it and removes the state directory
#   scripts/kafka.sh halt [state] [--kill]  # stops it, keeping its data (--kill: as a crash would)
#   scripts/kafka.sh resume [state]    # starts a halted broker again, same port and data
#   scripts/kafka.sh bin               # fetches the jars if needed and prints their directory
#
# The state directory is the second argument, default $TMPDIR/herald-kafka-<uid>. KAFKA_PORT picks the
# port (a test that stops and restarts the broker keeps it); KAFKA_HEAP overrides -Xmx (512m).
set -uo pipefail

KAFKA_VERSION=4.3.1
LOG4J_VERSION=2.25.4
COMMAND="${1:-}"
STATE="${2:-${TMPDIR:-/tmp}/herald-kafka-$(id -u)}"

say() { echo "kafka.sh: $*" >&2; }
die() { say "$*"; exit 1; }
# shellcheck source=scripts/lib-brokers.sh
. "$(dirname "$0")/lib-brokers.sh"
JARS="$HERALD_CACHE/kafka-$KAFKA_VERSION"
exports() { echo "export KAFKA_BROKERS=127.0.0.1:$(cat "$STATE/port")"; }

fetch() {
  # log4j-slf4j-impl routes Kafka's SLF4J 1.7 logging to log4j2, so the broker's log says what it did.
  maven_fetch "$JARS" "org.apache.kafka:kafka_2.13:$KAFKA_VERSION" \
    "org.apache.logging.log4j:log4j-slf4j-impl:$LOG4J_VERSION"
}

# Ready means the broker answers a Metadata request (v4) listing itself: the port accepts connections
# before the broker has joined its own quorum and been unfenced, and a producer started then fails.
ready() {
  node -e '
    const net = require("net");
    const id = Buffer.from("herald-ready");
    const body = Buffer.alloc(2 + 2 + 4 + 2 + id.length + 4 + 1);
    let o = body.writeInt16BE(3, 0); o = body.writeInt16BE(4, o); o = body.writeInt32BE(7, o);
    o = body.writeInt16BE(id.length, o); o += id.copy(body, o); o = body.writeInt32BE(0, o); body.writeInt8(0, o);
    const size = Buffer.alloc(4); size.writeInt32BE(body.length);
    const s = net.connect(+process.argv[1], "127.0.0.1", () => s.write(Buffer.concat([size, body])));
    let got = Buffer.alloc(0);
    s.on("data", (d) => {
      got = Buffer.concat([got, d]);
      if (got.length < 4 || got.length < 4 + got.readInt32BE(0)) return;
      // size, correlation id, throttle time, then the brokers array: ready when it is not empty.
      process.exit(got.readInt32BE(4) === 7 && got.readInt32BE(12) >= 1 ? 0 : 1);
    });
    s.on("error", () => process.exit(1));
    setTimeout(() => process.exit(1), 3000);
  ' "$1"
}

start() {
  if running; then
    exports
    return 0
  fi
  fetch
  FIXED_PORT="${KAFKA_PORT:-}" with_retries start_once || die "Kafka did not start (see $STATE/kafka.log)"
  say "Kafka $KAFKA_VERSION (KRaft) on 127.0.0.1:$(cat "$STATE/port"); stop it with scripts/kafka.sh stop"
  exports
}

start_once() {
  rm -rf "$STATE" && mkdir -p "$STATE/data" || die "cannot create $STATE"
  local port controller
  port="${KAFKA_PORT:-$(free_port)}"
  controller=$(free_port)
  echo "$port" >"$STATE/port"
  cat >"$STATE/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$STATE/data
num.partitions=3
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
EOF
  cat >"$STATE/log4j2.properties" <<EOF
rootLogger.level=WARN
rootLogger.appenderRef.out.ref=out
appender.out.type=Console
appender.out.name=out
appender.out.layout.type=PatternLayout
appender.out.layout.pattern=[%d] %p %m (%c)%n
logger.started.name=kafka.server.KafkaRaftServer
logger.started.level=INFO
EOF
  local cluster
  cluster=$(node -e 'console.log(require("crypto").randomBytes(16).toString("base64url"))')
  java_cmd
  # Formatting is one short JVM run; on a machine short of memory or threads it can fail before it starts
  # (seen once in CI, with five other brokers' JVMs running), so it is tried three times, afresh, and the
  # last try's words are printed, since a caller may remove the state directory.
  local tries=0
  # `--cluster-id=`: a base64url id starts with "-" one time in 64, which `-t ID` takes for an option.
  until "${JAVA[@]}" kafka.tools.StorageTool format --cluster-id="$cluster" -c "$STATE/server.properties" >"$STATE/format.log" 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -ge 3 ]; then
      tail -n 20 "$STATE/format.log" >&2
      die "could not format Kafka's storage (see $STATE/format.log)"
    fi
    rm -rf "$STATE/data" && mkdir -p "$STATE/data"
    sleep 2
  done
  launch
}

java_cmd() {
  JAVA=(java "-Xmx${KAFKA_HEAP:-512m}" -Xms128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true
    "-Dlog4j2.configurationFile=$STATE/log4j2.properties" -cp "$JARS/lib/*")
}

# Starts the broker on the state directory's configuration and data and waits until it is ready.
launch() {
  local port
  port=$(cat "$STATE/port")
  java_cmd
  daemon "$STATE" "$STATE/kafka.log" "${JAVA[@]}" kafka.Kafka "$STATE/server.properties"
  wait_until 120 ready "$port" || {
    tail -n 20 "$STATE/kafka.log" >&2
    say "Kafka did not become ready on 127.0.0.1:$port (it exited, or 120 s passed)"
    return 1
  }
}

broker_commands Kafka server.properties kafka.sh "$@"
