#!/usr/bin/env bash
# The temporal API's bars (issue: the temporal API), measured from outside against the launcher
# (cor-server.jar, one loop, on 127.0.0.1; load from corRequest, server CPU from /proc/PID/stat):
#   record  PATCH of one attribute of the 20-attribute bench entity, history on (the default)
#           against --temporal off, alternating which goes first, on --store memory and on the
#           durable store (--fsync always): req/s and server CPU per request (the bar: on/off
#           <= 1.15 in CPU), at 1 and 16 connections; a fresh broker per cell, warmed at the
#           cell's concurrency, a full GC (jcmd GC.run) and POST_GC_WARM (10) s more of the load
#           before its window; the broker on core 0 and the load on core 1 (PIN=0: not pinned)
#   reads   one attribute of 1 000 000 per-second instances: GET .../{id}?attrs=x&lastN=100 (the
#           bar: p50 <= 1 ms); one of 2 592 000 (30 days at one a second): the hourly avg over
#           the 30 days (aggregatedValues, avg, PT1H, timerel=between; the bar: <= 50 ms) - on
#           each store
#   query   1 000 entities of one type, one attribute at one instance a minute over two days
#           (1 440 in the queried day, 1 440 the day before it): timerel=between of the second
#           day (the bar: <= 100 ms), as the API answers it (limit=1000: 206 at 10 000
#           instances) and with a page that fits the answer's cap (limit=6, count=true)
#   ingest  POST /entityOperations/upsert of 1 000 entities, each with a changed value, at 4
#           connections: instances recorded per second (the bar: >= 200 000), history on and off
#   heap    the durable store holding HEAP_INSTANCES (default 10 000 000) instances: used heap
#           after a full GC (jcmd GC.heap_info after System.gc), and the history's bytes on disk
#   benchmarks/temporal.sh                          (every part; about 25 minutes)
#   PARTS="reads query" benchmarks/temporal.sh      (some of them)
#   PARTS=record STORES=memory benchmarks/temporal.sh  (the recording cost of one store)
# The broker is started as shipped (java @cor-server-launcher/jvm.options -jar: its collector);
# JVM="" for the JVM's default (G1, as the figures before the collector was chosen were measured),
# JVM="FLAGS" for others. Every broker keeps TEMPORAL_MAX_BYTES of history (64g by default, so that
# the reads' 3.6 M instances fit the memory store; 256m is what the memory store ships with).
# Build first: ./cor mvn -q -DskipTests package. It stops everything it started, also on Ctrl-C.
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"

PARTS=${PARTS:-record reads query ingest heap}
JVM=${JVM-$SHIPPED_JVM}
ROUNDS=${ROUNDS:-2}
STORES=${STORES:-memory durable} # the stores measured (record, reads, query, ingest)
DURATION=${DURATION:-5}
WARM=${WARM:-2}
SERVER_WARM=${SERVER_WARM:-15}
POST_GC_WARM=${POST_GC_WARM:-10}
HEAP_INSTANCES=${HEAP_INSTANCES:-10000000}
port=18521
base="http://127.0.0.1:$port/ngsi-ld/v1"
loader() { python3 "$here/benchmarks/temporal_load.py" "$base" "$@"; }
results="$work/results"
: >"$results"
day0=1767225600 # 2026-01-01T00:00:00Z

broker() { # STORE TEMPORAL [more flags]: a fresh broker
  local store=$1 temporal=$2; shift 2
  local flags=(--store "$store")
  if [ "$store" = durable ]; then rm -rf "$work/data"; flags=(--dataDir "$work/data" --fsync always); fi
  # shellcheck disable=SC2086 # JVM is a list of flags
  start broker "${BROKER_PIN[@]}" "$here/cor" java $JVM -jar "$BROKER_JAR" --host 127.0.0.1 --port $port --httpLoops 1 "${flags[@]}" \
    --temporal "$temporal" --maxBody 64m --temporalMaxBytes "${TEMPORAL_MAX_BYTES:-64g}" "$@"
}
row() { echo "$*" >>"$results"; echo "$*" >&2; }
BROKER_PIN=()

