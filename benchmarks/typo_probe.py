"""Typo probe: how well Mimick models predict the vectors of misspelled words, beside similarity.

Each candidate (a name of ``CANDIDATES``: an architecture plus ``TrainConfig`` settings) is
trained twice with the trainer of ``python -m spacy_mimick train``:

1. on the evaluation table (``--vectors``, GloVe 6B 50d top 100k by default), then scored on
   - the typo probe: ``--typos`` (500) seeded one-edit misspellings of frequent table words
     (ranks 1,000-5,000, alphabetic, >= 5 characters; one ``make_typo`` edit each: swap two
     neighbours, drop a letter, insert or substitute a keyboard neighbour; re-drawn until the
     misspelling is not a table word). "typo cos": mean cosine between the model's vector for
     the misspelling and the true word's table vector; "top-10": the share of misspellings
     whose predicted vector has the true word among its 10 nearest table words (cosine, whole
     table). The probe's words and edits depend only on ``--probe-seed``, not on the model;
   - word similarity with the plain lookup (table vector when the word has one, else the
     model's; words lowercased; a pair with no vector counts as 0): Stanford Rare Word (all
     2,034 pairs), SimLex-999, MEN, WS-353. Spearman x 100;
2. on the README's Quick start table (``--readme-vectors``, GloVe top 20k) with the same
   settings, then asked for the 5 nearest table words of ``corssing`` (README: ``crossing``
   should be among them) and ``flatfish``, as ``python -m spacy_mimick neighbors`` prints them.

Every model is compared with the first candidate of the run (the baseline: ratios in the last
columns). Usage (one core; a few CPU-minutes per candidate):

    OMP_NUM_THREADS=1 python benchmarks/typo_probe.py --candidates before,default,love-ngram

Writes ``metrics/typo_probe.md`` and ``.json`` (``--out PREFIX``), after every candidate.
"""
import argparse
import json
import os
import random
import shlex
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Dict, List, Optional

import numpy
import torch

from spacy_mimick.cli_mimick import nearest_neighbors
from spacy_mimick.mimick_model import MimickModel
from spacy_mimick.mimick_trainer import DEFAULT_ARCH, PAPER_ARCH, PAPER_CONFIG, TrainConfig, make_typo, train_mimick
from spacy_mimick.similarity import SimilarityPair, evaluate_similarity, read_similarity_pairs
from spacy_mimick.vectors_io import WordVectors, read_vectors

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
NGRAM = {"@architectures": "spacy_mimick.MimickNgram.v1"}
HYBRID = {"@architectures": "spacy_mimick.MimickHybrid.v1"}

# The settings of the default model before this benchmark existed (n-gram bag, l2, typo 0.08).
BEFORE = dict(loss="l2", typo_prob=0.08)

# name -> (description, arch config, TrainConfig settings). "default" / "paper" are whatever
# `python -m spacy_mimick train` / `train --paper` use now.
CANDIDATES: Dict[str, tuple] = {
    "default": ("`train` default (now)", DEFAULT_ARCH, {}),
    "paper": ("`train --paper`: char BiLSTM, l2", PAPER_ARCH, asdict(PAPER_CONFIG)),
    "before": ("default before: n-gram 3-6, l2, typo 0.08", NGRAM, BEFORE),
    "typo30": ("n-gram, l2, typo 0.3", NGRAM, {**BEFORE, "typo_prob": 0.3}),
    "typo50": ("n-gram, l2, typo 0.5", NGRAM, {**BEFORE, "typo_prob": 0.5}),
    "typo70": ("n-gram, l2, typo 0.7", NGRAM, {**BEFORE, "typo_prob": 0.7}),
    "typo50-nce": ("n-gram, l2 + 0.1 x InfoNCE, typo 0.5", NGRAM,
                   {**BEFORE, "typo_prob": 0.5, "loss": "l2+contrastive"}),
    "typo50-n2": ("n-gram 2-6, l2, typo 0.5", {**NGRAM, "n_min": 2}, {**BEFORE, "typo_prob": 0.5}),
    "typo50-freq": ("n-gram, l2, typo 0.5, log-frequency weights", NGRAM,
                    {**BEFORE, "typo_prob": 0.5, "freq_weight": True}),
    "typo50-hybrid": ("hybrid (char BiLSTM + n-gram), l2, typo 0.5", HYBRID, {**BEFORE, "typo_prob": 0.5}),
    # LOVE (Chen et al. 2022) as described in its paper, in this trainer: InfoNCE at t 0.07 with
    # in-batch negatives (batches hold words of one length: similar-shaped hard negatives) and
    # 256 random ones, one-edit typo positives (swap / delete / insert / keyboard, 0.07 each),
    # character + subword input (the hybrid: char BiLSTM + n-gram bag; LOVE has an attention
    # encoder over characters and wordpieces).
    "love": ("LOVE-style: hybrid char + n-gram, InfoNCE t 0.07, typo 4 x 0.07", HYBRID,
             dict(loss="contrastive", temperature=0.07, negatives=256, typo_prob=0.28)),
    "love-ngram": ("LOVE-style on the n-gram bag: InfoNCE t 0.07, typo 4 x 0.07", NGRAM,
                   dict(loss="contrastive", temperature=0.07, negatives=256, typo_prob=0.28)),
}

