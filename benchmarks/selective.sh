#!/usr/bin/env bash
# Selective queries - about 20 matches - over one type of 10 000, 100 000 and 1 000 000
# entities (SIZES), the case "find the sensors whose status is X":
#   text     GET /entities?type=BenchQ&q=name=="n77"&limit=20   (20 entities hold each name)
#   number   GET /entities?type=BenchQ&q=speed==77&limit=20
#   range    GET /entities?type=BenchQ&q=speed==77..77;name=="n77"&limit=20
#   dense    GET /entities?type=BenchQ&q=speed>=0&limit=20   (every entity matches: the walk
#            stops at the 21st, and the index must not be read in its place)
# x 1 and 16 connections, against the launcher with its defaults (the value index of each
# attribute is built in the background by the first query that needs it: --valueIndexAuto 2000).
# At the smallest size the same queries run against a second broker with --valueIndexAuto 0 (no
# value index: every entity of the type is read), the comparison in the same run. Also the heap
# the two indexes take at each size: used heap after a full GC before and after they are built.
# Each broker on 127.0.0.1 with one loop, started as shipped (java @cor-server-launcher/jvm.options
# -jar, its collector; JVM="" for the JVM's default, G1, or JVM="FLAGS"); load from corRequest;
# server CPU per request from /proc/PID/stat over the measured window, and the loop thread's alone
# (cor-http-0: the query's own work, without the collector's and the JIT's threads).
# All the brokers are loaded first and stay up; then ROUNDS rounds (default 3) measure every cell,
# the brokers visited in turn (the order reversed every other round), so that a neighbour's burst
# on the shared cores falls on every size alike rather than on whichever ran when it came. The
# table gives each cell's median over the rounds.
#   benchmarks/selective.sh                              (about 15 minutes)
#   ROUNDS=1 DURATION=2 SIZES="10000 100000" benchmarks/selective.sh   (a quick look)
# Its last lines: each query's 1 000 000 / 10 000 ratio of CPU per request at 16 connections, the
# medians' and each round's, and the p50s at one connection (the bar: p50 <= 1 ms at every size;
# CPU flat within +-25 %). It stops everything it started.
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"

DURATION=${DURATION:-5}
JVM=${JVM-$SHIPPED_JVM}
WARM=${WARM:-2}
SERVER_WARM=${SERVER_WARM:-10}
SIZES=${SIZES:-"10000 100000 1000000"}
ROUNDS=${ROUNDS:-3}
QUERIES="text number range dense"
declare -A query_of=([text]='name%3D%3D%22n77%22' [number]='speed%3D%3D77'
  [range]='speed%3D%3D77..77%3Bname%3D%3D%22n77%22' [dense]='speed%3E%3D0')
port=18522
query_url() { echo "http://127.0.0.1:$1/ngsi-ld/v1/entities?type=BenchQ&q=${query_of[$2]}&limit=20"; } # PORT QUERY

echo "building..." >&2
build
results="$work/results"
: >"$results"

make_batches() { # DIR N: batches of 1000; name and speed repeat every N/20 entities
  python3 - "$1" "$2" <<'PY'
import json, os, sys
out, n = sys.argv[1], int(sys.argv[2])
os.makedirs(out, exist_ok=True)
distinct = n // 20
batch = []
for i in range(n):
    batch.append({"id": f"urn:ngsi-ld:BenchQ:{i:07d}", "type": "BenchQ",
                  "name": {"type": "Property", "value": f"n{i % distinct}"},
                  "speed": {"type": "Property", "value": i % distinct}})
    if len(batch) == 1000:
        json.dump(batch, open(f"{out}/{i // 1000:05d}.json", "w"))
        batch = []
PY
}

