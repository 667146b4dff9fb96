#!/usr/bin/env bash
# A notifying write (history § 10): PATCH of one attribute of the 20-attribute bench entity with
# one subscription matching every PATCH, the post-response phase as a coroutine of the loop vs on
# a worker (--coroutines 0), at 50 and at 1 connections, two rounds, same build, same run.
# The broker on core 0 with one loop; the notification receiver (NotifyReceiverMain, it counts
# and does nothing else) and the load (corRequest) on core 1.
#   benchmarks/notify.sh                          (about 3 minutes)
#   ROUNDS=1 DURATION=3 benchmarks/notify.sh      (a quick look)
# Its last line: "notify coroutine/worker at 50 connections: R" (R the req/s ratio, rounds pooled).
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"

ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-5}
WARM=${WARM:-2}
SERVER_WARM=${SERVER_WARM:-15}
port=18501
rport=18601
attrs20=urn:ngsi-ld:Bench:attrs20
# the broker on core 0, the rest on core 1 (an array, not a function: the pid started must be the JVM's)
core0=(); core1=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then core0=(taskset -c 0); core1=(taskset -c 1); fi
LOAD_PIN=("${core1[@]}")

echo "building..." >&2
build
results="$work/results"
: >"$results"
notify_bodies $rport

start receiver "${core1[@]}" "$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.NotifyReceiverMain --port $rport
receiver_pid=${pids[-1]}

# The receiver and the load generator warm up (JIT) against a broker of their own first: a cold
# receiver on the load's core made whichever phase ran first look slow.
echo "warming the receiver and the load generator" >&2
start broker "${core0[@]}" "$here/cor" java -jar "$BROKER_JAR" --host 127.0.0.1 --port $port --httpLoops 1 --store memory
broker_pid=${pids[-1]}
post "http://127.0.0.1:$port/ngsi-ld/v1/entities" "$work/attrs20.json"
post "http://127.0.0.1:$port/ngsi-ld/v1/subscriptions" "$work/sub.json"
load "http://127.0.0.1:$port/ngsi-ld/v1/entities/$attrs20/attrs/attr01" 50 "$SERVER_WARM" --method PATCH \
  --header 'Content-Type: application/json' --body-file "$work/patch.json" >/dev/null
kill "$broker_pid"; wait "$broker_pid" 2>/dev/null || true
pids=("$receiver_pid")

t0=$(date +%s)
for round in $(seq "$ROUNDS"); do
  for mode in coroutine worker; do
    echo "round $round: $mode" >&2
    flags=(); [ "$mode" = worker ] && flags=(--coroutines 0)
    start broker "${core0[@]}" "$here/cor" java -jar "$BROKER_JAR" --host 127.0.0.1 --port $port --httpLoops 1 --store memory "${flags[@]}"
    broker_pid=${pids[-1]}
    base="http://127.0.0.1:$port/ngsi-ld/v1"
    post "$base/entities" "$work/attrs20.json"
    post "$base/subscriptions" "$work/sub.json"
    url="$base/entities/$attrs20/attrs/attr01"
    patch=(--method PATCH --header 'Content-Type: application/json' --body-file "$work/patch.json")
    load "$url" 50 "$SERVER_WARM" "${patch[@]}" >/dev/null
    for conns in 50 1; do
      curl -s -X DELETE "http://127.0.0.1:$rport/stats" >/dev/null
      m=$(measure "$url" "$conns" "$WARM" "$DURATION" "${patch[@]}")
      sleep 1 # the last notifications in flight
      read -r notified nl50 nl99 nentities <<<"$(curl -s "http://127.0.0.1:$rport/stats")"
      failed=$(curl -s "http://127.0.0.1:$port/metrics" | awk '/^cor_ngsild_notifications_total\{outcome="(failed|overflowed)"\}/ {s += $2} END {print s + 0}')
      echo "$round $mode $conns $m $notified $nentities $nl50 $nl99 $failed" >>"$results"
    done
    kill "$broker_pid"; wait "$broker_pid" 2>/dev/null || true
    pids=("$receiver_pid")
  done
done

echo
echo "notify.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $( "$here/cor" java -version 2>&1 | head -1 ), ${DURATION}s per cell, $ROUNDS round(s), $(( $(date +%s) - t0 ))s"
python3 - "$results" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print(f'{"round":>5} {"phase":<9} {"conns":>5} {"req/s":>9} {"p50 us":>8} {"p99 us":>8} {"errors":>6} {"cpu us/req":>10} {"notified":>9} {"entities":>9} {"n p50 ms":>8} {"n p99 ms":>8} {"failed":>7}')
tot = {}
for r in rows:
    rnd, mode, conns, rps, p50, p99, err, cpu, notified, nent, nl50, nl99, failed = r
    tot.setdefault((mode, conns), []).append(float(rps))
    print(f'{rnd:>5} {mode:<9} {conns:>5} {float(rps):>9.0f} {float(p50):>8.0f} {float(p99):>8.0f} {err:>6} {cpu:>10} {notified:>9} {nent:>9} {nl50:>8} {nl99:>8} {failed:>7}')
co, wo = tot.get(("coroutine", "1")), tot.get(("worker", "1"))
print(f'notify coroutine/worker at 1 connection: {sum(co) / sum(wo):.2f}' if co and wo else 'notify coroutine/worker at 1 connection: -')
co, wo = tot.get(("coroutine", "50")), tot.get(("worker", "50"))
print(f'notify coroutine/worker at 50 connections: {sum(co) / sum(wo):.2f}' if co and wo else 'notify coroutine/worker at 50 connections: -')
PY
