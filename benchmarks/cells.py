"""The results of chain.sh and broker-chain.sh: one line per cell,
"round kind mode entity conns rps p50 p99 errors cpu", printed as a table, and the
ratios between two cells of the same run. Imported by their report steps."""

HEADER = (f'{"round":>5} {"chain":<9} {"mode":<10} {"entity":<8} {"callers":>7} {"req/s":>9} '
          f'{"p50 us":>8} {"p99 us":>8} {"errors":>6} {"cpu us/req":>10}')


def load(path):
    """Prints the cells of PATH as a table; gives {(round, kind, mode, entity, conns): (rps, p50, p99, cpu)}."""
    print(HEADER)
    cell = {}
    for line in open(path):
        if not line.strip():
            continue
        rnd, kind, mode, ent, conns, rps, p50, p99, err, cpu = line.split()
        cell[(rnd, kind, mode, ent, conns)] = (float(rps), float(p50), float(p99), cpu)
        print(f'{rnd:>5} {kind:<9} {mode:<10} {ent:<8} {conns:>7} {float(rps):>9.0f} {float(p50):>8.0f} '
              f'{float(p99):>8.0f} {err:>6} {cpu:>10}')
    print()
    print("ratios (req/s; p99 in brackets)")
    return cell


def ratio(cell, a, b):
    """Cell a's req/s over cell b's, with both p99s; "-" when either is missing."""
    if a in cell and b in cell and cell[b][0] > 0:
        return f'{cell[a][0] / cell[b][0]:.2f} (p99 {cell[a][2]:.0f} vs {cell[b][2]:.0f} us)'
    return "-"


def rounds(cell):
    return sorted({k[0] for k in cell})
