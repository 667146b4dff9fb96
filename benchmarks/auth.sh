#!/usr/bin/env bash
# What authentication costs a GET: GET /ngsi-ld/v1/entities/{id} of the small bench entity on the
# broker (cor-server.jar) without authentication, with a static bearer token (--tokens) and with
# an RS256 JWT (--jwtKey; verified once, then served from the cache of verified tokens), in one
# run, x 1 and 16 connections. Each broker on 127.0.0.1 with one loop, alone while it is measured;
# load from corRequest; server CPU time per request from /proc/PID/stat over the measured window.
#   benchmarks/auth.sh                          (about 5 minutes)
#   ROUNDS=1 DURATION=3 SERVER_WARM=5 benchmarks/auth.sh   (a quick look)
# Its last lines: the CPU per request with a token or a JWT over the one without (the bar: <= 1.05).
# The key and the JWT are made here with openssl. It stops everything it started, also on Ctrl-C.
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"

ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-5}        # seconds measured per cell
WARM=${WARM:-2}                # seconds of load before each cell
SERVER_WARM=${SERVER_WARM:-20} # seconds of load on a freshly started server (JIT)
port=18511
small=urn:ngsi-ld:Bench:small
token=bench-token-0123456789abcdef

echo "building..." >&2
build
results="$work/results"
: >"$results"
"$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.BenchEntitiesMain small >"$work/small.json"
printf '%s * rw\n' "$token" >"$work/tokens"

# an RSA key, its public half, and an RS256 JWT for the default tenant valid for a day
openssl genrsa -out "$work/key.pem" 2048 2>/dev/null
openssl rsa -in "$work/key.pem" -pubout -out "$work/pub.pem" 2>/dev/null
b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
exp=$(( $(date +%s) + 86400 ))
signing_input="$(printf '{"alg":"RS256","typ":"JWT"}' | b64url).$(printf '{"iss":"bench","aud":"cor","sub":"bench","exp":%d,"tenants":["-"]}' "$exp" | b64url)"
jwt="$signing_input.$(printf '%s' "$signing_input" | openssl dgst -sha256 -sign "$work/key.pem" -binary | b64url)"

broker() { # KIND: none, token or jwt
  local flags=()
  case $1 in
    token) flags=(--tokens "$work/tokens") ;;
    jwt) flags=(--jwtKey "$work/pub.pem" --jwtIssuer bench --jwtAudience cor) ;;
  esac
  start broker "$here/cor" java -jar "$BROKER_JAR" --host 127.0.0.1 --port $port --httpLoops 1 --store memory "${flags[@]}"
}

t0=$(date +%s)
for round in $(seq "$ROUNDS"); do
  for kind in none token jwt; do
    echo "round $round: $kind" >&2
    broker "$kind"
    auth=()
    case $kind in
      token) auth=(--header "Authorization: Bearer $token") ;;
      jwt) auth=(--header "Authorization: Bearer $jwt") ;;
    esac
    url="http://127.0.0.1:$port/ngsi-ld/v1/entities/$small"
    code=$(curl -s -o "$work/post.out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
      ${auth[1]:+-H "${auth[1]}"} --data-binary "@$work/small.json" "http://127.0.0.1:$port/ngsi-ld/v1/entities")
    [ "$code" = 201 ] || { echo "POST answered $code: $(cat "$work/post.out")" >&2; exit 1; }
    load "$url" 16 "$SERVER_WARM" "${auth[@]}" >/dev/null
    for conns in 1 16; do
      echo "$round $kind $conns $(measure "$url" "$conns" "$WARM" "$DURATION" "${auth[@]}") $(last_run non_2xx_3xx)" >>"$results"
    done
    stop_all
  done
done

echo
echo "auth.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $( "$here/cor" java -version 2>&1 | head -1 ), ${DURATION}s per cell, $ROUNDS round(s), $(( $(date +%s) - t0 ))s"
python3 - "$results" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print(f'{"round":>5} {"auth":<6} {"conns":>5} {"req/s":>9} {"p50 us":>8} {"p99 us":>8} {"errors":>6} {"non-2xx":>7} {"cpu us/req":>10}')
cell = {}
for rnd, kind, conns, rps, p50, p99, err, cpu, non2xx in rows:
    cell[(rnd, kind, conns)] = cpu
    print(f'{rnd:>5} {kind:<6} {conns:>5} {float(rps):>9.0f} {float(p50):>8.0f} {float(p99):>8.0f} {err:>6} {non2xx:>7} {cpu:>10}')
print()
print("GET with a credential / GET without, server CPU per request (the bar: <= 1.05)")
for rnd in sorted({k[0] for k in cell}):
    for kind in ("token", "jwt"):
        for c in ("1", "16"):
            a, n = cell.get((rnd, kind, c), "-"), cell.get((rnd, "none", c), "-")
            r = f'{float(a) / float(n):.3f}' if "-" not in (a, n) and float(n) > 0 else "-"
            print(f'  round {rnd} {kind:<5} {c:>2} connections: {r}  ({a} vs {n} us)')
PY