README_WORDS = ("corssing", "flatfish")
README_TARGET = ("corssing", "crossing")
_START = time.perf_counter()


def log(message: str) -> None:
    print(f"[{time.perf_counter() - _START:7.1f}s] {message}", flush=True)


def make_probe(table: WordVectors, n: int, seed: int, lo: int = 1000, hi: int = 5000):
    """(word, misspelling) pairs: seeded one-edit typos of table words of ranks lo..hi."""
    rng = random.Random(seed)
    pool = [w for w in table.words[lo - 1 : hi] if len(w) >= 5 and w.isalpha()]
    rng.shuffle(pool)
    out = []
    for word in pool:
        for _ in range(20):
            typo = make_typo(word, rng)
            if typo != word and table.get(typo) is None:
                out.append((word, typo))
                break
        if len(out) == n:
            break
    return out


def cosines(a: numpy.ndarray, b: numpy.ndarray) -> numpy.ndarray:
    norms = numpy.linalg.norm(a, axis=1) * numpy.linalg.norm(b, axis=1)
    return (a * b).sum(axis=1) / numpy.maximum(norms, 1e-8)


def probe(model: MimickModel, table: WordVectors, pairs, k: int = 10) -> Dict:
    words = [w for w, _ in pairs]
    pred = model.predict([t for _, t in pairs])
    true = numpy.stack([table.get(w) for w in words])
    hits = 0
    for start in range(0, len(pairs), 250):
        rows = nearest_neighbors(pred[start : start + 250], table, k)
        hits += sum(w in {n for n, _ in row} for w, row in zip(words[start : start + 250], rows))
    return {"n": len(pairs), "typo_cos": float(cosines(pred, true).mean()), "top10": hits / len(pairs)}


def similarity(model: MimickModel, table: WordVectors, sets: Dict[str, List[SimilarityPair]]) -> Dict:
    out = {}
    for name, pairs in sets.items():
        oov = sorted({w for p in pairs for w in (p.word1, p.word2) if table.get(w) is None})
        predicted = dict(zip(oov, model.predict(oov))) if oov else {}
        lookup = lambda w: table.get(w) if table.get(w) is not None else predicted.get(w)  # noqa: E731
        out[name] = evaluate_similarity(pairs, lookup).spearman
    return out


def readme_neighbours(model: MimickModel, table: WordVectors, k: int = 5) -> Dict:
    rows = nearest_neighbors(model.predict(list(README_WORDS)), table, k, exclude=list(README_WORDS))
    return {w: [[n, round(s, 2)] for n, s in row] for w, row in zip(README_WORDS, rows)}


def train(name: str, vectors: WordVectors, args, tag: str):
    desc, arch, settings = CANDIDATES[name]
    config = TrainConfig(**{**settings, "seed": args.seed,
                            **({"max_epochs": args.max_epochs} if args.max_epochs else {})})
    start = time.perf_counter()
    result = train_mimick(vectors, arch, config, progress=False, log=lambda m: log(f"{name} [{tag}] {m}"))
    seconds = time.perf_counter() - start
    log(f"{name} [{tag}] trained in {seconds:.0f}s ({len(result.history)} epochs, best {result.best_epoch})")
    return result, seconds, config


def fmt(x, spec=".1f"):
    return "—" if x is None or x != x else format(x, spec)


