"""Loads history into a broker through the temporal API, fast: POST /temporal/entities with one
entity whose attribute is an array of many instances (observedAt at a fixed step), one request
after the other on one keep-alive connection. Used by temporal.sh.

  python3 temporal_load.py BASE ENTITY TYPE ATTR START_EPOCH_S STEP_S COUNT [PER_REQUEST [ENTITIES]]

BASE is http://127.0.0.1:PORT/ngsi-ld/v1. With ENTITIES, ENTITY holds {i} (0001...) and each of
that many entities gets the same COUNT instances. Prints "instances seconds instances/s".
"""
import http.client
import sys
import time
import urllib.parse
from datetime import datetime, timezone


def stamp(s):
    return datetime.fromtimestamp(s, timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')


def main():
    base, entity, etype, attr = sys.argv[1:5]
    start, step, count = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
    per = int(sys.argv[8]) if len(sys.argv) > 8 else 100_000
    entities = int(sys.argv[9]) if len(sys.argv) > 9 else 0
    u = urllib.parse.urlparse(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    path = u.path + '/temporal/entities'
    t0 = time.time()
    total = 0
    for e in range(1, entities + 1) if entities else [0]:
        total += post(conn, path, entity.replace('{i}', f'{e:04d}') if entities else entity, etype, attr, start, step, count, per)
    secs = time.time() - t0
    print(f'{total} {secs:.1f} {total / secs:.0f}')


def post(conn, path, entity, etype, attr, start, step, count, per):
    head = f'{{"id": "{entity}", "type": "{etype}", "{attr}": ['
    done = 0
    while done < count:
        n = min(per, count - done)
        parts = []
        for k in range(done, done + n):
            # a value that moves (so an aggregation has something to do), one second per step
            parts.append(f'{{"type":"Property","value":{(k % 1000) / 10},"observedAt":"{stamp(start + k * step)}"}}')
        body = (head + ','.join(parts) + ']}').encode()
        conn.request('POST', path, body, {'Content-Type': 'application/json'})
        r = conn.getresponse()
        answer = r.read()
        if r.status not in (201, 204):
            sys.exit(f'POST {path} answered {r.status}: {answer[:300]!r}')
        done += n
    return done


if __name__ == '__main__':
    main()
