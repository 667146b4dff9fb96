# Shared by the PostgreSQL store's benchmark scripts (postgres.sh, postgres-brokers.sh,
# scorpio-postgres.sh), sourced after lib.sh: a throwaway PostgreSQL cluster in the work
# directory, and the CPU of a process tree from /proc. Run as root (the cluster runs as user
# postgres, as scorpio-temporal.sh runs Scorpio's).
#   PG_BIN       the PostgreSQL binaries (default /usr/lib/postgresql/15/bin; postgresql-15 is
#                installed with apt-get when missing)
#   PG_SETTINGS  -c flags of the cluster, beyond listen_addresses (default: max_connections=300, as
#                scorpio-temporal.sh; fsync and everything else as installed)
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_SETTINGS=${PG_SETTINGS:--c max_connections=300}
PG_PID=""
PG_PORT=""

# pg_installed [postgis]: installs PostgreSQL 15 (and PostGIS, for Scorpio) with apt-get when missing
pg_installed() {
  local want=()
  [ -x "$PG_BIN/postgres" ] || want+=(postgresql-15)
  if [ "${1:-}" = postgis ] && [ ! -f "/usr/share/postgresql/15/extension/postgis.control" ]; then
    want+=(postgresql-15-postgis-3)
  fi
  [ ${#want[@]} -gt 0 ] || return 0
  echo "installing ${want[*]} (apt-get)" >&2
  apt-get install -y -q "${want[@]}" >"$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; exit 1; }
}

# pg_up NAME [PREFIX...]: a fresh cluster in $work/NAME (initdb, trust, user postgres) started on a
# free port of 127.0.0.1 with a database cor; PREFIX prefixes the postmaster's command (taskset -c 1).
# Sets PG_PID (the postmaster) and PG_PORT. Not in lib.sh's pids: stop_all leaves it up; pg_down
# (and the exit) stop it.
pg_up() {
  local name=$1; shift
  local dir="$work/$name"
  chmod 711 "$work" # the cluster's directory is in it, and the cluster runs as postgres
  rm -rf "$dir"; mkdir "$dir"; chown postgres: "$dir"
  runuser -u postgres -- "$PG_BIN/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 >"$work/$name-initdb.log" 2>&1 ||
    { cat "$work/$name-initdb.log" >&2; exit 1; }
  PG_PORT=$(free_port)
  # shellcheck disable=SC2086 # PG_SETTINGS is a list of flags
  "$@" setpriv --reuid=postgres --regid=postgres --init-groups "$PG_BIN/postgres" -D "$dir/data" -p "$PG_PORT" -k "$dir" \
    -c listen_addresses=127.0.0.1 $PG_SETTINGS >"$work/$name.log" 2>&1 &
  PG_PID=$!
  local i
  for i in $(seq 300); do
    grep -q "ready to accept connections" "$work/$name.log" 2>/dev/null && break
    kill -0 "$PG_PID" 2>/dev/null || { echo "PostgreSQL died:" >&2; cat "$work/$name.log" >&2; PG_PID=""; exit 1; }
    sleep 0.1
  done
  grep -q "ready to accept connections" "$work/$name.log" || { echo "PostgreSQL did not start in 30 s" >&2; cat "$work/$name.log" >&2; exit 1; }
  "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -qAt -c "CREATE DATABASE cor" >/dev/null
}

# pg_down: stops the cluster pg_up started (a fast shutdown), and waits for it
pg_down() {
  [ -n "$PG_PID" ] || return 0
  kill -INT "$PG_PID" 2>/dev/null || true
  wait "$PG_PID" 2>/dev/null || true
  PG_PID=""
}

# pg_psql SQL: one statement on the cluster's database cor, its rows unaligned
pg_psql() { "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d cor -qAt -c "$1"; }

# tree_ticks PID...: user+system clock ticks of each process so far, its threads, its children it
# waited for (cutime, cstime) and its children alive: a PostgreSQL cluster (the postmaster, its
# backends and background processes) as scorpio-temporal.sh counts it
tree_ticks() {
  python3 - "$@" <<'PY'
import os, sys
children = {}
for d in os.listdir('/proc'):
    if d.isdigit():
        try:
            f = open(f'/proc/{d}/stat').read().rsplit(')', 1)[1].split()
            children.setdefault(f[1], []).append(f)
        except OSError:
            pass
total = 0
for p in sys.argv[1:]:
    try:
        f = open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()
    except OSError:
        continue
    total += int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])
    total += sum(int(c[11]) + int(c[12]) for c in children.get(p, []))
print(total)
PY
}

# runq_ns PID: nanoseconds the threads of PID alive now spent runnable but waiting for a CPU
# (schedstat's second field): what other processes on the broker's core took from it
runq_ns() {
  local t total=0
  for t in /proc/"$1"/task/*; do
    total=$((total + $(cut -d' ' -f2 "$t/schedstat" 2>/dev/null || echo 0)))
  done
  echo "$total"
}

# per_request TICKS REQUESTS: CPU µs per request
per_request() {
  awk -v t="$1" -v hz="$(getconf CLK_TCK)" -v n="$2" 'BEGIN { if (n > 0) printf "%.1f", t * 1e6 / hz / n; else print "-" }'
}

# metric BASE NAME [LABEL]: a counter of the broker at BASE (http://host:port) from /metrics, 0 when absent
metric() {
  curl -s "$1/metrics" | awk -v n="$2" -v l="${3:-}" '$1 == n || (l != "" && index($1, n "{") == 1 && index($1, l) > 0) { s += $2; found = 1 } END { printf "%d\n", found ? s : 0 }'
}

# check METHOD URL CODES [BODY_FILE] [HEADER...]: one request with curl (answer in $work/answer);
# fails the run on a status not in CODES ("200 204")
check() {
  local method=$1 url=$2 codes=$3 body=${4:-} code; shift 3; [ $# -gt 0 ] && shift
  local args=(-s -o "$work/answer" -w '%{http_code}' -X "$method" -H 'Accept: application/json')
  [ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data-binary "@$body")
  local h; for h in "$@"; do args+=(-H "$h"); done
  code=$(curl "${args[@]}" "$url")
  [[ " $codes " == *" $code "* ]] || { echo "${BROKER:-}: $method $url answered $code: $(head -c 600 "$work/answer")" >&2; exit 1; }
}

# alive NAME PID: stops the run, with NAME's exit status and the end of its log ($work/NAME.log),
# when PID is no longer running (a server that died must not read as a slow one)
alive() {
  kill -0 "$2" 2>/dev/null && return 0
  local rc=0
  wait "$2" 2>/dev/null || rc=$?
  echo "!! $1 (pid $2) is gone: exit status $rc$([ "$rc" -gt 128 ] && echo " (signal $((rc - 128)))"); the end of its log:" >&2
  tail -20 "$work/$1.log" >&2 2>/dev/null || true
  exit 1
}

cleanup() { stop_all; pg_down; rm -rf "$work"; } # lib.sh's trap calls it: the brokers first, then the cluster
