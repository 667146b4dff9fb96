#!/usr/bin/env bash
# The three-broker chain, measured side by side in one run (two rounds back to back):
#   HTTP all the way; HTTP in front with cor:// between; cor:// end to end
#   x the small and the 20-attribute entity x 1 and 16 callers
#   x coroutines on (--coroutines 1024) vs off (--coroutines 0: every forward takes the worker hop)
# plus the same HTTP chain on Netty 4.2, and /hello on cor-http vs Netty.
# Every node on 127.0.0.1 with one loop (one Netty thread); load from corRequest; server CPU time
# per request from /proc/PID/stat over the measured window, summed over the three nodes.
#   benchmarks/chain.sh            (about 13 minutes)
#   ROUNDS=1 DURATION=3 benchmarks/chain.sh   (a quick look)
#   CHAINS="http cor" MODES=coroutines PEERS=0 benchmarks/chain.sh   (only those cells)
# It stops everything it started, also on Ctrl-C.
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"

ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-5}     # seconds measured per cell
WARM=${WARM:-2}             # seconds of load before each cell
CHAIN_WARM=${CHAIN_WARM:-10} # seconds of load on a freshly started chain (JIT)
CHAINS=${CHAINS:-"http http+cor cor"}
MODES=${MODES:-"coroutines hop"}
PEERS=${PEERS:-1}           # 1: also the Netty chain and /hello on both
small=urn:ngsi-ld:Bench:small
attrs20=urn:ngsi-ld:Bench:attrs20
pA=18401 pB=18402 pC=18403 cA=18411 cB=18412 cC=18413

echo "building..." >&2
build
results="$work/results"
: >"$results"

chain() { # KIND COROUTINES -> starts A->B->C (here, not in a subshell: cleanup must see them); sets $url
  local kind=$1 co=$2
  case $kind in
    http)
      gateway C --port $pC --preload --coroutines "$co"
      gateway B --port $pB --next http://127.0.0.1:$pC --coroutines "$co"
      gateway A --port $pA --next http://127.0.0.1:$pB --coroutines "$co"
      url="http://127.0.0.1:$pA/entities" ;;
    http+cor)
      gateway C --port $pC --corPort $cC --preload --coroutines "$co"
      gateway B --port $pB --corPort $cB --next cor://127.0.0.1:$cC --coroutines "$co"
      gateway A --port $pA --next cor://127.0.0.1:$cB --coroutines "$co"
      url="http://127.0.0.1:$pA/entities" ;;
    cor)
      gateway C --port $pC --corPort $cC --preload --coroutines "$co"
      gateway B --port $pB --corPort $cB --next cor://127.0.0.1:$cC --coroutines "$co"
      gateway A --port $pA --corPort $cA --next cor://127.0.0.1:$cB --coroutines "$co"
      url="cor://127.0.0.1:$cA/entities" ;;
    netty)
      netty_node C --port $pC --preload
      netty_node B --port $pB --next http://127.0.0.1:$pC
      netty_node A --port $pA --next http://127.0.0.1:$pB
      url="http://127.0.0.1:$pA/entities" ;;
  esac
}

run_chain() { # ROUND KIND MODE
  local round=$1 kind=$2 mode=$3 co=1024 flags=()
  [ "$mode" = hop ] && co=0
  chain "$kind" "$co"
  [ "$kind" = cor ] && flags=(--sockets 1)
  echo "round $round: $kind chain, $mode" >&2
  load "$url/$small" 16 "$CHAIN_WARM" "${flags[@]}" >/dev/null
  for entity in small attrs20; do
    local id=$small; [ $entity = attrs20 ] && id=$attrs20
    for conns in 1 16; do
      echo "$round $kind $mode $entity $conns $(measure "$url/$id" "$conns" "$WARM" "$DURATION" "${flags[@]}")" >>"$results"
    done
  done
  stop_all
}

run_hello() { # ROUND SERVER
  local round=$1 server=$2
  if [ "$server" = cor ]; then
    start hello "$here/cor" java -jar "$HELLO_JAR" --host 127.0.0.1 --port $pA --httpLoops 1
  else
    start hello "$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.netty.NettyHello --host 127.0.0.1 --port $pA --threads 1
  fi
  echo "round $round: /hello on $server" >&2
  load "http://127.0.0.1:$pA/hello" 16 "$CHAIN_WARM" >/dev/null
  for conns in 1 16; do
    echo "$round hello-$server - hello $conns $(measure "http://127.0.0.1:$pA/hello" "$conns" "$WARM" "$DURATION")" >>"$results"
  done
  stop_all
}

t0=$(date +%s)
for round in $(seq "$ROUNDS"); do
  for kind in $CHAINS; do
    for mode in $MODES; do run_chain "$round" "$kind" "$mode"; done
  done
  if [ "$PEERS" = 1 ]; then
    run_chain "$round" netty netty
    run_hello "$round" cor
    run_hello "$round" netty
  fi
done

echo
echo "chain.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $( "$here/cor" java -version 2>&1 | head -1 ), ${DURATION}s per cell, $ROUNDS round(s), $(( $(date +%s) - t0 ))s"
python3 - "$results" "$here/benchmarks" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from cells import load, ratio, rounds
cell = load(sys.argv[1])
rounds = rounds(cell)
for rnd in rounds:
    for kind in ("http", "http+cor", "cor"):
        for ent in ("small", "attrs20"):
            for c in ("1", "16"):
                print(f'  round {rnd} {kind:<9} {ent:<8} {c:>2} callers  coroutines/hop = {ratio(cell, (rnd, kind, "coroutines", ent, c), (rnd, kind, "hop", ent, c))}')
    for ent in ("small", "attrs20"):
        for c in ("1", "16"):
            a, b = (rnd, "http", "coroutines", ent, c), (rnd, "netty", "netty", ent, c)
            cpu = ""
            if a in cell and b in cell and cell[a][3] != "-" and cell[b][3] != "-":
                cpu = f', cpu/req cor {cell[a][3]} vs netty {cell[b][3]} us'
            print(f'  round {rnd} http      {ent:<8} {c:>2} callers  cor/netty = {ratio(cell, a, b)}{cpu}')
    for c in ("1", "16"):
        print(f'  round {rnd} /hello             {c:>2} callers  cor/netty = {ratio(cell, (rnd, "hello-cor", "-", "hello", c), (rnd, "hello-netty", "-", "hello", c))}')
    for ent in ("small", "attrs20"):
        print(f'  round {rnd} cor:// end to end / HTTP chain, {ent}, 16 callers (coroutines) = {ratio(cell, (rnd, "cor", "coroutines", ent, "16"), (rnd, "http", "coroutines", ent, "16"))}')
PY
