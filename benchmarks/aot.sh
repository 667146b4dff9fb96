#!/usr/bin/env bash
# The AOT cache (./cor aot-train: JEP 483/514/515) against none, same jar, same run: the broker
# (its defaults: the durable store, --fsync always, coroutines on; one loop, pinned to core 0;
# the load on core 1), REPS times each, alternating which goes first:
#   first answer  - ms from the JVM's launch to the first answered GET /ngsi-ld/v1/types
#                   (a poller connects every millisecond)
#   first 5 s     - GETs of the 20-attribute bench entity answered in the first FIRST seconds of
#                   load (16 connections), the load started at the first answer (the entity created
#                   just before): the JIT's warm-up, where the cache's profiles should show
#   steady        - req/s and p99 of the same GET after STEADY_WARM more seconds of it (which
#                   must not get worse with the cache)
# The cache is trained by benchmarks/aot-train.sh (what ./cor aot-train runs) into this run's
# scratch directory: the one beside the jar is left alone. Medians over the repetitions.
#   benchmarks/aot.sh                                   (about 6 minutes)
#   REPS=1 STEADY_WARM=3 STEADY=2 benchmarks/aot.sh      (a quick look, about 2 minutes)
#   NOPROF=1 benchmarks/aot.sh   (a third arm: the cache without replaying its method profiles)
# Its last line: "aot cache/none, first 5 s: R (first answer A ms vs B ms)".
# It stops everything it started, also on Ctrl-C.
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"

REPS=${REPS:-5}
FIRST=${FIRST:-5}
STEADY_WARM=${STEADY_WARM:-20}
STEADY=${STEADY:-5}
port=18541
attrs20=urn:ngsi-ld:Bench:attrs20
core0=(); core1=(); pinned="not pinned (taskset missing or one core)"
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then core0=(taskset -c 0); core1=(taskset -c 1); pinned="broker on core 0, load on core 1"; fi
LOAD_PIN=("${core1[@]}")

# the cache of this run (aot-train builds first, so this script does not)
aot="$work/cor-server.aot"
echo "training the cache (benchmarks/aot-train.sh)..." >&2
COR_AOT_CACHE="$aot" AOT_TRAIN_PORT=$((port + 1)) "$here/benchmarks/aot-train.sh" 2>"$work/train.log" \
  || { cat "$work/train.log" >&2; exit 1; }
java_bin=$("$here/cor" java -XshowSettings:properties -version 2>&1 | awk '$1 == "java.home" { print $3 }')/bin/java
"$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.BenchEntitiesMain attrs20 >"$work/attrs20.json"
results="$work/results"
: >"$results"

# first_answer T0_NS: polls until GET /ngsi-ld/v1/types answers 200; prints ms since T0_NS
first_answer() {
  python3 - "$1" "$port" <<'PY'
import socket, sys, time
t0, port = int(sys.argv[1]), int(sys.argv[2])
req = b"GET /ngsi-ld/v1/types HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
while True:
    if time.time_ns() - t0 > 60e9:
        print("-1"); sys.exit(0)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(req)
            head = s.recv(64)
            if head.startswith(b"HTTP/1.1 200"):
                print(f"{(time.time_ns() - t0) / 1e6:.0f}"); sys.exit(0)
    except OSError:
        pass
    time.sleep(0.001)
PY
}

t0=$(date +%s)
loads=""
for rep in $(seq "$REPS"); do
  arms="cache none${NOPROF:+ noprof}"; [ $((rep % 2)) = 0 ] && arms="${NOPROF:+noprof }none cache"
  for arm in $arms; do
    echo "rep $rep: $arm (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    loads="$loads $(cut -d' ' -f1 /proc/loadavg)"
    jvm=(); [ "$arm" = cache ] && jvm=("-XX:AOTCache=$aot" -XX:AOTMode=on) # on: a cache it cannot map is an error, not a silent "none"
    # noprof: the same cache with its method profiles (JEP 515) not replayed - classes loaded and linked only (JEP 483)
    [ "$arm" = noprof ] && jvm=("-XX:AOTCache=$aot" -XX:AOTMode=on -XX:+UnlockDiagnosticVMOptions -XX:-AOTReplayTraining)
    rm -rf "$work/data"
    launched=$(date +%s%N)
    "${core0[@]}" "$java_bin" "${jvm[@]}" -jar "$BROKER_JAR" --host 127.0.0.1 --port $port --httpLoops 1 \
      --dataDir "$work/data" >"$work/broker.log" 2>&1 &
    pids+=($!)
    broker_pid=$!
    first=$(first_answer "$launched")
    [ "$first" != -1 ] || { echo "the broker never answered:" >&2; cat "$work/broker.log" >&2; exit 1; }
    post "http://127.0.0.1:$port/ngsi-ld/v1/entities" "$work/attrs20.json"
    url="http://127.0.0.1:$port/ngsi-ld/v1/entities/$attrs20"
    LOAD_WARMUP=0 load "$url" 16 "$FIRST" >/dev/null
    in_first=$(last_run requests)
    read -r rps _ p99 errors _ <<<"$(LOAD_WARMUP=$STEADY_WARM load "$url" 16 "$STEADY")"
    kill "$broker_pid"; wait "$broker_pid" 2>/dev/null || true
    pids=()
    echo "$rep $arm $first $in_first $rps $p99 $errors" >>"$results"
  done
done

echo
echo "aot.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores ($pinned), $("$java_bin" -version 2>&1 | head -1),"
echo "  $REPS repetitions, first ${FIRST}s, steady ${STEADY}s after ${STEADY_WARM}s, $(( $(date +%s) - t0 ))s; load (1 min) at each start:$loads"
echo "  cache: $(du -h "$aot" | cut -f1), $(grep -o '[0-9]* classes left out' "$work/train.log" || echo '? classes left out')"
python3 - "$results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print(f'{"rep":>3} {"arm":<6} {"first answer ms":>15} {"GETs in first 5 s":>17} {"steady req/s":>12} {"steady p99 us":>13} {"errors":>6}')
by = {}
for rep, arm, first, in_first, rps, p99, err in rows:
    by.setdefault(arm, []).append((float(first), float(in_first), float(rps), float(p99)))
    print(f'{rep:>3} {arm:<6} {first:>15} {in_first:>17} {float(rps):>12.0f} {float(p99):>13.0f} {err:>6}')
med = {arm: [statistics.median(col) for col in zip(*v)] for arm, v in by.items()}
print()
print(f'{"median":<12} {"first answer ms":>15} {"GETs in first 5 s":>17} {"steady req/s":>12} {"steady p99 us":>13}')
for arm in ("cache", "noprof", "none"):
    if arm in med:
        f, n, r, p = med[arm]
        print(f'{arm:<12} {f:>15.0f} {n:>17.0f} {r:>12.0f} {p:>13.0f}')
if "cache" in med and "none" in med:
    c, n = med["cache"], med["none"]
    print(f'{"cache/none":<12} {c[0] / n[0]:>15.2f} {c[1] / n[1]:>17.2f} {c[2] / n[2]:>12.2f} {c[3] / n[3]:>13.2f}')
    if "noprof" in med:
        q = med["noprof"]
        print(f'{"noprof/none":<12} {q[0] / n[0]:>15.2f} {q[1] / n[1]:>17.2f} {q[2] / n[2]:>12.2f} {q[3] / n[3]:>13.2f}')
    print(f'aot cache/none, first 5 s: {c[1] / n[1]:.2f} (first answer {c[0]:.0f} ms vs {n[0]:.0f} ms)')
PY
