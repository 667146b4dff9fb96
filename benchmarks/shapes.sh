#!/usr/bin/env bash
# The per-core shapes (the seed's perfRun.sh, history "One broker, one core"): one broker on one
# loop, pinned to core 0; the load (corRequest) and a notification receiver on core 1. For each
# shape, coroutines (--coroutines 1024) vs the hop (--coroutines 0), same build, same run:
#   create (POST /entities, a new id each time), retrieve by id (GET the small bench entity),
#   query by type (GET /entities?type=Queried, 20 entities), batch create / update / delete of
#   20 entities (entityOperations; the delete removes exactly what the create made), PATCH of
#   one attribute of the 20-attribute bench entity with a subscription matching it (its
#   notification to the receiver: the post-response phase)
#   x 1 and 16 connections (the notifying PATCH: 1 and 50)
#   x the durable store (the default, --fsync always: a write waits for its journal, so the
#     writes are what can wait) and --store memory (only the notifying PATCH can wait)
# req/s, p50/p99 (µs) from corRequest; server CPU per request from /proc (the broker alone).
# The two modes' brokers run side by side (one idle while the other is measured), each shape
# measured on one and then at once on the other, the order alternating. Then one table:
# coroutines/hop per shape, and the seed's ratios beside it.
#   benchmarks/shapes.sh                          (about 8 minutes)
#   ROUNDS=1 DURATION=1 benchmarks/shapes.sh      (a quick look, about 3.5 minutes)
#   STORES=memory MODES=coroutines ROUNDS=1 DURATION=1 SHAPE_WARM=1 benchmarks/shapes.sh  (a smoke run)
# Its last line: "shapes coroutines/hop, durable store, batch update at 16 connections: R".
# It stops everything it started, also on Ctrl-C.
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"

ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-2}       # seconds measured per cell
SHAPE_WARM=${SHAPE_WARM:-1}   # seconds of each shape on a freshly started broker (JIT)
STORES=${STORES:-"durable memory"}
MODES=${MODES:-"coroutines hop"}
export LOAD_WARMUP=${LOAD_WARMUP:-1} # the generator's own warm-up in each cell, uncounted
port=""                      # the broker measured now (use)
rport=18621
small=urn:ngsi-ld:Bench:small
attrs20=urn:ngsi-ld:Bench:attrs20
# the broker on core 0, the rest on core 1 (arrays, not functions: the pid started must be the JVM's)
core0=(); core1=(); pinned="not pinned (taskset missing or one core)"
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then core0=(taskset -c 0); core1=(taskset -c 1); pinned="broker on core 0, load and receiver on core 1"; fi
LOAD_PIN=("${core1[@]}")
broker_pid=""
server_pids() { echo "$broker_pid"; } # lib.sh's measure: the broker's CPU alone, not the receiver's

echo "building..." >&2
build
results="$work/results"
: >"$results"

shape_bodies $rport

json=(--header 'Content-Type: application/json')

# dispatched: the broker's requests so far by where they ran, "inline coroutine hop"
dispatched() {
  curl -s "http://127.0.0.1:$port/metrics" | awk -F'[ "]' '/^cor_dispatch_total/ { n[$2] = $4 }
    END { print n["inline"] + 0, n["coroutine"] + 0, n["hop"] + 0 }'
}

# cell ROUND STORE MODE SHAPE CONNS URL [corRequest flags]: one measured cell, one row of results,
# with where the cell's requests ran (the share of the most frequent of inline, coroutine, hop)
cell() {
  local round=$1 store=$2 mode=$3 shape=$4 conns=$5 url=$6; shift 6
  local m n notified=- d0 d1 ran
  [ "$shape" = PATCH-notify ] && curl -s -X DELETE "http://127.0.0.1:$rport/stats" >/dev/null
  d0=$(dispatched)
  m=$(measure "$url" "$conns" 0 "$DURATION" "$@")
  d1=$(dispatched)
  ran=$(echo "$d0 $d1" | awk '{ i = $4 - $1; c = $5 - $2; h = $6 - $3; t = i + c + h; if (t == 0) { print "-"; exit }
    if (i >= c && i >= h) printf "inline:%.0f%%", 100 * i / t; else if (c >= h) printf "coroutine:%.0f%%", 100 * c / t;
    else printf "hop:%.0f%%", 100 * h / t }')
  n=$(last_run non_2xx_3xx)
  if [ "$shape" = PATCH-notify ]; then
    sleep 0.5 # the last notifications in flight
    # entities notified: a notification carries several when they queued behind a send
    notified=$(curl -s "http://127.0.0.1:$rport/stats" | cut -d' ' -f4)
  fi
  echo "$round $store $mode $shape $conns $m $n $notified $ran" >>"$results"
}

