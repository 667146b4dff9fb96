#!/usr/bin/env bash
# What the broker's port costs a GET when it is secured: GET /ngsi-ld/v1/entities/{id} of the small
# bench entity on the broker (cor-server.jar) over plain HTTP, over HTTPS (--https, TLS 1.3,
# keep-alive connections: the handshake once per connection), with a static bearer token (--tokens)
# and with an RS256 JWT (--jwtKey; verified once, then served from the cache of verified tokens),
# in one run, x 1 and 16 connections. Each broker on 127.0.0.1 with one loop pinned to core 0, alone
# while it is measured; load from wrk pinned to core 1 (one load generator for all four, since
# corRequest has no TLS); server CPU time per request from /proc/PID/stat over the measured window.
#   benchmarks/tls-auth.sh                                      (about 6 minutes; ROUNDS=4: 12)
#   ROUNDS=1 DURATION=3 SERVER_WARM=5 benchmarks/tls-auth.sh    (a quick look)
# Its last lines: the CPU per request of each over plain HTTP without a credential (the bar for a
# token or a JWT: <= 1.05). Installs wrk (Debian) if missing; the key, the certificate and the JWT
# are made here with openssl. It stops everything it started, also on Ctrl-C.
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/benchmarks/lib.sh"

ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-5}        # seconds measured per cell
WARM=${WARM:-2}                # seconds of load before each cell
SERVER_WARM=${SERVER_WARM:-20} # seconds of load on a freshly started server (JIT)
port=18511
small=urn:ngsi-ld:Bench:small
token=bench-token-0123456789abcdef

if ! command -v wrk >/dev/null; then
  echo "installing wrk..." >&2
  (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null
fi
echo "building..." >&2
build
results="$work/results"
: >"$results"
"$here/cor" java -cp "$BENCH_JAR" dev.cor.bench.BenchEntitiesMain small >"$work/small.json"
printf '%s * rw\n' "$token" >"$work/tokens"

# the server's key and certificate (EC P-256, as a modern deployment has)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$work/tls-key.pem" -out "$work/tls-cert.pem" 2>/dev/null
# an RSA key, its public half, and an RS256 JWT for the default tenant valid for a day
openssl genrsa -out "$work/key.pem" 2048 2>/dev/null
openssl rsa -in "$work/key.pem" -pubout -out "$work/pub.pem" 2>/dev/null
b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
exp=$(( $(date +%s) + 86400 ))
signing_input="$(printf '{"alg":"RS256","typ":"JWT"}' | b64url).$(printf '{"iss":"bench","aud":"cor","sub":"bench","exp":%d,"tenants":["-"]}' "$exp" | b64url)"
jwt="$signing_input.$(printf '%s' "$signing_input" | openssl dgst -sha256 -sign "$work/key.pem" -binary | b64url)"

broker() { # KIND: plain, tls, token or jwt
  local flags=()
  case $1 in
    tls) flags=(--https --key "$work/tls-key.pem" --cert "$work/tls-cert.pem") ;;
    token) flags=(--tokens "$work/tokens") ;;
    jwt) flags=(--jwtKey "$work/pub.pem" --jwtIssuer bench --jwtAudience cor) ;;
  esac
  start broker taskset -c 0 "$here/cor" java -jar "$BROKER_JAR" --host 127.0.0.1 --port $port --httpLoops 1 \
    --store memory "${flags[@]}"
}

