#!/usr/bin/env bash
# The temporal API side by side with Scorpio's history (issue: the temporal API): the same
# temporal operations against cor and against Scorpio (5.x, the all-in-one Quarkus runner with its
# in-memory bus: no Kafka, no Docker, on PostgreSQL 15 + PostGIS), on 127.0.0.1, one server at a
# time, each fresh for each part. Load from corRequest (lib.sh's load) and temporal_load.py as
# temporal.sh does; server CPU from /proc/PID/stat - for Scorpio its JVM plus every process of its
# PostgreSQL cluster (the postmaster with its children's CPU, and the backends alive).
#   record  PATCH of one attribute of the 20-attribute bench entity (history on), at 1 and 16
#           connections: req/s, p50/p99, and server CPU per request - counted from the load's
#           start until the history holds the instances (both brokers record a PATCH after
#           answering it: Scorpio buffers them and writes them in batches, at most every 5 s)
#   ingest  POST /entityOperations/upsert of INGEST_BATCH entities, each with a changed value, at
#           4 connections, a fixed number of batches: instances acknowledged per second, and
#           instances recorded per second (until the temporal API counts them all), server CPU
#           per instance
#   reads   one attribute of READ_INSTANCES instances one second apart (loaded through POST
#           /temporal/entities, READ_PER_REQUEST instances a request, on both): lastN=100 and the
#           hourly avg over the whole range (aggrMethods=avg, aggrPeriodDuration=PT1H,
#           timerel=between), p50/p99 at 1 connection
#   query   QUERY_ENTITIES entities of one type (200 by default, not temporal.sh's 1 000: Scorpio
#           took their 1 440 000 instances at about 4 000 a second, 6 minutes; and its query with
#           limit=50 took 0.2 s over 50 entities, 1 s over 1 000), one attribute at one instance
#           a minute over a day:
#           timerel=between of QUERY_HOURS hours (off the minute, as Scorpio's between is closed and
#           cor's half-open), limit=QUERY_LIMIT entities and lastN = the window's instances (so
#           neither broker cuts the page: Scorpio answers 50 instances an attribute without lastN,
#           cor at most 10 000 an answer), p50/p99 at 1 connection
# Every request is first sent once with curl and must answer 200/201/204 on both (else the run
# stops); a timed run with an answer outside 2xx/3xx is flagged (non2xx= in its row, !! under the
# table). The reads' and the query's answers are compared: entities and instances (or periods)
# on each broker, printed under the table ("same answer size" or "!! answers differ"). Every GET
# carries Accept: application/json (Scorpio answers one without an Accept 406). The histories are
# counted through the temporal API (totalCount aggregations), not in either store.
#   SCORPIO_APP=/tmp/scorpio/src/AllInOneRunner/target/quarkus-app benchmarks/scorpio-temporal.sh
#                                          (every part; about 15 minutes on 2 cores)
#   PARTS="reads query" SCORPIO_APP=... benchmarks/scorpio-temporal.sh      (some of them)
#   READ_INSTANCES=20000 QUERY_ENTITIES=50 ... (smaller sizes: the variables below)
# Inputs: SCORPIO_APP, Scorpio's quarkus-app directory (built from source: doc/performance.md),
# run by SCORPIO_JAVA (a Java 17) with its JVM's defaults (its image's CMD is java -jar
# quarkus-run.jar); PostgreSQL 15 + PostGIS from the machine's packages (installed with apt-get
# when missing), a fresh cluster in the work directory for each part (fsync on, as installed);
# cor as shipped (java @cor-server-launcher/jvm.options -jar cor-server.jar, one loop) on its
# durable store with --fsync always, history on.
# Build first: ./cor mvn -q -DskipTests package. Run as root (the cluster runs as user postgres).
# It stops everything it started, also on Ctrl-C or an error.
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"

