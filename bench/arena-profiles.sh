#!/usr/bin/env bash
# bench/arena-profiles.sh - every HttpArena profile twelve's httparena example serves, HTTP/1.1
# and HTTP/2, driven by `twelve bench` alone (HttpArena itself needs gcannon, wrk with Lua and
# h2load for them), against one server: the example (crates/engine/examples/httparena.rs), one
# worker on CPU 0, plain on PORT (HTTP/1.1 and h2c) and TLS on TLS_PORT (ALPN h2 and http/1.1);
# the client on CPU 1, one thread. Prints one table (median of ROUNDS per profile).
#
#   profile       HttpArena's client and shape                    twelve bench here
#   baseline      gcannon: get, post_cl, post_chunked rotation    --targets of the three
#   pipelined     gcannon -p 16 GET /pipeline                     -p 16
#   limited-conn  baseline, -r 10                                 --requests-per-conn 10
#   json          gcannon: 7 /json/{count}?m= pairs, -r 25        --targets, --requests-per-conn 25
#   json-comp     gcannon: 3 pairs + Accept-Encoding, -r 25       --targets, --requests-per-conn 25
#   json-tls      wrk + Lua over TLS: the 7 pairs                 --targets over https://
#   upload        gcannon: 500 KB, 2 MB, 10 MB, 20 MB POST, -r 5  --targets with @bodies, -r 5
#   static        wrk + Lua: 20 files, Accept-Encoding br, gzip   --targets
#   baseline-h2   h2load -m 100 /baseline2?a=1&b=1 over TLS       --h2 --streams 100
#   static-h2     h2load -m 32 -i 20 files + Accept-Encoding      --h2 --streams 32 --targets
#   baseline-h2c  h2load -p h2c -m 100 /baseline2?a=1&b=1         --h2c --streams 100
#   json-h2c      h2load -p h2c -m 32 -i the 7 json URIs          --h2c --streams 32 --targets
#
# Left out: the database profiles (async-db, api-4, api-16, crud: the example has no database),
# WebSocket (echo-ws), gRPC, HTTP/3 and the gateway profiles. Request shapes are HttpArena's
# (bench/peers/arena/requests/, MIT); connection counts are HttpArena's smallest per profile
# unless CONNS sets one for all (HttpArena's are for 64-core hosts: on one server core the
# deepest, json at 4096 connections or json-h2c at 1024 x 32 streams, queue seconds of work,
# so a short run measures nothing; CONNS=64 or 128 suits one core). Differences from HttpArena's clients: twelve bench rotates
# targets request by request on each connection (gcannon per connection, wrk per thread).
#
# Usage: bench/arena-profiles.sh [OUTDIR]     (default bench/runs/<date>-arena-profiles)
# Env:   ROUNDS=3 DURATION=5s WARMUP=1s PROFILES="baseline ... json-h2c" CONNS= (HttpArena's)
#        ARENA_DATA=/tmp/arena-data/data (HttpArena's data/: `git archive` it from a clone)
#        PORT=8211 TLS_PORT=8212 BIN= (twelve) ARENA_BIN= (the example; default: build both
#        with the bench-bin profile)
# Writes OUTDIR/raw/ (each run's --json report, the server's log), runs.tsv (one row per run)
# and table.txt (the table printed). Needs openssl, python3. Every process it starts is stopped
# by PID on exit; every run is bounded by its duration.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/bench/runs/$(date +%F)-arena-profiles}
ROUNDS=${ROUNDS:-3}; DURATION=${DURATION:-5s}; WARMUP=${WARMUP:-1s}
ALL="baseline pipelined limited-conn json json-comp json-tls upload static baseline-h2 static-h2 baseline-h2c json-h2c"
PROFILES=${PROFILES:-$ALL}; CONNS=${CONNS:-}
DATA=${ARENA_DATA:-/tmp/arena-data/data}
PORT=${PORT:-8211}; TLS_PORT=${TLS_PORT:-8212}
REQ=$ROOT/bench/peers/arena/requests
die() { echo "arena-profiles.sh: $*" >&2; exit 1; }
[ -f "$DATA/dataset.json" ] && [ -d "$DATA/static" ] || die "no HttpArena data at $DATA (ARENA_DATA)"
mkdir -p "$OUT/raw"
if [ -z "${BIN:-}" ] || [ -z "${ARENA_BIN:-}" ]; then
  (cd "$ROOT" && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin --bin twelve \
    && RUSTFLAGS="-C target-cpu=native" cargo build -q --profile bench-bin -p twelve-engine --example httparena)
fi
T=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=${BIN:-$T/bench-bin/twelve}; ARENA_BIN=${ARENA_BIN:-$T/bench-bin/examples/httparena}