def markdown(report: Dict) -> str:
    rows = report["models"]
    sets = report["similarity_sets"]
    head = ["model", "typo cos", "top-10", *[f"{s} (table + model)" for s in sets],
            "README `corssing` top 5", "train s (epochs)", "vs first: typo cos / top-10 / RW"]
    lines = [f"# Typo probe: {Path(report['vectors']).name} ({report['n_words']:,} words), "
             f"README example on {Path(report['readme_vectors']).name}", "", "Command:", "", "```",
             report["command"], "```", "",
             f"{report['n_typos']} misspellings (probe seed {report['probe_seed']}), e.g. "
             + ", ".join(f"{t} ({w})" for w, t in report["probe_examples"][:6])
             + f". Table only: RW {fmt(report['table_only']['RW'])}, typo top-10 0. "
             f"Training seed {report['seed']}, {report['threads']} torch thread(s); wall {report['wall_seconds']:.0f}s.",
             "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    base = rows[0] if rows else None
    for r in rows:
        nbrs = r["readme"]["corssing"]
        hit = any(n == README_TARGET[1] for n, _ in nbrs)
        cell = ", ".join(f"{'**' + n + '**' if n == README_TARGET[1] else n} ({s:.2f})" for n, s in nbrs)
        ratio = (f"{r['typo_cos'] / base['typo_cos']:.2f} / {r['top10'] / max(base['top10'], 1e-9):.2f} / "
                 f"{r['similarity']['RW'] / base['similarity']['RW']:.3f}")
        lines.append("| " + " | ".join([
            f"`{r['name']}`: {r['description']}", fmt(r["typo_cos"], ".3f"), fmt(r["top10"], ".3f"),
            *[fmt(r["similarity"][s]) for s in sets], ("yes: " if hit else "no: ") + cell,
            f"{r['train_seconds']:.0f} ({r['epochs']})", ratio]) + " |")
    lines += ["", "`flatfish` (README): " + "; ".join(
        f"`{r['name']}` " + ", ".join(f"{n} ({s:.2f})" for n, s in r["readme"]["flatfish"]) for r in rows), ""]
    return "\n".join(lines)


def write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vectors", default=str(DATA / "embeddings" / "glove.6B.50d.top100k.txt.gz"))
    parser.add_argument("--readme-vectors", default=str(ROOT / "assets" / "glove.6B.50d.top20k.txt.gz"))
    parser.add_argument("--candidates", default="before,default", help="comma-separated; the first is the baseline")
    parser.add_argument("--typos", type=int, default=500)
    parser.add_argument("--probe-seed", type=int, default=45)
    parser.add_argument("--seed", type=int, default=0, help="training seed")
    parser.add_argument("--max-epochs", type=int, default=0, help="cap on epochs (0: each candidate's own)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--save-models", default="", help="save each candidate's models to DIR/NAME[-readme]")
    parser.add_argument("--out", default=str(ROOT / "metrics" / "typo_probe"))
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args(argv)
    if args.list:
        for name, (desc, arch, settings) in CANDIDATES.items():
            print(f"{name:16s} {desc}  {arch} {settings}")
        return
    names = [n for n in args.candidates.split(",") if n]
    unknown = [n for n in names if n not in CANDIDATES]
    if unknown:
        parser.error(f"unknown candidates {unknown}; --list shows them")
    torch.set_num_threads(args.threads)
    command = "OMP_NUM_THREADS=1 python " + " ".join(
        shlex.quote(a) for a in ["benchmarks/typo_probe.py", *(sys.argv[1:] if argv is None else argv)])
    table = read_vectors(args.vectors)
    readme_table = read_vectors(args.readme_vectors)
    sim = Path(args.data) / "similarity" / "en"
    sets = {name: [SimilarityPair(p.word1.lower(), p.word2.lower(), p.score) for p in read_similarity_pairs(sim / f)]
            for name, f in (("RW", "rw.txt"), ("SimLex", "EN-SIMLEX-999.txt"), ("MEN", "EN-MEN-TR-3k.txt"),
                            ("WS353", "EN-WS-353-ALL.txt"))}
    pairs = make_probe(table, args.typos, args.probe_seed)
    report: Dict = {
        "command": command, "vectors": args.vectors, "readme_vectors": args.readme_vectors,
        "n_words": len(table), "n_typos": len(pairs), "probe_seed": args.probe_seed, "seed": args.seed,
        "threads": args.threads, "similarity_sets": list(sets), "probe_examples": pairs[:20],
        "table_only": {name: evaluate_similarity(p, table.get).spearman for name, p in sets.items()},
        "models": [],
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for name in names:
        result, seconds, config = train(name, table, args, "eval table")
        readme_result, readme_seconds, _ = train(name, readme_table, args, "README table")
        if args.save_models:
            result.model.to_disk(Path(args.save_models) / name)
            readme_result.model.to_disk(Path(args.save_models) / f"{name}-readme")
        row = {"name": name, "description": CANDIDATES[name][0], "arch": CANDIDATES[name][1],
               "train_config": asdict(config), "train_seconds": seconds, "epochs": len(result.history),
               "best_epoch": result.best_epoch, "readme_train_seconds": readme_seconds,
               **probe(result.model, table, pairs), "similarity": similarity(result.model, table, sets),
               "readme": readme_neighbours(readme_result.model, readme_table)}
        log(f"{name}: typo cos {row['typo_cos']:.3f} top-10 {row['top10']:.3f}; "
            + ", ".join(f"{k} {v:.1f}" for k, v in row["similarity"].items())
            + "; corssing: " + ", ".join(n for n, _ in row["readme"]["corssing"]))
        report["models"].append(row)
        report["wall_seconds"] = time.perf_counter() - _START
        write_atomic(out.with_suffix(".json"), json.dumps(report, indent=1, ensure_ascii=False))
        write_atomic(out.with_suffix(".md"), markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