SCORPIO_APP=${SCORPIO_APP:-}
SCORPIO_JAVA=${SCORPIO_JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PARTS=${PARTS:-record ingest reads query}
JVM=${JVM-$SHIPPED_JVM}
DURATION=${DURATION:-5}             # seconds of each timed run
WARM=${WARM:-2}                     # seconds of load before each timed run
SERVER_WARM=${SERVER_WARM:-15}      # seconds of load after a server starts, before anything is timed
STABLE=${STABLE:-7}                 # a history whose count holds this long is complete (Scorpio's
                                    # writer runs every 5 s, once its buffer is idle for 1 s)
SETTLE_MAX=${SETTLE_MAX:-600}       # seconds a history may take to catch up
INGEST_BATCH=${INGEST_BATCH:-1000}  # entities an upsert
INGEST_WARM_COR=${INGEST_WARM_COR:-1000}     # upserts before the timed ones
INGEST_REQUESTS_COR=${INGEST_REQUESTS_COR:-1000} # upserts timed
INGEST_WARM_SCORPIO=${INGEST_WARM_SCORPIO:-8}
INGEST_REQUESTS_SCORPIO=${INGEST_REQUESTS_SCORPIO:-16}
READ_INSTANCES=${READ_INSTANCES:-100000}
READ_PER_REQUEST=${READ_PER_REQUEST:-10000}     # Scorpio takes a body of at most 10 MiB
QUERY_ENTITIES=${QUERY_ENTITIES:-200} # temporal.sh has 1 000: Scorpio loads those in about 6 minutes
QUERY_HOURS=${QUERY_HOURS:-2}
QUERY_LIMIT=${QUERY_LIMIT:-50}

if [ -z "$SCORPIO_APP" ] || [ ! -f "$SCORPIO_APP/quarkus-run.jar" ]; then
  echo "SCORPIO_APP must name Scorpio's quarkus-app directory (with quarkus-run.jar), got '${SCORPIO_APP}':" >&2
  echo "build Scorpio from source as doc/performance.md says, then SCORPIO_APP=.../AllInOneRunner/target/quarkus-app" >&2
  exit 2
fi
[ -x "$SCORPIO_JAVA" ] || { echo "SCORPIO_JAVA ($SCORPIO_JAVA) is no java: Scorpio runs on Java 17" >&2; exit 2; }
if [ ! -x "$PG_BIN/postgres" ] || [ ! -f "/usr/share/postgresql/15/extension/postgis.control" ]; then
  echo "installing PostgreSQL 15 and PostGIS (apt-get)" >&2
  apt-get install -y -q postgresql-15 postgresql-15-postgis-3 >"$work/apt.log" 2>&1 ||
    { cat "$work/apt.log" >&2; exit 1; }
fi
chmod 711 "$work" # the cluster's directory is in it, and the cluster runs as postgres

results="$work/results"
: >"$results"
day0=1767225600 # 2026-01-01T00:00:00Z
port=$(free_port)
base="http://127.0.0.1:$port/ngsi-ld/v1"
server_pids=""  # the processes whose CPU is the server's
py="$work/scorpio-temporal.py"
cat >"$py" <<'PY'
import json, os, sys, time, urllib.request, urllib.error

def ticks(pids):
    """user+system ticks of each pid and its children waited for, plus those of its live children"""
    total = 0
    children = {}
    for d in os.listdir('/proc'):
        if d.isdigit():
            try:
                f = open(f'/proc/{d}/stat').read().rsplit(')', 1)[1].split()
                children.setdefault(f[1], []).append(f)
            except OSError:
                pass
    for p in pids:
        try:
            f = open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        total += int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])
        total += sum(int(c[11]) + int(c[12]) for c in children.get(p, []))
    return total

def get(url):
    try:
        # (an Accept header: Scorpio answers a request without one 406)
        with urllib.request.urlopen(urllib.request.Request(url, headers={'Accept': 'application/json'}), timeout=300) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()