# batch_pair ROUND STORE MODE CONNS: batch create of 20 new entities per request, then the batch
# delete of exactly those; sized by a one-second probe so that each takes about DURATION seconds
batch_pair() {
  local round=$1 store=$2 mode=$3 conns=$4 probe n tag
  local ops="http://127.0.0.1:$port/ngsi-ld/v1/entityOperations"
  tag="p$conns"
  LOAD_WARMUP=0 load "$ops/create" "$conns" 1 --method POST "${json[@]}" --body-file "$(tagged bcreate "$tag")" >/dev/null
  probe=$(last_run requests); [ "$probe" -gt 0 ] || probe=1
  LOAD_WARMUP=0 load "$ops/delete" "$conns" 30 --requests "$probe" --method POST "${json[@]}" \
    --body-file "$(tagged bdelete "$tag")" >/dev/null
  n=$(( probe * DURATION )); [ "$n" -ge 20 ] || n=20
  tag="m$conns"
  LOAD_WARMUP=0 cell "$round" "$store" "$mode" batch-create "$conns" "$ops/create" --requests "$n" \
    --method POST "${json[@]}" --body-file "$(tagged bcreate "$tag")"
  n=$(last_run requests); [ "$n" -gt 0 ] || n=1 # the entities made: the delete removes those, no more
  LOAD_WARMUP=0 cell "$round" "$store" "$mode" batch-delete "$conns" "$ops/delete" --requests "$n" \
    --method POST "${json[@]}" --body-file "$(tagged bdelete "$tag")"
}

start receiver "${core1[@]}" "$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.NotifyReceiverMain --port $rport

# use MODE: the cells that follow go to that mode's broker
use() { mode=$1; port=${port_of[$1]}; broker_pid=${pid_of[$1]}; base="http://127.0.0.1:$port/ngsi-ld/v1"; }
# next_order: $ord, the modes in the other order than the last time (neither always goes first)
flip=0
reversed=$(echo "$MODES" | tr ' ' '\n' | tac | tr '\n' ' ')
next_order() { flip=$((1 - flip)); if [ $flip = 1 ]; then ord=$MODES; else ord=$reversed; fi; }

# shape ROUND STORE SHAPE CONNS: one shape's cell(s) on the broker of $mode
shape() {
  local round=$1 store=$2 shape=$3 conns=$4
  case $shape in
    create) cell "$round" "$store" "$mode" create "$conns" "$base/entities" --method POST "${json[@]}" \
              --body-file "$(tagged create "r$round$conns")" ;;
    retrieve) cell "$round" "$store" "$mode" retrieve "$conns" "$base/entities/$small" ;;
    query-type) cell "$round" "$store" "$mode" query-type "$conns" "$base/entities?type=Queried" ;;
    batch) batch_pair "$round" "$store" "$mode" "$conns" ;;
    batch-update) cell "$round" "$store" "$mode" batch-update "$conns" "$base/entityOperations/update" \
              --method POST "${json[@]}" --body-file "$work/bupdate.json" ;;
    # no generator warm-up: the receiver's count is then the cell's PATCHes
    PATCH-notify) LOAD_WARMUP=0 cell "$round" "$store" "$mode" PATCH-notify "$conns" "$base/entities/$attrs20/attrs/attr01" \
              --method PATCH "${json[@]}" --body-file "$work/patch.json" ;;
  esac
}

# Both modes' brokers run at once, each pinned to core 0 and idle while the other is measured:
# a shape is measured on one and then at once on the other, so that the machine's other load
# (other builds share these cores) falls on both alike, not on whichever ran in a bad minute.
declare -A port_of pid_of
i=0; for m in $MODES; do port_of[$m]=$((18521 + i)); i=$((i + 1)); done
t0=$(date +%s)
loads=""
for round in $(seq "$ROUNDS"); do
  for store in $STORES; do
    echo "round $round: $store (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    loads="$loads $(cut -d' ' -f1 /proc/loadavg)"
    for m in $MODES; do
      flags=(); [ "$m" = hop ] && flags=(--coroutines 0)
      if [ "$store" = memory ]; then flags+=(--store memory); else flags+=(--dataDir "$work/data-$round-$m"); fi
      start "broker-$m" "${core0[@]}" "$here/cor" java -jar "$BROKER_JAR" --host 127.0.0.1 --port "${port_of[$m]}" \
        --httpLoops 1 "${flags[@]}"
      pid_of[$m]=${pids[-1]}
      use "$m"
      shape_fixtures "$base"
      # every shape once on the fresh broker (JIT), unmeasured
      for url in "$base/entities/$small" "$base/entities?type=Queried"; do
        LOAD_WARMUP=0 load "$url" 16 "$SHAPE_WARM" >/dev/null
      done
      LOAD_WARMUP=0 load "$base/entities" 16 "$SHAPE_WARM" --method POST "${json[@]}" --body-file "$(tagged create w)" >/dev/null
      LOAD_WARMUP=0 load "$base/entityOperations/update" 16 "$SHAPE_WARM" --method POST "${json[@]}" \
        --body-file "$work/bupdate.json" >/dev/null
      LOAD_WARMUP=0 load "$base/entities/$attrs20/attrs/attr01" 50 "$SHAPE_WARM" --method PATCH "${json[@]}" \
        --body-file "$work/patch.json" >/dev/null
    done
    for conns in 1 16; do
      for s in create retrieve query-type batch batch-update; do
        next_order; for m in $ord; do use "$m"; shape "$round" "$store" "$s" "$conns"; done
      done
    done
    for conns in 1 50; do
      next_order; for m in $ord; do use "$m"; shape "$round" "$store" PATCH-notify "$conns"; done
    done
    stop_all
    start receiver "${core1[@]}" "$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.NotifyReceiverMain --port $rport
    rm -rf "$work"/data-*
  done
