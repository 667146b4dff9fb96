#!/usr/bin/env bash
# The broker under each collector, one heap setting for all: for each collector the launcher
# (cor-server.jar, its defaults, --store memory; STORE=durable: a fresh data directory, fsync
# always) is started and given, at 16 connections:
#   creates of a small entity (corRequest's {seq} in its id), after 20 000 of warm-up (JIT) that
#   stay: ENTITIES of them (default 1 000 000) in SLICES slices (default 4: 0->250k->...->1M),
#   the first half of each slice as fast as it goes (closed loop: the throughput), the second at
#   CREATE_RATE/s (open loop, default 5000: the latency a caller sees while the collector works);
#   then, with them all live, PATCH of one attribute of the 20-attribute bench entity and GET of
#   the small one (closed loop), and the GET again in an open loop at half the closed loop's rate.
# Per row: req/s, p50, p99, p99.9 (corRequest), the broker's CPU per request (/proc/PID/stat), and
# from the JVM's own log (-Xlog:gc*,safepoint) the longest safepoint in the row's window - every
# collector's stop-the-world pauses are safepoints - the safepoints over 1 ms, and the allocation
# stalls, degenerated and full collections. Last, the broker's CPU by thread kind (the collector's
# share). Rounds alternate the collectors (A B C A B C).
#   benchmarks/gc.sh                      (3 collectors x 2 rounds: about 25 minutes)
#   ENTITIES=100000 ROUNDS=1 DURATION=3 benchmarks/gc.sh      (a quick look, about 4 minutes)
#   COLLECTORS="g1 zgc" HEAP=-Xmx6g STORE=durable GCLOGS=/tmp/gc benchmarks/gc.sh
# COLLECTORS: g1 (no flag: the JVM's default, G1 on 2 cores or more - what the launcher ran with
# before cor-server-launcher/jvm.options), zgc (-XX:+UseZGC: generational, JDK 25's only ZGC, what
# jvm.options gives), shenandoah (-XX:+UseShenandoahGC, listed when this JDK has it), or
# NAME:FLAG,FLAG... for a variant (e.g. zgc8g:-XX:+UseZGC,-Xmx8g). HEAP: the heap flags, the same
# for every collector (default -Xmx4g). JVM_EXTRA: more JVM flags for every run. GCLOGS=DIR keeps
# each run's JVM log there. It stops everything it started, also on Ctrl-C.
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"

STORE=${STORE:-memory}
ENTITIES=${ENTITIES:-1000000}
SLICES=${SLICES:-4}
ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-10} # seconds measured per PATCH / GET cell
WARM=${WARM:-3}          # seconds of the same load before each PATCH / GET cell
CREATE_RATE=${CREATE_RATE:-5000} # creates/s of each slice's open-loop half
HEAP=${HEAP:--Xmx4g}
GCLOGS=${GCLOGS:-}
port=18541

declare -A gc_flags=([g1]="" [zgc]="-XX:+UseZGC" [shenandoah]="-XX:+UseShenandoahGC")
if [ -z "${COLLECTORS:-}" ]; then
  COLLECTORS="g1 zgc"
  "$here/cor" java -XX:+UseShenandoahGC -version >/dev/null 2>&1 && COLLECTORS="$COLLECTORS shenandoah"
fi
for c in $COLLECTORS; do # NAME, or NAME:FLAG,FLAG... for a variant of one's own
  case $c in
    *:*) gc_flags[${c%%:*}]=${c#*:}; gc_flags[${c%%:*}]=${gc_flags[${c%%:*}]//,/ } ;;
    *) [ -n "${gc_flags[$c]+set}" ] || { echo "unknown collector $c (${!gc_flags[*]}, or NAME:FLAGS)" >&2; exit 2; } ;;
  esac
done
COLLECTORS=$(for c in $COLLECTORS; do echo "${c%%:*}"; done)
[ -n "$GCLOGS" ] && mkdir -p "$GCLOGS"

