#!/usr/bin/env bash
# cor over its PostgreSQL store (--store postgres) against Scorpio (5.x, the all-in-one Quarkus
# runner with its in-memory bus, as scorpio-temporal.sh runs it), each on a fresh PostgreSQL 15
# cluster of its own (fsync on, as installed; the same version and settings: pglib.sh's pg_up),
# one after the other, the same operations:
#   get     GET /entities/{id} of a 20-attribute entity (the bench entity attrs20's attributes)
#   patch   PATCH /entities/{id}/attrs/attr01 of one attribute of it
#   create  POST /entities of a new small entity (fresh ids: corRequest's {seq}, a tag per run)
# at CONNS (16) connections, each connection on an entity of its own (corRequest's {socket}):
# req/s, p50/p99, errors and answers outside 2xx (flagged !!), the server's CPU per request - its
# JVM, and its cluster (postmaster, backends, background processes: /proc) - and the ratio cor /
# Scorpio (the bar: cor >= 10x on GET and PATCH). Every operation is first sent once with curl
# and must answer 2xx on both (else the run stops). Every request carries Accept:
# application/json (Scorpio answers a GET without one 406).
# cor as shipped (java @cor-server-launcher/jvm.options -jar cor-server.jar), one loop, coroutines
# (the default), --dbPoolPerLoop 8 (its default); history on for both (their defaults). Scorpio
# run by SCORPIO_JAVA (a Java 17) with its JVM's defaults. Nothing pinned (as scorpio-temporal.sh).
#   SCORPIO_APP=/tmp/scorpio/src/AllInOneRunner/target/quarkus-app benchmarks/scorpio-postgres.sh
#                                                             (about 4 minutes)
#   DURATION=2 ROUNDS=1 SERVER_WARM=3 WARM=1 SCORPIO_APP=... benchmarks/scorpio-postgres.sh
# Variables: SCORPIO_APP (required), SCORPIO_JAVA, ROUNDS (1; round 2 runs Scorpio first), DURATION
# (5), WARM (2), SERVER_WARM (10: s of each operation on a fresh server), CONNS (16), OPS ("get
# patch create"), DB_POOL (8), TIMEOUT_MS (10000), JVM, PG_BIN, PG_SETTINGS.
# Build first: ./cor mvn -q -o -DskipTests -pl cor-server-launcher,benchmarks -am package.
# Run as root (the clusters run as user postgres). It stops everything it started, also on Ctrl-C.
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"
source "$here/benchmarks/pglib.sh"

