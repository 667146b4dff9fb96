#!/usr/bin/env bash
# Several brokers over one PostgreSQL database (--store postgres), on this machine: BROKERS (1, 2
# and 3) brokers of one loop each, and the same mixed load spread round-robin across them - CONNS
# connections in all, half of them PATCHing one attribute of a 20-attribute entity and half GETting
# it by id (each connection on an entity of its own: corRequest's {socket}), every broker taking
# CONNS / BROKERS of them. For each broker count: req/s (all generators), p50/p99 of each
# operation (the worst generator's), the brokers' CPU per request (summed over the brokers) and the
# database's (the cluster's postmaster, backends and background processes: /proc), each per
# request the brokers answered (/metrics' cor_http_requests_total, over the same instants as the
# CPU: from just before the load to just after it, its warm-up included).
# One fresh cluster (PostgreSQL 15, fsync on, as installed) for the whole run; fresh brokers for
# each count, SERVER_WARM s of the load on them first. Nothing is pinned: 3 brokers, a database
# and 2 x BROKERS load generators share the machine's cores (that is the question: what a broker
# more costs on the same machine). --dbPoolPerLoop DB_POOL (8, the broker's default) on each.
#   benchmarks/postgres-brokers.sh                                      (about 3 minutes)
#   DURATION=2 ROUNDS=1 SERVER_WARM=3 WARM=1 benchmarks/postgres-brokers.sh   (a short look)
#   BROKERS="1 3" CONNS=96 benchmarks/postgres-brokers.sh
# Build first: ./cor mvn -q -o -DskipTests -pl cor-server-launcher,benchmarks -am package.
# Run as root (the cluster runs as user postgres). It stops everything it started, also on Ctrl-C.
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"
source "$here/benchmarks/pglib.sh"

ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-10}       # seconds measured per broker count
WARM=${WARM:-2}                # seconds each generator runs before it measures
SERVER_WARM=${SERVER_WARM:-10} # seconds of the load on fresh brokers (JIT)
BROKERS=${BROKERS:-1 2 3}
CONNS=${CONNS:-48}             # connections in all (a multiple of 2 x every broker count: 48 = 2 x 24 = 4 x 12 = 6 x 8)
DB_POOL=${DB_POOL:-8}
JVM=${JVM-$SHIPPED_JVM}
results="$work/results"
: >"$results"
gens=()
cleanup() { local g; for g in "${gens[@]:-}"; do [ -n "$g" ] && kill "$g" 2>/dev/null || true; done; stop_all; pg_down; rm -rf "$work"; }

for b in $BROKERS; do
  [ $((CONNS % (2 * b))) = 0 ] || { echo "CONNS ($CONNS) must be a multiple of 2 x $b (the brokers and the two operations)" >&2; exit 2; }
done
maxb=$(echo $BROKERS | tr ' ' '\n' | sort -n | tail -1)
per=$((CONNS / 2)) # the most connections one generator has (one broker)

pg_installed
echo "postgres-brokers.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $("$here/cor" java -version 2>&1 | head -1), $("$PG_BIN/postgres" --version)," \
  "JVM flags \"$JVM\", --dbPoolPerLoop $DB_POOL, $CONNS connections (PATCH + GET by id), nothing pinned; load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$work/head" >&2

"$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.BenchEntitiesMain attrs20 >"$work/attrs20.json"
printf '{"type": "Property", "value": 42.5}' >"$work/patch.json"
# broker k's entities: urn:ngsi-ld:Bench:b{k}s{socket}, enough for one broker's connections of one operation
python3 - "$work" "$maxb" "$per" <<'PY'
import json, sys
w, brokers, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
a = json.load(open(f"{w}/attrs20.json"))
json.dump([dict(a, id=f"urn:ngsi-ld:Bench:b{k}s{i}") for k in range(brokers) for i in range(per)], open(f"{w}/bench.json", "w"))
PY

ports=()
broker_pids=()
brokers_up() { # N: N fresh brokers over the cluster
  ports=(); broker_pids=()
  local k p
  for k in $(seq 0 $(($1 - 1))); do
    p=$(free_port)
    # shellcheck disable=SC2086 # JVM is a list of flags
    start "broker$k" "$here/cor" java $JVM -jar "$BROKER_JAR" --host 127.0.0.1 --port "$p" --httpLoops 1 \
      --store postgres --db "postgresql://postgres@127.0.0.1:$PG_PORT/cor" --dbPoolPerLoop "$DB_POOL"
    ports+=("$p"); broker_pids+=("${pids[-1]}")
  done
}
requests_answered() { # the brokers' cor_http_requests_total, summed
  local p total=0
  for p in "${ports[@]}"; do total=$((total + $(metric "http://127.0.0.1:$p" cor_http_requests_total))); done
  echo "$total"
}
# mixed N WARMUP SECS TAG: the load on N brokers - on each, a PATCH and a GET generator of
# CONNS / (2 N) connections each, all at once; their results in $work/TAG-K-OP.json
mixed() {
  local n=$1 warm=$2 secs=$3 tag=$4 c=$((CONNS / (2 * $1))) k url
  gens=()
  for k in $(seq 0 $((n - 1))); do
    url="http://127.0.0.1:${ports[$k]}/ngsi-ld/v1/entities/urn:ngsi-ld:Bench:b${k}s{socket}"
    "$here/cor" java -jar "$BENCH_JAR" corRequest --url "$url/attrs/attr01" --connections "$c" --duration "$secs" --warmup "$warm" \
      --method PATCH --header 'Content-Type: application/json' --body-file "$work/patch.json" --json "$work/$tag-$k-patch.json" >/dev/null 2>&1 &
    gens+=($!)
    "$here/cor" java -jar "$BENCH_JAR" corRequest --url "$url" --connections "$c" --duration "$secs" --warmup "$warm" \
      --json "$work/$tag-$k-get.json" >/dev/null 2>&1 &
    gens+=($!)
  done
  local g
  for g in "${gens[@]}"; do wait "$g" || true; done
  gens=()
}