echo "temporal.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $("$here/cor" java -version 2>&1 | head -1), JVM flags \"$JVM\", load $(cut -d' ' -f1-3 /proc/loadavg), parts: $PARTS"

# ---------------------------------------------------------------- record
if [[ " $PARTS " == *" record "* ]]; then
  attrs20_patch
  # The broker on core 0, the load on core 1 (as benchmarks/aot.sh): a broker that shares both
  # cores with the load generator is paced by it - a window where the generator is slower (its
  # JIT, its GC) gives the loop fewer requests per wake-up, and the broker's CPU per request
  # rises with no change of its own (run to run 1.16 and 1.60 for the same memory cell).
  if [ "${PIN:-1}" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    BROKER_PIN=(taskset -c 0); LOAD_PIN=(taskset -c 1)
  fi
  url="$base/entities/urn:ngsi-ld:Bench:attrs20/attrs/attr01"
  for round in $(seq "$ROUNDS"); do
    for store in $STORES; do
      order="on off"; [ $((round % 2)) = 0 ] && order="off on"
      for temporal in $order; do
        for conns in 1 16; do
          # A broker per cell, warmed at the cell's own concurrency, then a full GC: the window pays
          # for the garbage and the history its own PATCHes make, not for the collector's debt of a
          # warm-up at another rate (at 1 connection that debt, from 16 connections of warm-up,
          # was most of the cell's CPU). Then POST_GC_WARM seconds more of the same load: the
          # seconds after ZGC's forced major collection cost the side with history twice its
          # steady cost, for a cause not pinned down (JIT recompilation, remembered-set work, or
          # both: the loop runs busier per request, not the GC threads) (5-second windows
          # of 16 connections with history: 80k 84k 73k req/s, GC, 32k, then 87k-98k), which no
          # broker left to run meets.
          broker "$store" "$temporal"
          post "$base/entities" "$work/attrs20.json"
          load "$url" "$conns" "$SERVER_WARM" "${patch[@]}" >/dev/null
          full_gc "${pids[-1]}"
          load "$url" "$conns" "$POST_GC_WARM" "${patch[@]}" >/dev/null
          row record "$round" "$store" "$temporal" "$conns" $(measure "$url" "$conns" "$WARM" "$DURATION" "${patch[@]}")
          stop_all
        done
      done
    done
  done
  BROKER_PIN=(); LOAD_PIN=()
fi

# ---------------------------------------------------------------- reads
if [[ " $PARTS " == *" reads "* ]]; then
  for store in $STORES; do
    broker "$store" on
    echo "$store: loading 1 000 000 + 2 592 000 instances: $(loader urn:ngsi-ld:Sensor:million Sensor temperature $day0 1 1000000 100000) / $(loader urn:ngsi-ld:Sensor:month Sensor temperature $day0 1 2592000 100000) (instances s instances/s)" >&2
    last="$base/temporal/entities/urn:ngsi-ld:Sensor:million?attrs=temperature&lastN=100"
    avg="$base/temporal/entities/urn:ngsi-ld:Sensor:month?attrs=temperature&options=aggregatedValues&aggrMethods=avg&aggrPeriodDuration=PT1H&timerel=between&timeAt=2026-01-01T00:00:00Z&endTimeAt=2026-01-31T00:00:00Z"
    for u in "$last" "$avg"; do curl -s -o "$work/answer" -w "$store %{http_code} %{size_download} bytes %{time_total} s\n" "$u" >&2; done
    load "$last" 1 "$SERVER_WARM" >/dev/null
    row reads "$store" lastN100 1 $(measure "$last" 1 "$WARM" "$DURATION")
    load "$avg" 1 "$SERVER_WARM" >/dev/null
    row reads "$store" avg-PT1H-30d 1 $(measure "$avg" 1 "$WARM" "$DURATION")
    stop_all
  done
fi

# ---------------------------------------------------------------- query
if [[ " $PARTS " == *" query "* ]]; then
  for store in $STORES; do
    broker "$store" on
    t0=$(date +%s)
    python3 "$here/benchmarks/temporal_load.py" "$base" "urn:ngsi-ld:Meter:{i}" Meter power $day0 60 2880 2880 1000 >/dev/null
    echo "$store: 1 000 entities x 2 880 instances loaded in $(( $(date +%s) - t0 )) s" >&2
    q="$base/temporal/entities?type=Meter&timerel=between&timeAt=2026-01-02T00:00:00Z&endTimeAt=2026-01-03T00:00:00Z"
    for u in "$q&limit=1000" "$q&limit=6&count=true"; do
      curl -s -o "$work/answer" -D "$work/head" -w "$store %{http_code} %{size_download} bytes" "$u" >&2
      python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); n=sum(len(e.get("power", [])) for e in a); print(f" {len(a)} entities, {n} instances")' "$work/answer" >&2
      grep -i 'content-range\|results-count' "$work/head" >&2 || true
    done
    load "$q&limit=1000" 1 "$SERVER_WARM" >/dev/null
    row query "$store" between-1d-limit1000 1 $(measure "$q&limit=1000" 1 "$WARM" "$DURATION")
    row query "$store" between-1d-limit6-count 1 $(measure "$q&limit=6&count=true" 1 "$WARM" "$DURATION")
    stop_all
  done