SCORPIO_APP=${SCORPIO_APP:-}
SCORPIO_JAVA=${SCORPIO_JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
ROUNDS=${ROUNDS:-1}
DURATION=${DURATION:-5}
WARM=${WARM:-2}
SERVER_WARM=${SERVER_WARM:-10}
CONNS=${CONNS:-16}
OPS=${OPS:-get patch create}
DB_POOL=${DB_POOL:-8}
TIMEOUT_MS=${TIMEOUT_MS:-10000}
JVM=${JVM-$SHIPPED_JVM}

if [ -z "$SCORPIO_APP" ] || [ ! -f "$SCORPIO_APP/quarkus-run.jar" ]; then
  echo "SCORPIO_APP must name Scorpio's quarkus-app directory (with quarkus-run.jar), got '${SCORPIO_APP}':" >&2
  echo "build Scorpio from source as doc/performance.md says, then SCORPIO_APP=.../AllInOneRunner/target/quarkus-app" >&2
  exit 2
fi
[ -x "$SCORPIO_JAVA" ] || { echo "SCORPIO_JAVA ($SCORPIO_JAVA) is no java: Scorpio runs on Java 17" >&2; exit 2; }
pg_installed postgis

port=$(free_port)
own="http://127.0.0.1:$port"
base="$own/ngsi-ld/v1"
results="$work/results"
: >"$results"
server_pid="" # the server's JVM (its cluster: PG_PID)

echo "scorpio-postgres.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, cor: $("$here/cor" java -version 2>&1 | head -1), JVM flags \"$JVM\"," \
  "--dbPoolPerLoop $DB_POOL; Scorpio: $(basename "$(dirname "$(dirname "$SCORPIO_APP")")") $("$SCORPIO_JAVA" -version 2>&1 | head -1);" \
  "$("$PG_BIN/postgres" --version) ($PG_SETTINGS); $CONNS connections, nothing pinned; load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$work/head" >&2

"$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.BenchEntitiesMain attrs20 >"$work/attrs20.json"
printf '{"type": "Property", "value": 42.5}' >"$work/patch.json"
python3 - "$work" "$CONNS" <<'PY'
import json, sys
w, conns = sys.argv[1], int(sys.argv[2])
a = json.load(open(f"{w}/attrs20.json"))
for i in range(conns):
    json.dump(dict(a, id=f"urn:ngsi-ld:Bench:p{i}"), open(f"{w}/bench-{i}.json", "w"))
open(f"{w}/create.tmpl", "w").write('{"id": "urn:ngsi-ld:Created:TAG{seq}", "type": "Created", '
                                    '"name": {"type": "Property", "value": "new"}}')
PY

declare -A URL
URL[get]="$base/entities/urn:ngsi-ld:Bench:p{socket}"
URL[patch]="$base/entities/urn:ngsi-ld:Bench:p{socket}/attrs/attr01"
URL[create]="$base/entities"
accept=(--header 'Accept: application/json' --timeout-ms "$TIMEOUT_MS")
run() { # OP CONNS SECS: one load of OP, its result as lib.sh's load prints it
  local op=$1 c=$2 s=$3
  case $op in
    get) load "${URL[get]}" "$c" "$s" "${accept[@]}" ;;
    patch) load "${URL[patch]}" "$c" "$s" "${accept[@]}" --method PATCH --header 'Content-Type: application/json' --body-file "$work/patch.json" ;;
    create) load "${URL[create]}" "$c" "$s" "${accept[@]}" --method POST --header 'Content-Type: application/json' \
      --body-file "$(tagged create "$(date +%s%N)-")" ;; # ids no run before used
  esac
}

cor_up() {
  BROKER=cor
  pg_up "pg-cor"
  # shellcheck disable=SC2086 # JVM is a list of flags
  start cor "$here/cor" java $JVM -jar "$BROKER_JAR" --host 127.0.0.1 --port "$port" --httpLoops 1 \
    --store postgres --db "postgresql://postgres@127.0.0.1:$PG_PORT/cor" --dbPoolPerLoop "$DB_POOL"
  server_pid=${pids[-1]}
}
scorpio_up() { # as scorpio-temporal.sh starts it
  BROKER=scorpio
  pg_up "pg-scorpio"
  "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -q -c "CREATE ROLE ngb LOGIN SUPERUSER PASSWORD 'ngb'" \
    -c "CREATE DATABASE ngb OWNER ngb" >/dev/null
  READY="Listening on" START_WAIT=180 start scorpio env -C "$work" "$SCORPIO_JAVA" -Dquarkus.profile=in-memory \
    -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$port" -Dgateway.port="$port" -Dscorpio.gatewayurl="$own" \
    -Datcontext.url="$own/ngsi-ld/v1/jsonldContexts/" -Dselfhostcorecontext="$own/corecontext" \
    -Dquarkus.rest-client.entity-service.url="$own" -Dquarkus.rest-client.atcontext-service.url="$own" \
    -Dscorpio.entity-manager-server="$own" -Dscorpio.at-context-server="$own" \
    -Ddbhost=127.0.0.1 -Ddbport="$PG_PORT" -Ddbuser=ngb -Ddbpass=ngb -Ddbname=ngb -jar "$SCORPIO_APP/quarkus-run.jar"
  server_pid=${pids[-1]}
}