pg_up pg
fixtures=0
t0=$(date +%s)
for round in $(seq "$ROUNDS"); do
  order=$BROKERS
  [ $((round % 2)) = 0 ] && order=$(echo $BROKERS | tr ' ' '\n' | tac | tr '\n' ' ')
  for n in $order; do
    echo "round $round: $n broker(s)" >&2
    brokers_up "$n"
    if [ "$fixtures" = 0 ]; then
      check POST "http://127.0.0.1:${ports[0]}/ngsi-ld/v1/entityOperations/create" 201 "$work/bench.json"
      fixtures=1
    fi
    for k in $(seq 0 $((n - 1))); do # every broker answers both operations 2xx
      BROKER=broker$k
      check PATCH "http://127.0.0.1:${ports[$k]}/ngsi-ld/v1/entities/urn:ngsi-ld:Bench:b${k}s0/attrs/attr01" 204 "$work/patch.json"
      check GET "http://127.0.0.1:${ports[$k]}/ngsi-ld/v1/entities/urn:ngsi-ld:Bench:b${k}s0" 200
    done
    mixed "$n" 0 "$SERVER_WARM" warm
    b0=$(cpu_ticks "${broker_pids[@]}"); p0=$(tree_ticks "$PG_PID"); r0=$(requests_answered)
    mixed "$n" "$WARM" "$DURATION" "r$round-b$n"
    b1=$(cpu_ticks "${broker_pids[@]}"); p1=$(tree_ticks "$PG_PID"); r1=$(requests_answered)
    for k in $(seq 0 $((n - 1))); do alive "broker$k" "${broker_pids[$k]}"; done
    alive pg "$PG_PID"
    answered=$((r1 - r0 - n)) # (less the /metrics request of each broker that read r1)
    share=""
    for k in $(seq 0 $((n - 1))); do share+="$(metric "http://127.0.0.1:${ports[$k]}" cor_http_requests_total),"; done
    python3 - "$work" "r$round-b$n" "$n" "$round" "$answered" "$(per_request $((b1 - b0)) "$answered")" \
      "$(per_request $((p1 - p0)) "$answered")" "${share%,}" >>"$results" <<'PY'
import json, sys
w, tag, n, rnd, answered, cpu, db, share = sys.argv[1:9]
out = {"patch": [], "get": []}
errors = non2xx = 0
for k in range(int(n)):
    for op in out:
        try:
            r = json.load(open(f"{w}/{tag}-{k}-{op}.json"))
        except Exception:
            r = {"requests_per_s": 0, "latency_us": {"p50": 0, "p99": 0}, "errors": -1, "non_2xx_3xx": -1}
        out[op].append(r)
        errors += r["errors"]
        non2xx += r.get("non_2xx_3xx", 0)
f = lambda op, key: max(r["latency_us"][key] for r in out[op])
rps = lambda op: sum(r["requests_per_s"] for r in out[op])
print(rnd, n, f'{rps("patch") + rps("get"):.0f}', f'{rps("patch"):.0f}', f'{f("patch", "p50"):.0f}', f'{f("patch", "p99"):.0f}',
      f'{rps("get"):.0f}', f'{f("get", "p50"):.0f}', f'{f("get", "p99"):.0f}', errors, non2xx, answered, cpu, db, share)
PY
    tail -1 "$results" >&2
    stop_all
  done
done

echo
cat "$work/head"
echo "postgres-brokers.sh done, $(date -u +%Y-%m-%dT%H:%MZ), ${DURATION}s measured per broker count, $ROUNDS round(s), $(( $(date +%s) - t0 ))s, load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print(f'{"round":>5} {"brokers":>7} {"req/s":>8} {"PATCH/s":>8} {"p50 us":>8} {"p99 us":>8} {"GET/s":>8} {"p50 us":>8} {"p99 us":>8}'
      f' {"errors":>6} {"non2xx":>6} {"answered":>9} {"cpu us/req":>10} {"db us/req":>9}  answered per broker (all so far)')
base = {}
for r in rows:
    rnd, n, rps, prps, pp50, pp99, grps, gp50, gp99, err, non2xx, answered, cpu, db, share = r
    flag = "  !!" if err != "0" or non2xx != "0" else ""
    print(f'{rnd:>5} {n:>7} {rps:>8} {prps:>8} {pp50:>8} {pp99:>8} {grps:>8} {gp50:>8} {gp99:>8} {err:>6} {non2xx:>6} {answered:>9} {cpu:>10} {db:>9}  {share}{flag}')
    if n == "1" and cpu != "-":
        base[rnd] = (float(cpu), float(db))
print("req/s: every generator's (warm-up excluded); p50/p99: the worst generator's of that operation;")
print("cpu: the brokers' CPU summed, db: the cluster's, each per request the brokers answered over the same instants")
if base:
    print()
    print("CPU per request against one broker's, same round (brokers, database)")
    for r in rows:
        rnd, n, cpu, db = r[0], r[1], r[12], r[13]
        if rnd in base and cpu != "-":
            print(f'  round {rnd} {n} broker(s): brokers {float(cpu) / base[rnd][0]:.2f}x, database {float(db) / base[rnd][1]:.2f}x')
PY
