"""Two systems of ``typo_tagging.py`` over several training seeds: each seed's POS at each typo
rate with McNemar's p (from the seed's table), then the mean ± standard deviation over seeds and
Welch's t-test of the two systems' accuracies across seeds (scipy.stats).

McNemar's test in one run asks whether two trained models differ on this test set; it does not
see how much a model moves when only its training seed changes. The t-test across seeds does:
it compares the difference of the means with the spread between seeds of each system.

    python benchmarks/typo_tagging_seeds.py 0=seed0.md 1=seed1.md 2=seed2.md --a default --b typos15keep

Each file is a table that ``typo_tagging.py --output FILE`` wrote, with rows for both systems;
McNemar's p is read from B's row, so A must have been the first ``--system`` of that run.
"""
import argparse
import re
import statistics
import sys
from pathlib import Path
from typing import Dict, List, Tuple

from scipy import stats

ROW = re.compile(r"^\|\s*(\d+)%\s*\|\s*\**([^|*]+?)\**\s*\|\s*\**([\d.]+)\**\s*\|")


def read_table(path: Path) -> Dict[Tuple[int, str], Tuple[float, str]]:
    """(rate in percent, system) -> (POS, McNemar p as printed) from one typo_tagging.py table."""
    rows = {}
    for line in path.read_text(encoding="utf8").splitlines():
        match = ROW.match(line)
        if match:
            p = line.rstrip().rstrip("|").split("|")[-1].strip()
            rows[(int(match.group(1)), match.group(2).strip())] = (float(match.group(3)), p)
    if not rows:
        raise SystemExit(f"{path}: no rows of a typo_tagging.py table (| RATE% | SYSTEM | POS | ...)")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="+", metavar="SEED=TABLE.md")
    parser.add_argument("--a", required=True, help="The baseline system's name")
    parser.add_argument("--b", required=True, help="The other system's name")
    args = parser.parse_args()
    seeds: List[Tuple[str, Dict]] = []
    for spec in args.tables:
        seed, sep, path = spec.partition("=")
        if not sep:
            raise SystemExit(f"{spec!r}: expected SEED=TABLE.md")
        seeds.append((seed, read_table(Path(path))))
    rates = sorted({rate for _, rows in seeds for rate, _ in rows})
    for seed, rows in seeds:
        for rate in rates:
            for name in (args.a, args.b):
                if (rate, name) not in rows:
                    raise SystemExit(f"seed {seed}: no row for {name!r} at {rate}% typos")
            if rows[(rate, args.a)][1]:
                raise SystemExit(f"seed {seed}: {args.a!r} has a McNemar p at {rate}% typos, so it was not "
                                 f"the reference (the first --system) of that run: B's p would be against another system")
    head = " | ".join(f"{r}%: {args.a} → {args.b} (p)" for r in rates)
    print(f"POS, {args.a} against {args.b}; p: McNemar in each seed's run, Welch's t-test across seeds\n")
    print(f"| training seed | {head} |")
    print("|---:|" + "---:|" * len(rates))
    for seed, rows in seeds:
        cells = []
        for rate in rates:
            a, (b, p) = rows[(rate, args.a)][0], rows[(rate, args.b)]
            cells.append(f"{a:.2f} → {b:.2f}, {b - a:+.2f} ({p})")
        print(f"| {seed} | " + " | ".join(cells) + " |")
    cells = []
    for rate in rates:
        a = [rows[(rate, args.a)][0] for _, rows in seeds]
        b = [rows[(rate, args.b)][0] for _, rows in seeds]
        diff = statistics.mean(b) - statistics.mean(a)
        if len(seeds) > 1:
            p = stats.ttest_ind(b, a, equal_var=False).pvalue
            cells.append(f"{statistics.mean(a):.2f} ± {statistics.stdev(a):.2f} → "
                         f"{statistics.mean(b):.2f} ± {statistics.stdev(b):.2f}, {diff:+.2f} ({p:.2g})")
        else:
            cells.append(f"{diff:+.2f}")
    print(f"| mean ± sd ({len(seeds)} seeds) | " + " | ".join(cells) + " |")
    worse = {rate: sum(rows[(rate, args.b)][0] < rows[(rate, args.a)][0] for _, rows in seeds) for rate in rates}
    print("\n" + "; ".join(f"{r}%: {args.b} below {args.a} in {worse[r]} of {len(seeds)} seeds" for r in rates))


if __name__ == "__main__":
    sys.exit(main())
