#!/usr/bin/env bash
# /hello on examples/hello under wrk: the server on one loop pinned to core 0, wrk on core 1,
# 1 and 16 connections, coroutines on (--coroutines 1024) and off (--coroutines 0), in one run.
# /hello never waits, so the two must be the same (the bar: within 3 %). Besides wrk's req/s and
# latency it reports the server's own CPU time per request (user+system from /proc/PID/stat over
# the measured window), which the scheduling noise of a shared machine moves much less. The order
# of on and off alternates from round to round.
#   benchmarks/hello-wrk.sh [duration-seconds] [warmup-seconds]     ROUNDS=3 by default
# JFR=1 compares a JFR recording running (the default settings, which enable cor's events) with
# (JFR_SETTINGS=FILE.jfc: a recording with other settings, e.g. benchmarks/jfr-cor-only.jfc)
# none instead, coroutines on in both: "on" is then without the recording, "off" with it.
# Installs wrk (Debian) if missing; targets 127.0.0.1 only; stops everything it started.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
duration=${1:-15}
warmup=${2:-15}
port=18181
rounds=${ROUNDS:-3}

if ! command -v wrk >/dev/null; then
  echo "installing wrk..." >&2
  (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
fi
"$here/cor" mvn -q -DskipTests -pl examples/hello -am package >/dev/null

pid=""
cleanup() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi; }
trap cleanup EXIT
trap 'exit 130' INT TERM
hz=$(getconf CLK_TCK)

ticks() { cut -d')' -f2 "/proc/$1/stat" | awk '{print $12 + $13}'; }

run_wrk() { # connections seconds -> "req/s p50 p99 cpu_us_per_req"
  local before after out
  before=$(ticks "$pid")
  out=$(taskset -c 1 wrk -t1 -c"$1" -d"$2"s --latency "http://127.0.0.1:$port/hello")
  after=$(ticks "$pid")
  echo "$out" | awk -v t=$((after - before)) -v hz="$hz" '
    /Requests\/sec/ {rps=$2}
    /^ +50%/ {p50=$2} /^ +99%/ {p99=$2}
    /requests in/ {n=$1}
    END {printf "%s %s %s %.2f", rps, p50, p99, t * 1e6 / hz / n}'
}

declare -A result
for round in $(seq "$rounds"); do
  order="1024 0"; [ $((round % 2)) = 0 ] && order="0 1024"
  for co in $order; do
    jvm=(); args=(--coroutines $co)
    if [ "${JFR:-0}" = 1 ]; then
      args=(--coroutines 1024)
      [ "$co" = 0 ] && jvm=("-XX:StartFlightRecording=settings=${JFR_SETTINGS:-default},filename=${TMPDIR:-/tmp}/hello-wrk-$$.jfr")
    fi
    taskset -c 0 "$here/cor" java "${jvm[@]}" -jar "$here/examples/hello/target/cor-hello.jar" --host 127.0.0.1 --port $port \
      --httpLoops 1 "${args[@]}" --workers 4 >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/hello" && break; sleep 0.2; done
    run_wrk 16 "$warmup" >/dev/null   # JIT warm-up
    for c in 1 16; do
      result["$round,$co,$c"]=$(run_wrk $c "$duration")
    done
    cleanup; pid=""
  done
done

[ "${JFR:-0}" = 1 ] && echo "JFR=1: 'on' = no recording, 'off' = a recording running (settings=${JFR_SETTINGS:-default})"
echo "hello-wrk.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $("$here/cor" java -version 2>&1 | head -1), ${duration}s per cell"
printf '\n%-6s %-11s %-6s %11s %9s %9s %12s\n' round coroutines conns "req/s" p50 p99 "cpu us/req"
for round in $(seq "$rounds"); do
  for c in 1 16; do
    for co in 1024 0; do
      read -r rps p50 p99 cpu <<<"${result[$round,$co,$c]}"
      printf '%-6s %-11s %-6s %11s %9s %9s %12s\n' "$round" "$([ $co = 0 ] && echo off || echo on)" "$c" "$rps" "$p50" "$p99" "$cpu"
    done
    read -r on _ _ con <<<"${result[$round,1024,$c]}"; read -r off _ _ coff <<<"${result[$round,0,$c]}"
    awk -v a="$on" -v b="$off" -v x="$con" -v y="$coff" -v c="$c" -v r="$round" \
      'BEGIN {printf "%-6s on/off      %-6s %11.3f %31.3f\n", r, c, a/b, x/y}'
  done
done
