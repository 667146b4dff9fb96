#!/usr/bin/env bash
# The broker's own requests beside the gateway's pre-serialized GET, in one run (two rounds):
#   GET /ngsi-ld/v1/entities/{id} of the small and the 20-attribute bench entity on the broker
#   (cor-server.jar) and GET /entities/{id} of the same bytes on examples/gateway (--preload),
#   PATCH of one attribute of the 20-attribute entity, POST of a new entity each time
#   x 1 and 16 connections.
# Each server on 127.0.0.1 with one loop, alone while it is measured; load from corRequest;
# server CPU time per request from /proc/PID/stat over the measured window.
#   benchmarks/broker.sh                         (about 6 minutes)
#   ROUNDS=1 DURATION=3 benchmarks/broker.sh     (a quick look)
# Its last lines: the broker's GET CPU per request over the gateway's, per entity and connections
# (the bar: at most 1.5). It stops everything it started, also on Ctrl-C.
#
#   BEFORE=<git ref> benchmarks/broker.sh        (about 8 minutes with the build of the ref)
# The same broker cells for the broker built from <ref> (in a temporary worktree) and for this
# tree's, in one run, alternating which goes first in each round (no gateway). Its last lines:
# this tree's over the ref's, req/s and server CPU per request, per cell and round, beside the
# spread of the ref's own rounds (the noise: a ratio within it is no change).
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"

ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-5}       # seconds measured per cell
WARM=${WARM:-2}               # seconds of load before each cell
SERVER_WARM=${SERVER_WARM:-20} # seconds of load on a freshly started server (JIT)
port=18501
small=urn:ngsi-ld:Bench:small
attrs20=urn:ngsi-ld:Bench:attrs20

BEFORE=${BEFORE:-}

echo "building..." >&2
build
results="$work/results"
: >"$results"
if [ -n "$BEFORE" ]; then
  git -C "$here" rev-parse --verify --quiet "$BEFORE^{commit}" >/dev/null || { echo "BEFORE=$BEFORE is no commit" >&2; exit 2; }
  before_tree="$work/before"
  git -C "$here" worktree add --quiet --detach "$before_tree" "$BEFORE"
  trap 'stop_all; git -C "$here" worktree remove --force "$before_tree" 2>/dev/null || true; rm -rf "$work"' EXIT
  echo "building the broker at $BEFORE ($(git -C "$here" rev-parse --short HEAD) is this tree)..." >&2
  "$before_tree/cor" mvn -q -DskipTests -pl cor-server-launcher -am package >/dev/null
  BEFORE_JAR="$before_tree/cor-server-launcher/target/cor-server.jar"
fi

# the bench entities, as the gateway serves them (BenchEntities), for the broker to hold
"$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.BenchEntitiesMain small >"$work/small.json"
"$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.BenchEntitiesMain attrs20 >"$work/attrs20.json"
printf '{"type": "Property", "value": 42.5}' >"$work/patch.json"
printf '{"id": "urn:ngsi-ld:Bench:new{seq}", "type": "Bench", "name": {"type": "Property", "value": "new"}}' >"$work/post.json"

cell() { # ROUND SERVER OP ENTITY CONNS URL [corRequest flags]
  local round=$1 server=$2 op=$3 entity=$4 conns=$5 url=$6; shift 6
  echo "$round $server $op $entity $conns $(measure "$url" "$conns" "$WARM" "$DURATION" "$@")" >>"$results"
}

broker_cells() { # ROUND NAME JAR: the broker's cells, on a fresh broker from JAR
  local round=$1 name=$2 jar=$3
  echo "round $round: $name" >&2
  start "$name" "$here/cor" java -jar "$jar" --host 127.0.0.1 --port $port --httpLoops 1 --store memory
  local base="http://127.0.0.1:$port/ngsi-ld/v1"
  post "$base/entities" "$work/small.json"
  post "$base/entities" "$work/attrs20.json"
  load "$base/entities/$small" 16 "$SERVER_WARM" >/dev/null
  for conns in 1 16; do
    cell "$round" "$name" GET small "$conns" "$base/entities/$small"
    cell "$round" "$name" GET attrs20 "$conns" "$base/entities/$attrs20"
    cell "$round" "$name" PATCH attrs20 "$conns" "$base/entities/$attrs20/attrs/attr01" \
      --method PATCH --header 'Content-Type: application/json' --body-file "$work/patch.json"
    cell "$round" "$name" POST small "$conns" "$base/entities" \
      --method POST --header 'Content-Type: application/json' --body-file "$work/post.json"
  done
  stop_all
}

