"""Measure how exactly the converted original MIMICK models reproduce the original's vectors.

    python scripts/original_release_table.py [RELEASE_DIR] [--update docs/original_release.md]

RELEASE_DIR (default ../shared/data/original_mimick) holds the released {lang}-lstm-est.tar.gz
files and reference/{lang}.json (vectors predicted by the original DyNet code). Prints a
markdown table (language, characters, reference words, max abs diff); --update replaces the
table between the <!-- exactness:start --> and <!-- exactness:end --> lines of a file.
Exits 1 if any language differs by more than 1e-4.
"""
import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from spacy_mimick.vectors.original_release import load_original_release, max_reference_diff  # noqa: E402

START, END = "<!-- exactness:start -->", "<!-- exactness:end -->"
TOLERANCE = 1e-4


def table(release: Path) -> (str, float):
    rows = ["| language | characters | reference words | max abs diff |", "|---|---:|---:|---:|"]
    worst = 0.0
    for tarball in sorted(release.glob("*-lstm-est.tar.gz")):
        model = load_original_release(tarball)
        lang = model.meta["lang"]
        n_words, diff = max_reference_diff(model, release / "reference" / f"{lang}.json")
        worst = max(worst, diff)
        rows.append(f"| {lang} | {len(model.features['chars'].chars)} | {n_words} | {diff:.1e} |")
    rows.append(f"\n{len(rows) - 2} languages; largest difference {worst:.1e} (float32 arithmetic; "
                f"the release stores 9 significant digits).")
    return "\n".join(rows), worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("release", nargs="?", type=Path, default=REPO.parent / "shared" / "data" / "original_mimick")
    parser.add_argument("--update", type=Path, help="markdown file whose exactness table to replace")
    args = parser.parse_args()
    text, worst = table(args.release)
    if args.update:
        doc = args.update.read_text(encoding="utf8")
        if START not in doc or END not in doc:
            raise SystemExit(f"{args.update}: no {START} ... {END} lines to replace")
        head, rest = doc.split(START, 1)
        _, tail = rest.split(END, 1)
        args.update.write_text(f"{head}{START}\n{text}\n{END}{tail}", encoding="utf8")
    print(text)
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
