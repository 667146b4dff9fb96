#!/usr/bin/env bash
# The broker's writes with each store, in one run: --store memory, and the durable store with
# --fsync off, interval=10 and always (the default) - each on a fresh data directory.
#   PATCH of one attribute of the 20-attribute bench entity, and a batch upsert of 20 small
#   entities (POST /entityOperations/upsert, replacing the same 20 each time)
#   x 1 and 16 connections.
# Each server on 127.0.0.1 with one loop, alone while it is measured; load from corRequest;
# req/s and latencies from it; server CPU per request from /proc/PID/stat; the journal's records
# and fsyncs from /metrics over the measured window (records per fsync: a batch of 20 is 20
# records; requests per fsync: the answers that shared one). Then this disk's fsync, timed alone;
# then recovery of ENTITIES (default 1 000 000) small entities, from the journal alone (as a
# crash leaves it) and from the snapshot the close takes, with the heap the store holds per entity.
#   benchmarks/store.sh                         (about 10 minutes)
#   ROUNDS=1 DURATION=3 SERVER_WARM=5 benchmarks/store.sh     (a quick look)
# It stops everything it started, also on Ctrl-C.
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"

ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-5}        # seconds measured per cell
WARM=${WARM:-2}                # seconds of load before each cell
SERVER_WARM=${SERVER_WARM:-20} # seconds of load on a freshly started server (JIT)
port=18512
attrs20=urn:ngsi-ld:Bench:attrs20

echo "building..." >&2
build
results="$work/results"
: >"$results"

"$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.BenchEntitiesMain attrs20 >"$work/attrs20.json"
printf '{"type": "Property", "value": 42.5}' >"$work/patch.json"
python3 - "$work/upsert.json" <<'PY'
import json, sys
batch = [{"id": f"urn:ngsi-ld:Bench:u{i:02d}", "type": "Bench", "name": {"type": "Property", "value": "small"}}
         for i in range(1, 21)]
open(sys.argv[1], "w").write(json.dumps(batch))
PY

# journal NAME: a counter of the broker's /metrics (0 with the memory store)
journal() {
  curl -s "http://127.0.0.1:$port/metrics" | awk -v n="$1" '$1 == n { print $2; found = 1 } END { if (!found) print 0 }'
}

cell() { # ROUND STORE OP CONNS URL [corRequest flags]
  local round=$1 store=$2 op=$3 conns=$4 url=$5; shift 5
  load "$url" "$conns" "$WARM" "$@" >/dev/null
  local r0 f0 r1 f1 m
  r0=$(journal cor_store_journal_records_total); f0=$(journal cor_store_journal_forces_total)
  m=$(measure "$url" "$conns" 0 "$DURATION" "$@")
  r1=$(journal cor_store_journal_records_total); f1=$(journal cor_store_journal_forces_total)
  echo "$round $store $op $conns $m $((r1 - r0)) $((f1 - f0))" >>"$results"
}

t0=$(date +%s)
for round in $(seq "$ROUNDS"); do
  for store in memory off interval=10 always; do
    echo "round $round: $store" >&2
    data="$work/data-$round-$store"
    if [ "$store" = memory ]; then flags=(--store memory); else flags=(--dataDir "$data" --fsync "$store"); fi
    start broker "$here/cor" java -jar "$BROKER_JAR" --host 127.0.0.1 --port $port --httpLoops 1 "${flags[@]}"
    base="http://127.0.0.1:$port/ngsi-ld/v1"
    post "$base/entities" "$work/attrs20.json"
    load "$base/entities/$attrs20/attrs/attr01" 16 "$SERVER_WARM" \
      --method PATCH --header 'Content-Type: application/json' --body-file "$work/patch.json" >/dev/null
    for conns in 1 16; do
      cell "$round" "$store" PATCH "$conns" "$base/entities/$attrs20/attrs/attr01" \
        --method PATCH --header 'Content-Type: application/json' --body-file "$work/patch.json"
      cell "$round" "$store" UPSERT20 "$conns" "$base/entityOperations/upsert" \
        --method POST --header 'Content-Type: application/json' --body-file "$work/upsert.json"
    done
    stop_all
    rm -rf "$data"
  done
done

echo
echo "store.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $( "$here/cor" java -version 2>&1 | head -1 ), ${DURATION}s per cell, $ROUNDS round(s), $(( $(date +%s) - t0 ))s, load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print(f'{"round":>5} {"store":<11} {"op":<8} {"conns":>5} {"req/s":>9} {"p50 us":>8} {"p99 us":>8} {"errors":>6} {"cpu us/req":>10} {"records":>9} {"fsyncs":>7} {"records/fsync":>13} {"req/fsync":>9}')
cell = {}
for r in rows:
    rnd, store, op, conns, rps, p50, p99, err, cpu, records, forces = r
    per = f'{int(records) / int(forces):.1f}' if int(forces) > 0 else "-"
    # the journal's records over the window, divided by a request's records: the requests it answered
    reqs = int(records) / (20 if op == "UPSERT20" else 1)
    rper = f'{reqs / int(forces):.1f}' if int(forces) > 0 else "-"
    cell[(rnd, store, op, conns)] = float(rps)
    print(f'{rnd:>5} {store:<11} {op:<8} {conns:>5} {float(rps):>9.0f} {float(p50):>8.0f} {float(p99):>8.0f} {err:>6} {cpu:>10} {records:>9} {forces:>7} {per:>13} {rper:>9}')
print()
print("req/s of the durable store over the memory store's, same round (the bar at 16 connections, fsync always: >= 0.5)")
for rnd in sorted({k[0] for k in cell}):
    for op in ("PATCH", "UPSERT20"):
        for c in ("1", "16"):
            m = cell.get((rnd, "memory", op, c))
            line = "  ".join(f'{s} {cell[(rnd, s, op, c)] / m:.2f}' for s in ("off", "interval=10", "always")
                             if m and (rnd, s, op, c) in cell)
            print(f'  round {rnd} {op:<8} {c:>2} connections: {line}')
PY
echo
"$here/cor" java -jar "$BENCH_JAR" fsyncCost "$work" 2000 4096

ENTITIES=${ENTITIES:-1000000}
echo
echo "recovery of $ENTITIES small entities (heap: the used heap after full collections, before and after the open)"
"$here/cor" java -jar "$BENCH_JAR" storeRecovery load "$work/many" "$ENTITIES"
echo "from the journal alone:"
"$here/cor" java -jar "$BENCH_JAR" storeRecovery recover "$work/many"
echo "from the snapshot the close took:"
"$here/cor" java -jar "$BENCH_JAR" storeRecovery recover "$work/many"