loop_ticks() { # PID -> user+system clock ticks of its loop thread so far
  local t
  for t in /proc/"$1"/task/*; do
    if [ "$(cat "$t/comm" 2>/dev/null)" = cor-http-0 ]; then cut -d')' -f2 "$t/stat" | awk '{print $12 + $13}'; return; fi
  done
  echo 0
}

metric() { # BASE NAME -> its value in /metrics
  curl -s "$1/metrics" | awk -v n="$2" '$1 == n { print $2 }'
}

# open_size SIZE LABEL PORT [broker flags]: starts a broker on PORT, loads SIZE entities, checks
# every query answers 20, waits for the value indexes, notes the heap they took; it stays up
open_size() {
  local size=$1 label=$2 p=$3; shift 3
  # shellcheck disable=SC2086 # JVM is a list of flags
  start "broker-$size-$label" "$here/cor" java $JVM -jar "$BROKER_JAR" --host 127.0.0.1 --port "$p" --httpLoops 1 --store memory "$@"
  pid_of["$size-$label"]=${pids[-1]}
  local root="http://127.0.0.1:$p" base="http://127.0.0.1:$p/ngsi-ld/v1" f code n u i
  for f in "$work/batches-$size"/*.json; do
    code=$(curl -s -o "$work/batch.out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
      --data-binary "@$f" "$base/entityOperations/create")
    [ "$code" = 201 ] || { echo "batch $f answered $code: $(head -c 300 "$work/batch.out")" >&2; exit 1; }
  done
  local before after
  before=$(heap_used "${pids[-1]}")
  for q in $QUERIES; do
    u=$(query_url "$p" "$q")
    n=$(curl -s "$u" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
    [ "$n" -eq 20 ] || { echo "$u answered $n entities, not 20" >&2; exit 1; }
  done
  # the indexes are built in the background: wait until both answer
  for i in $(seq 600); do
    [ "$(metric "$root" cor_store_value_index_built_total)" = "2.0" ] || [ "$label" = scan ] && break
    for q in text number; do curl -s "$(query_url "$p" "$q")" >/dev/null; done
    sleep 0.1
  done
  after=$(heap_used "${pids[-1]}")
  echo "$size $label heap $(( (after - before) / size )) $(metric "$root" cor_store_value_index_bytes)" >>"$work/heap"
  load "$(query_url "$p" text)" 16 "$SERVER_WARM" >/dev/null
}

# measure_size ROUND SIZE LABEL PORT: every query at 1 and 16 connections against that broker
measure_size() {
  local round=$1 size=$2 label=$3 p=$4 pid=${pid_of["$2-$3"]} conns q u l0 l1 m loop
  for conns in 1 16; do
    for q in $QUERIES; do
      u=$(query_url "$p" "$q")
      load "$u" "$conns" "$WARM" >/dev/null
      l0=$(loop_ticks "$pid")
      m=$(PIDS="$pid" measure "$u" "$conns" 0 "$DURATION")
      l1=$(loop_ticks "$pid")
      loop=$(awk -v t=$((l1 - l0)) -v hz="$(getconf CLK_TCK)" -v n="$(last_run requests)" \
        'BEGIN { if (n > 0) printf "%.1f", t * 1e6 / hz / n; else print "-" }')
      echo "$round $size $label-$q $conns $m $loop" >>"$results"
    done
  done
}

t0=$(date +%s)
declare -A pid_of
brokers=() # SIZE:LABEL:PORT, in the order they were started
k=0
for size in $SIZES; do
  echo "size $size: loading" >&2
  make_batches "$work/batches-$size" "$size"
  if [ ${#brokers[@]} = 0 ]; then
    open_size "$size" scan $((port + k)) --valueIndexAuto 0
    brokers+=("$size:scan:$((port + k))"); k=$((k + 1))
  fi
  open_size "$size" index $((port + k))
  brokers+=("$size:index:$((port + k))"); k=$((k + 1))
  rm -rf "$work/batches-$size"
done
for round in $(seq "$ROUNDS"); do
  order=("${brokers[@]}")
  [ $((round % 2)) = 0 ] && order=($(printf '%s\n' "${brokers[@]}" | tac))
  for b in "${order[@]}"; do
    echo "round $round: ${b%:*}" >&2
    IFS=: read -r size label p <<<"$b"
    measure_size "$round" "$size" "$label" "$p"
  done
done
for b in "${brokers[@]}"; do
  IFS=: read -r size label p <<<"$b"
  echo "$size $label $(metric "http://127.0.0.1:$p" cor_ngsild_query_scans_total) scans $(metric "http://127.0.0.1:$p" cor_ngsild_query_value_index_total) indexed" >>"$work/heap"
done
stop_all

echo
echo "selective.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $( "$here/cor" java -version 2>&1 | head -1 ), JVM flags \"$JVM\", ${DURATION}s per cell, $ROUNDS round(s), $(( $(date +%s) - t0 ))s"
cat "$work/heap"
python3 - "$results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
cells = {}  # (size, query, conns) -> [(rps, p50, p99, err, cpu, loop)] over the rounds
for rnd, size, q, conns, rps, p50, p99, err, cpu, loop in rows:
    cells.setdefault((size, q, conns), []).append((rnd, float(rps), float(p50), float(p99), int(err),
                                                  float(cpu) if cpu != "-" else None, float(loop) if loop != "-" else None))
def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float("nan")
print(f'medians over {len({r[0] for r in rows})} round(s)')
print(f'{"entities":>8} {"query":<13} {"conns":>5} {"req/s":>9} {"p50 us":>8} {"p99 us":>8} {"errors":>6} {"cpu us/req":>10} {"loop us/req":>11}   cpu us/req by round')
for (size, q, conns), v in cells.items():
    print(f'{size:>8} {q:<13} {conns:>5} {med([x[1] for x in v]):>9.0f} {med([x[2] for x in v]):>8.0f} {med([x[3] for x in v]):>8.0f} '
          f'{sum(x[4] for x in v):>6} {med([x[5] for x in v]):>10.1f} {med([x[6] for x in v]):>11.1f}   '
          + " ".join(f'{x[5]:.1f}' if x[5] is not None else "-" for x in v))
sizes = sorted({k[0] for k in cells}, key=int)
if len(sizes) >= 2:
    lo, hi = sizes[0], sizes[-1]
    print()
    print(f"growth {hi} / {lo} (the bar: p50 <= 1 ms at every size, CPU per request flat within +-25 %)")
    for q in ("index-text", "index-number", "index-range", "index-dense"):
        a, b = cells.get((lo, q, "16")), cells.get((hi, q, "16"))
        if not a or not b:
            continue
        by_round = {x[0]: x[5] for x in a}
        per_round = [f'{x[5] / by_round[x[0]]:.2f}' for x in b if x[5] and by_round.get(x[0])]
        print(f'  {q:<13} cpu per request at 16 connections {med([x[5] for x in b]) / med([x[5] for x in a]):.2f} '
              f'(the loop thread\'s {med([x[6] for x in b]) / med([x[6] for x in a]):.2f}; by round {" ".join(per_round)}), '
              f'p50 at 1 connection {med([x[2] for x in cells[(lo, q, "1")]]):.0f} -> {med([x[2] for x in cells[(hi, q, "1")]]):.0f} us')
PY
