# Shared by the benchmark scripts: start servers in the background, wait for them, measure with
# corRequest, read a process's CPU time, stop everything on exit. Source it; it needs $here.
set -euo pipefail

GW_JAR="$here/examples/gateway/target/cor-gateway.jar"
HELLO_JAR="$here/examples/hello/target/cor-hello.jar"
BENCH_JAR="$here/benchmarks/target/benchmarks.jar"
BROKER_JAR="$here/cor-server-launcher/target/cor-server.jar"
SHIPPED_JVM="@$here/cor-server-launcher/jvm.options" # the broker's JVM flags as ./cor run gives them
work=$(mktemp -d)
pids=()
LOAD_PIN=()

stop_all() {
  local p
  for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]:-}"; do [ -n "$p" ] && wait "$p" 2>/dev/null || true; done
  pids=()
}
cleanup() { stop_all; rm -rf "$work"; }
trap cleanup EXIT
trap 'echo "interrupted: stopping everything" >&2; exit 130' INT TERM

build() { # every module but the image (./cor image builds that)
  "$here/cor" mvn -q -DskipTests package -pl '!cor-image' >/dev/null
}

# free_port: a TCP port of 127.0.0.1 that nothing listens on now (the kernel's pick)
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start NAME COMMAND... : runs it in the background, waits for its "listening on" line
# (READY: another line to wait for; START_WAIT: seconds to wait, 15 by default)
start() {
  local name=$1; shift
  local ready=${READY:-listening on} wait=${START_WAIT:-15}
  "$@" >"$work/$name.log" 2>&1 &
  pids+=($!)
  local i
  for i in $(seq $((wait * 10))); do
    grep -q "$ready" "$work/$name.log" 2>/dev/null && return 0
    kill -0 "${pids[-1]}" 2>/dev/null || { echo "$name died:" >&2; cat "$work/$name.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "$name did not start in $wait s:" >&2; cat "$work/$name.log" >&2; exit 1
}

# attrs20_patch: the 20-attribute bench entity ($work/attrs20.json) and a PATCH of one attribute
# ($work/patch.json; corRequest's arguments for it in the array patch): the history benchmarks' write
attrs20_patch() {
  "$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.BenchEntitiesMain attrs20 >"$work/attrs20.json"
  printf '{"type": "Property", "value": 42.5}' >"$work/patch.json"
  patch=(--method PATCH --header 'Content-Type: application/json' --body-file "$work/patch.json")
}

# upsert_bodies N: a batch of N Ingest entities whose value corRequest changes per request ("V{seq}")
# in $work/upsert.json, and the same batch with a fixed value in $work/upsert0.json
upsert_bodies() {
  python3 - "$work" "$1" <<'PY'
import json, sys
w, n = sys.argv[1], int(sys.argv[2])
for name, value in (("upsert", "V{seq}"), ("upsert0", "first")):
    json.dump([{"id": f"urn:ngsi-ld:Ingest:{i:04d}", "type": "Ingest",
                "temperature": {"type": "Property", "value": value}} for i in range(n)], open(f"{w}/{name}.json", "w"))
PY
}

# post URL FILE: one POST of a JSON body (a broker's create), failing the run on anything but 201
post() {
  local code
  code=$(curl -s -o "$work/post.out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' --data-binary "@$2" "$1")
  [ "$code" = 201 ] || { echo "POST $1 answered $code: $(cat "$work/post.out")" >&2; exit 1; }
}

gateway() { # NAME ARGS...
  local name=$1; shift
  start "$name" "$here/cor" java -jar "$GW_JAR" --host 127.0.0.1 --httpLoops 1 "$@"
}

netty_node() { # NAME ARGS...
  local name=$1; shift
  start "$name" "$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.netty.NettyChainNode --host 127.0.0.1 --threads 1 "$@"
}

jcmd_of_cor_java() { echo "$("$here/cor" java -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.home/ { print $2 }')/bin/jcmd"; }
full_gc() { # PID: a full collection, so that a window measured next pays only for its own garbage
  "$(jcmd_of_cor_java)" "$1" GC.run >/dev/null
}
heap_used() { # PID -> used heap in bytes after a full GC (any collector's "used N[KMG]")
  full_gc "$1"
  "$(jcmd_of_cor_java)" "$1" GC.heap_info | python3 -c '
import re, sys
m = re.search(r"used (\d+)([KMG])", sys.stdin.read())
print(int(m.group(1)) * {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)] if m else -1)'
}

# cpu_ticks PID... : user+system clock ticks of those processes (and their threads) so far
cpu_ticks() {
  local total=0 p
  for p in "$@"; do
    local f; f=$(cut -d')' -f2 "/proc/$p/stat")
    total=$(( total + $(echo "$f" | awk '{print $12 + $13}') ))
  done
  echo "$total"
}

# the JVM behind each started server: ./cor execs java, so the pid is the JVM's (PIDS="PID ...":
# only those, when more servers are up than the one measured)
server_pids() { echo "${PIDS:-${pids[@]}}"; }

# load URL CONNS SECONDS [extra corRequest flags] -> prints "req/s p50 p99 errors requests" (µs)
# (LOAD_PIN, an array, prefixes the load generator's command: e.g. LOAD_PIN=(taskset -c 1);
# LOAD_WARMUP, seconds the generator runs first in the same process, uncounted: default 0)
load() {
  local url=$1 conns=$2 secs=$3; shift 3
  rm -f "$work/run.json" # a run that fails must not read as the one before it
  "${LOAD_PIN[@]}" "$here/cor" java -jar "$BENCH_JAR" corRequest --url "$url" --connections "$conns" --duration "$secs" \
    --warmup "${LOAD_WARMUP:-0}" --json "$work/run.json" "$@" >/dev/null 2>&1 || true
  python3 - "$work/run.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
    l = r["latency_us"]
    print(f'{r["requests_per_s"]} {l["p50"]} {l["p99"]} {r["errors"]} {r["requests"]}')
except Exception:
    print("0 0 0 -1 0")
PY
}

# notify_bodies RECEIVER_PORT: into $work, notify.sh's request bodies: attrs20.json (the bench
# entity), patch.json (one attribute) and sub.json (a subscription that every PATCH of it notifies
# to RECEIVER_PORT)
notify_bodies() {
  "$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.BenchEntitiesMain attrs20 >"$work/attrs20.json"
  printf '{"type": "Property", "value": 42.5}' >"$work/patch.json"
  cat >"$work/sub.json" <<JSON
{"id": "urn:ngsi-ld:Subscription:notify-bench", "type": "Subscription", "entities": [{"type": "Bench"}],
 "notification": {"endpoint": {"uri": "http://127.0.0.1:$1/notify"}}}
JSON
}

# thread_sched PID: one line per thread of PID, "name run_ns wait_ns" - the kernel's schedstat
# (time on a CPU, time runnable but waiting on a run queue) of each thread so far
thread_sched() {
  local t
  for t in /proc/"$1"/task/*; do
    printf '%s %s\n' "$(cat "$t/comm" 2>/dev/null)" "$(cut -d' ' -f1,2 "$t/schedstat" 2>/dev/null)"
  done | awk 'NF == 3'
}

# shape_bodies RECEIVER_PORT: into $work, the request bodies of the broker's shapes (shapes.sh, and
# the AOT training, aot-train.sh): small.json and attrs20.json (the bench entities), patch.json
# (one attribute), sub.json (a subscription that every PATCH of attrs20's attr01 notifies to
# RECEIVER_PORT), upd.json and bupdate.json (20 entities and their batch update), queried.json
# (20 of a type of their own), and the templates create.tmpl, bcreate.tmpl, bdelete.tmpl (see tagged)
shape_bodies() {
  local rport=$1
  "$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.BenchEntitiesMain small >"$work/small.json"
  "$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.BenchEntitiesMain attrs20 >"$work/attrs20.json"
  printf '{"type": "Property", "value": 42.5}' >"$work/patch.json"
  cat >"$work/sub.json" <<JSON
  {"id": "urn:ngsi-ld:Subscription:shapes", "type": "Subscription", "entities": [{"type": "Bench"}],
   "watchedAttributes": ["attr01"], "notification": {"endpoint": {"uri": "http://127.0.0.1:$rport/notify"}}}
JSON
  python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
def ent(i, t, prefix):
    return {"id": f"{prefix}{i:02d}", "type": t, "temperature": {"type": "Property", "value": 20.5 + i},
            "name": {"type": "Property", "value": f"{t} {i}"}}
# a batch of 20 new entities ({seq}: the request's number, corRequest) and the delete of the same 20
json.dump([ent(i, "Batch", "urn:ngsi-ld:Batch:TAG{seq}-") for i in range(1, 21)], open(f"{w}/bcreate.tmpl", "w"))
json.dump([f"urn:ngsi-ld:Batch:TAG{{seq}}-{i:02d}" for i in range(1, 21)], open(f"{w}/bdelete.tmpl", "w"))
# the 20 a batch update rewrites, and the 20 a query by type returns (both created once per broker)
json.dump([ent(i, "Upd", "urn:ngsi-ld:Upd:") for i in range(1, 21)], open(f"{w}/upd.json", "w"))
json.dump([dict(ent(i, "Upd", "urn:ngsi-ld:Upd:"), temperature={"type": "Property", "value": 30.5})
           for i in range(1, 21)], open(f"{w}/bupdate.json", "w"))
json.dump([ent(i, "Queried", "urn:ngsi-ld:Queried:") for i in range(1, 21)], open(f"{w}/queried.json", "w"))
open(f"{w}/create.tmpl", "w").write('{"id": "urn:ngsi-ld:Created:TAG{seq}", "type": "Created", '
                                    '"name": {"type": "Property", "value": "new"}}')
PY
}

# shape_fixtures BASE: creates on the broker at BASE (.../ngsi-ld/v1) what the shapes read and
# update: the two bench entities, the subscription, the 20 entities of upd.json and of queried.json
shape_fixtures() {
  post "$1/entities" "$work/small.json"
  post "$1/entities" "$work/attrs20.json"
  post "$1/subscriptions" "$work/sub.json"
  post "$1/entityOperations/create" "$work/upd.json"
  post "$1/entityOperations/create" "$work/queried.json"
}

# tagged KIND TAG: $work/KIND.tmpl with TAG replaced - ids no other load on the same broker used
# (corRequest's {seq} restarts at 1 in each run); prints the file made
tagged() { sed "s/TAG/$2/g" "$work/$1.tmpl" >"$work/$1-$2.json"; echo "$work/$1-$2.json"; }
# last_run FIELD: a field of the last load's JSON result (requests, errors, non_2xx_3xx...); -1 when none
last_run() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$work/run.json" "$1" 2>/dev/null || echo -1
}

# measure URL CONNS WARM SECS [flags] -> "req/s p50 p99 errors cpu_us_per_req" with the servers' CPU
# (WARM 0: no load run before the measured one)
measure() {
  local url=$1 conns=$2 warm=$3 secs=$4; shift 4
  if [ "$warm" -gt 0 ]; then load "$url" "$conns" "$warm" "$@" >/dev/null; fi
  local before after hz
  hz=$(getconf CLK_TCK)
  before=$(cpu_ticks $(server_pids))
  read -r rps p50 p99 errors requests <<<"$(load "$url" "$conns" "$secs" "$@")"
  after=$(cpu_ticks $(server_pids))
  local cpu
  cpu=$(awk -v t=$((after - before)) -v hz="$hz" -v n="$requests" 'BEGIN { if (n > 0) printf "%.1f", t * 1e6 / hz / n; else print "-" }')
  echo "$rps $p50 $p99 $errors $cpu"
}
