#!/usr/bin/env bash
# The broker's queries on a large store, at two sizes (10 000 and 100 000 entities of 10 types):
#   type + q equality, limit=20       GET /entities?type=T3&q=status=="free"&limit=20
#   near;maxDistance==500, limit=20   GET /entities?georel=near;maxDistance==500&geometry=Point&coordinates=[c]&limit=20
#   count=true over one type          GET /entities?type=T3&count=true&limit=1
# x 1 and 16 connections. The entities' locations are spread over a square whose area grows
# with the store (constant density), so every query's answer is the same size at both sizes:
# a cost that follows the answer is flat, one that follows the store grows tenfold.
# The broker alone on 127.0.0.1 with one loop; load from corRequest; server CPU per request
# from /proc/PID/stat over the measured window.
#   benchmarks/query.sh                          (about 4 minutes)
#   DURATION=2 SIZES="10000" benchmarks/query.sh (a quick look)
# Its last lines: each query's 100 000 / 10 000 ratio of p50 and of CPU per request (the bar: flat
# within +-25 %). It stops everything it started, also on Ctrl-C.
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"

DURATION=${DURATION:-5}        # seconds measured per cell
WARM=${WARM:-2}                # seconds of load before each cell
SERVER_WARM=${SERVER_WARM:-15} # seconds of load on a freshly loaded server (JIT)
SIZES=${SIZES:-"10000 100000"}
port=18502

echo "building..." >&2
build
results="$work/results"
: >"$results"

# BATCH_DIR N: batches of 1000 entities, 10 types round-robin, 1 in 10 "free", a Point at constant density
make_batches() {
  python3 - "$1" "$2" <<'PY'
import json, math, os, random, sys
out, n = sys.argv[1], int(sys.argv[2])
os.makedirs(out, exist_ok=True)
rnd = random.Random(7)
side = 0.3 * math.sqrt(n / 100000)   # degrees: 100 000 entities on 0.3 x 0.3 degrees around (13.4, 52.5)
batch = []
for i in range(n):
    batch.append({"id": f"urn:ngsi-ld:T{i % 10}:{i:07d}", "type": f"T{i % 10}",
                  "status": {"type": "Property", "value": "free" if rnd.random() < 0.1 else "occupied"},
                  "n": {"type": "Property", "value": i},
                  "location": {"type": "GeoProperty", "value": {"type": "Point", "coordinates":
                      [round(13.4 - side / 2 + rnd.random() * side, 6), round(52.5 - side / 2 + rnd.random() * side, 6)]}}})
    if len(batch) == 1000:
        json.dump(batch, open(f"{out}/{i // 1000:04d}.json", "w"))
        batch = []
if batch:
    json.dump(batch, open(f"{out}/last.json", "w"))
PY
}

cell() { # SIZE QUERY CONNS URL
  local size=$1 query=$2 conns=$3 url=$4
  echo "$size $query $conns $(measure "$url" "$conns" "$WARM" "$DURATION")" >>"$results"
}

t0=$(date +%s)
for size in $SIZES; do
  echo "size $size: loading" >&2
  make_batches "$work/batches-$size" "$size"
  start broker "$here/cor" java -jar "$BROKER_JAR" --host 127.0.0.1 --port $port --httpLoops 1 --store memory
  base="http://127.0.0.1:$port/ngsi-ld/v1"
  for f in "$work/batches-$size"/*.json; do
    code=$(curl -s -o "$work/batch.out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
      --data-binary "@$f" "$base/entityOperations/create")
    [ "$code" = 201 ] || { echo "batch $f answered $code: $(head -c 300 "$work/batch.out")" >&2; exit 1; }
  done
  q_url="$base/entities?type=T3&q=status%3D%3D%22free%22&limit=20"
  near_url="$base/entities?georel=near%3BmaxDistance%3D%3D500&geometry=Point&coordinates=%5B13.4%2C52.5%5D&limit=20"
  count_url="$base/entities?type=T3&count=true&limit=1"
  for u in "$q_url" "$near_url" "$count_url"; do
    n=$(curl -s "$u" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
    [ "$n" -ge 1 ] || { echo "no answer from $u" >&2; exit 1; }
  done
  load "$q_url" 16 "$SERVER_WARM" >/dev/null
  load "$near_url" 16 "$SERVER_WARM" >/dev/null
  for conns in 1 16; do
    cell "$size" q-equality "$conns" "$q_url"
    cell "$size" near-500m "$conns" "$near_url"
    cell "$size" count-type "$conns" "$count_url"
  done
  stop_all
done

echo
echo "query.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $( "$here/cor" java -version 2>&1 | head -1 ), ${DURATION}s per cell, $(( $(date +%s) - t0 ))s"
python3 - "$results" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print(f'{"entities":>8} {"query":<11} {"conns":>5} {"req/s":>9} {"p50 us":>8} {"p99 us":>8} {"errors":>6} {"cpu us/req":>10}')
cell = {}
for size, q, conns, rps, p50, p99, err, cpu in rows:
    cell[(size, q, conns)] = (float(p50), cpu)
    print(f'{size:>8} {q:<11} {conns:>5} {float(rps):>9.0f} {float(p50):>8.0f} {float(p99):>8.0f} {err:>6} {cpu:>10}')
sizes = sorted({k[0] for k in cell}, key=int)
if len(sizes) == 2:
    lo, hi = sizes
    print()
    print(f"growth {hi} / {lo} (the bar: flat within +-25 %)")
    for q in ("q-equality", "near-500m", "count-type"):
        a, b = cell.get((lo, q, "1")), cell.get((hi, q, "1"))
        c16a, c16b = cell.get((lo, q, "16")), cell.get((hi, q, "16"))
        if a and b:
            cpu = f'{float(c16b[1]) / float(c16a[1]):.2f}' if c16a and c16b and "-" not in (c16a[1], c16b[1]) else "-"
            print(f'  {q:<11} p50 at 1 connection {b[0] / a[0]:.2f}, cpu per request at 16 connections {cpu}')
PY