echo "building..." >&2
build
shape_bodies 9 # small.json, attrs20.json, patch.json and create.tmpl (the port is the unused subscription's)
results="$work/results"
: >"$results"
json=(--method POST --header 'Content-Type: application/json')
now() { date +%s.%N; }

# row ROUND COLLECTOR OP SLICE T0 T1 MEASURE: one line of $results, p99.9 from the last run's JSON
row() {
  local p999
  p999=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["latency_us"]["p99_9"])' "$work/run.json" 2>/dev/null || echo 0)
  echo "$1 $2 $3 $4 $5 $6 $7 $p999" >>"$results"
}

# thread_cpu ROUND COLLECTOR PID: the JVM's CPU seconds so far by thread kind, from /proc/PID/task
thread_cpu() {
  local t hz; hz=$(getconf CLK_TCK)
  for t in /proc/"$3"/task/*; do
    echo "$(cut -d')' -f2 "$t/stat" | awk '{print $12 + $13}') $(cat "$t/comm")"
  done | python3 -c '
import re, sys
hz, rnd, c = float(sys.argv[1]), sys.argv[2], sys.argv[3]
kinds = {"collector": r"^(GC Thread|G1 |Z[A-Z]|Shenandoah|Conc)", "JIT": r"^C[12] Compiler", "VM Thread": r"^VM Thread"}
sums, total = {}, 0.0
for line in sys.stdin:
    ticks, name = line.rstrip("\n").split(" ", 1)
    s = int(ticks) / hz
    total += s
    kind = next((k for k, rx in kinds.items() if re.match(rx, name)), "the rest (loops, workers...)")
    sums[kind] = sums.get(kind, 0.0) + s
print(f"{rnd} {c}: {total:.0f} s of CPU, " + ", ".join(f"{k} {v:.0f} s ({100 * v / total:.0f} %)" for k, v in sums.items()))
' "$hz" "$1" "$2"
}

t0=$(date +%s)
for round in $(seq "$ROUNDS"); do
  for c in $COLLECTORS; do
    echo "round $round: $c" >&2
    log="$work/jvm-$round-$c.log"
    flags=(--host 127.0.0.1 --port $port)
    if [ "$STORE" = memory ]; then flags+=(--store memory); else flags+=(--dataDir "$work/data"); fi
    # shellcheck disable=SC2086 # HEAP, JVM_EXTRA and the collector's flags are lists of flags
    start broker "$here/cor" java $HEAP ${gc_flags[$c]} ${JVM_EXTRA:-} \
      "-Xlog:gc*,safepoint:file=$log:utctime,level,tags" -jar "$BROKER_JAR" "${flags[@]}"
    base="http://127.0.0.1:$port/ngsi-ld/v1"
    post "$base/entities" "$work/small.json"
    post "$base/entities" "$work/attrs20.json"
    load "$base/entities" 16 300 --requests 20000 "${json[@]}" --body-file "$(tagged create W)" >/dev/null
    per=$((ENTITIES / SLICES))
    for s in $(seq "$SLICES"); do
      sl="$(( (s - 1) * per / 1000 ))k-$(( s * per / 1000 ))k"
      a=$(now) # the slice's first half as fast as it goes: the throughput
      m=$(measure "$base/entities" 16 0 600 --requests $((per / 2)) "${json[@]}" --body-file "$(tagged create "C$s")")
      row "$round" "$c" create "$sl/closed" "$a" "$(now)" "$m"
      a=$(now) # its second half at CREATE_RATE: the latency a caller sees when the collector stops the broker
      m=$(measure "$base/entities" 16 0 $((per / 2 / CREATE_RATE)) --rate "$CREATE_RATE" "${json[@]}" --body-file "$(tagged create "O$s")")
      row "$round" "$c" create "$sl/open" "$a" "$(now)" "$m"
    done
    patch_url="$base/entities/urn:ngsi-ld:Bench:attrs20/attrs/attr01"
    a=$(now)
    m=$(measure "$patch_url" 16 "$WARM" "$DURATION" --method PATCH --header 'Content-Type: application/json' --body-file "$work/patch.json")
    row "$round" "$c" PATCH - "$a" "$(now)" "$m"
    get_url="$base/entities/urn:ngsi-ld:Bench:small"
    a=$(now)
    m=$(measure "$get_url" 16 "$WARM" "$DURATION")
    row "$round" "$c" GET closed "$a" "$(now)" "$m"
    rate=$(awk -v r="$(echo "$m" | cut -d' ' -f1)" 'BEGIN { printf "%d", r / 2 }')
    a=$(now)
    m=$(measure "$get_url" 16 "$WARM" "$DURATION" --rate "$rate")
    row "$round" "$c" GET "open@$rate" "$a" "$(now)" "$m"
    thread_cpu "$round" "$c" "${pids[-1]}" >>"$work/threads"
    stop_all
    rm -rf "$work/data"
    [ -n "$GCLOGS" ] && cp "$log" "$GCLOGS/"
    sed -i "s|^\\($round $c .*\\)\$|\\1 $log|" "$results"
    python3 - "$results" "$log" <<'PY' # the log's pauses summarised now: the file goes with the next run's cleanup
import re, sys
from datetime import datetime
results, log = sys.argv[1], sys.argv[2]
stamp = re.compile(r'^\[([^\]]+)\]')
sp = re.compile(r'Safepoint "([^"]+)".*Total: (\d+) ns')
bad = re.compile(r'Allocation Stall \(|Pause Degenerated|Pause Full|To-space exhausted|Evacuation Failure')
events = []  # (time, safepoint ms or None, stalled)
for line in open(log, errors="replace"):
    m = stamp.match(line)
    if not m:
        continue
    t = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
    s = sp.search(line)
    if s:
        events.append((t, int(s.group(2)) / 1e6, False))
    elif bad.search(line):
        events.append((t, None, True))
out = []
for l in open(results):
    f = l.split()
    if len(f) == 13 and f[-1] == log:  # round c op slice t0 t1 rps p50 p99 err cpu p999 log
        a, b = float(f[4]), float(f[5])
        w = [e for e in events if a <= e[0] <= b]
        pauses = [e[1] for e in w if e[1] is not None]
        f[-1] = f'{max(pauses, default=0):.1f} {sum(1 for p in pauses if p > 1):d} {sum(1 for e in w if e[2]):d}'
        l = " ".join(f) + "\n"
    out.append(l)
open(results, "w").writelines(out)
PY
  done
done

echo
echo "gc.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $("$here/cor" java -version 2>&1 | sed -n 2p), store $STORE," \
  "heap $HEAP${JVM_EXTRA:+ (also $JVM_EXTRA)}, $ENTITIES entities in $SLICES slices, creates at $CREATE_RATE/s in the open halves," \
  "${DURATION}s per PATCH/GET cell," \
  "$ROUNDS round(s), $(( $(date +%s) - t0 ))s, load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print(f'{"round":>5} {"collector":<10} {"op":<6} {"slice":<16} {"req/s":>8} {"p50 us":>8} {"p99 us":>8} {"p99.9 us":>9} {"cpu us/req":>10} {"max pause ms":>12} {">1ms":>5} {"stalls":>6}')
for r in rows:
    rnd, c, op, sl, _, _, rps, p50, p99, err, cpu, p999, pmax, over, stalls = r
    note = f'  ({err} errors)' if err not in ("0", "-1") else ("  (no result)" if err == "-1" else "")
    print(f'{rnd:>5} {c:<10} {op:<6} {sl:<16} {float(rps):>8.0f} {float(p50):>8.0f} {float(p99):>8.0f} {float(p999):>9.0f} {cpu:>10} {pmax:>12} {over:>5} {stalls:>6}{note}')
PY
echo
echo "the broker's CPU over the whole run, by thread (from /proc/PID/task, just before the stop):"
cat "$work/threads"