def count(url):
    """instances counted by an aggregatedValues totalCount answer (an entity or an array of them;
    an attribute an object or, Scorpio's query, an array of one), -1 when not 200"""
    status, body = get(url)
    if status != 200:
        return -1
    a = json.loads(body)
    n = 0
    for e in a if isinstance(a, list) else [a]:
        for k, v in e.items():
            for attr in v if isinstance(v, list) else [v]:
                if isinstance(attr, dict) and 'totalCount' in attr:
                    n += sum(b[0] for b in attr['totalCount'])
    return n

def instances(path):
    """entities, instances (normalized) or buckets (aggregated) of an answer in a file"""
    a = json.load(open(path))
    ents = a if isinstance(a, list) else [a]
    n = 0
    for e in ents:
        for k, v in e.items():
            if k in ('id', 'type', '@context'):
                continue
            for x in v if isinstance(v, list) else [v]:
                if isinstance(x, dict):
                    m = [b for key, b in x.items() if isinstance(b, list)]
                    n += sum(len(b) for b in m) if m else 1
    return f'{len(ents)} {n}'

def buckets(path):
    """the first and the last period of an aggregated answer's one attribute and method"""
    a = json.load(open(path))
    for k, v in a.items():
        for x in v if isinstance(v, list) else [v]:
            if isinstance(x, dict):
                for m, b in x.items():
                    if isinstance(b, list) and b:
                        return f'{len(b)} periods, first {json.dumps(b[0])}, last {json.dumps(b[-1])}'
    return 'none'

cmd = sys.argv[1]
if cmd == 'buckets':
    print(buckets(sys.argv[2]))
elif cmd == 'ticks':
    print(ticks(sys.argv[2:]))
elif cmd == 'count':
    print(count(sys.argv[2]))
elif cmd == 'instances':
    print(instances(sys.argv[2]))
elif cmd == 'settle':
    # settle URL TARGET STABLE MAX PID...: polls the count until it reaches TARGET or holds for
    # STABLE s (or MAX s pass); prints "count seconds ticks" - when it last changed, and the
    # servers' CPU ticks then
    url, target, stable, most = sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
    pids = sys.argv[6:]
    t0 = time.time()
    last, changed, at = None, t0, ticks(pids)
    while True:
        c = count(url)
        now = time.time()
        if c != last:
            last, changed, at = c, now, ticks(pids)
        if (target >= 0 and c >= target) or now - changed >= stable or now - t0 >= most:
            break
        time.sleep(0.25)
    print(f'{last} {changed - t0:.2f} {at}')
PY
helper() { python3 "$py" "$@"; }
# shellcheck disable=SC2086 # server_pids is a list
ticks() { helper ticks $server_pids; }
loader() { python3 "$here/benchmarks/temporal_load.py" "$base" "$@"; }
stamp() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
row() { echo "$*" >>"$results"; echo "$*" >&2; }
declare -A seen # BROKER:WHAT -> what an answer held ("entities instances")
same() { # LABEL WHAT: says whether both brokers' answers held as much
  local c=${seen[cor:$2]:-?} s=${seen[scorpio:$2]:-?}
  if [ "$c" = "$s" ]; then echo "same answer size: $1: $c on both" | tee -a "$results" >&2
  else echo "!! answers differ: $1: cor $c, Scorpio $s" | tee -a "$results" >&2; fi
}
# settle COUNT_URL TARGET: waits until the history counts TARGET instances (or its count holds for
# STABLE s: TARGET -1 for that alone); sets n (the count), secs (when it last grew, from now) and t
# (the servers' CPU ticks then)
settle() {
  read -r n secs t <<<"$(helper settle "$1" "$2" "$STABLE" "$SETTLE_MAX" $server_pids)"
  [ "$2" -lt 0 ] || [ "$n" -ge "$2" ] || echo "$BROKER: the history counts $n instances, not the $2 expected ($1)" >&2
}
# per T0 T1 N DECIMALS: CPU µs per item of the ticks from T0 to T1
per() {
  awk -v t=$(($2 - $1)) -v hz="$(getconf CLK_TCK)" -v n="$3" -v d="$4" 'BEGIN { if (n > 0) printf "%.*f", d, t * 1e6 / hz / n; else print "-" }'
}
# count_url ID|'?QUERY' ATTR: the totalCount of ATTR's instances by modifiedAt (a PATCH's and an
# upsert's instances have no observedAt), of one entity or of a query's entities
count_url() {
  local what=$1 attr=$2 q="attrs=$2&options=aggregatedValues&aggrMethods=totalCount&timerel=after&timeAt=2000-01-01T00:00:00Z&timeproperty=modifiedAt"
  if [[ $what == '?'* ]]; then echo "$base/temporal/entities${what}&$q"; else echo "$base/temporal/entities/$what?$q"; fi
}
# check METHOD URL CODES [body file]: one request with curl, its answer in $work/answer; fails the
# run on a status not in CODES (a list: "200 204")
check() {
  local method=$1 url=$2 codes=$3 body=${4:-} code
  local args=(-s -o "$work/answer" -w '%{http_code}' -X "$method" -H 'Accept: application/json')
  [ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data-binary "@$body")
  code=$(curl "${args[@]}" "$url")
  [[ " $codes " == *" $code "* ]] || { echo "$BROKER: $method $url answered $code: $(head -c 600 "$work/answer")" >&2; exit 1; }
}