fi

# ---------------------------------------------------------------- ingest
if [[ " $PARTS " == *" ingest "* ]]; then
  upsert_bodies 1000
  up=(--method POST --header 'Content-Type: application/json' --body-file "$work/upsert.json")
  for store in $STORES; do
    for temporal in on off; do
      broker "$store" "$temporal"
      load "$base/entityOperations/upsert" 4 "$SERVER_WARM" "${up[@]}" >/dev/null
      row ingest "$store" "$temporal" 4 $(measure "$base/entityOperations/upsert" 4 "$WARM" "$DURATION" "${up[@]}")
      stop_all
    done
  done
fi

# ---------------------------------------------------------------- heap
if [[ " $PARTS " == *" heap "* ]]; then
  broker durable on
  pid=${pids[-1]}
  row heap durable 0 "$(heap_used "$pid")"
  per_entity=1000000
  n=0
  t0=$(date +%s)
  while [ "$n" -lt "$HEAP_INSTANCES" ]; do
    loader "urn:ngsi-ld:Heap:$n" Heap temperature $day0 1 $per_entity 200000 >/dev/null
    n=$((n + per_entity))
    if [ $((n % 10000000)) = 0 ] || [ "$n" -ge "$HEAP_INSTANCES" ]; then
      sleep 5 # the history writer catches up
      row heap durable "$n" "$(heap_used "$pid")" "$(du -sm "$work/data" | cut -f1)MB" "$(( $(date +%s) - t0 ))s"
    fi
  done
  stop_all
fi

echo
echo "temporal.sh done, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
rec = {}
for r in rows:
    print(" ".join(r))
    if r[0] == "record":
        rec[(r[1], r[2], r[3], r[4])] = (float(r[5]), float(r[9]) if r[9] != "-" else float("nan"))
if rec:
    print("record: history on / off, server CPU per request (the bar: <= 1.15) and req/s")
    for (rnd, store, t, c) in sorted(rec):
        if t == "on" and (rnd, store, "off", c) in rec:
            on, off = rec[(rnd, store, "on", c)], rec[(rnd, store, "off", c)]
            print(f"  round {rnd} {store:<8} {c:>2} conns: cpu {on[1] / off[1]:.2f} ({on[1]} vs {off[1]} us), req/s {on[0] / off[0]:.2f}")
PY
