#!/usr/bin/env bash
# Where GET's open-loop tail comes from: the same GET (the small entity, 16 connections, an open
# loop - each request due at a fixed rate, its latency counted from when it was due) against
#   floor      benchmarks/src/main/c/floor.c: a C epoll server that answers the same bytes and does
#              nothing else - what the generator, the kernel and the two cores cost by themselves
#   hello      examples/hello (cor-http, two loops): a JVM server with next to no work a request
#   broker-g1  the launcher (its defaults: the durable store, a fresh data directory) under G1,
#              the JVM's default collector when nothing is given (plain java -jar)
#   broker     the launcher as shipped: java @cor-server-launcher/jvm.options -jar (generational ZGC)
# at PCTS percent (default "10 25 50") of the shipped broker's closed-loop peak, measured first in
# the same run: the same rates for all four. Per cell: p50, p99, p99.9 (corRequest), the p99 of
# the generator's own lag in sending (how late after its due time a request left), the server's
# CPU per request, the time its threads spent runnable but waiting for a core (the kernel's
# schedstat, per request: a loop's run-queue wait is latency an open loop charges to every request
# due meanwhile), and for the JVMs the longest safepoint in the window (-Xlog:safepoint): every
# stop-the-world pause is one. Rounds alternate the servers.
#   benchmarks/tail.sh                            (2 rounds: about 10 minutes)
#   ROUNDS=1 DURATION=4 PCTS=50 benchmarks/tail.sh    (a quick look)
# Needs gcc (installed with apt-get when missing). Targets 127.0.0.1 only; stops what it started.
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"

DURATION=${DURATION:-8}
ROUNDS=${ROUNDS:-2}
PCTS=${PCTS:-"10 25 50"}
SERVERS=${SERVERS:-"floor hello broker-g1 broker"}
port=18571

if ! command -v gcc >/dev/null; then
  echo "installing gcc..." >&2
  (apt-get update -qq && apt-get install -y -qq gcc) >/dev/null
fi
echo "building..." >&2
build
gcc -O2 -o "$work/floor" "$here/benchmarks/src/main/c/floor.c"
shape_bodies 9 # small.json
results="$work/results"
: >"$results"
broker_path=/ngsi-ld/v1/entities/urn:ngsi-ld:Bench:small

# serve NAME: starts that server on $port; sets url and splog (the JVM's safepoint log, or "")
serve() {
  splog="$work/$1-safepoints.log"
  rm -rf "$work/data" "$splog"
  local log=(-Xlog:safepoint:file="$splog":utctime)
  case $1 in
    floor) splog=""; start floor "$work/floor" $port; url=http://127.0.0.1:$port$broker_path ;;
    hello) start hello "$here/cor" java "${log[@]}" -jar "$HELLO_JAR" --host 127.0.0.1 --port $port --httpLoops 2
      url=http://127.0.0.1:$port/hello ;;
    broker-g1 | broker)
      local jvm=(); [ "$1" = broker ] && jvm=("$SHIPPED_JVM")
      start "$1" "$here/cor" java "${jvm[@]}" "${log[@]}" -jar "$BROKER_JAR" --host 127.0.0.1 --port $port --dataDir "$work/data"
      post "http://127.0.0.1:$port/ngsi-ld/v1/entities" "$work/small.json"
      url=http://127.0.0.1:$port$broker_path ;;
  esac
}

waits() { thread_sched "$1" | awk '{ w += $NF } END { printf "%.0f", w }'; } # ns runnable, not running (%.0f: mawk's %d stops at 2^31)
longest_safepoint() { # LOG FROM_LINE: the longest safepoint (ms) logged after that line
  [ -n "$1" ] || { echo -; return; }
  tail -n +"$2" "$1" | awk '{ for (i = 1; i < NF; i++) if ($i == "Total:") { v = $(i + 1) / 1e6; if (v > m) m = v } } END { printf "%.1f", m }'
}

serve broker
load "$url" 16 5 >/dev/null
read -r peak _ <<<"$(load "$url" 16 "$DURATION")"
stop_all
echo "closed-loop peak of the shipped broker, 16 connections: $peak req/s" >&2

t0=$(date +%s)
for round in $(seq "$ROUNDS"); do
  order=$SERVERS
  [ $((round % 2)) = 0 ] && order=$(echo "$SERVERS" | tr ' ' '\n' | tac | tr '\n' ' ')
  for s in $order; do
    echo "round $round: $s" >&2
    serve "$s"
    pid=${pids[-1]}
    load "$url" 16 3 >/dev/null # JIT
    for pct in $PCTS; do
      rate=$(awk -v p="$peak" -v c="$pct" 'BEGIN { printf "%d", p * c / 100 }')
      LOAD_WARMUP=2 load "$url" 16 2 --rate "$rate" >/dev/null
      from=1; [ -n "$splog" ] && from=$(( $(wc -l <"$splog") + 1 ))
      w0=$(waits "$pid")
      m=$(measure "$url" 16 0 "$DURATION" --rate "$rate")
      w1=$(waits "$pid")
      read -r p999 lag <<<"$(python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))
print(r["latency_us"]["p99_9"], r["send_lag_us"]["p99"])' "$work/run.json" 2>/dev/null || echo 0 0)"
      n=$(last_run requests)
      wait_us=$(awk -v d=$((w1 - w0)) -v n="$n" 'BEGIN { if (n > 0) printf "%.1f", d / 1e3 / n; else print "-" }')
      echo "$round $s $pct $rate $m $p999 $lag $wait_us $(longest_safepoint "$splog" "$from")" >>"$results"
    done
    stop_all
  done
done

echo
echo "tail.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $("$here/cor" java -version 2>&1 | sed -n 2p), GET of the small" \
  "entity at 16 connections, open loop, ${DURATION}s per cell, the shipped broker's closed-loop peak $peak req/s," \
  "$ROUNDS round(s), $(( $(date +%s) - t0 ))s, load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print(f'{"round":>5} {"server":<10} {"% peak":>6} {"rate":>7} {"got/s":>7} {"p50 us":>7} {"p99 us":>8} {"p99.9 us":>9} {"send lag p99":>12} {"cpu us/req":>10} {"runq us/req":>11} {"max safepoint ms":>16}')
for rnd, s, pct, rate, rps, p50, p99, err, cpu, p999, lag, wait, sp in rows:
    note = f'  ({err} errors)' if err not in ("0",) else ""
    print(f'{rnd:>5} {s:<10} {pct:>6} {rate:>7} {float(rps):>7.0f} {float(p50):>7.0f} {float(p99):>8.0f} {float(p999):>9.0f} {float(lag):>12.0f} {cpu:>10} {wait:>11} {sp:>16}{note}')
PY