# ---------------------------------------------------------------- the servers
cor_up() {
  BROKER=cor
  rm -rf "$work/data"
  # shellcheck disable=SC2086 # JVM is a list of flags
  start cor "$here/cor" java $JVM -jar "$BROKER_JAR" --host 127.0.0.1 --port "$port" --httpLoops 1 \
    --dataDir "$work/data" --fsync always --temporal on --maxBody 64m --temporalMaxBytes 64g
  server_pids=${pids[-1]}
}
scorpio_up() {
  BROKER=scorpio
  local pgport pg
  pgport=$(free_port)
  rm -rf "$work/pg"; mkdir "$work/pg"; chown postgres: "$work/pg"
  runuser -u postgres -- "$PG_BIN/initdb" -D "$work/pg" -U postgres --auth=trust -E UTF8 >"$work/initdb.log" 2>&1 ||
    { cat "$work/initdb.log" >&2; exit 1; }
  READY="ready to accept connections" start postgres setpriv --reuid=postgres --regid=postgres --init-groups \
    "$PG_BIN/postgres" -D "$work/pg" -p "$pgport" -k "$work/pg" -c listen_addresses=127.0.0.1 -c max_connections=300
  pg=${pids[-1]}
  "$PG_BIN/psql" -h 127.0.0.1 -p "$pgport" -U postgres -q -c "CREATE ROLE ngb LOGIN SUPERUSER PASSWORD 'ngb'" \
    -c "CREATE DATABASE ngb OWNER ngb" >/dev/null
  local own="http://localhost:$port"
  READY="Listening on" START_WAIT=180 start scorpio env -C "$work" "$SCORPIO_JAVA" -Dquarkus.profile=in-memory \
    -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$port" -Dgateway.port="$port" -Dscorpio.gatewayurl="$own" \
    -Datcontext.url="$own/ngsi-ld/v1/jsonldContexts/" -Dselfhostcorecontext="$own/corecontext" \
    -Dquarkus.rest-client.entity-service.url="$own" -Dquarkus.rest-client.atcontext-service.url="$own" \
    -Dscorpio.entity-manager-server="$own" -Dscorpio.at-context-server="$own" \
    -Ddbhost=127.0.0.1 -Ddbport="$pgport" -Ddbuser=ngb -Ddbpass=ngb -Ddbname=ngb -jar "$SCORPIO_APP/quarkus-run.jar"
  server_pids="${pids[-1]} $pg"
}
up() { if [ "$1" = cor ]; then cor_up; else scorpio_up; fi; }

