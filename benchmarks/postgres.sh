#!/usr/bin/env bash
# The broker over the PostgreSQL store (--store postgres): coroutines (the default: every request
# runs as a coroutine of its loop, its waits on the database yielding) against the worker hop
# (--coroutines 0: the same requests on worker threads, their JDBC waits blocking), in one run,
# on one fresh cluster (PostgreSQL 15, fsync on, as installed; started and stopped here).
#   get     GET /entities/{id} of a 20-attribute entity (the bench entity attrs20's attributes)
#   patch   PATCH /entities/{id}/attrs/attr01 of one attribute of it
#           (each TCP connection on an entity of its own - corRequest's {socket} - so that the
#           load measures the broker, not the per-id lock every write takes in the database)
#   create  POST /entities of a new small entity (fresh ids: corRequest's {seq}, a tag per run)
#   query   GET /entities?type=Room&q=temperature>30 over ROOMS Rooms of which MATCH match
#   x CONNS (16 64) connections: req/s, p50, p99 (corRequest), the broker's CPU per request and
#   the database's (the postmaster, its backends and background processes: /proc, as
#   scorpio-temporal.sh counts Scorpio's PostgreSQL), the time the broker's threads waited for a
#   CPU (runnable, not running: /proc/PID/task/*/schedstat; others on its core), and the ratio
#   coroutines / worker hop per cell (the bar: >= 1.5x req/s with the lower p99).
# Variables: ROUNDS (2), DURATION (5), WARM (2), SERVER_WARM (10), CONNS ("16 64"), OPS
# ("get patch query create"), MODES ("coroutines hop"), DB_POOL (8), WORKERS (DB_POOL), ROOMS
# (2000), MATCH (5), TIMEOUT_MS (60000: an answer later than this is an error), PIN (1), DB_CPUS (1),
# JVM, PG_BIN, PG_SETTINGS.
# Two brokers of one loop each (--httpLoops 1), one with coroutines and one with --coroutines 0,
# side by side over the cluster, both on core 0, one idle while the other is measured (as
# shapes.sh): each cell is measured on one and at once on the other, the first alternating from
# cell to cell and round to round, so that what else runs on the machine falls on both alike. The
# load generator and the database on core 1 (PIN=0: nothing pinned; DB_CPUS: the database's
# cores, "" = not pinned). Fresh brokers each round, SERVER_WARM s of every operation on each
# first, then for each cell WARM s of its load and DURATION s measured.
# The same database connections on both sides: --dbPoolPerLoop DB_POOL (8, the broker's default)
# is the loop's pool under coroutines, and the one pool the worker threads share under the hop
# (PgDatabase: its ThreadPool has poolPerLoop places); --workers WORKERS (default DB_POOL) on
# both, so that under the hop each worker holds at most one connection and none waits for one.
# The broker as shipped otherwise (its jvm.options; history on, recorded in the same transaction).
# /metrics' cor_dispatch_total tells, per broker, which path its requests took (printed).
#   benchmarks/postgres.sh                                  (about 8 minutes)
#   DURATION=2 ROUNDS=1 SERVER_WARM=3 WARM=1 benchmarks/postgres.sh   (a short look)
#   OPS="get patch" CONNS=64 MODES=coroutines benchmarks/postgres.sh
# Build first: ./cor mvn -q -o -DskipTests -pl cor-server-launcher,benchmarks -am package.
# Run as root (the cluster runs as user postgres). It stops everything it started, also on Ctrl-C.
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"
source "$here/benchmarks/pglib.sh"

ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-5}        # seconds measured per cell
WARM=${WARM:-2}                # seconds of the cell's load before it is measured
SERVER_WARM=${SERVER_WARM:-10} # seconds of each operation at the highest CONNS on a fresh broker (JIT)
CONNS=${CONNS:-16 64}
OPS=${OPS:-get patch query create}
MODES=${MODES:-coroutines hop}
DB_POOL=${DB_POOL:-8}
WORKERS=${WORKERS:-$DB_POOL}
ROOMS=${ROOMS:-2000}
MATCH=${MATCH:-5}
TIMEOUT_MS=${TIMEOUT_MS:-60000} # an answer later than this is an error (the query at 64 connections takes seconds)
JVM=${JVM-$SHIPPED_JVM}
DB_CPUS=${DB_CPUS-1}
BROKER_PIN=()
DB_PIN=()
if [ "${PIN:-1}" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  BROKER_PIN=(taskset -c 0); LOAD_PIN=(taskset -c 1)
  [ -n "$DB_CPUS" ] && DB_PIN=(taskset -c "$DB_CPUS")
fi
maxconns=$(echo $CONNS | tr ' ' '\n' | sort -n | tail -1)
results="$work/results"
: >"$results"

pg_installed
echo "postgres.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $("$here/cor" java -version 2>&1 | head -1), $("$PG_BIN/postgres" --version)," \
  "JVM flags \"$JVM\", --dbPoolPerLoop $DB_POOL --workers $WORKERS, pinned: broker ${BROKER_PIN[*]:-no}, load ${LOAD_PIN[*]:-no}," \
  "database ${DB_PIN[*]:-no}; load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$work/head" >&2

# ---------------------------------------------------------------- bodies
"$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.BenchEntitiesMain attrs20 >"$work/attrs20.json"
printf '{"type": "Property", "value": 42.5}' >"$work/patch.json"
python3 - "$work" "$maxconns" "$ROOMS" "$MATCH" <<'PY'
import json, sys
w, conns, rooms, match = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
a = json.load(open(f"{w}/attrs20.json"))
# the entities GET and PATCH read and write: one per connection, urn:ngsi-ld:Bench:p0... (the bench entity's attributes)
json.dump([dict(a, id=f"urn:ngsi-ld:Bench:p{i}") for i in range(conns)], open(f"{w}/bench.json", "w"))
# ROOMS Rooms, MATCH of them (spread out) above 30 degrees, the others at 10 to 29.9; in batches of 500
step = max(1, rooms // max(1, match))
hot = {i * step for i in range(match)}
docs = [{"id": f"urn:ngsi-ld:Room:{i:06d}", "type": "Room",
         "temperature": {"type": "Property", "value": 35.5 if i in hot else 10 + (i % 200) / 10},
         "name": {"type": "Property", "value": f"room {i}"}} for i in range(rooms)]
for k in range(0, rooms, 500):
    json.dump(docs[k:k + 500], open(f"{w}/rooms-{k // 500:04d}.json", "w"))
open(f"{w}/create.tmpl", "w").write('{"id": "urn:ngsi-ld:Created:TAG{seq}", "type": "Created", '
                                    '"name": {"type": "Property", "value": "new"}}')
PY

# the operations' paths under a broker's /ngsi-ld/v1
declare -A PATHS
PATHS[get]="/entities/urn:ngsi-ld:Bench:p{socket}"
PATHS[patch]="/entities/urn:ngsi-ld:Bench:p{socket}/attrs/attr01"
PATHS[create]="/entities"
PATHS[query]="/entities?type=Room&q=temperature%3E30"
patch=(--method PATCH --header 'Content-Type: application/json' --body-file "$work/patch.json")
declare -A PORT BPID
base_of() { echo "http://127.0.0.1:${PORT[$1]}/ngsi-ld/v1"; }
# run MODE OP CONNS SECS: one load of OP on MODE's broker, its result as lib.sh's load prints it
run() {
  local url; url="$(base_of "$1")${PATHS[$2]}"
  case $2 in
    patch) load "$url" "$3" "$4" "${patch[@]}" --timeout-ms "$TIMEOUT_MS" ;;
    create) load "$url" "$3" "$4" --method POST --header 'Content-Type: application/json' \
      --body-file "$(tagged create "$(date +%s%N)-")" --timeout-ms "$TIMEOUT_MS" ;; # ids no run before used
    *) load "$url" "$3" "$4" --timeout-ms "$TIMEOUT_MS" ;;
  esac
}

