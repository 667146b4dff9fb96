#!/usr/bin/env bash
# Runs the ETSI NGSI-LD test suite (Robot Framework) against a fresh cor launcher and prints the
# figures per area that doc/conformance.md gives.
#
#   conformance/etsi.sh SUITE_DIR [ROBOT_ARGS...]
#
# SUITE_DIR is a checkout of the suite (ETSI's ngsi-ld-test-suite or the marek-mraz fork); it is
# copied, never changed. ROBOT_ARGS go to robot before the test path, e.g.
#   conformance/etsi.sh ../ngsi-ld-test-suite --test '018_1*'
#   conformance/etsi.sh ../ngsi-ld-test-suite --include since_v1.8.1
# The test path is TP/NGSI-LD unless COR_ETSI_TESTS names others (relative to the suite).
#
# What it does, so that it needs nothing but Python 3.11+ with pip's registry and this checkout:
#  - copies the suite to a work directory (COR_ETSI_WORK, default a new temporary one) and points
#    the suite's own remote @context (raw.githubusercontent.com/.../resources/jsonld-contexts/) at
#    a local HTTP server of that directory, so no test waits on the internet for it;
#  - makes a virtualenv there from the suite's requirements.txt (COR_ETSI_VENV reuses one);
#  - starts ./cor run --store memory on COR_ETSI_PORT (default 1026) with --temporalPage 30, the
#    temporal pagination the suite's TPs assume (its README: 40 instances paginate, 20 do not);
#  - runs robot with the suite's variables given on its command line (they override
#    resources/variables.py): the broker, the notification server, the context source and the
#    context server on 127.0.0.1, the V1.8 core context, and delete_temporal_on_core_delete True
#    (the suite's default, COR_ETSI_DELETE_TEMPORAL changes it): a TP's teardown that deletes an
#    entity then deletes its temporal evolution too. cor keeps an entity's history when the entity
#    is deleted, so with False every entity of earlier TPs stays in the history, and temporal
#    queries by type meet them in a whole run;
#  - leaves out the MQTT TPs (tag sub-mqtt-notification): the suite starts their broker with
#    `docker run` of an image it builds elsewhere;
#  - prints passed/failed per area from robot's output.xml and stops the broker and the server.
#  - points Easy Global Market's copy of the suite's compound context at the local one (the same
#    terms and IRIs).
# Contexts the suite names on other hosts (fiware.github.io) are downloaded by the broker if the
# machine reaches them; otherwise those TPs get 504 LdContextNotAvailable, as doc/conformance.md
# says.
set -euo pipefail

