# bench/common.sh - sourced by the bench scripts that run `twelve serve` beside peers from
# ../shared/bench: builds the benchmark binary, starts twelve serve and the named peers pinned
# to CPU 0 with one worker each, waits until every one answers, and on exit lifts the CPU cap
# and stops exactly what it started, by PID.
#
# Needs ROOT, SHARED, OUT and PORT set by the caller; sets BIN.
# Usage: start_servers PATH [PEER...]   (PATH: what to fetch to know a server is up, e.g. /json;
#                                        PEER: nginx (port 8081) or may (port 8083))

# The benchmark build: fat LTO, one codegen unit, panic=abort, tuned for this CPU.
(cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin)
BIN="$ROOT/target/bench-bin/twelve"

SRV_PID=
PEER_PORTS=()
stop_servers() {
  "$SHARED/cpu-quota.sh" off "$PORT" "${PEER_PORTS[@]}" >/dev/null 2>&1 || true
  [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null || true
  "$SHARED/start-peers.sh" stop >/dev/null 2>&1 || true
}
trap stop_servers EXIT

start_servers() {
  local path=$1 peer p
  shift
  for peer in "$@"; do
    case $peer in
      nginx) PEER_PORTS+=(8081) ;;
      may) PEER_PORTS+=(8083) ;;
      *) echo "unknown peer $peer" >&2; exit 2 ;;
    esac
  done
  ulimit -n "$(ulimit -Hn)"
  taskset -c 0 "$BIN" serve --listen "127.0.0.1:$PORT" --cpus 0 > "$OUT/raw/twelve-serve.log" 2>&1 &
  SRV_PID=$!
  # start-peers.sh with no names starts them all.
  if [ $# -gt 0 ]; then SERVER_CPU=0 "$SHARED/start-peers.sh" "$@" > "$OUT/raw/peers.log"; fi
  for p in "$PORT" "${PEER_PORTS[@]}"; do
    for _ in $(seq 50); do curl -sf "http://127.0.0.1:$p$path" >/dev/null && break; sleep 0.2; done
  done
}

# The TechEmpower json test's request headers (what ../shared/bench/run.sh sends), for wrk and
# twelve bench alike.
TFB_HDRS=(-H 'Host: localhost'
  -H 'Accept: application/json,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7')

# Prints "requests rps" from a client's saved output: wrk's text, or twelve bench's --json.
# Usage: client_counts wrk|twelve FILE
client_counts() {
  case $1 in
    wrk) echo "$(awk '/requests in/{print $1}' "$2") $(awk '/^Requests\/sec/{print $2}' "$2")" ;;
    twelve) python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["requests"], d["rps"])' "$2" ;;
  esac
}
