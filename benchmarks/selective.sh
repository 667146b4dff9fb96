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
# The broker alone on 127.0.0.1 with one loop; load from corRequest; server CPU per request from
# /proc/PID/stat over the measured window, and the loop thread's alone (cor-http-0: the query's
# own work, without the collector's and the JIT's threads, whose share grows with the live set).
#   benchmarks/selective.sh                              (about 8 minutes)
#   DURATION=2 SIZES="10000 100000" benchmarks/selective.sh   (a quick look)
# Its last lines: p50 per size, and each query's 1 000 000 / 10 000 ratio of CPU per request (the
# bar: p50 <= 1 ms at every size; CPU flat within +-25 %). It stops everything it started.
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"

DURATION=${DURATION:-5}
WARM=${WARM:-2}
SERVER_WARM=${SERVER_WARM:-10}
SIZES=${SIZES:-"10000 100000 1000000"}
port=18522

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

jcmd="$("$here/cor" java -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.home/ { print $2 }')/bin/jcmd"
heap_used() { # PID -> used heap in bytes after a full GC (any collector's "used N[KMG]")
  "$jcmd" "$1" GC.run >/dev/null
  "$jcmd" "$1" GC.heap_info | python3 -c '
import re, sys
m = re.search(r"used (\d+)([KMG])", sys.stdin.read())
print(int(m.group(1)) * {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)] if m else -1)'
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

run_size() { # SIZE LABEL [broker flags]
  local size=$1 label=$2; shift 2
  start broker "$here/cor" java -jar "$BROKER_JAR" --host 127.0.0.1 --port $port --httpLoops 1 --store memory "$@"
  local root="http://127.0.0.1:$port" base="http://127.0.0.1:$port/ngsi-ld/v1"
  for f in "$work/batches-$size"/*.json; do
    code=$(curl -s -o "$work/batch.out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
      --data-binary "@$f" "$base/entityOperations/create")
    [ "$code" = 201 ] || { echo "batch $f answered $code: $(head -c 300 "$work/batch.out")" >&2; exit 1; }
  done
  local pid=${pids[-1]} before after
  before=$(heap_used "$pid")
  text_url="$base/entities?type=BenchQ&q=name%3D%3D%22n77%22&limit=20"
  number_url="$base/entities?type=BenchQ&q=speed%3D%3D77&limit=20"
  range_url="$base/entities?type=BenchQ&q=speed%3D%3D77..77%3Bname%3D%3D%22n77%22&limit=20"
  dense_url="$base/entities?type=BenchQ&q=speed%3E%3D0&limit=20"
  for u in "$text_url" "$number_url" "$range_url" "$dense_url"; do
    n=$(curl -s "$u" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
    [ "$n" -eq 20 ] || { echo "$u answered $n entities, not 20" >&2; exit 1; }
  done
  # the indexes are built in the background: wait until both answer
  for i in $(seq 600); do
    [ "$(metric "$root" cor_store_value_index_built_total)" = "2.0" ] || [ "$label" = scan ] && break
    curl -s "$text_url" >/dev/null; curl -s "$number_url" >/dev/null; sleep 0.1
  done
  after=$(heap_used "$pid")
  echo "$size $label heap $(( (after - before) / size )) $(metric "$root" cor_store_value_index_bytes)" >>"$work/heap"
  load "$text_url" 16 "$SERVER_WARM" >/dev/null
  for conns in 1 16; do
    for q in text number range dense; do
      url_var="${q}_url"
      load "${!url_var}" "$conns" "$WARM" >/dev/null
      l0=$(loop_ticks "$pid")
      m=$(measure "${!url_var}" "$conns" 0 "$DURATION")
      l1=$(loop_ticks "$pid")
      loop=$(awk -v t=$((l1 - l0)) -v hz="$(getconf CLK_TCK)" -v n="$(last_run requests)" \
        'BEGIN { if (n > 0) printf "%.1f", t * 1e6 / hz / n; else print "-" }')
      echo "$size $label-$q $conns $m $loop" >>"$results"
    done
  done
  echo "$size $label $(metric "$root" cor_ngsild_query_scans_total) scans $(metric "$root" cor_ngsild_query_value_index_total) indexed" >>"$work/heap"
  stop_all
}

t0=$(date +%s)
first=""
for size in $SIZES; do
  echo "size $size: loading" >&2
  make_batches "$work/batches-$size" "$size"
  if [ -z "$first" ]; then
    first=$size
    run_size "$size" scan --valueIndexAuto 0
  fi
  run_size "$size" index
  rm -rf "$work/batches-$size"
done

echo
echo "selective.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $( "$here/cor" java -version 2>&1 | head -1 ), ${DURATION}s per cell, $(( $(date +%s) - t0 ))s"
cat "$work/heap"
python3 - "$results" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print(f'{"entities":>8} {"query":<13} {"conns":>5} {"req/s":>9} {"p50 us":>8} {"p99 us":>8} {"errors":>6} {"cpu us/req":>10} {"loop us/req":>11}')
cell = {}
for size, q, conns, rps, p50, p99, err, cpu, loop in rows:
    cell[(size, q, conns)] = (float(p50), cpu, loop)
    print(f'{size:>8} {q:<13} {conns:>5} {float(rps):>9.0f} {float(p50):>8.0f} {float(p99):>8.0f} {err:>6} {cpu:>10} {loop:>11}')
sizes = sorted({k[0] for k in cell}, key=int)
if len(sizes) >= 2:
    lo, hi = sizes[0], sizes[-1]
    print()
    print(f"growth {hi} / {lo} (the bar: p50 <= 1 ms at every size, CPU per request flat within +-25 %)")
    for q in ("index-text", "index-number", "index-range", "index-dense"):
        a, b = cell.get((lo, q, "16")), cell.get((hi, q, "16"))
        if a and b and "-" not in (a[1], b[1], a[2], b[2]):
            print(f'  {q:<13} cpu per request at 16 connections {float(b[1]) / float(a[1]):.2f} '
                  f'(the loop thread\'s {float(b[2]) / float(a[2]):.2f}), '
                  f'p50 at 1 connection {cell[(lo, q, "1")][0]:.0f} -> {cell[(hi, q, "1")][0]:.0f} us')
PY
