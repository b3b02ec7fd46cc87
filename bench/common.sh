# shellcheck shell=bash
# bench/common.sh - sourced by the bench scripts that run `twelve serve` beside peers from
# bench/start-peers.sh: builds the benchmark binary, starts twelve serve and the named peers pinned
# to CPU 0 with one worker each, waits until every one answers, and on exit lifts the CPU cap
# and stops exactly what it started, by PID.
#
# Needs ROOT, OUT and PORT set by the caller (and optionally SERVE_ARGS, an array of
# extra `twelve serve` flags such as --root DIR); sets BIN.
# Usage: start_servers PATH [PEER...]   (PATH: what to fetch to know a server is up, e.g. /json;
#                                        PEER: nginx (port 8081), may (port 8083) or libreactor
#                                        (port 8086, a binary built outside the repository))
#        stop_servers                   (also run on exit; start_servers may be called again after it)

# The benchmark build: fat LTO, one codegen unit, panic=abort, tuned for this CPU.
(cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin)
BIN="$ROOT/target/bench-bin/twelve"

SRV_PID=
PEER_PORTS=()
[ -v SERVE_ARGS ] || SERVE_ARGS=()
stop_servers() {
  [ -n "$SRV_PID" ] || [ ${#PEER_PORTS[@]} -gt 0 ] || return 0   # nothing started
  "$ROOT/bench/cpu-quota.sh" off "$PORT" "${PEER_PORTS[@]}" >/dev/null 2>&1 || true
  # waited for, so that the port is free for the next start_servers
  if [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; then wait "$SRV_PID" 2>/dev/null || true; fi
  [ ${#PEER_PORTS[@]} -eq 0 ] || "$ROOT/bench/start-peers.sh" stop >/dev/null 2>&1 || true
  SRV_PID=
  PEER_PORTS=()
}
trap stop_servers EXIT

start_servers() {
  local path=$1 peer p
  shift
  for peer in "$@"; do
    case $peer in
      nginx) PEER_PORTS+=(8081) ;;
      may) PEER_PORTS+=(8083) ;;
      libreactor) PEER_PORTS+=(8086) ;;
      *) echo "unknown peer $peer" >&2; exit 2 ;;
    esac
  done
  ulimit -n "$(ulimit -Hn)"
  taskset -c 0 "$BIN" serve --listen "127.0.0.1:$PORT" --cpus 0 "${SERVE_ARGS[@]}" \
    > "$OUT/raw/twelve-serve.log" 2>&1 &
  SRV_PID=$!
  # start-peers.sh with no names starts them all.
  if [ $# -gt 0 ]; then SERVER_CPU=0 "$ROOT/bench/start-peers.sh" "$@" > "$OUT/raw/peers.log"; fi
  for p in "$PORT" "${PEER_PORTS[@]}"; do
    for _ in $(seq 50); do curl -sf "http://127.0.0.1:$p$path" >/dev/null && break; sleep 0.2; done
  done
}

# The TechEmpower json test's request headers (what bench/wrk-rounds.sh sends), for wrk and
# twelve bench alike.
# shellcheck disable=SC2034  # used by the scripts that source this file
TFB_HDRS=(-H 'Host: localhost'
  -H 'Accept: application/json,text/html;q=0.9,application/xhtml+xml;q=0.9,application/xml;q=0.8,*/*;q=0.7')

# Prints "requests rps" from a client's saved output: wrk's text, or twelve bench's --json.
# Usage: client_counts wrk|twelve FILE
client_counts() {
  case $1 in
    wrk) echo "$(awk '/requests in/{print $1}' "$2") $(awk '/^Requests\/sec/{print $2}' "$2")" ;;
    # The report is the JSON among any progress lines and warnings (twelve bench's stderr, if merged).
    twelve) python3 -c 'import json,sys; t=open(sys.argv[1]).read(); d=json.JSONDecoder().raw_decode(t, t.index("{"))[0]; print(d["requests"], d["rps"])' "$2" ;;
  esac
}