DIR=$(mktemp -d /tmp/twelve-arena-profiles.XXXXXX)
PIDS=()
stop_all() {
  local p
  for p in ${PIDS[@]+"${PIDS[@]}"}; do kill "$p" 2>/dev/null || true; done
  for p in ${PIDS[@]+"${PIDS[@]}"}; do wait "$p" 2>/dev/null || true; done
  rm -rf "$DIR"
}
trap stop_all EXIT
ulimit -n "$(ulimit -Hn)"
"$ROOT/bench/tls-pki.sh" "$DIR" > /dev/null

# The upload bodies, and a targets file per profile in vegeta's format, made from HttpArena's
# raw requests (the Host field becomes the target's; a body goes to a file, `@path`).
for size in 512000 2097152 10485760 20971520; do head -c "$size" /dev/zero | tr '\0' x > "$DIR/up-$size"; done
python3 - "$REQ" "$DIR" "$PORT" "$TLS_PORT" <<'EOF'
import sys, os
req, out, port, tls = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
plain, secure = f"http://127.0.0.1:{port}", f"https://127.0.0.1:{tls}"
def raw(name, base, n):
    data = open(os.path.join(req, name + ".raw"), "rb").read()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    method, path, _ = lines[0].split(" ")
    block = [f"{method} {base}{path}"] + [l for l in lines[1:] if not l.lower().startswith("host:")]
    if body:
        p = os.path.join(out, f"body-{name}-{n}")
        open(p, "wb").write(body)
        block.append("@" + p)
    return "\n".join(block)
def write(profile, blocks):
    open(os.path.join(out, profile + ".targets"), "w").write("\n\n".join(blocks) + "\n")
three = ["get", "post_cl", "post_chunked"]
pairs = ["json-1", "json-5", "json-10", "json-15", "json-25", "json-40", "json-50"]
write("baseline", [raw(r, plain, i) for i, r in enumerate(three)])
write("json", [raw(r, plain, i) for i, r in enumerate(pairs)])
write("json-comp", [raw(r, plain, i) for i, r in enumerate(["json-gzip-25", "json-gzip-40", "json-gzip-50"])])
write("json-tls", [raw(r, secure, i) for i, r in enumerate(pairs)])
write("upload", [f"POST {plain}/upload\nContent-Type: application/octet-stream\n@{out}/up-{s}"
                 for s in (512000, 2097152, 10485760, 20971520)])
paths = [u.split("/", 3)[3] for u in open(os.path.join(req, "static-h2-uris.txt")).read().split()]
ae = "Accept-Encoding: br;q=1, gzip;q=0.8"
write("static", [f"GET {plain}/{p}\n{ae}" for p in paths])
write("static-h2", [f"GET {secure}/{p}\n{ae}" for p in paths])
json_h2c = [u.split("/", 3)[3] for u in open(os.path.join(req, "json-h2c-uris.txt")).read().split()]
write("json-h2c", [f"GET {plain}/{p}" for p in json_h2c])
EOF

TLS_LISTEN=127.0.0.1:$TLS_PORT TLS_CERT=$DIR/chain.pem TLS_KEY=$DIR/key.pem \
  DATASET=$DATA/dataset.json STATIC_DIR=$DATA/static \
  taskset -c 0 "$ARENA_BIN" "127.0.0.1:$PORT" > "$OUT/raw/server.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do
  curl -s -o /dev/null "http://127.0.0.1:$PORT/pipeline" && break
  sleep 0.1
done
curl -sf -o /dev/null "http://127.0.0.1:$PORT/pipeline" || die "the example did not start: $(cat "$OUT/raw/server.log")"

{
  echo "# HttpArena's HTTP/1.1 and HTTP/2 profiles with twelve bench alone"
  echo
  echo "- date: $(date -u +%FT%TZ)"
  echo "- twelve: $("$BIN" --version | head -1)"
  echo "- commit: $(cd "$ROOT" && git rev-parse --short=12 HEAD)"
  echo "- kernel: $(uname -r); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) online"
  echo "- server: crates/engine/examples/httparena.rs, one worker on CPU 0 (plain and TLS listeners)"
  echo "- client: twelve bench -t 1 on CPU 1, ${DURATION} measured after ${WARMUP} of warm-up per run"
  echo "- command: \`bench/arena-profiles.sh\` (ROUNDS=$ROUNDS DURATION=$DURATION WARMUP=$WARMUP CONNS=${CONNS:-(HttpArena smallest)} PROFILES=\"$PROFILES\")"
} > "$OUT/README.md"