accept=(--header 'Accept: application/json') # corRequest sends no Accept, and Scorpio answers a GET without one 406
# timed URL CONNS [flags] -> "rps=.. p50=.. p99=.. errors=.. non2xx=.. cpu=.." (µs; CPU per request)
timed() {
  local url=$1 conns=$2; shift 2
  local t0 t1 rps p50 p99 errors requests
  t0=$(ticks)
  read -r rps p50 p99 errors requests <<<"$(load "$url" "$conns" "$DURATION" "$@")"
  t1=$(ticks)
  echo "rps=$rps p50=$p50 p99=$p99 errors=$errors non2xx=$(last_run non_2xx_3xx) requests=$requests cpu=$(per "$t0" "$t1" "$requests" 1)"
}

echo "scorpio-temporal.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, cor: $("$here/cor" java -version 2>&1 | head -1), JVM flags \"$JVM\"; Scorpio: $(basename "$(dirname "$(dirname "$SCORPIO_APP")")") $("$SCORPIO_JAVA" -version 2>&1 | head -1); $("$PG_BIN/postgres" --version); load $(cut -d' ' -f1-3 /proc/loadavg), parts: $PARTS" | tee -a "$results" >&2

# ---------------------------------------------------------------- record
if [[ " $PARTS " == *" record "* ]]; then
  attrs20_patch
  for b in cor scorpio; do
    up "$b"
    id=urn:ngsi-ld:Bench:attrs20
    url="$base/entities/$id/attrs/attr01"
    cnt=$(count_url "$id" attr01)
    check POST "$base/entities" 201 "$work/attrs20.json"
    check PATCH "$url" 204 "$work/patch.json"
    settle "$cnt" 2 # the creation's instance and the PATCH's
    read -r _ _ _ _ done <<<"$(load "$url" 16 "$SERVER_WARM" "${patch[@]}")"
    expect=$((n + done))
    for conns in 1 16; do
      read -r _ _ _ _ done <<<"$(load "$url" "$conns" "$WARM" "${patch[@]}")"
      settle "$cnt" $((expect + done))
      n0=$n
      t0=$(ticks)
      read -r rps p50 p99 errors requests <<<"$(load "$url" "$conns" "$DURATION" "${patch[@]}")"
      non2xx=$(last_run non_2xx_3xx)
      settle "$cnt" $((n0 + requests))
      expect=$n
      row record "$b" conns=$conns rps=$rps p50=$p50 p99=$p99 errors=$errors non2xx=$non2xx requests=$requests \
        recorded=$((n - n0)) catchup=$secs cpu=$(per "$t0" "$t" "$requests" 1)
    done
    stop_all
  done
fi

# ---------------------------------------------------------------- ingest
if [[ " $PARTS " == *" ingest "* ]]; then
  upsert_bodies "$INGEST_BATCH"
  up=(--method POST --header 'Content-Type: application/json' --body-file "$work/upsert.json" --timeout-ms 600000)
  for b in cor scorpio; do
    up "$b"
    if [ "$b" = cor ]; then warm=$INGEST_WARM_COR count=$INGEST_REQUESTS_COR; else warm=$INGEST_WARM_SCORPIO count=$INGEST_REQUESTS_SCORPIO; fi
    url="$base/entityOperations/upsert"
    cnt=$(count_url "?type=Ingest&limit=1000" temperature)
    lastcnt=$(count_url "urn:ngsi-ld:Ingest:$(printf %04d $((INGEST_BATCH - 1)))" temperature)
    check POST "$url" "201 204" "$work/upsert0.json"
    check POST "$url" 204 "$work/upsert.json"
    settle "$cnt" $((2 * INGEST_BATCH))
    read -r _ _ _ _ done <<<"$(load "$url" 4 3600 --requests "$warm" "${up[@]}")"
    settle "$cnt" $((n + done * INGEST_BATCH))
    n0=$n
    settle "$lastcnt" -1
    l0=$n
    t0=$(ticks)
    read -r rps p50 p99 errors requests <<<"$(load "$url" 4 3600 --requests "$count" "${up[@]}")"
    non2xx=$(last_run non_2xx_3xx)
    dur=$(last_run duration_s)
    # the batch's last entity first (a poll of one entity costs the servers little), then all
    # (the count sees the first 1 000 entities only: INGEST_BATCH <= 1000)
    settle "$lastcnt" $((l0 + requests))
    catch=$secs
    settle "$cnt" $((n0 + requests * INGEST_BATCH))
    recorded=$((n - n0)) secs=$(awk -v a="$catch" -v b="$secs" 'BEGIN { printf "%.2f", a + b }')
    row ingest "$b" conns=4 batches=$requests acked=$(awk -v r="$requests" -v b="$INGEST_BATCH" -v d="$dur" 'BEGIN { printf "%.0f", r * b / d }') \
      recorded=$recorded rec_per_s=$(awk -v n="$recorded" -v d="$dur" -v c="$secs" 'BEGIN { printf "%.0f", n / (d + c) }') \
      p50=$p50 p99=$p99 errors=$errors non2xx=$non2xx seconds=$dur catchup=$secs cpu=$(per "$t0" "$t" "$recorded" 2)
    stop_all
  done
