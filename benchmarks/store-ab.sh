#!/usr/bin/env bash
# Two broker jars side by side with the durable store's default (--fsync always), alternating
# within each round so that both meet the same disk: PATCH of one attribute of the 20-attribute
# bench entity at 16, 1 and 4 connections, with the PATCHes per fsync at 16 from /metrics.
#   benchmarks/store-ab.sh OLD.jar NEW.jar        (ROUNDS=3 by default; about 2 minutes)
# Build first (./cor mvn -q -DskipTests package) and copy each jar out of
# cor-server-launcher/target/. It stops everything it started, also on Ctrl-C.
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"

[ $# -eq 2 ] || { echo "usage: benchmarks/store-ab.sh OLD.jar NEW.jar" >&2; exit 2; }
ROUNDS=${ROUNDS:-3}
port=18513
url="http://127.0.0.1:$port/ngsi-ld/v1/entities/urn:ngsi-ld:Bench:attrs20/attrs/attr01"
patch=(--method PATCH --header 'Content-Type: application/json' --body-file "$work/patch.json")

"$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.BenchEntitiesMain attrs20 >"$work/attrs20.json"
printf '{"type": "Property", "value": 42.5}' >"$work/patch.json"
journal() { curl -s "http://127.0.0.1:$port/metrics" | awk -v n="$1" '$1 == n { print $2 }'; }

echo "store-ab.sh, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg); req/s p50 p99 errors requests (us)"
for round in $(seq "$ROUNDS"); do
  for which in old new; do
    jar=$1; [ "$which" = new ] && jar=$2
    rm -rf "$work/data"
    start broker "$here/cor" java -jar "$jar" --host 127.0.0.1 --port $port --httpLoops 1 --dataDir "$work/data"
    post "http://127.0.0.1:$port/ngsi-ld/v1/entities" "$work/attrs20.json"
    load "$url" 16 8 "${patch[@]}" >/dev/null
    r0=$(journal cor_store_journal_records_total); f0=$(journal cor_store_journal_forces_total)
    c16=$(load "$url" 16 5 "${patch[@]}")
    r1=$(journal cor_store_journal_records_total); f1=$(journal cor_store_journal_forces_total)
    c1=$(load "$url" 1 3 "${patch[@]}")
    c4=$(load "$url" 4 3 "${patch[@]}")
    per=$(awk -v r=$((r1 - r0)) -v f=$((f1 - f0)) 'BEGIN { if (f > 0) printf "%.1f", r / f; else print "-" }')
    echo "round $round $which: 16 conns: $c16, $per per fsync | 1 conn: $c1 | 4 conns: $c4"
    stop_all
  done
done
