#!/usr/bin/env bash
# The open-loop table of the history's § 9.1: the HTTP chain A -> B -> C (small entity, 16
# connections) at three fixed rates - 50 %, 75 % and 90 % of the closed-loop peak of the
# coroutine build - with coroutines on and off, latency counted from when each request was due
# (coordinated omission corrected). At the same rate, which build answers sooner?
#   benchmarks/rate.sh     (about 5 minutes)
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"

DURATION=${DURATION:-8}
CHAIN_WARM=${CHAIN_WARM:-12}
pA=18501 pB=18502 pC=18503
url=http://127.0.0.1:$pA/entities/urn:ngsi-ld:Bench:small

echo "building..." >&2
build

http_chain() { # COROUTINES
  gateway C --port $pC --preload --coroutines "$1"
  gateway B --port $pB --next http://127.0.0.1:$pC --coroutines "$1"
  gateway A --port $pA --next http://127.0.0.1:$pB --coroutines "$1"
  load "$url" 16 "$CHAIN_WARM" >/dev/null
}

t0=$(date +%s)
http_chain 1024
read -r peak _ <<<"$(load "$url" 16 "$DURATION")"
stop_all
echo "closed-loop peak of the coroutine build, 16 connections: $peak req/s" >&2

results="$work/rates"
: >"$results"
for co in 1024 0; do
  http_chain "$co"
  for pct in 50 75 90; do
    rate=$(awk -v p="$peak" -v q="$pct" 'BEGIN { printf "%d", p * q / 100 }')
    echo "coroutines=$co at $rate req/s" >&2
    echo "$co $pct $rate $(load "$url" 16 "$DURATION" --rate "$rate")" >>"$results"
  done
  stop_all
done

echo
echo "rate.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $("$here/cor" java -version 2>&1 | head -1), HTTP chain, small entity, 16 connections, ${DURATION}s per rate, $(( $(date +%s) - t0 ))s"
echo "closed-loop peak (coroutines): $peak req/s"
printf '%-12s %-6s %9s %10s %10s %10s %8s\n' build "% peak" "rate" "got req/s" "p50 us" "p99 us" errors
while read -r co pct rate rps p50 p99 err _; do
  printf '%-12s %-6s %9s %10.0f %10.0f %10.0f %8s\n' "$([ "$co" = 0 ] && echo hop || echo coroutines)" "$pct" "$rate" "$rps" "$p50" "$p99" "$err"
done <"$results"