fi

# ---------------------------------------------------------------- reads
if [[ " $PARTS " == *" reads "* ]]; then
  hours=$(( (READ_INSTANCES + 3599) / 3600 ))
  for b in cor scorpio; do
    up "$b"
    id=urn:ngsi-ld:Sensor:reads
    read -r inst lsecs rate <<<"$(loader "$id" Sensor temperature $day0 1 "$READ_INSTANCES" "$READ_PER_REQUEST")"
    obs="$base/temporal/entities/$id?attrs=temperature&options=aggregatedValues&aggrMethods=totalCount&timerel=after&timeAt=2000-01-01T00:00:00Z"
    settle "$obs" "$READ_INSTANCES"
    have=$n
    row load "$b" what=reads instances=$inst seconds=$lsecs per_s=$rate counted=$have
    [ "$have" = "$READ_INSTANCES" ] || { echo "$b counts $have instances of $READ_INSTANCES loaded" >&2; exit 1; }
    last="$base/temporal/entities/$id?attrs=temperature&lastN=100"
    avg="$base/temporal/entities/$id?attrs=temperature&options=aggregatedValues&aggrMethods=avg&aggrPeriodDuration=PT1H&timerel=between&timeAt=$(stamp $day0)&endTimeAt=$(stamp $((day0 + hours * 3600)))"
    check GET "$last" 200
    seen[$b:lastN]=$(helper instances "$work/answer")
    echo "$b lastN=100: ${seen[$b:lastN]} (entities instances)" >&2
    check GET "$avg" 200
    seen[$b:avg]=$(helper instances "$work/answer")
    echo "$b avg PT1H over $hours h: $(helper buckets "$work/answer")" | tee -a "$results" >&2
    load "$last" 1 "$SERVER_WARM" "${accept[@]}" >/dev/null
    load "$last" 1 "$WARM" "${accept[@]}" >/dev/null
    row reads "$b" op=lastN100 conns=1 $(timed "$last" 1 "${accept[@]}")
    load "$avg" 1 "$SERVER_WARM" "${accept[@]}" >/dev/null
    load "$avg" 1 "$WARM" "${accept[@]}" >/dev/null
    row reads "$b" op=avg-PT1H conns=1 $(timed "$avg" 1 "${accept[@]}")
    stop_all
  done
  same "reads lastN=100 (entities instances)" lastN
  same "reads avg PT1H (entities periods)" avg
fi

