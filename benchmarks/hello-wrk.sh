#!/usr/bin/env bash
# /hello on examples/hello under wrk: the server on one loop pinned to core 0, wrk on core 1,
# 1 and 16 connections, coroutines on (--coroutines 1024) and off (--coroutines 0), in one run.
# /hello never waits, so the two must be the same (the bar: within 3 %).
#   benchmarks/hello-wrk.sh [duration-seconds] [warmup-seconds]
# Installs wrk (Debian) if missing; targets 127.0.0.1 only; stops everything it started.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
duration=${1:-15}
warmup=${2:-15}
port=18181
rounds=${ROUNDS:-2}

if ! command -v wrk >/dev/null; then
  echo "installing wrk..." >&2
  (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
fi
"$here/cor" mvn -q -DskipTests -pl examples/hello -am package

pid=""
cleanup() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi; }
trap cleanup EXIT INT TERM

run_wrk() { # connections seconds -> "req/s p50 p99"
  taskset -c 1 wrk -t1 -c"$1" -d"$2"s --latency "http://127.0.0.1:$port/hello" | awk '
    /Requests\/sec/ {rps=$2}
    /^ +50%/ {p50=$2} /^ +99%/ {p99=$2}
    END {printf "%s %s %s", rps, p50, p99}'
}

declare -A result
for round in $(seq "$rounds"); do
  for co in 1024 0; do
    taskset -c 0 "$here/cor" java -jar "$here/examples/hello/target/cor-hello.jar" --host 127.0.0.1 --port $port \
      --httpLoops 1 --coroutines $co --workers 4 >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/hello" && break; sleep 0.2; done
    run_wrk 16 "$warmup" >/dev/null   # JIT warm-up
    for c in 1 16; do
      result["$round,$co,$c"]=$(run_wrk $c "$duration")
    done
    cleanup; pid=""
  done
done

printf '\n%-7s %-12s %-6s %12s %10s %10s\n' round coroutines conns "req/s" p50 p99
for round in $(seq "$rounds"); do
  for c in 1 16; do
    for co in 1024 0; do
      read -r rps p50 p99 <<<"${result[$round,$co,$c]}"
      label=$([ $co = 0 ] && echo off || echo on)
      printf '%-7s %-12s %-6s %12s %10s %10s\n' "$round" "$label" "$c" "$rps" "$p50" "$p99"
    done
    read -r on _ <<<"${result[$round,1024,$c]}"; read -r off _ <<<"${result[$round,0,$c]}"
    awk -v a="$on" -v b="$off" -v c="$c" -v r="$round" 'BEGIN {printf "%-7s on/off       %-6s %12.3f\n", r, c, a/b}'
  done
done