broker() { # MODE: a fresh broker over the cluster, on a port of its own
  local more=()
  [ "$1" = hop ] && more=(--coroutines 0)
  PORT[$1]=$(free_port)
  # shellcheck disable=SC2086 # JVM is a list of flags
  start "broker-$1" "${BROKER_PIN[@]}" "$here/cor" java $JVM -jar "$BROKER_JAR" --host 127.0.0.1 --port "${PORT[$1]}" --httpLoops 1 \
    --store postgres --db "postgresql://postgres@127.0.0.1:$PG_PORT/cor" --dbPoolPerLoop "$DB_POOL" --workers "$WORKERS" "${more[@]}"
  BPID[$1]=${pids[-1]}
}
dispatched() { # MODE: "coroutines hops" its broker has dispatched so far
  local own="http://127.0.0.1:${PORT[$1]}"
  echo "$(metric "$own" cor_dispatch_total 'mode="coroutine"') $(metric "$own" cor_dispatch_total 'mode="hop"')"
}

pg_up pg "${DB_PIN[@]}"
t0=$(date +%s)
fixtures=0
cellno=0
for round in $(seq "$ROUNDS"); do
  echo "round $round: $MODES, side by side" >&2
  declare -A D0
  for mode in $MODES; do
    broker "$mode"
    BROKER=$mode
    base=$(base_of "$mode")
    if [ "$fixtures" = 0 ]; then # once: the cluster keeps them for every broker after this one
      check POST "$base/entityOperations/create" 201 "$work/bench.json"
      for f in "$work"/rooms-*.json; do check POST "$base/entityOperations/create" 201 "$f"; done
      fixtures=1
    fi
    # every operation answers 2xx, and the query finds what it should
    check GET "$base${PATHS[get]/\{socket\}/0}" 200
    check PATCH "$base${PATHS[patch]/\{socket\}/0}" 204 "$work/patch.json"
    sed 's/{seq}/0/' "$(tagged create "check-$round-$mode-")" >"$work/create-check.json"
    check POST "$base${PATHS[create]}" 201 "$work/create-check.json"
    check GET "$base${PATHS[query]}" 200
    found=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$work/answer")
    [ "$found" = "$MATCH" ] || echo "!! $mode: the query found $found Rooms, not $MATCH" | tee -a "$results" >&2
    for op in $OPS; do run "$mode" "$op" "$maxconns" "$SERVER_WARM" >/dev/null; done
    alive "broker-$mode" "${BPID[$mode]}"
    D0[$mode]=$(dispatched "$mode")
  done
  for op in $OPS; do
    for conns in $CONNS; do
      # each cell on one broker and at once on the other, the first alternating from cell to cell
      # and round to round: what else runs on the machine falls on both alike
      cellno=$((cellno + 1))
      order=$MODES
      [ $(((cellno + round) % 2)) = 0 ] && order=$(echo $MODES | tr ' ' '\n' | tac | tr '\n' ' ')
      for mode in $order; do
        bpid=${BPID[$mode]}
        run "$mode" "$op" "$conns" "$WARM" >/dev/null
        b0=$(cpu_ticks "$bpid"); p0=$(tree_ticks "$PG_PID"); q0=$(runq_ns "$bpid")
        read -r rps p50 p99 errors requests <<<"$(run "$mode" "$op" "$conns" "$DURATION")"
        b1=$(cpu_ticks "$bpid"); p1=$(tree_ticks "$PG_PID"); q1=$(runq_ns "$bpid")
        alive "broker-$mode" "$bpid"; alive pg "$PG_PID"
        non2xx=$(last_run non_2xx_3xx)
        unfinished=$(last_run unfinished)
        [ "$unfinished" = 0 ] || echo "!! round $round $mode $op $conns: $unfinished requests unanswered at the window's end (+2 s): not counted" >>"$results"
        runq=$(awk -v q=$((q1 - q0)) -v n="$requests" 'BEGIN { if (n > 0) printf "%.1f", q / 1000 / n; else print "-" }')
        echo "$round $mode $op $conns $rps $p50 $p99 $errors $non2xx $(per_request $((b1 - b0)) "$requests") $(per_request $((p1 - p0)) "$requests") $runq" >>"$results"
        tail -1 "$results" >&2
      done
    done
  done
  for mode in $MODES; do
    read -r d0 h0 <<<"${D0[$mode]}"
    read -r d1 h1 <<<"$(dispatched "$mode")"
    echo "dispatch round $round $mode: as coroutines $((d1 - d0)), by the worker hop $((h1 - h0))" >>"$results"
  done
  stop_all