# ---------------------------------------------------------------- query
if [[ " $PARTS " == *" query "* ]]; then
  from=$((day0 + 6 * 3600 - 30)) # 05:59:30, off the instances' minutes
  q="$base/temporal/entities?type=Meter&timerel=between&timeAt=$(stamp $from)&endTimeAt=$(stamp $((from + QUERY_HOURS * 3600)))&limit=$QUERY_LIMIT&lastN=$((QUERY_HOURS * 60))"
  for b in cor scorpio; do
    up "$b"
    read -r inst lsecs rate <<<"$(loader "urn:ngsi-ld:Meter:{i}" Meter power $day0 60 1440 1440 "$QUERY_ENTITIES")"
    settle "$base/temporal/entities?type=Meter&attrs=power&options=aggregatedValues&aggrMethods=totalCount&timerel=after&timeAt=2000-01-01T00:00:00Z&limit=1000" \
      $((QUERY_ENTITIES > 1000 ? 1000 * 1440 : QUERY_ENTITIES * 1440))
    have=$n
    row load "$b" what=query instances=$inst seconds=$lsecs per_s=$rate counted=$have
    check GET "$q" 200
    read -r ents n <<<"$(helper instances "$work/answer")"
    seen[$b:query]="$ents $n"
    echo "$b query: $ents entities, $n instances" >&2
    load "$q" 1 "$SERVER_WARM" "${accept[@]}" >/dev/null
    load "$q" 1 "$WARM" "${accept[@]}" >/dev/null
    row query "$b" op=between-${QUERY_HOURS}h-limit$QUERY_LIMIT conns=1 entities=$ents instances=$n $(timed "$q" 1 "${accept[@]}")
    stop_all
  done
  same "query (entities instances)" query
fi

echo
echo "scorpio-temporal.sh done, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$results"
python3 - "$results" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 3 or f[1] not in ("cor", "scorpio"):
        continue
    kv = dict(x.split("=", 1) for x in f[2:] if "=" in x)
    key = (f[0], kv.get("op") or kv.get("what") or "", kv.get("conns", ""))
    rows.setdefault(key, {})[f[1]] = kv
print(f'{"operation":<34} {"cor":>12} {"Scorpio":>12} {"ratio":>8}')
def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None
def line(name, c, s, higher_better):
    cv, sv = num(c), num(s)
    ratio = "-"
    if cv and sv:
        ratio = f"{cv / sv:.1f}x" if higher_better else f"{sv / cv:.1f}x"
    print(f"{name:<34} {c if c is not None else '-':>12} {s if s is not None else '-':>12} {ratio:>8}")
for (part, op, conns), b in rows.items():
    c, s = b.get("cor", {}), b.get("scorpio", {})
    g = lambda kv, k: kv.get(k)
    label = f"{part} {op} {conns + ' conn' if conns else ''}".replace("  ", " ").strip()
    if part == "load":
        line(f"load {op}: instances/s", g(c, "per_s"), g(s, "per_s"), True)
        continue
    if part == "ingest":
        line(f"{label}: acked instances/s", g(c, "acked"), g(s, "acked"), True)
        line(f"{label}: recorded instances/s", g(c, "rec_per_s"), g(s, "rec_per_s"), True)
    else:
        line(f"{label}: req/s", g(c, "rps"), g(s, "rps"), True)
    line(f"{label}: p50 us", g(c, "p50"), g(s, "p50"), False)
    line(f"{label}: p99 us", g(c, "p99"), g(s, "p99"), False)
    line(f"{label}: CPU us/{'instance' if part == 'ingest' else 'request'}", g(c, "cpu"), g(s, "cpu"), False)
    for who, kv in (("cor", c), ("Scorpio", s)):
        if kv.get("non2xx", "0") not in ("0", "-1") or kv.get("errors", "0") not in ("0",):
            print(f"  !! {who}: errors={kv.get('errors')} non2xx={kv.get('non2xx')}")
print("ratio: cor / Scorpio for throughput, Scorpio / cor for latency and CPU (above 1: cor ahead)")
for line in open(sys.argv[1]):
    if line.startswith(("same answer size", "!!")) or " avg PT1H over " in line:
        print(line, end="")
PY