done

echo
echo "shapes.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores ($pinned), $( "$here/cor" java -version 2>&1 | head -1 ),"
echo "  ${DURATION}s per cell, $ROUNDS round(s), $(( $(date +%s) - t0 ))s; load (1 min) at each store's start:$loads"
echo "  durable = the default store, --fsync always; every row req/s and p99 (µs) and server CPU (µs/request)"
python3 - "$results" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
# notified: entities the receiver got; ran: where the cell's requests ran (the broker's cor_dispatch_total)
print(f'{"round":>5} {"store":<8} {"mode":<10} {"shape":<13} {"conns":>5} {"req/s":>8} {"p50 us":>7} {"p99 us":>7} {"errors":>6} {"non2xx":>6} {"cpu us":>7} {"notified":>8} {"ran":>15}')
cells, ran_as = {}, {}
for r in rows:
    rnd, store, mode, shape, conns, rps, p50, p99, err, cpu, notok, notified, ran = r
    cells.setdefault((store, shape, conns, mode), []).append((float(rps), float(p99), cpu))
    ran_as.setdefault((store, shape, conns, mode), set()).add(ran.split(":")[0])
    print(f'{rnd:>5} {store:<8} {mode:<10} {shape:<13} {conns:>5} {float(rps):>8.0f} {float(p50):>7.0f} {float(p99):>7.0f} {err:>6} {notok:>6} {cpu:>7} {notified:>8} {ran:>15}')
# the seed's coroutines-over-hop ratios (history, "One broker, one core": corHttp + corDB)
seed = {("batch-update", "16"): "+36 %", ("batch-create", "16"): "+7 %", ("batch-delete", "16"): "+35 %",
        ("PATCH-notify", "50"): "+58 %", ("PATCH-notify", "1"): "+33 %"}
def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")
def cpu(xs):
    v = [float(c) for _, _, c in xs if c != "-"]
    return f'{mean(v):.1f}' if v else "-"
print()
print("coroutines vs the hop, rounds pooled (req/s: mean of rounds; p99: worst round)")
print(f'{"store":<8} {"shape":<13} {"conns":>5} {"runs as (co / hop)":<18} {"co req/s":>9} {"hop req/s":>9} {"co/hop":>7} {"co p99":>7} {"hop p99":>7} {"co cpu":>7} {"hop cpu":>7}  seed')
order = ["create", "retrieve", "query-type", "batch-create", "batch-update", "batch-delete", "PATCH-notify"]
last = None
for store in ("durable", "memory"):
    for shape in order:
        for conns in ("1", "16", "50"):
            co, hop = cells.get((store, shape, conns, "coroutines"), []), cells.get((store, shape, conns, "hop"), [])
            if not co and not hop:
                continue
            ratio = mean([r for r, _, _ in co]) / mean([r for r, _, _ in hop]) if co and hop and mean([r for r, _, _ in hop]) > 0 else float("nan")
            p99c = max([p for _, p, _ in co], default=float("nan"))
            p99h = max([p for _, p, _ in hop], default=float("nan"))
            how = "/".join(",".join(sorted(ran_as.get((store, shape, conns, m), {"-"}))) for m in ("coroutines", "hop"))
            print(f'{store:<8} {shape:<13} {conns:>5} {how:<18} {mean([r for r, _, _ in co]):>9.0f} {mean([r for r, _, _ in hop]):>9.0f} {ratio:>7.2f} {p99c:>7.0f} {p99h:>7.0f} {cpu(co):>7} {cpu(hop):>7}  {seed.get((shape, conns), "")}')
            if store == "durable" and shape == "batch-update" and conns == "16":
                last = ratio
print(f'shapes coroutines/hop, durable store, batch update at 16 connections: {last:.2f}' if last is not None
      else 'shapes coroutines/hop, durable store, batch update at 16 connections: -')
PY
