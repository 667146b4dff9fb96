#!/usr/bin/env bash
# notify.sh's notifying write (PATCH of one attribute of the 20-attribute bench entity, one
# subscription matching every PATCH, the post-response phase as a coroutine of the loop vs on a
# worker with --coroutines 0) while other processes compete for the same two cores: COMPETE
# busy loops (python3, nothing to install). Each cell a fresh broker (pinned to core 0 as in
# notify.sh unless the cell says otherwise), the receiver and the load on core 1, 50 connections.
# Besides req/s, the broker's own CPU ("cores": its CPU seconds per second), the whole machine's
# busy cores over the same seconds (/proc/stat: above the broker's, the load, the receiver and
# the competitors, it is someone else's), and the kernel's schedstat of the broker's threads over the
# measured seconds, per request: time on a CPU ("run") and time runnable but waiting on a run
# queue ("wait"), for the loop threads (cor-http-N), the workers (cor-worker-N) and the rest.
# Cells (CELLS=base, ops or "base ops"):
#   base - quiet: no competitors; same: COMPETE busy loops in the broker's own scheduling group
#          (same session, so the kernel shares the cores among threads); own: the busy loops in
#          a session of their own (autogroup: the kernel shares among sessions first)
#   ops  - what an operator can change, under "same": --httpLoops 2 and 4, --workers 4, the
#          broker alone on core 0 (the busy loops on core 1), the broker at nice -5, and the
#          broker not pinned
#   benchmarks/contended.sh                                  (about 25 minutes)
#   ROUNDS=1 DURATION=3 SERVER_WARM=5 CELLS=base benchmarks/contended.sh   (a quick look, 3 min)
# Its last line: "contended coroutine/worker at 50 connections: quiet Q, same group S, own session O"
# (req/s ratios, rounds pooled).
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"

ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-5}
WARM=${WARM:-2}
SERVER_WARM=${SERVER_WARM:-10}
COMPETE=${COMPETE:-4}
CONNS=${CONNS:-50}
CELLS=${CELLS:-base ops}
port=18511
rport=18611
attrs20=urn:ngsi-ld:Bench:attrs20
[ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null || { echo "needs taskset and 2 cores" >&2; exit 1; }
LOAD_PIN=(taskset -c 1)

# a cell: LABEL MODE COMPETITORS GROUP BROKER_CPUS COMPETITOR_CPUS BROKER_NICE [broker flags]
cells() {
  local c=$COMPETE
  if [[ " $CELLS " == *" base "* ]]; then
    echo "quiet coroutine 0 - 0 - 0"
    echo "quiet worker 0 - 0 - 0"
    echo "same coroutine $c same 0 all 0"
    echo "same worker $c same 0 all 0"
    echo "own coroutine $c own 0 all 0"
    echo "own worker $c own 0 all 0"
  fi
  if [[ " $CELLS " == *" ops "* ]]; then
    echo "loops2 coroutine $c same 0 all 0 --httpLoops 2"
    echo "loops4 coroutine $c same 0 all 0 --httpLoops 4"
    echo "workers4 worker $c same 0 all 0 --workers 4"
    echo "alone coroutine $c same 0 1 0"
    echo "alone worker $c same 0 1 0"
    echo "nice-5 coroutine $c same 0 all -5"
    echo "unpinned coroutine $c same all all 0"
  fi
}

server_pids() { echo "$broker_pid"; } # measure's CPU: the broker's alone

# busy_ticks: the machine's busy clock ticks so far, all cores (/proc/stat: all but idle and iowait)
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }

# compete N GROUP CPUS: N busy loops; GROUP own puts each in a session (an autogroup) of its own
compete() {
  local n=$1 group=$2 cpus=$3 i code='while True: pass'
  [ "$group" = own ] && code=$'import os\nos.setsid()\nwhile True: pass'
  local pin=(); [ "$cpus" != all ] && pin=(taskset -c "$cpus")
  for i in $(seq "$n"); do
    "${pin[@]}" python3 -c "$code" &
    pids+=($!)
  done
}

# sched_sum BEFORE AFTER REQUESTS: per request (us) run and wait of loops, workers and the rest
sched_sum() {
  python3 - "$@" <<'PY'
import sys, re
def read(f):
    d = {}
    for line in open(f):
        name, run, wait = line.split()
        d.setdefault(name, [0, 0])
        d[name][0] += int(run); d[name][1] += int(wait)
    return d
b, a, n = read(sys.argv[1]), read(sys.argv[2]), int(sys.argv[3])
tot = {"loop": [0, 0], "worker": [0, 0], "other": [0, 0]}
for name, (run, wait) in a.items():
    r0, w0 = b.get(name, [0, 0])
    k = "loop" if re.fullmatch(r"cor-http-\d+", name) else "worker" if name.startswith("cor-worker-") else "other"
    tot[k][0] += run - r0; tot[k][1] += wait - w0
f = lambda ns: f"{ns / 1000 / n:.1f}" if n > 0 else "-"
print(" ".join(f(tot[k][i]) for k in ("loop", "worker", "other") for i in (0, 1)))
PY
}

echo "building..." >&2
build
results="$work/results"
: >"$results"
notify_bodies $rport

start receiver taskset -c 1 "$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.NotifyReceiverMain --port $rport
receiver_pid=${pids[-1]}
patch=(--method PATCH --header 'Content-Type: application/json' --body-file "$work/patch.json")

