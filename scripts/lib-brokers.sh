# Shared by scripts/kafka.sh, rabbitmq.sh and sqs.sh (sourced, not run): free ports, bounded waits, the
# Maven artifacts of a JVM server cached under ~/.cache/herald-ci, and stopping a daemon's process group.
# Each script defines say() and die() before sourcing this.

HERALD_CACHE="${HERALD_CACHE:-${HOME}/.cache/herald-ci}"

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
port_open() { node -e 'require("net").connect(+process.argv[1],"127.0.0.1").on("connect",()=>process.exit(0)).on("error",()=>process.exit(1))' "$1"; }

# wait_until SECONDS COMMAND...: runs COMMAND every half second until it succeeds, SECONDS have passed
# (a loaded machine starts a JVM slowly; the bound is generous, never endless) or the daemon has exited.
wait_until() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] && running || return 1
    sleep 0.5
  done
}

# maven_fetch DIR GROUP:ARTIFACT:VERSION...: the runtime jars of the artifacts in DIR/lib, copied once by
# Maven (`mvn`, from Debian's `maven` package when missing and this runs as root). DIR/lib is complete
# only when DIR/ok exists, so an interrupted download is redone.
maven_fetch() {
  local dir="$1"
  [ -f "$dir/ok" ] && return 0
  mkdir -p "$(dirname "$dir")" || die "cannot create $(dirname "$dir")"
  # Two test files may start the same server at once on a fresh machine: one fetches, the other waits.
  (
    flock 9 || die "cannot lock $dir.lock"
    maven_fetch_locked "$@"
  ) 9>"$dir.lock" || exit 1
}

maven_fetch_locked() {
  local dir="$1" deps="" a g v
  shift
  [ -f "$dir/ok" ] && return 0
  if ! command -v mvn >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing Maven from Debian's packages"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven) >&2 || die "could not install Maven"
  fi
  command -v mvn >/dev/null || die "mvn (Maven) is needed to fetch ${*}"
  command -v java >/dev/null || die "java (17 or later) is needed"
  for coordinate in "$@"; do
    IFS=: read -r g a v <<<"$coordinate"
    deps="$deps<dependency><groupId>$g</groupId><artifactId>$a</artifactId><version>$v</version></dependency>"
  done
  rm -rf "$dir" && mkdir -p "$dir" || die "cannot create $dir"
  cat >"$dir/pom.xml" <<EOF
<project><modelVersion>4.0.0</modelVersion>
<groupId>herald</groupId><artifactId>herald-cache</artifactId><version>1</version><packaging>pom</packaging>
<dependencies>$deps</dependencies></project>
EOF
  say "fetching ${*} with Maven (once per machine)"
  (cd "$dir" && mvn -q -B dependency:copy-dependencies -DoutputDirectory=lib -DincludeScope=runtime) >&2 ||
    die "Maven could not fetch ${*}"
  touch "$dir/ok"
}

# halt_signal ARG: the signal `halt` sends: KILL for --kill (a crash), else TERM (a clean stop).
halt_signal() { if [ "${1:-}" = --kill ]; then echo KILL; else echo TERM; fi; }

# with_retries START: runs START (a function starting the server on fresh ports) up to three times: a port
# found free can be taken by someone else before the server binds it. Once when the port was given.
with_retries() {
  local tries=3
  [ -n "${FIXED_PORT:-}" ] && tries=1
  for attempt in $(seq 1 "$tries"); do
    "$1" && return 0
    stop_daemon "$STATE"
    [ "$attempt" -lt "$tries" ] && say "start failed (attempt $attempt of $tries), trying again on other ports"
  done
  return 1
}

# daemon STATE LOG COMMAND...: starts COMMAND in a session of its own (so stop_daemon ends it and its
# children by group id), its output in LOG, its pid in STATE/pid.
daemon() {
  local state="$1" log="$2"
  shift 2
  setsid "$@" </dev/null >>"$log" 2>&1 &
  echo $! >"$state/pid"
}

running() { [ -f "$STATE/pid" ] && kill -0 "$(cat "$STATE/pid")" 2>/dev/null; }

# stop_daemon STATE [SIGNAL]: SIGNAL (TERM) to the group, KILL after 10 s.
stop_daemon() {
  [ -f "$1/pid" ] || return 0
  local pid
  pid=$(cat "$1/pid")
  kill "-${2:-TERM}" -- "-$pid" 2>/dev/null
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$pid" 2>/dev/null
  rm -f "$1/pid"
}

# broker_commands NAME CONFIG SCRIPT [ARGS...]: the commands a broker script takes, for a server whose state
# directory holds CONFIG once started: start (the script's `start`), stop, halt [--kill], resume (the
# script's `launch`), status, bin (the script's `fetch`, then the jars' folder, $JARS/lib). ARGS are the
# script's own arguments (COMMAND STATE [--kill]).
broker_commands() {
  local name="$1" config="$2" script="$3"
  shift 3
  case "$COMMAND" in
    start) start ;;
    stop) stop_daemon "$STATE" && rm -rf "$STATE" ;;
    halt) stop_daemon "$STATE" "$(halt_signal "${3:-}")" ;;
    resume)
      running || { [ -f "$STATE/$config" ] || die "nothing to resume in $STATE"; launch || die "$name did not resume"; }
      exports ;;
    status)
      if running; then echo "running on 127.0.0.1:$(cat "$STATE/port")"; else echo "not running"; exit 1; fi ;;
    bin) fetch && echo "$JARS/lib" ;;
    *) echo "usage: scripts/$script start|stop|halt|resume|status|bin [state-dir]" >&2; exit 2 ;;
  esac
}
