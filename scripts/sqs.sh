#!/usr/bin/env bash
# An Amazon SQS-compatible server for Herald's broker destinations: ElasticMQ (its Maven Central
# artifacts, on the machine's Java 17+), in memory, on loopback only. It speaks SQS's JSON and query
# protocols, standard and FIFO queues, message attributes and SendMessage's MD5s; it does not check
# signatures, so the dummy credentials below are only there for clients that insist on signing. They
# have AWS's form (an access key id of 20 capitals and digits, as AWS issues them), so Herald accepts them
# as an SQS endpoint's credentials.
#
#   eval "$(scripts/sqs.sh start)"   # starts it; prints SQS_ENDPOINT, SQS_REGION and AWS_* exports for eval
#   scripts/sqs.sh status            # running or not, and where
#   scripts/sqs.sh stop              # stops it and removes the state directory
#   scripts/sqs.sh halt [state] [--kill]  # stops it, keeping its queues and messages (--kill: a crash)
#   scripts/sqs.sh resume [state]    # starts a halted server again, same port, queues and messages
#   scripts/sqs.sh bin               # fetches the jars if needed and prints their directory
#
# The state directory is the second argument, default $TMPDIR/herald-sqs-<uid>. SQS_PORT picks the port.
set -uo pipefail

ELASTICMQ_VERSION=1.7.1
REGION=us-east-1
COMMAND="${1:-}"
STATE="${2:-${TMPDIR:-/tmp}/herald-sqs-$(id -u)}"

say() { echo "sqs.sh: $*" >&2; }
die() { say "$*"; exit 1; }
# shellcheck source=scripts/lib-brokers.sh
. "$(dirname "$0")/lib-brokers.sh"
JARS="$HERALD_CACHE/elasticmq-$ELASTICMQ_VERSION"
exports() {
  echo "export SQS_ENDPOINT=http://127.0.0.1:$(cat "$STATE/port")"
  echo "export SQS_REGION=$REGION"
  echo "export AWS_ACCESS_KEY_ID=AKIAHERALDTESTQUEUE7"
  echo "export AWS_SECRET_ACCESS_KEY=herald/Test+Secret/not-a-real-key"
}

fetch() { maven_fetch "$JARS" "org.elasticmq:elasticmq-server_2.13:$ELASTICMQ_VERSION"; }

# Ready means ListQueues over the JSON protocol answers 200.
ready() {
  node -e '
    fetch(`http://127.0.0.1:${process.argv[1]}/`, { method: "POST", body: "{}", signal: AbortSignal.timeout(3000),
      headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": "AmazonSQS.ListQueues" } })
      .then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1));
  ' "$1"
}

start() {
  if running; then
    exports
    return 0
  fi
  fetch
  FIXED_PORT="${SQS_PORT:-}" with_retries start_once || die "ElasticMQ did not start (see $STATE/elasticmq.log)"
  say "ElasticMQ $ELASTICMQ_VERSION (SQS) on 127.0.0.1:$(cat "$STATE/port"); stop it with scripts/sqs.sh stop"
  exports
}

start_once() {
  rm -rf "$STATE" && mkdir -p "$STATE" || die "cannot create $STATE"
  local port
  port="${SQS_PORT:-$(free_port)}"
  echo "$port" >"$STATE/port"
  # Queues and messages in an H2 database of the state directory, written at each change (H2 delays
  # writes by half a second otherwise, and a killed server then forgets what it had acknowledged).
  cat >"$STATE/elasticmq.conf" <<EOF
include classpath("application.conf")
node-address { protocol = http, host = "127.0.0.1", port = $port, context-path = "" }
rest-sqs { enabled = true, bind-port = $port, bind-hostname = "127.0.0.1", sqs-limits = strict }
rest-stats { enabled = false }
messages-storage { enabled = true, uri = "jdbc:h2:$STATE/messages;WRITE_DELAY=0" }
aws { region = $REGION, accountId = "000000000000" }
EOF
  launch
}

# Starts the server on the state directory's configuration and storage and waits until it is ready.
launch() {
  local port
  port=$(cat "$STATE/port")
  daemon "$STATE" "$STATE/elasticmq.log" java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    "-Dconfig.file=$STATE/elasticmq.conf" -cp "$JARS/lib/*" org.elasticmq.server.Main
  wait_until 120 ready "$port" || {
    tail -n 20 "$STATE/elasticmq.log" >&2
    say "ElasticMQ did not become ready on 127.0.0.1:$port (it exited, or 120 s passed)"
    return 1
  }
}

broker_commands ElasticMQ elasticmq.conf sqs.sh "$@"
