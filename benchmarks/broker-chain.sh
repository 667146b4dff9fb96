#!/usr/bin/env bash
# The seed's three-broker chain on the real broker, measured side by side in one run (two rounds):
#   three launchers A -> B -> C (cor-server.jar, one loop each, --store memory), the bench entities
#   on C only, a registration on A for them pointing to B and one on B pointing to C;
#   GET /ngsi-ld/v1/entities/{id} on A, which forwards to B, which forwards to C
#   x HTTP all the way; HTTP in front with cor:// between; cor:// end to end
#   x the small and the 20-attribute entity x 1 and 16 callers
#   x coroutines (--coroutines 1024) vs the hop (--coroutines 0: every forward on a worker)
# and, in the same run, the gateway chain of chain.sh (examples/gateway, coroutines) as the floor:
# what a bare forward costs, so that the broker's cost per hop above it shows.
# Every node on 127.0.0.1; load from corRequest; server CPU time per request from /proc/PID/stat
# over the measured window, summed over the three nodes.
#   benchmarks/broker-chain.sh                          (about 10 minutes)
#   ROUNDS=1 DURATION=2 CHAIN_WARM=4 benchmarks/broker-chain.sh   (a quick look)
#   CHAINS="http" MODES=coroutines FLOOR=0 benchmarks/broker-chain.sh   (only those cells)
# Its last line: "broker chain HTTP coroutines/hop at 16 callers: R" (small entity, over the rounds).
# It stops everything it started, also on Ctrl-C.
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"

ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-4}      # seconds measured per cell
WARM=${WARM:-1}              # seconds of load before each cell
CHAIN_WARM=${CHAIN_WARM:-10} # seconds of load on a freshly started chain (JIT)
CHAINS=${CHAINS:-"http http+cor cor"}
MODES=${MODES:-"coroutines hop"}
FLOOR=${FLOOR:-1}            # 1: also the gateway chain (coroutines) as the floor
small=urn:ngsi-ld:Bench:small
attrs20=urn:ngsi-ld:Bench:attrs20
pA=18421 pB=18422 pC=18423 cA=18431 cB=18432 cC=18433

echo "building..." >&2
build
results="$work/results"
: >"$results"
"$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.BenchEntitiesMain small >"$work/small.json"
"$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.BenchEntitiesMain attrs20 >"$work/attrs20.json"

registration() { # FILE ID ENDPOINT: both bench entities, served by ENDPOINT
  printf '{"id": "urn:ngsi-ld:ContextSourceRegistration:%s", "type": "ContextSourceRegistration",
  "information": [{"entities": [{"id": "%s", "type": "Bench"}, {"id": "%s", "type": "Bench"}]}],
  "endpoint": "%s"}' "$2" "$small" "$attrs20" "$3" >"$1"
}

broker() { # NAME HTTP_PORT COR_PORT COROUTINES
  start "$1" "$here/cor" java -jar "$BROKER_JAR" --host 127.0.0.1 --port "$2" --corPort "$3" --httpLoops 1 \
    --store memory --coroutines "$4"
}

chain() { # KIND COROUTINES -> starts A->B->C (here, not in a subshell: cleanup must see them); sets $url
  local kind=$1 co=$2 next_b next_a
  broker C $pC $cC "$co"
  broker B $pB $cB "$co"
  broker A $pA $cA "$co"
  case $kind in
    http) next_b=http://127.0.0.1:$pC next_a=http://127.0.0.1:$pB url=http://127.0.0.1:$pA ;;
    http+cor) next_b=cor://127.0.0.1:$cC next_a=cor://127.0.0.1:$cB url=http://127.0.0.1:$pA ;;
    cor) next_b=cor://127.0.0.1:$cC next_a=cor://127.0.0.1:$cB url=cor://127.0.0.1:$cA ;;
  esac
  url="$url/ngsi-ld/v1/entities"
  post "http://127.0.0.1:$pC/ngsi-ld/v1/entities" "$work/small.json"
  post "http://127.0.0.1:$pC/ngsi-ld/v1/entities" "$work/attrs20.json"
  registration "$work/reg-b.json" B "$next_b"
  registration "$work/reg-a.json" A "$next_a"
  post "http://127.0.0.1:$pB/ngsi-ld/v1/csourceRegistrations" "$work/reg-b.json"
  post "http://127.0.0.1:$pA/ngsi-ld/v1/csourceRegistrations" "$work/reg-a.json"
  # the chain answers through every hop, or the run stops here
  local got
  got=$(curl -s "http://127.0.0.1:$pA/ngsi-ld/v1/entities/$attrs20" | python3 -c \
    'import json,sys; e=json.load(sys.stdin); print(e.get("id"), len(e)-2)' 2>/dev/null || true)
  [ "$got" = "$attrs20 20" ] || { echo "the $kind chain does not answer with the entity of C: $got" >&2; exit 1; }
}