# stop_cell: stops the cell's broker and competitors; the receiver stays, warm
stop_cell() {
  local p
  for p in "${pids[@]}"; do [ "$p" != "$receiver_pid" ] && kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do [ "$p" != "$receiver_pid" ] && wait "$p" 2>/dev/null || true; done
  pids=("$receiver_pid")
}

# broker MODE CPUS NICE FLAGS...: a fresh broker with the entity and the subscription
broker() {
  local mode=$1 cpus=$2 nice=$3; shift 3
  local pre=(nice -n "$nice"); [ "$cpus" != all ] && pre+=(taskset -c "$cpus")
  local flags=(); [ "$mode" = worker ] && flags=(--coroutines 0)
  start broker "${pre[@]}" "$here/cor" java -jar "$BROKER_JAR" --host 127.0.0.1 --port $port --httpLoops 1 \
    --store memory "${flags[@]}" "$@"
  broker_pid=${pids[-1]}
  post "http://127.0.0.1:$port/ngsi-ld/v1/entities" "$work/attrs20.json"
  post "http://127.0.0.1:$port/ngsi-ld/v1/subscriptions" "$work/sub.json"
}
url="http://127.0.0.1:$port/ngsi-ld/v1/entities/$attrs20/attrs/attr01"

# The receiver and the load generator warm up (JIT) against a broker of their own first (notify.sh)
echo "warming the receiver and the load generator" >&2
broker coroutine 0 0
load "$url" "$CONNS" "$SERVER_WARM" "${patch[@]}" >/dev/null
stop_cell

mapfile -t cell_list < <(cells)
t0=$(date +%s)
for round in $(seq "$ROUNDS"); do
  for cell in "${cell_list[@]}"; do
    read -r label mode n group bcpus ccpus nice flags <<<"$cell"
    echo "round $round: $label $mode" >&2
    # shellcheck disable=SC2086 # flags: the cell's broker flags, words
    broker "$mode" "$bcpus" "$nice" $flags
    load "$url" "$CONNS" "$SERVER_WARM" "${patch[@]}" >/dev/null # JIT, before the competition
    [ "$n" -gt 0 ] && compete "$n" "$group" "$ccpus"
    load "$url" "$CONNS" "$WARM" "${patch[@]}" >/dev/null
    curl -s -X DELETE "http://127.0.0.1:$rport/stats" >/dev/null
    thread_sched "$broker_pid" >"$work/sched.before"
    b0=$(busy_ticks); w0=$(date +%s%N)
    m=$(measure "$url" "$CONNS" 0 "$DURATION" "${patch[@]}")
    b1=$(busy_ticks); w1=$(date +%s%N)
    thread_sched "$broker_pid" >"$work/sched.after"
    busy=$(awk -v t=$((b1 - b0)) -v hz="$(getconf CLK_TCK)" -v ns=$((w1 - w0)) 'BEGIN { printf "%.2f", t / hz / (ns / 1e9) }')
    s=$(sched_sum "$work/sched.before" "$work/sched.after" "$(last_run requests)")
    stop_cell
    sleep 1 # the last notifications in flight
    read -r notified _ <<<"$(curl -s "http://127.0.0.1:$rport/stats")"
    echo "$round $label $mode $m $s $notified $busy" >>"$results"
  done
done

echo
echo "contended.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $( "$here/cor" java -version 2>&1 | head -1 ), COMPETE=$COMPETE busy loops, $CONNS connections, ${DURATION}s per cell, $ROUNDS round(s), $(( $(date +%s) - t0 ))s"
python3 - "$results" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print(f'{"round":>5} {"cell":<10} {"phase":<9} {"req/s":>7} {"p50 us":>7} {"p99 us":>7} {"err":>4} {"cpu us/req":>10} {"cores":>5}'
      f' {"loop run":>8} {"loop wait":>9} {"wrk run":>7} {"wrk wait":>8} {"oth run":>7} {"oth wait":>8} {"notified":>8} {"busy":>5}')
tot = {}
for r in rows:
    rnd, label, mode, rps, p50, p99, err, cpu = r[:8]
    lr, lw, wr, ww, orun, ow, notified, busy = r[8:16]
    tot.setdefault((label, mode), []).append(float(rps))
    cores = f'{float(cpu) * float(rps) / 1e6:.2f}' if cpu != '-' else '-'
    print(f'{rnd:>5} {label:<10} {mode:<9} {float(rps):>7.0f} {float(p50):>7.0f} {float(p99):>7.0f} {err:>4} {cpu:>10} {cores:>5}'
          f' {lr:>8} {lw:>9} {wr:>7} {ww:>8} {orun:>7} {ow:>8} {notified:>8} {busy:>5}')
print("(cores: the broker's CPU s/s; run / wait: us per request on a CPU / waiting on a run queue - loops,"
      " workers, the broker's other threads; notified: notifications the receiver took; busy: the machine's busy cores)")
def mean(k): v = tot.get(k); return sum(v) / len(v) if v else None
quiet = mean(("quiet", "worker"))
for label in dict.fromkeys(l for l, _ in tot):
    for mode in ("coroutine", "worker"):
        m = mean((label, mode))
        if m and quiet:
            print(f'{label:<10} {mode:<9} mean {m:>7.0f} req/s, {m / quiet:.2f} of the quiet worker')
def ratio(label):
    co, wo = tot.get((label, "coroutine")), tot.get((label, "worker"))
    return f'{sum(co) / sum(wo):.2f}' if co and wo and len(co) == len(wo) else '-'
print(f'contended coroutine/worker at 50 connections: quiet {ratio("quiet")}, same group {ratio("same")}, own session {ratio("own")}')
PY