t0=$(date +%s)
if [ -n "$BEFORE" ]; then
  for round in $(seq "$ROUNDS"); do
    if [ $((round % 2)) = 1 ]; then
      broker_cells "$round" before "$BEFORE_JAR"; broker_cells "$round" after "$BROKER_JAR"
    else
      broker_cells "$round" after "$BROKER_JAR"; broker_cells "$round" before "$BEFORE_JAR"
    fi
  done
  echo
  echo "broker.sh BEFORE=$BEFORE ($(git -C "$here" rev-parse --short "$BEFORE")) vs this tree ($(git -C "$here" rev-parse --short HEAD)$(git -C "$here" diff --quiet HEAD -- || echo -dirty)), $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, ${DURATION}s per cell, $ROUNDS round(s), $(( $(date +%s) - t0 ))s"
  python3 - "$results" <<'PY'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print(f'{"round":>5} {"server":<8} {"op":<6} {"entity":<8} {"conns":>5} {"req/s":>9} {"p50 us":>8} {"p99 us":>8} {"errors":>6} {"cpu us/req":>10}')
cell = {}
for r in rows:
    rnd, server, op, ent, conns, rps, p50, p99, err, cpu = r
    cell[(rnd, server, op, ent, conns)] = (float(rps), float(cpu) if cpu != "-" else float("nan"))
    print(f'{rnd:>5} {server:<8} {op:<6} {ent:<8} {conns:>5} {float(rps):>9.0f} {float(p50):>8.0f} {float(p99):>8.0f} {err:>6} {cpu:>10}')
print()
print("after / before: req/s and server CPU per request, per round; 'noise': the before's own rounds, max/min")
rounds = sorted({k[0] for k in cell})
for key in sorted({k[2:] for k in cell}):
    rr, cr, br, bc = [], [], [], []
    for rnd in rounds:
        a, b = cell.get((rnd, "after") + key), cell.get((rnd, "before") + key)
        if a and b and b[0] > 0 and b[1] > 0:
            rr.append(a[0] / b[0]); cr.append(a[1] / b[1]); br.append(b[0]); bc.append(b[1])
    if not rr:
        continue
    noise_r = max(br) / min(br) if min(br) > 0 else float("nan")
    noise_c = max(bc) / min(bc) if min(bc) > 0 else float("nan")
    op, ent, conns = key
    print(f'  {op:<6} {ent:<8} {conns:>2} conns: req/s {" ".join(f"{x:.2f}" for x in rr)} (noise {noise_r:.2f}),'
          f' cpu/req {" ".join(f"{x:.2f}" for x in cr)} (noise {noise_c:.2f})')
PY
  exit 0
fi

for round in $(seq "$ROUNDS"); do
  echo "round $round: gateway" >&2
  gateway gateway --port $port --preload
  load "http://127.0.0.1:$port/entities/$small" 16 "$SERVER_WARM" >/dev/null
  for conns in 1 16; do
    cell "$round" gateway GET small "$conns" "http://127.0.0.1:$port/entities/$small"
    cell "$round" gateway GET attrs20 "$conns" "http://127.0.0.1:$port/entities/$attrs20"
  done
  stop_all

  broker_cells "$round" broker "$BROKER_JAR"
done

echo
echo "broker.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $( "$here/cor" java -version 2>&1 | head -1 ), ${DURATION}s per cell, $ROUNDS round(s), $(( $(date +%s) - t0 ))s"
python3 - "$results" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print(f'{"round":>5} {"server":<8} {"op":<6} {"entity":<8} {"conns":>5} {"req/s":>9} {"p50 us":>8} {"p99 us":>8} {"errors":>6} {"cpu us/req":>10}')
cell = {}
for r in rows:
    rnd, server, op, ent, conns, rps, p50, p99, err, cpu = r
    cell[(rnd, server, op, ent, conns)] = cpu
    print(f'{rnd:>5} {server:<8} {op:<6} {ent:<8} {conns:>5} {float(rps):>9.0f} {float(p50):>8.0f} {float(p99):>8.0f} {err:>6} {cpu:>10}')
print()
print("broker GET / gateway GET, server CPU per request (the bar: <= 1.5)")
for rnd in sorted({k[0] for k in cell}):
    for ent in ("small", "attrs20"):
        for c in ("1", "16"):
            b, g = cell.get((rnd, "broker", "GET", ent, c), "-"), cell.get((rnd, "gateway", "GET", ent, c), "-")
            r = f'{float(b) / float(g):.2f}' if "-" not in (b, g) and float(g) > 0 else "-"
            print(f'  round {rnd} {ent:<8} {c:>2} connections: {r}  ({b} vs {g} us)')
PY