# Each profile's connections (HttpArena's smallest) and flags; targets or URL last.
conns() {
  [ -n "$CONNS" ] && { echo "$CONNS"; return; }
  case $1 in
    upload) echo 32 ;; baseline-h2|static-h2|baseline-h2c) echo 256 ;;
    static|json-h2c) echo 1024 ;; json|json-tls) echo 4096 ;; *) echo 512 ;;
  esac
}
args() {
  local t="--targets $DIR/$1.targets"
  case $1 in
    baseline) echo "$t" ;;
    pipelined) echo "-p 16 http://127.0.0.1:$PORT/pipeline" ;;
    limited-conn) echo "--requests-per-conn 10 --targets $DIR/baseline.targets" ;;
    json|json-comp) echo "--requests-per-conn 25 $t" ;;
    json-tls) echo "--cacert $DIR/ca.pem $t" ;;
    upload) echo "--requests-per-conn 5 --timeout 10s $t" ;;
    static) echo "$t" ;;
    baseline-h2) echo "--h2 --streams 100 --cacert $DIR/ca.pem https://127.0.0.1:$TLS_PORT/baseline2?a=1&b=1" ;;
    static-h2) echo "--h2 --streams 32 --cacert $DIR/ca.pem $t" ;;
    baseline-h2c) echo "--h2c --streams 100 http://127.0.0.1:$PORT/baseline2?a=1&b=1" ;;
    json-h2c) echo "--h2c --streams 32 $t" ;;
    *) die "unknown profile $1 (one of: $ALL)" ;;
  esac
}

# Before each run, the last one's connections are gone from the server (at most 10 s): a
# server still closing thousands of TLS connections would be measured with them.
drained() {
  local _
  for _ in $(seq 100); do
    [ "$(ss -Htn state established "( sport = :$PORT or sport = :$TLS_PORT )" | wc -l)" -eq 0 ] && return
    sleep 0.1
  done
}

printf 'profile\tround\tconns\tfile\n' > "$OUT/runs.tsv"
for r in $(seq "$ROUNDS"); do
  for p in $PROFILES; do
    c=$(conns "$p")
    drained
    f="raw/$p-r$r.json"
    # shellcheck disable=SC2046  # args() is a list of words
    taskset -c 1 "$BIN" bench --cpus 1 -t 1 -c "$c" -d "$DURATION" --warmup "$WARMUP" --json \
      --max-errors 100% $(args "$p") > "$OUT/$f" 2> "$OUT/raw/$p-r$r.err" || true
    printf '%s\t%s\t%s\t%s\n' "$p" "$r" "$c" "$f" >> "$OUT/runs.tsv"
    echo "round $r $p: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(round(d["rps"]), "req/s")' "$OUT/$f" 2>/dev/null || echo failed)"
  done
done

python3 - "$OUT" <<'EOF' | tee "$OUT/table.txt"
import json, statistics, sys, os, csv
out = sys.argv[1]
rows = {}
for r in csv.DictReader(open(os.path.join(out, "runs.tsv")), delimiter="\t"):
    try:
        d = json.load(open(os.path.join(out, r["file"])))
    except Exception:
        d = None
    rows.setdefault(r["profile"], (r["conns"], []))[1].append(d)
print(f"{'profile':<13} {'proto':<8} {'conns':>5} {'depth':>5} {'req/s':>9} {'p50 us':>9} {'p99 us':>9} {'non-2xx':>7} {'errors':>6} {'cli ns/req':>10} verdict")
for p, (conns, docs) in rows.items():
    ok = [d for d in docs if d]
    if not ok:
        print(f"{p:<13} failed: see raw/{p}-r*.err")
        continue
    med = lambda f: statistics.median(f(d) for d in ok)
    cfg = ok[0]["config"]
    depth = cfg.get("streams") if cfg.get("protocol") in ("h2", "h2c") else cfg.get("pipeline")
    lat = lambda k: med(lambda d: d["latency"]["corrected"][k])
    bad = med(lambda d: sum(n for c, n in d["errors"]["status"].items() if not c.startswith("2")))
    errs = med(lambda d: d["errors"]["total"] - sum(n for c, n in d["errors"]["status"].items() if not (c.startswith("2") or c.startswith("3"))))
    verdicts = ",".join(sorted({d["self_check"]["verdict"] for d in ok}))
    print(f"{p:<13} {cfg.get('protocol', '?'):<8} {conns:>5} {depth:>5} {med(lambda d: d['rps']):>9.0f} "
          f"{lat('p50_us'):>9.1f} {lat('p99_us'):>9.1f} {bad:>7.0f} {errs:>6.0f} "
          f"{med(lambda d: d['client']['cpu_ns_per_request'] or 0):>10.0f} {verdicts}")
print(f"(median of {len(docs)} rounds each; latency corrected; client on CPU 1, the example on CPU 0)")
EOF