# wrk_measure URL CONNS SECONDS [header] -> "req/s p50_us p99_us errors cpu_us_per_req" (the server's CPU)
wrk_measure() {
  local url=$1 conns=$2 secs=$3 header=${4:-} before after hz out
  hz=$(getconf CLK_TCK)
  local hflag=()
  [ -n "$header" ] && hflag=(-H "$header")
  before=$(cpu_ticks $(server_pids))
  out=$(taskset -c 1 wrk -t1 -c"$conns" -d"$secs"s --latency "${hflag[@]}" "$url")
  after=$(cpu_ticks $(server_pids))
  echo "$out" | awk -v t=$((after - before)) -v hz="$hz" '
    function us(v) { if (v ~ /us$/) return v + 0; if (v ~ /ms$/) return v * 1000; if (v ~ /s$/) return v * 1e6; return v }
    /Requests\/sec/ {rps=$2} /^ +50%/ {p50=us($2)} /^ +99%/ {p99=us($2)}
    / requests in / {n=$1} /Non-2xx/ {bad+=$NF} /Socket errors/ {bad+=1}
    END {printf "%.0f %.0f %.0f %d %.1f", rps, p50, p99, bad, (n > 0 ? t * 1e6 / hz / n : -1)}'
}

t0=$(date +%s)
for round in $(seq "$ROUNDS"); do
  # the order turns round each round, so that a drift of the machine does not favour one kind
  kinds=(plain tls token jwt)
  [ $((round % 2)) -eq 0 ] && kinds=(jwt token tls plain)
  for kind in "${kinds[@]}"; do
    echo "round $round: $kind" >&2
    broker "$kind"
    header=""
    case $kind in
      token) header="Authorization: Bearer $token" ;;
      jwt) header="Authorization: Bearer $jwt" ;;
    esac
    scheme=http
    curl_tls=()
    if [ "$kind" = tls ]; then scheme=https; curl_tls=(--cacert "$work/tls-cert.pem"); fi
    base="$scheme://127.0.0.1:$port/ngsi-ld/v1"
    code=$(curl -s "${curl_tls[@]}" -o "$work/post.out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
      ${header:+-H "$header"} --data-binary "@$work/small.json" "$base/entities")
    [ "$code" = 201 ] || { echo "POST answered $code: $(cat "$work/post.out")" >&2; exit 1; }
    url="$base/entities/$small"
    wrk_measure "$url" 16 "$SERVER_WARM" "$header" >/dev/null
    for conns in 1 16; do
      wrk_measure "$url" "$conns" "$WARM" "$header" >/dev/null
      echo "$round $kind $conns $(wrk_measure "$url" "$conns" "$DURATION" "$header")" >>"$results"
    done
    stop_all
  done
done

echo
echo "tls-auth.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $( "$here/cor" java -version 2>&1 | head -1 ), ${DURATION}s per cell, $ROUNDS round(s), $(( $(date +%s) - t0 ))s"
python3 - "$results" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print(f'{"round":>5} {"kind":<6} {"conns":>5} {"req/s":>9} {"p50 us":>8} {"p99 us":>8} {"errors":>6} {"cpu us/req":>10}')
cell = {}
for rnd, kind, conns, rps, p50, p99, err, cpu in rows:
    cell[(rnd, kind, conns)] = cpu
    print(f'{rnd:>5} {kind:<6} {conns:>5} {float(rps):>9.0f} {float(p50):>8.0f} {float(p99):>8.0f} {err:>6} {cpu:>10}')
print()
print("server CPU per request over plain HTTP without a credential (the bar for token and jwt: <= 1.05)")
ratios = {}
for rnd in sorted({k[0] for k in cell}):
    for kind in ("tls", "token", "jwt"):
        for c in ("1", "16"):
            a, n = cell.get((rnd, kind, c), "-"), cell.get((rnd, "plain", c), "-")
            r = f'{float(a) / float(n):.3f}' if "-" not in (a, n) and float(n) > 0 else "-"
            if r != "-":
                ratios.setdefault((kind, c), []).append(float(r))
            print(f'  round {rnd} {kind:<5} {c:>2} connections: {r}  ({a} vs {n} us)')
print()
print("the median over the rounds (a round's own plain broker as its reference)")
for (kind, c), rs in sorted(ratios.items()):
    rs.sort()
    m = rs[len(rs) // 2] if len(rs) % 2 else (rs[len(rs) // 2 - 1] + rs[len(rs) // 2]) / 2
    print(f'  {kind:<5} {c:>2} connections: {m:.3f}  (rounds: {" ".join(f"{x:.2f}" for x in rs)})')
PY