if [[ $# -lt 1 || ! -f "$1/requirements.txt" || ! -d "$1/TP/NGSI-LD" ]]; then
    echo "usage: conformance/etsi.sh SUITE_DIR [ROBOT_ARGS...]" >&2
    echo "  SUITE_DIR: a checkout of ngsi-ld-test-suite (with requirements.txt and TP/NGSI-LD)" >&2
    exit 2
fi
suite_src=$(cd "$1" && pwd)
shift
root=$(cd "$(dirname "$0")/.." && pwd)
work=${COR_ETSI_WORK:-$(mktemp -d -t cor-etsi.XXXXXX)}
port=${COR_ETSI_PORT:-1026}
ctx_port=${COR_ETSI_CONTEXT_PORT:-18087}
notify_port=${COR_ETSI_NOTIFY_PORT:-18085}
source_port=${COR_ETSI_SOURCE_PORT:-18086}
server_port=${COR_ETSI_SERVER_PORT:-18088}
tests=${COR_ETSI_TESTS:-TP/NGSI-LD}
python=${PYTHON:-python3}

pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT

echo "work directory: $work"
mkdir -p "$work"
rm -rf "$work/suite"
# A copy without .git: the rewrite below must not touch the checkout it came from.
(cd "$suite_src" && tar --exclude=.git -cf - .) | (mkdir -p "$work/suite" && cd "$work/suite" && tar -xf -)
suite="$work/suite"

remote='https://raw.githubusercontent.com/[A-Za-z0-9_.-]*/ngsi-ld-test-suite/[A-Za-z0-9_.-]*/resources/jsonld-contexts/'
local_ctx="http://127.0.0.1:$ctx_port/"
grep -rlZ -e 'raw.githubusercontent.com/[^"]*/resources/jsonld-contexts/' \
        "$suite/data" "$suite/resources" "$suite/TP" 2>/dev/null \
    | xargs -0 -r sed -i "s#$remote#$local_ctx#g"
# Some data files name Easy Global Market's copy of the suite's compound context. It holds the same
# eleven terms as resources/jsonld-contexts/ngsi-ld-test-suite.jsonld, mapped to the same IRIs, and
# the V1.8 core context: the suite's own compound context expands every term alike.
egm='https://easy-global-market.github.io/ngsild-api-data-models/ngsildTestSuite/ngsildTestSuiteV1.8-compound.jsonld'
grep -rlZ -F -e "$egm" "$suite/data" "$suite/resources" "$suite/TP" 2>/dev/null \
    | xargs -0 -r sed -i "s#$egm#${local_ctx}ngsi-ld-test-suite-compound.jsonld#g"

venv=${COR_ETSI_VENV:-$work/venv}
if [[ ! -x "$venv/bin/robot" ]]; then
    "$python" -m venv "$venv"
    # requirements.txt installs a library of the suite by a relative path: run pip from the suite.
    (cd "$suite" && "$venv/bin/pip" install -q -r requirements.txt)
fi

"$python" -m http.server "$ctx_port" --bind 127.0.0.1 --directory "$suite/resources/jsonld-contexts" \
    > "$work/contexts.log" 2>&1 &
pids+=($!)

"$root/cor" run --store memory --port "$port" --temporalPage 30 > "$work/cor.log" 2>&1 &
pids+=($!)
deadline=$((SECONDS + 300))
until curl -fsS -o /dev/null "http://127.0.0.1:$port/health" 2>/dev/null; do
    if (( SECONDS > deadline )) || ! kill -0 "${pids[-1]}" 2>/dev/null; then
        echo "the broker did not start; its log:" >&2
        cat "$work/cor.log" >&2
        exit 1
    fi
    sleep 0.5
done
until curl -fsS -o /dev/null "${local_ctx}ngsi-ld-test-suite-compound.jsonld" 2>/dev/null; do
    (( SECONDS > deadline )) && { echo "the context server did not start" >&2; exit 1; }
    sleep 0.2
done

api="http://127.0.0.1:$port/ngsi-ld/v1"
set +e
(cd "$suite" && "$venv/bin/robot" \
    --name NGSI-LD --outputdir "$work/results" --consolewidth 120 \
    --exclude sub-mqtt-notification \
    --variable "url:$api" \
    --variable "temporal_api_url:$api" \
    --variable "ngsild_test_suite_context:${local_ctx}ngsi-ld-test-suite-compound.jsonld" \
    --variable "notification_server_host:127.0.0.1" \
    --variable "notification_server_port:$notify_port" \
    --variable "context_source_host:127.0.0.1" \
    --variable "context_source_port:$source_port" \
    --variable "context_server_host:127.0.0.1" \
    --variable "context_server_port:$server_port" \
    --variable "core_context:https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.8.jsonld" \
    --variable "delete_temporal_on_core_delete:${COR_ETSI_DELETE_TEMPORAL:-True}" \
    "$@" $tests) > "$work/robot.log" 2>&1
robot_status=$?
set -e
tail -n 5 "$work/robot.log"

# Passed and failed per area: the directories under TP/NGSI-LD, and the temporal ones apart.
"$python" - "$work/results/output.xml" <<'EOF'
import sys, xml.etree.ElementTree as ET
from collections import defaultdict
counts = defaultdict(lambda: [0, 0])
def walk(suite, path):
    source = suite.get("source") or ""
    for child in suite.findall("suite"):
        walk(child, path)
    for test in suite.findall("test"):
        status = test.find("status").get("status")
        parts = source.replace("\\", "/").split("/TP/NGSI-LD/")[-1].split("/")
        area = "/".join(parts[:2]) if len(parts) > 2 else parts[0]
        if "TemporalEntity" in source:
            area += " (temporal)"
        counts[area][0 if status == "PASS" else 1] += 1
root = ET.parse(sys.argv[1]).getroot()
for suite in root.findall("suite"):
    walk(suite, "")
total = [0, 0]
print(f"{'area':60} {'passed':>7} {'failed':>7}")
for area in sorted(counts):
    passed, failed = counts[area]
    total[0] += passed; total[1] += failed
    print(f"{area:60} {passed:7} {failed:7}")
print(f"{'all':60} {total[0]:7} {total[1]:7}")
EOF
echo "robot's report: $work/results/report.html (robot exit status $robot_status)"
