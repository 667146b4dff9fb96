#!/usr/bin/env bash
# Sanity check of corRequest against wrk, on the same servers: examples/hello (cor-http) and
# NettyHello, each on one loop pinned to core 0, the generator pinned to core 1. For each server:
# wrk and corRequest closed loop at 1 and 16 connections, then corRequest open loop at a fixed rate.
# corRequest should land in the same order of magnitude as wrk (lower: it is Java).
#   benchmarks/correquest-vs-wrk.sh [duration-seconds] [warmup-seconds] [open-loop-rate]
# Installs wrk (Debian) if missing; targets 127.0.0.1 only; stops everything it started.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
duration=${1:-8}
warmup=${2:-4}
rate=${3:-5000}
port=18182

if ! command -v wrk >/dev/null; then
  echo "installing wrk..." >&2
  (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
fi
"$here/cor" mvn -q -DskipTests -pl examples/hello,benchmarks -am package
bench="$here/benchmarks/target/benchmarks.jar"

pid=""
cleanup() { # a killed server's status (143) must not end the script under set -e
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
}
trap cleanup EXIT INT TERM

url="http://127.0.0.1:$port/hello"
wrk_run() { # connections seconds -> "req/s p50 p99" (wrk's units)
  taskset -c 1 wrk -t1 -c"$1" -d"$2"s --latency "$url" | awk '
    /Requests\/sec/ {rps=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2}
    END {printf "%s %s %s", rps, p50, p99}'
}
cr_run() { # args... -> "req/s p50us p99us"
  local out
  out=$(mktemp)
  taskset -c 1 "$here/cor" java -cp "$bench" dev.cor.bench.load.CorRequest --url "$url" --json "$out" "$@" >/dev/null 2>&1
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); l=r["latency_us"]
print("%.0f %.0fus %.0fus" % (r["requests_per_s"], l["p50"], l["p99"]))' "$out"
  rm -f "$out"
}

printf '%-8s %-34s %12s %10s %10s\n' server generator "req/s" p50 p99
for server in cor-hello netty-hello; do
  case $server in
    cor-hello) taskset -c 0 "$here/cor" java -jar "$here/examples/hello/target/cor-hello.jar" --host 127.0.0.1 \
                 --port $port --httpLoops 1 >/dev/null 2>&1 & ;;
    netty-hello) taskset -c 0 "$here/cor" java -cp "$bench" dev.cor.bench.netty.NettyHello --host 127.0.0.1 \
                 --port $port --threads 1 >/dev/null 2>&1 & ;;
  esac
  pid=$!
  for _ in $(seq 50); do curl -s -o /dev/null "$url" && break; sleep 0.2; done
  wrk_run 16 "$warmup" >/dev/null # the server's JIT warm-up
  for c in 1 16; do
    read -r rps p50 p99 <<<"$(wrk_run $c "$duration")"
    printf '%-8s %-34s %12s %10s %10s\n' "${server%-hello}" "wrk closed c=$c" "$rps" "$p50" "$p99"
    read -r rps p50 p99 <<<"$(cr_run --connections $c --duration "$duration" --warmup "$warmup")"
    printf '%-8s %-34s %12s %10s %10s\n' "${server%-hello}" "corRequest closed c=$c" "$rps" "$p50" "$p99"
  done
  read -r rps p50 p99 <<<"$(cr_run --connections 16 --rate "$rate" --duration "$duration" --warmup "$warmup")"
  printf '%-8s %-34s %12s %10s %10s\n' "${server%-hello}" "corRequest open c=16 rate=$rate" "$rps" "$p50" "$p99"
  cleanup; pid=""
done