t0=$(date +%s)
for round in $(seq "$ROUNDS"); do
  order="cor scorpio"
  [ $((round % 2)) = 0 ] && order="scorpio cor"
  for b in $order; do
    echo "round $round: $b" >&2
    if [ "$b" = cor ]; then cor_up; else scorpio_up; fi
    for i in $(seq 0 $((CONNS - 1))); do check POST "$base/entities" 201 "$work/bench-$i.json"; done
    check GET "${URL[get]/\{socket\}/0}" 200
    python3 -c 'import json, sys; a = json.load(open(sys.argv[1])); n = len([k for k in a if k.startswith("attr")]); sys.exit(0 if n == 20 else f"{sys.argv[2]}: GET by id answered {n} attributes, not 20")' \
      "$work/answer" "$b"
    check PATCH "${URL[patch]/\{socket\}/0}" 204 "$work/patch.json"
    sed 's/{seq}/0/' "$(tagged create "check-$round-")" >"$work/create-check.json"
    check POST "${URL[create]}" 201 "$work/create-check.json"
    for op in $OPS; do run "$op" "$CONNS" "$SERVER_WARM" >/dev/null; done
    for op in $OPS; do
      run "$op" "$CONNS" "$WARM" >/dev/null
      j0=$(cpu_ticks "$server_pid"); p0=$(tree_ticks "$PG_PID")
      read -r rps p50 p99 errors requests <<<"$(run "$op" "$CONNS" "$DURATION")"
      j1=$(cpu_ticks "$server_pid"); p1=$(tree_ticks "$PG_PID")
      alive "$b" "$server_pid"; alive "pg-$b" "$PG_PID"
      echo "$round $b $op $CONNS $rps $p50 $p99 $errors $(last_run non_2xx_3xx) $requests $(per_request $((j1 - j0)) "$requests")" \
        "$(per_request $((p1 - p0)) "$requests") $(per_request $((j1 - j0 + p1 - p0)) "$requests")" >>"$results"
      tail -1 "$results" >&2
    done
    stop_all
    pg_down
  done
done

echo
cat "$work/head"
echo "scorpio-postgres.sh done, $(date -u +%Y-%m-%dT%H:%MZ), ${DURATION}s per cell, $ROUNDS round(s), $(( $(date +%s) - t0 ))s, load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" <<'PY'
import sys
cell = {}
print(f'{"round":>5} {"server":<8} {"op":<7} {"conns":>5} {"req/s":>9} {"p50 us":>9} {"p99 us":>9} {"errors":>6} {"non2xx":>6}'
      f' {"requests":>8} {"jvm us/req":>10} {"db us/req":>9} {"cpu us/req":>10}')
for line in open(sys.argv[1]):
    f = line.split()
    if not f:
        continue
    rnd, b, op, conns, rps, p50, p99, err, non2xx, requests, jvm, db, cpu = f
    cell[(rnd, b, op)] = (float(rps), float(p50), float(p99), cpu)
    flag = "  !! errors or answers outside 2xx" if err != "0" or non2xx != "0" else ""
    print(f'{rnd:>5} {b:<8} {op:<7} {conns:>5} {float(rps):>9.0f} {float(p50):>9.0f} {float(p99):>9.0f} {err:>6} {non2xx:>6}'
          f' {requests:>8} {jvm:>10} {db:>9} {cpu:>10}{flag}')
print("jvm: the server's JVM; db: its cluster (postmaster, backends, background processes); cpu: the two, per request")
print()
print("cor / Scorpio, same round (the bar: req/s >= 10x on get and patch; latency and CPU: Scorpio's over cor's)")
for (rnd, b, op), c in cell.items():
    if b != "cor" or (rnd, "scorpio", op) not in cell:
        continue
    s = cell[(rnd, "scorpio", op)]
    r = c[0] / s[0] if s[0] > 0 else float("inf")
    lat = lambda i: f'{s[i] / c[i]:.1f}x' if c[i] > 0 else "-"
    cpu = f'{float(s[3]) / float(c[3]):.1f}x' if c[3] != "-" and s[3] != "-" and float(c[3]) > 0 else "-"
    bar = ("met" if r >= 10 else "not met") if op in ("get", "patch") else "-"
    print(f'  round {rnd} {op:<7} req/s {r:.1f}x, p50 {lat(1)}, p99 {lat(2)}, cpu {cpu}   bar: {bar}')
PY
