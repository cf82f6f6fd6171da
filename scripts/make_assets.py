"""Cut the small embedded default data in assets/ from the real data in ../shared/data.

- assets/glove.6B.50d.top20k.txt.gz: the first (most frequent) 20,000 rows of GloVe 6B 50d
  (PDDL-1.0; see assets/README.md).
- assets/UD_English-EWT/: the first 1,500 / 400 / 400 sentences of UD English-EWT 2.16
  train / dev / test (CC BY-SA 4.0, attribution in assets/README.md).

    python scripts/make_assets.py [--shared ../shared/data]
"""
import argparse
import gzip
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def first_sentences(src: Path, dst: Path, n: int) -> None:
    count = 0
    with open(src, encoding="utf8") as f, open(dst, "w", encoding="utf8") as out:
        for line in f:
            out.write(line)
            if line.strip() == "":
                count += 1
                if count >= n:
                    break


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    args = parser.parse_args()
    assets = ROOT / "assets"
    with gzip.open(args.shared / "embeddings/glove.6B.50d.top100k.txt.gz", "rt", encoding="utf8") as src, \
            gzip.open(assets / "glove.6B.50d.top20k.txt.gz", "wt", encoding="utf8") as out:
        for _, line in zip(range(20_000), src):
            out.write(line)
    ewt_src = args.shared / "ud/UD_English-EWT"
    ewt = assets / "UD_English-EWT"
    ewt.mkdir(exist_ok=True)
    for split, n in (("train", 1500), ("dev", 400), ("test", 400)):
        first_sentences(ewt_src / f"en_ewt-ud-{split}.conllu", ewt / f"en_ewt-ud-{split}.conllu", n)
    shutil.copy(ewt_src / "LICENSE.txt", ewt / "LICENSE.txt")


if __name__ == "__main__":
    main()
