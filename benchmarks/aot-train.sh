#!/usr/bin/env bash
# ./cor aot-train: the seed's PGO step (history § 12) in JDK 25 terms - an AOT cache (JEP 483:
# classes loaded and linked ahead of time; JEP 514: -XX:AOTCacheOutput, one training run;
# JEP 515: the method profiles of that run) trained on a fixed broker workload.
# The broker (cor-server.jar, its defaults: the durable store with --fsync always, coroutines on,
# a fresh data directory) runs with -XX:AOTCacheOutput and the JVM flags ./cor run gives it
# (cor-server-launcher/jvm.options: the cache is made for them); corRequest sends it a fixed
# number of each request: creates, retrieves by id (normalized and keyValues), queries by type,
# batch create, update, upsert and delete of 20 entities, PATCHes that a subscription notifies (to
# a receiver), the subscription and type listings. Then SIGTERM: the broker stops cleanly, the JVM writes the
# cache, and the cache goes beside the jar with its key (dev.cor.server.AotCacheKey), which
# ./cor run checks before it uses the cache. About 30-60 s, most of it the build.
#   ./cor aot-train          (COR_AOT_CACHE=FILE: somewhere else than cor-server-launcher/target/cor-server.aot)
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"
source "$here/benchmarks/aot-workload.sh"

aot="${COR_AOT_CACHE:-$here/cor-server-launcher/target/cor-server.aot}"
port=${AOT_TRAIN_PORT:-18531}

echo "cor aot-train: building..." >&2
build
rm -f "$aot" "$aot.key" # a failed training must not leave the old cache beside a new jar

echo "cor aot-train: the training run" >&2
aot_training_run $port $((port + 100)) "$here/cor" java "-XX:AOTCacheOutput=$work/cor-server.aot" \
  "$SHIPPED_JVM" -jar "$BROKER_JAR" \
  --host 127.0.0.1 --port $port --dataDir "$work/data"
if [ ! -s "$work/cor-server.aot" ]; then
  echo "cor aot-train: the JVM wrote no cache:" >&2; tail -20 "$work/broker.log" >&2; exit 1
fi
mv "$work/cor-server.aot" "$aot"
# the key last: a cache without its key is one ./cor run removes
"$here/cor" java -cp "$BROKER_JAR" dev.cor.server.AotCacheKey "$BROKER_JAR" >"$aot.key.tmp"
mv "$aot.key.tmp" "$aot.key"
echo "cor aot-train: $aot ($(du -h "$aot" | cut -f1)), $(grep -c 'Skipping' "$work/broker.log" || true) classes left out" \
  "(dynamic proxies, JFR event classes... the JVM does not archive); ./cor run uses it" >&2