done
rows=$(pg_psql "SELECT count(*) FROM cor_entities")

echo
cat "$work/head"
echo "postgres.sh done, $(date -u +%Y-%m-%dT%H:%MZ), ${DURATION}s per cell, $ROUNDS round(s), $(( $(date +%s) - t0 ))s, $rows entities in the database at the end, load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" <<'PY'
import sys
cell = {}
notes = []
print(f'{"round":>5} {"mode":<10} {"op":<7} {"conns":>5} {"req/s":>9} {"p50 us":>9} {"p99 us":>9} {"errors":>6} {"non2xx":>6} {"cpu us/req":>10} {"db us/req":>9} {"runq us/req":>11}')
for line in open(sys.argv[1]):
    f = line.split()
    if not f:
        continue
    if not f[0].isdigit():
        notes.append(line.rstrip())
        continue
    rnd, mode, op, conns, rps, p50, p99, err, non2xx, cpu, db, runq = f
    cell[(rnd, mode, op, conns)] = (float(rps), float(p99))
    flag = "  !!" if err != "0" or non2xx != "0" else ""
    print(f'{rnd:>5} {mode:<10} {op:<7} {conns:>5} {float(rps):>9.0f} {float(p50):>9.0f} {float(p99):>9.0f} {err:>6} {non2xx:>6} {cpu:>10} {db:>9} {runq:>11}{flag}')
for n in notes:
    print(n)
print("cpu: the broker's CPU per request; db: the cluster's (postmaster, backends, background processes);")
print("runq: time the broker's threads were runnable but waited for a CPU, per request (others on its core: high = not a quiet machine)")
print()
print("coroutines / worker hop, same round (the bar: req/s >= 1.5x, with the lower p99)")
print(f'{"round":>5} {"op":<7} {"conns":>5} {"req/s":>7} {"p99 co us":>10} {"p99 hop us":>10}  bar')
for (rnd, mode, op, conns), (rps, p99) in cell.items():
    if mode != "coroutines" or (rnd, "hop", op, conns) not in cell:
        continue
    hrps, hp99 = cell[(rnd, "hop", op, conns)]
    if rps <= 0 or hrps <= 0:
        print(f'{rnd:>5} {op:<7} {conns:>5} {"-":>7} {p99:>10.0f} {hp99:>10.0f}  - (no answer counted on one side)')
        continue
    r = rps / hrps
    bar = "met" if r >= 1.5 and p99 < hp99 else "not met"
    print(f'{rnd:>5} {op:<7} {conns:>5} {r:>6.2f}x {p99:>10.0f} {hp99:>10.0f}  {bar}')
PY
