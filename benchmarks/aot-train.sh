#!/usr/bin/env bash
# ./cor aot-train: the seed's PGO step (history § 12) in JDK 25 terms - an AOT cache (JEP 483:
# classes loaded and linked ahead of time; JEP 514: -XX:AOTCacheOutput, one training run;
# JEP 515: the method profiles of that run) trained on a fixed broker workload.
# The broker (cor-server.jar, its defaults: the durable store with --fsync always, coroutines on,
# a fresh data directory) runs with -XX:AOTCacheOutput; corRequest sends it a fixed number of each
# request: creates, retrieves by id (normalized and keyValues), queries by type, batch create,
# update, upsert and delete of 20 entities, PATCHes that a subscription notifies (to a receiver),
# the subscription and type listings. Then SIGTERM: the broker stops cleanly, the JVM writes the
# cache, and the cache goes beside the jar with its key (dev.cor.server.AotCacheKey), which
# ./cor run checks before it uses the cache. About 30-60 s, most of it the build.
#   ./cor aot-train          (COR_AOT_CACHE=FILE: somewhere else than cor-server-launcher/target/cor-server.aot)
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"

aot="${COR_AOT_CACHE:-$here/cor-server-launcher/target/cor-server.aot}"
port=${AOT_TRAIN_PORT:-18531}
rport=$((port + 100))
conns=8

echo "cor aot-train: building..." >&2
build
rm -f "$aot" "$aot.key" # a failed training must not leave the old cache beside a new jar

shape_bodies $rport

start receiver "$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.NotifyReceiverMain --port $rport
echo "cor aot-train: the broker with -XX:AOTCacheOutput, a fixed workload" >&2
start broker "$here/cor" java "-XX:AOTCacheOutput=$work/cor-server.aot" -jar "$BROKER_JAR" --host 127.0.0.1 --port $port \
  --dataDir "$work/data"
broker_pid=${pids[-1]}
base="http://127.0.0.1:$port/ngsi-ld/v1"
shape_fixtures "$base"

json=(--method POST --header 'Content-Type: application/json')
# step N URL [flags]: N requests, every one answered with 2xx, or the training stops
step() {
  local n=$1 url=$2; shift 2
  local r
  read -r _ _ _ errors r <<<"$(load "$url" $conns 120 --requests "$n" "$@")"
  local notok; notok=$(last_run non_2xx_3xx)
  if [ "$errors" != 0 ] || [ "$notok" != 0 ] || [ "$r" != "$n" ]; then
    echo "cor aot-train: $url: $r of $n answered, $errors errors, $notok not 2xx - no cache made" >&2; exit 1
  fi
  local method=GET a prev=; for a in "$@"; do [ "${prev:-}" = --method ] && method=$a; prev=$a; done
  echo "  $n x $method $url" >&2
}
step 20000 "$base/entities/urn:ngsi-ld:Bench:small"
step 20000 "$base/entities/urn:ngsi-ld:Bench:attrs20"
step 5000 "$base/entities/urn:ngsi-ld:Bench:attrs20?options=keyValues"
step 10000 "$base/entities?type=Queried"
step 2000 "$base/entities?type=Queried&q=temperature%3E25"
step 5000 "$base/entities" "${json[@]}" --body-file "$(tagged create t)"
step 1000 "$base/entityOperations/create" "${json[@]}" --body-file "$(tagged bcreate t)"
step 1000 "$base/entityOperations/update" "${json[@]}" --body-file "$work/bupdate.json"
step 1000 "$base/entityOperations/upsert" "${json[@]}" --body-file "$work/bupdate.json"
step 1000 "$base/entityOperations/delete" "${json[@]}" --body-file "$(tagged bdelete t)"
step 10000 "$base/entities/urn:ngsi-ld:Bench:attrs20/attrs/attr01" --method PATCH --header 'Content-Type: application/json' \
  --body-file "$work/patch.json"
step 500 "$base/subscriptions"
step 500 "$base/types"

echo "cor aot-train: stopping the broker (the JVM writes the cache)" >&2
kill "$broker_pid"
wait "$broker_pid" || { echo "cor aot-train: the broker exited $?:" >&2; cat "$work/broker.log" >&2; exit 1; }
pids=("${pids[@]/$broker_pid}")
if [ ! -s "$work/cor-server.aot" ]; then
  echo "cor aot-train: the JVM wrote no cache:" >&2; tail -20 "$work/broker.log" >&2; exit 1
fi
mv "$work/cor-server.aot" "$aot"
# the key last: a cache without its key is one ./cor run removes
"$here/cor" java -cp "$BROKER_JAR" dev.cor.server.AotCacheKey "$BROKER_JAR" >"$aot.key.tmp"
mv "$aot.key.tmp" "$aot.key"
echo "cor aot-train: $aot ($(du -h "$aot" | cut -f1)), $(grep -c 'Skipping' "$work/broker.log" || true) classes left out" \
  "(dynamic proxies, JFR event classes... the JVM does not archive); ./cor run uses it" >&2
