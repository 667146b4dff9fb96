# The AOT training run, shared by ./cor aot-train (aot-train.sh: the broker's jar on this JDK) and
# ./cor image (cor-image/build-image.sh: the broker inside the image's root, on the image's own
# runtime) - one fixed workload, so that the cache an image ships is trained as the one measured
# in doc/performance.md. Source it after lib.sh.

# aot_training_run PORT RPORT COMMAND...: starts a notification receiver on RPORT and the broker
# (COMMAND..., which listens on 127.0.0.1:PORT, its JVM run with -XX:AOTCacheOutput), sends it the
# fixed workload - creates, retrieves by id (normalized and keyValues), queries by type, batch
# create, update, upsert and delete of 20 entities, PATCHes that a subscription notifies (to the
# receiver), the subscription and type listings - and stops it with SIGTERM (the JVM then writes
# the cache). Exits the script when a step is not answered 2xx or the broker does not exit 0.
aot_training_run() {
  local port=$1 rport=$2; shift 2
  local conns=8
  shape_bodies "$rport"
  start receiver "$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.NotifyReceiverMain --port "$rport"
  echo "  the broker with -XX:AOTCacheOutput, a fixed workload" >&2
  start broker "$@"
  local broker_pid=${pids[-1]}
  local base="http://127.0.0.1:$port/ngsi-ld/v1"
  shape_fixtures "$base"

  local json=(--method POST --header 'Content-Type: application/json')
  # step N URL [flags]: N requests, every one answered with 2xx, or the training stops
  step() {
    local n=$1 url=$2; shift 2
    local r errors
    read -r _ _ _ errors r <<<"$(load "$url" $conns 120 --requests "$n" "$@")"
    local notok; notok=$(last_run non_2xx_3xx)
    if [ "$errors" != 0 ] || [ "$notok" != 0 ] || [ "$r" != "$n" ]; then
      echo "AOT training: $url: $r of $n answered, $errors errors, $notok not 2xx - no cache made" >&2; exit 1
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

  echo "  stopping the broker (the JVM writes the cache)" >&2
  kill "$broker_pid"
  local rc=0
  wait "$broker_pid" || rc=$?
  pids=("${pids[@]/$broker_pid}")
  if [ "$rc" != 0 ]; then
    echo "AOT training: the broker exited $rc:" >&2; cat "$work/broker.log" >&2; exit 1
  fi
}
