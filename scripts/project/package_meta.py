"""Write the meta.json for ``spacy package``: name, data sources, licenses, accuracy, requirements.

    python scripts/project/package_meta.py MODEL_DIR OUTPUT.json --sources corpus/<tb>/sources.json \
        --metrics metrics/<tb>/<setting>/mimick.json --name mimick_ud_ewt --version 0.1.0

Starts from the trained pipeline's own meta.json and fills in what a published pipeline needs:
the UD treebank and the vectors it was trained on (with their licenses, from ``data.py``'s
``sources.json``; the package's license is the treebank's, which governs models trained on it),
the paper metrics of ``evaluate.py`` on the test set as ``performance``, and ``spacy-mimick`` in
``requirements`` (the pipeline's components come from it).
"""
import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import spacy_mimick

PAPER = {
    "name": "MIMICK (Pinter, Guthrie & Eisenstein 2017): Mimicking Word Embeddings using Subword RNNs",
    "url": "https://aclanthology.org/D17-1010/",
}
# Fractions only: spaCy's generated README shows every performance value x 100.
PERFORMANCE_KEYS = (
    "pos_acc", "morph_acc", "attr_micro_p", "attr_micro_r", "attr_micro_f", "attr_macro_f",
    "oov_train_pos_acc", "oov_train_attr_micro_f", "oov_vec_pos_acc", "oov_vec_attr_micro_f",
)


def requirement() -> str:
    major, minor = spacy_mimick.__version__.split(".")[:2]
    return f"spacy-mimick>={major}.{minor}.0,<{major}.{int(minor) + 1}.0"


def build_meta(model_meta: Dict[str, Any], sources: Dict[str, Any], metrics: Optional[Dict[str, Any]],
               name: str, version: str) -> Dict[str, Any]:
    meta = dict(model_meta)
    treebank = sources.get("treebank", "")
    pretty = treebank[3:].replace("-", " ") if treebank.startswith("UD_") else treebank
    vectors = sources.get("vectors") or {}
    train = ""
    if metrics and metrics.get("n_train_tokens"):
        train = f" ({metrics['n_train_tokens']:,} training tokens)"
    tested = ""
    if metrics and metrics.get("n_test_tokens"):
        scores = metrics.get("scores", {})
        tested = (f" Performance: on the {metrics['n_test_tokens']:,} test tokens; oov_train_*: on the "
                  f"{scores.get('oov_train_n_tokens') or 0:,} outside the training vocabulary, oov_vec_*: on the "
                  f"{scores.get('oov_vec_n_tokens') or 0:,} without a pretrained vector.")
    meta.update(
        name=name,
        version=version,
        description=(
            f"Joint UPOS and morphological feature tagger (MIMICK, Pinter et al. 2017) trained on "
            f"Universal Dependencies {pretty}{train}, with "
            + (f"{vectors.get('name')} vectors and Mimick vectors, predicted from spelling, for "
               f"out-of-vocabulary words." if vectors else "randomly initialized word embeddings.")
            + tested
        ),
        license=sources.get("treebank_license") or "see sources",
    )
    meta["author"] = meta.get("author") or "spacy-mimick"
    meta["url"] = meta.get("url") or PAPER["url"]
    source_list: List[Dict[str, str]] = [{
        "name": f"Universal Dependencies {pretty}",
        "url": sources.get("treebank_url", ""),
        "license": sources.get("treebank_license") or "see the treebank's LICENSE.txt",
    }]
    if sources.get("treebank_source"):
        source_list[0]["version"] = " ".join(sources["treebank_source"].split())[:200]
    if vectors:
        source_list.append({
            "name": f"{vectors.get('name')} word vectors" + (f": {vectors['description']}" if vectors.get("description") else ""),
            "url": vectors.get("url") or "",
            "license": vectors.get("license") or "see the vectors' distribution",
        })
    source_list.append({"name": PAPER["name"], "url": PAPER["url"], "license": "spacy-mimick: MIT"})
    meta["sources"] = source_list
    if metrics:
        scores = metrics.get("scores", {})
        meta["performance"] = {key: scores.get(key) for key in PERFORMANCE_KEYS if scores.get(key) is not None}
        if metrics.get("words_per_second"):
            meta["speed"] = {"cpu": metrics["words_per_second"]}
    requirements = [r for r in meta.get("requirements", []) if not r.startswith("spacy-mimick")]
    meta["requirements"] = requirements + [requirement()]
    return meta


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir", type=Path, help="The trained pipeline (model-best)")
    parser.add_argument("output", type=Path, help="meta.json to write")
    parser.add_argument("--sources", type=Path, required=True, help="data.py's sources.json")
    parser.add_argument("--metrics", type=Path, default=None, help="evaluate.py's JSON for this pipeline")
    parser.add_argument("--name", required=True, help="Package name without the language, e.g. mimick_ud_ewt")
    parser.add_argument("--version", default="0.1.0")
    args = parser.parse_args(argv)

    model_meta = json.loads((args.model_dir / "meta.json").read_text(encoding="utf8"))
    sources = json.loads(args.sources.read_text(encoding="utf8"))
    metrics = json.loads(args.metrics.read_text(encoding="utf8")) if args.metrics and args.metrics.exists() else None
    meta = build_meta(model_meta, sources, metrics, args.name, args.version)
    from spacy.schemas import ModelMetaSchema, validate

    errors = validate(ModelMetaSchema, meta)
    if errors:
        raise SystemExit("error: invalid meta.json:\n" + "\n".join(errors))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf8")
    print(f"{meta['lang']}_{meta['name']}-{meta['version']}: license {meta['license']}, "
          f"requirements {meta['requirements']} -> {args.output}")


if __name__ == "__main__":
    main(sys.argv[1:])
