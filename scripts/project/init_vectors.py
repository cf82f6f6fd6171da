"""``spacy init vectors`` for the staged vectors, or a blank vectors-free pipeline.

    python scripts/project/init_vectors.py LANG VECTORS.vec.gz OUTPUT_DIR [--sources sources.json]

Runs ``python -m spacy init vectors LANG VECTORS OUTPUT_DIR --name NAME`` (NAME: the vectors'
name from ``sources.json``, written by ``data.py``). A language without vectors (``data.py``
wrote a ``0 0`` header) gets ``spacy.blank(LANG)`` saved to OUTPUT_DIR instead, so the tagger
configs' ``--paths.vectors OUTPUT_DIR`` works the same and the taggers learn their own random-
initialized word embeddings (the paper's tagging-only runs).
"""
import argparse
import gzip
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

import spacy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from json_files import vectors_name  # noqa: E402


def n_rows(path: Path) -> int:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf8") as f:
        first = f.readline().split()
        if len(first) == 2 and all(x.isdigit() for x in first):
            return int(first[0])
        return 1 if first else 0


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lang")
    parser.add_argument("vectors", type=Path, help="word2vec text file (data.py's vectors.vec.gz)")
    parser.add_argument("output_dir", type=Path)
    parser.add_argument("--sources", type=Path, default=None, help="data.py's sources.json (for the vectors' name)")
    args = parser.parse_args(argv)

    if n_rows(args.vectors) == 0:
        spacy.blank(args.lang).to_disk(args.output_dir)
        print(f"no vectors for {args.lang}: saved a blank pipeline to {args.output_dir} (random embeddings)")
        return
    name = vectors_name(args.sources)
    command = [sys.executable, "-m", "spacy", "init", "vectors", args.lang, str(args.vectors), str(args.output_dir)]
    if name:
        command += ["--name", f"{args.lang}_{name}" if not name.startswith(f"{args.lang}_") else name]
    print(" ".join(command))
    sys.exit(subprocess.call(command))


if __name__ == "__main__":
    main(sys.argv[1:])