floor() { # KIND: the gateway chain of chain.sh, coroutines; sets $url
  local kind=$1
  case $kind in
    http)
      gateway C --port $pC --preload
      gateway B --port $pB --next http://127.0.0.1:$pC
      gateway A --port $pA --next http://127.0.0.1:$pB
      url="http://127.0.0.1:$pA/entities" ;;
    http+cor)
      gateway C --port $pC --corPort $cC --preload
      gateway B --port $pB --corPort $cB --next cor://127.0.0.1:$cC
      gateway A --port $pA --next cor://127.0.0.1:$cB
      url="http://127.0.0.1:$pA/entities" ;;
    cor)
      gateway C --port $pC --corPort $cC --preload
      gateway B --port $pB --corPort $cB --next cor://127.0.0.1:$cC
      gateway A --port $pA --corPort $cA --next cor://127.0.0.1:$cB
      url="cor://127.0.0.1:$cA/entities" ;;
  esac
}

cells() { # ROUND KIND MODE: the four cells of a started chain
  local round=$1 kind=$2 mode=$3 flags=()
  [ "$kind" = cor ] && flags=(--sockets 1)
  load "$url/$small" 16 "$CHAIN_WARM" "${flags[@]}" >/dev/null
  for entity in small attrs20; do
    local id=$small; [ $entity = attrs20 ] && id=$attrs20
    for conns in 1 16; do
      echo "$round $kind $mode $entity $conns $(measure "$url/$id" "$conns" "$WARM" "$DURATION" "${flags[@]}")" >>"$results"
    done
  done
  stop_all
}

t0=$(date +%s)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq "$ROUNDS"); do
  for kind in $CHAINS; do
    for mode in $MODES; do
      co=1024; [ "$mode" = hop ] && co=0
      echo "round $round: broker $kind chain, $mode" >&2
      chain "$kind" "$co"
      cells "$round" "$kind" "$mode"
    done
    if [ "$FLOOR" = 1 ]; then
      echo "round $round: gateway $kind chain (the floor)" >&2
      floor "$kind"
      cells "$round" "$kind" gateway
    fi
  done
done

echo
echo "broker-chain.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $( "$here/cor" java -version 2>&1 | head -1 ), ${DURATION}s per cell, $ROUNDS round(s), $(( $(date +%s) - t0 ))s, load $load0 before, $(cut -d' ' -f1-3 /proc/loadavg) after"
python3 - "$results" "$here/benchmarks" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from cells import load, ratio, rounds
cell = load(sys.argv[1])
rounds = rounds(cell)
def cpu_over(a, b):
    if a in cell and b in cell and cell[a][3] != "-" and cell[b][3] != "-":
        return f'{float(cell[a][3]) - float(cell[b][3]):.1f} us'
    return "-"
for rnd in rounds:
    for kind in ("http", "http+cor", "cor"):
        for ent in ("small", "attrs20"):
            for c in ("1", "16"):
                k = (rnd, kind, "coroutines", ent, c)
                print(f'  round {rnd} {kind:<9} {ent:<8} {c:>2} callers  coroutines/hop = {ratio(cell, k, (rnd, kind, "hop", ent, c))};'
                      f'  broker/gateway = {ratio(cell, k, (rnd, kind, "gateway", ent, c))}, CPU above the floor per request (3 nodes) {cpu_over(k, (rnd, kind, "gateway", ent, c))}')
    for ent in ("small", "attrs20"):
        print(f'  round {rnd} cor:// end to end / HTTP all the way, {ent}, 16 callers (coroutines) = '
              f'{ratio(cell, (rnd, "cor", "coroutines", ent, "16"), (rnd, "http", "coroutines", ent, "16"))}')
num = den = 0.0
for rnd in rounds:
    a, b = cell.get((rnd, "http", "coroutines", "small", "16")), cell.get((rnd, "http", "hop", "small", "16"))
    if a and b:
        num += a[0]; den += b[0]
print(f'broker chain HTTP coroutines/hop at 16 callers: {num / den:.2f}' if den else
      'broker chain HTTP coroutines/hop at 16 callers: -')
PY
