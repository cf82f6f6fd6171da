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

Each model is scored with each lookup of ``--lookups`` (a name of ``LOOKUPS``): ``plain`` is the
lookup above; the ``spell*`` ones add the spelling backoff of ``spacy_mimick.vectors.spelling`` (what
``MimickVectors(spelling_backoff=True)`` and ``neighbors --spelling-backoff`` do) between the table
and the model: a word the table lacks that is one edit from table words gets the vector of the one
nearest to Mimick's prediction, blended with the prediction. ``--ranks`` adds probes of rarer
words (the first band is the headline probe). "RW spelled": how many of RW's words without a table
vector the lookup gave a table word's vector (RW's words are real words: each is a wrong
correction, measured by the RW column).

Every row is compared with the first (model, lookup) of the run (the baseline: ratios in the last
columns). Usage (one core; a few CPU-minutes per candidate):

    OMP_NUM_THREADS=1 python benchmarks/typo_probe.py --candidates before,default,love-ngram
    OMP_NUM_THREADS=1 python benchmarks/typo_probe.py --candidates default --lookups plain,spell,spell-w05
    OMP_NUM_THREADS=1 python benchmarks/typo_probe.py --lang ru --candidates default,typo50-nce  # navec, SimLex-ru

Writes ``metrics/typo_probe.md`` and ``.json`` (``--out PREFIX``), after every candidate.
"""
import argparse
import json
import os
import shlex
import sys
import tempfile
import time
import tracemalloc
from dataclasses import asdict
from pathlib import Path
from typing import Dict, List, Optional

import numpy
import torch

from spacy_mimick.cli.mimick import neighbor_rows
from spacy_mimick.vectors.mimick_model import MimickModel
from spacy_mimick.vectors.mimick_trainer import DEFAULT_ARCH, PAPER_ARCH, PAPER_CONFIG, TrainConfig, train_mimick
from spacy_mimick.vectors.similarity import (SimilarityPair, evaluate_similarity, read_similarity_pairs, typo_pairs,
                                     typo_scores)
from spacy_mimick.vectors.spelling import SpellingBackoff, for_word_vectors
from spacy_mimick.vectors.vectors_io import WordVectors, read_vectors

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
NGRAM = {"@architectures": "spacy_mimick.MimickNgram.v1"}
HYBRID = {"@architectures": "spacy_mimick.MimickHybrid.v1"}

# The settings of the default model before this benchmark existed (n-gram bag, l2, typo 0.08).
BEFORE = dict(loss="l2", typo_prob=0.08, max_epochs=15)
# The default's settings until l2 + InfoNCE replaced them (l2, typo 0.5, at most 15 epochs); the
# candidates below written against that default keep it.
L2 = dict(loss="l2", max_epochs=15)

# name -> (description, arch config, TrainConfig settings). "default" / "paper" are whatever
# `python -m spacy_mimick train` / `train --paper` use now.
CANDIDATES: Dict[str, tuple] = {
    "default": ("`train` default (now)", DEFAULT_ARCH, {}),
    "l2": ("`train` default before: l2, typo 0.5, up to 15 epochs", DEFAULT_ARCH, L2),
    "paper": ("`train --paper`: char BiLSTM, l2", PAPER_ARCH, asdict(PAPER_CONFIG)),
    "before": ("default before: n-gram 3-6, l2, typo 0.08", NGRAM, BEFORE),
    "typo30": ("n-gram, l2, typo 0.3", NGRAM, {**BEFORE, "typo_prob": 0.3}),
    "typo50": ("n-gram, l2, typo 0.5", NGRAM, {**BEFORE, "typo_prob": 0.5}),
    "typo70": ("n-gram, l2, typo 0.7", NGRAM, {**BEFORE, "typo_prob": 0.7}),
    "typo50-nce": ("n-gram, l2 + 0.1 x InfoNCE, typo 0.5", NGRAM,
                   {**BEFORE, "typo_prob": 0.5, "loss": "l2+contrastive", "temperature": 0.07}),
    "typo50-nce03": ("n-gram, l2 + 0.3 x InfoNCE, typo 0.5", NGRAM,
                     {**BEFORE, "typo_prob": 0.5, "loss": "l2+contrastive", "contrastive_weight": 0.3,
                      "temperature": 0.07}),
    "typo50-n2": ("n-gram 2-6, l2, typo 0.5", {**NGRAM, "n_min": 2}, {**BEFORE, "typo_prob": 0.5}),
    "typo50-freq": ("n-gram, l2, typo 0.5, log-frequency weights", NGRAM,
                    {**BEFORE, "typo_prob": 0.5, "freq_weight": True}),
    "n3-6-mc1": ("n-gram 3-6 seen in 1+ training words, l2, typo 0.5", {**NGRAM, "min_ngram_count": 1}, L2),
    "n3-8": ("n-gram 3-8, l2, typo 0.5", {**NGRAM, "n_max": 8}, L2),
    "n3-8-mc1": ("n-gram 3-8 seen in 1+ training words, l2, typo 0.5",
                 {**NGRAM, "n_max": 8, "min_ngram_count": 1}, L2),
    "n3-8-mc1-nce": ("n-gram 3-8 seen in 1+ training words, l2 + 0.1 x InfoNCE, typo 0.5",
                     {**NGRAM, "n_max": 8, "min_ngram_count": 1},
                     {**L2, "loss": "l2+contrastive", "temperature": 0.07}),
    "n3-10-mc1": ("n-gram 3-10 seen in 1+ training words, l2, typo 0.5",
                  {**NGRAM, "n_max": 10, "min_ngram_count": 1}, L2),
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

# name -> (description, SpellingBackoff settings; None: no spelling backoff). "spelling" is
# whatever MimickVectors and `neighbors` do by default now (gated); the spell-cos* / spell-freq*
# lookups take every candidate (no typo gate), as the backoff did before the gate.
COS, FREQ = {"choice": "cosine", "typo_margin": None}, {"choice": "frequent", "typo_margin": None}
LOOKUPS: Dict[str, tuple] = {
    "plain": ("table, else Mimick", None),
    "spelling": ("+ spelling backoff, the defaults (typo gate: order-5 character model, margin 0.45)", {}),
    "spell-gate-m02": ("+ the defaults with the typo gate's margin at 0.2", {"typo_margin": 0.2}),
    "spell-gate-m078": ("+ the defaults with the typo gate's margin at 0.78 (max TPR - FPR on the dev split)",
                        {"typo_margin": 0.78}),
    "spell-cos": ("+ table word one edit away nearest to Mimick's (cosine), weight 1", {**COS, "weight": 1.0}),
    "spell-cos-w075": ("+ nearest of those one edit away, weight 0.75", {**COS, "weight": 0.75}),
    "spell-cos-w05": ("+ nearest of those one edit away, weight 0.5", {**COS, "weight": 0.5}),
    "spell-cos-c05": ("+ nearest of those one edit away if its cosine >= 0.5, weight 1",
                      {**COS, "weight": 1.0, "min_cosine": 0.5}),
    "spell-cos-r20k": ("+ nearest of those one edit away among the first 20k rows, weight 1",
                       {**COS, "weight": 1.0, "max_rows": 20000}),
    "spell-cos-r20k-w05": ("+ nearest of those among the first 20k rows, weight 0.5",
                           {**COS, "weight": 0.5, "max_rows": 20000}),
    "spell-cos-r5k-w05": ("+ nearest of those among the first 5k rows, weight 0.5",
                          {**COS, "weight": 0.5, "max_rows": 5000}),
    "spell-freq": ("+ most frequent table word one edit away (lowest row), weight 1", {**FREQ, "weight": 1.0}),
    "spell-freq-w075": ("+ most frequent one edit away, weight 0.75", {**FREQ, "weight": 0.75}),
    "spell-freq-w05": ("+ most frequent one edit away, weight 0.5", {**FREQ, "weight": 0.5}),
    "spell-freq-r20k": ("+ most frequent one edit away among the first 20k rows, weight 1",
                        {**FREQ, "weight": 1.0, "max_rows": 20000}),
}

# --lang: the similarity sets (name, file under DATA/similarity/<lang>/) and the default table.
SIMILARITY_SETS = {
    "en": (("RW", "rw.txt"), ("SimLex", "EN-SIMLEX-999.txt"), ("MEN", "EN-MEN-TR-3k.txt"), ("WS353", "EN-WS-353-ALL.txt")),
    "ru": (("SimLex-ru", "simlex-russian.txt"),),
}
DEFAULT_VECTORS = {
    "en": DATA / "embeddings" / "glove.6B.50d.top100k.txt.gz",
    "ru": DATA / "embeddings" / "navec_news_v1_1B_250K_300d_100q.tar",
}

README_WORDS = ("corssing", "flatfish")
README_TARGET = ("corssing", "crossing")
_START = time.perf_counter()


def log(message: str) -> None:
    print(f"[{time.perf_counter() - _START:7.1f}s] {message}", flush=True)


def make_probe(table: WordVectors, n: int, seed: int, lo: int = 1000, hi: int = 5000):
    """(word, misspelling) pairs: seeded one-edit typos of table words of ranks lo..hi."""
    return typo_pairs(table, n, seed, lo, hi)


def lookup_vectors(model, table: WordVectors, words: List[str], backoff: Optional[SpellingBackoff]):
    """(vectors, spelled, seconds of the spelling step) of ``words``, none of them table words:
    Mimick's predictions, through the spelling backoff when there is one (``neighbors
    --spelling-backoff``'s code)."""
    predicted = model.predict(words)
    if backoff is None:
        return predicted, [None] * len(words), 0.0
    start = time.perf_counter()
    vectors, spelled = backoff.apply(words, predicted)
    return vectors, spelled, time.perf_counter() - start


def probe(model, table: WordVectors, pairs, k: int = 10, backoff: Optional[SpellingBackoff] = None) -> Dict:
    vectors, spelled, seconds = lookup_vectors(model, table, [t for _, t in pairs], backoff)
    return {**typo_scores(vectors, table, pairs, k), "spelling_us_per_word": seconds / max(1, len(pairs)) * 1e6,
            "spelled": sum(s is not None for s in spelled),
            "spelled_right": sum(s == w for s, (w, _) in zip(spelled, pairs))}


def similarity(model, table: WordVectors, sets: Dict[str, List[SimilarityPair]],
               backoff: Optional[SpellingBackoff] = None) -> Dict:
    out, spelled = {}, {}
    for name, pairs in sets.items():
        oov = sorted({w for p in pairs for w in (p.word1, p.word2) if table.get(w) is None})
        vectors, fixes, _ = lookup_vectors(model, table, oov, backoff) if oov else ([], [], 0.0)
        predicted = dict(zip(oov, vectors))
        spelled[name] = sum(f is not None for f in fixes)
        lookup = lambda w: table.get(w) if table.get(w) is not None else predicted.get(w)  # noqa: E731
        out[name] = evaluate_similarity(pairs, lookup).spearman
    return {"similarity": out, "spelled_oov": spelled}


def readme_neighbours(model: MimickModel, table: WordVectors, k: int = 5,
                      backoff: Optional[SpellingBackoff] = None) -> Dict:
    _, _, rows = neighbor_rows(list(README_WORDS), model, table, k, backoff)
    return {w: [[n, round(s, 2)] for n, s in row] for w, row in zip(README_WORDS, rows)}


def make_backoff(table: WordVectors, settings: Optional[Dict]) -> tuple:
    """(SpellingBackoff or None, build seconds, index bytes, peak bytes allocated while building:
    a second build, under tracemalloc)."""
    if settings is None:
        return None, 0.0, 0, 0
    start = time.perf_counter()
    backoff = for_word_vectors(table, **settings)
    seconds = time.perf_counter() - start
    tracemalloc.start()
    for_word_vectors(table, **settings)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return backoff, seconds, backoff.index.nbytes, peak


def load_or_train(name: str, vectors: WordVectors, args, tag: str, suffix: str):
    """(model, seconds, epochs, best epoch, config): trained, or read from --load-models."""
    if args.load_models:
        path = Path(args.load_models) / f"{name}{suffix}"
        log(f"{name} [{tag}] read from {path}")
        return MimickModel.from_disk(path), None, None, None, None
    result, seconds, config = train(name, vectors, args, tag)
    if args.save_models:
        result.model.to_disk(Path(args.save_models) / f"{name}{suffix}")
    return result.model, seconds, len(result.history), result.best_epoch, asdict(config)


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
    first = sets[0]  # RW in English: the set the ratios and the spelled count are of
    bands = report["bands"]
    readme = report["readme_vectors"] != "none"
    head = ["model + lookup", "typo cos", "top-10", *[f"ranks {b}: cos / top-10" for b in bands[1:]],
            "spelled (right)", *[f"{s} (table + model)" for s in sets], f"{first} spelled",
            *(["README `corssing` top 5"] if readme else []), "train s (epochs)",
            f"vs first: typo cos / top-10 / {first}"]
    lines = [f"# Typo probe: {Path(report['vectors']).name} ({report['n_words']:,} words)"
             + (f", README example on {Path(report['readme_vectors']).name}" if readme else ""),
             "", "Command:", "", "```", report["command"], "```", "",
             f"{report['n_typos']} misspellings of words of ranks {bands[0]} (probe seed {report['probe_seed']}), e.g. "
             + ", ".join(f"{t} ({w})" for w, t in report["probe_examples"][:6])
             + f". Table only: {first} {fmt(report['table_only'][first])}, typo top-10 0. "
             f"Training seed {report['seed']}, {report['threads']} torch thread(s); wall {report['wall_seconds']:.0f}s.",
             "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    base = rows[0] if rows else None
    for r in rows:
        readme_cell = []
        if readme:
            nbrs = r["readme"]["corssing"]
            hit = any(n == README_TARGET[1] for n, _ in nbrs)
            readme_cell = [("yes: " if hit else "no: ") + ", ".join(
                f"{'**' + n + '**' if n == README_TARGET[1] else n} ({s:.2f})" for n, s in nbrs)]
        ratio = (f"{r['typo_cos'] / base['typo_cos']:.2f} / {r['top10'] / max(base['top10'], 1e-9):.2f} / "
                 f"{r['similarity'][first] / base['similarity'][first]:.3f}")
        trained = "—" if r["train_seconds"] is None else f"{r['train_seconds']:.0f} ({r['epochs']})"
        lines.append("| " + " | ".join([
            f"`{r['name']}` + `{r['lookup']}`: {r['description']}; {r['lookup_description']}",
            fmt(r["typo_cos"], ".3f"), fmt(r["top10"], ".3f"),
            *[f"{fmt(r['bands'][b]['typo_cos'], '.3f')} / {fmt(r['bands'][b]['top10'], '.3f')}" for b in bands[1:]],
            f"{r['spelled']} ({r['spelled_right']})",
            *[fmt(r["similarity"][s]) for s in sets], str(r["spelled_oov"][first]),
            *readme_cell, trained, ratio]) + " |")
    if readme:
        lines += ["", "`flatfish` (README): " + "; ".join(
            f"`{r['name']}` + `{r['lookup']}` " + ", ".join(f"{n} ({s:.2f})" for n, s in r["readme"]["flatfish"])
            for r in rows), ""]
    else:
        lines.append("")
    builds = list({r["lookup"]: r for r in rows if r["index_bytes"]}.values())
    if builds:
        lines += ["Spelling index over the evaluation table: " + "; ".join(
            f"`{r['lookup']}` {r['index_words']:,} words, {r['index_bytes'] / 2**20:.1f} MiB of arrays "
            f"(peak {r['index_peak_bytes'] / 2**20:.0f} MiB allocated while building), built in "
            f"{r['index_seconds']:.1f}s, {r['spelling_us_per_word']:.0f} µs a misspelling"
            for r in builds) + ".", ""]
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
    parser.add_argument("--lang", choices=sorted(SIMILARITY_SETS), default="en",
                        help="ru: Russian SimLex-999 with navec (the README's English example is not run)")
    parser.add_argument("--vectors", default=None, help="the evaluation table (default: GloVe top 100k; ru: navec)")
    parser.add_argument("--limit", type=int, default=100000, help="rows of --vectors read (0: all)")
    parser.add_argument("--readme-vectors", default=str(ROOT / "assets" / "glove.6B.50d.top20k.txt.gz"),
                        help="the README's table (none: skip the README example)")
    parser.add_argument("--candidates", default="before,default", help="comma-separated; the first is the baseline")
    parser.add_argument("--typos", type=int, default=500)
    parser.add_argument("--probe-seed", type=int, default=45)
    parser.add_argument("--seed", type=int, default=0, help="training seed")
    parser.add_argument("--max-epochs", type=int, default=0, help="cap on epochs (0: each candidate's own)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--lookups", default="plain", help="comma-separated names of LOOKUPS, each scored per model")
    parser.add_argument("--ranks", default="1000-5000",
                        help="comma-separated rank bands LO-HI of the probe's words; the first is the headline")
    parser.add_argument("--save-models", default="", help="save each candidate's models to DIR/NAME[-readme]")
    parser.add_argument("--load-models", default="",
                        help="read each candidate's models from DIR/NAME[-readme] (saved by --save-models) instead of training")
    parser.add_argument("--out", default=str(ROOT / "metrics" / "typo_probe"))
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args(argv)
    if args.list:
        for name, (desc, arch, settings) in CANDIDATES.items():
            print(f"{name:16s} {desc}  {arch} {settings}")
        for name, (desc, settings) in LOOKUPS.items():
            print(f"lookup {name:16s} {desc}  {settings}")
        return
    names = [n for n in args.candidates.split(",") if n]
    unknown = [n for n in names if n not in CANDIDATES]
    if unknown:
        parser.error(f"unknown candidates {unknown}; --list shows them")
    lookups = [n for n in args.lookups.split(",") if n]
    unknown = [n for n in lookups if n not in LOOKUPS]
    if unknown:
        parser.error(f"unknown lookups {unknown}; --list shows them")
    try:
        bands = [tuple(int(x) for x in band.split("-")) for band in args.ranks.split(",") if band]
    except ValueError:
        bands = []
    if not bands or any(len(b) != 2 or not 1 <= b[0] < b[1] for b in bands):
        parser.error(f"--ranks: expected bands LO-HI with 1 <= LO < HI, comma-separated, got {args.ranks!r}")
    torch.set_num_threads(args.threads)
    command = "OMP_NUM_THREADS=1 python " + " ".join(
        shlex.quote(a) for a in ["benchmarks/typo_probe.py", *(sys.argv[1:] if argv is None else argv)])
    args.vectors = args.vectors or str(DEFAULT_VECTORS[args.lang])
    table = read_vectors(args.vectors, limit=args.limit or None)
    if args.lang != "en":
        args.readme_vectors = "none"  # the README's example words are English
    readme_table = None if args.readme_vectors == "none" else read_vectors(args.readme_vectors)
    sim = Path(args.data) / "similarity" / args.lang
    sets = {name: [SimilarityPair(p.word1.lower(), p.word2.lower(), p.score) for p in read_similarity_pairs(sim / f)]
            for name, f in SIMILARITY_SETS[args.lang]}
    probes = {f"{lo:,}-{hi:,}": make_probe(table, args.typos, args.probe_seed, lo, hi) for lo, hi in bands}
    pairs = next(iter(probes.values()))
    report: Dict = {
        "command": command, "vectors": args.vectors, "readme_vectors": args.readme_vectors,
        "n_words": len(table), "n_typos": len(pairs), "probe_seed": args.probe_seed, "seed": args.seed,
        "threads": args.threads, "similarity_sets": list(sets), "probe_examples": pairs[:20],
        "bands": list(probes), "band_sizes": {b: len(p) for b, p in probes.items()},
        "table_only": {name: evaluate_similarity(p, table.get).spearman for name, p in sets.items()},
        "models": [],
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    backoffs = {name: make_backoff(table, LOOKUPS[name][1]) for name in lookups}
    readme_backoffs = {name: make_backoff(readme_table, LOOKUPS[name][1])[0] if readme_table is not None else None
                       for name in lookups}
    report["lookup_settings"] = {name: LOOKUPS[name][1] for name in lookups}
    for name in names:
        model, seconds, epochs, best, config = load_or_train(name, table, args, "eval table", "")
        readme_model, readme_seconds = None, None
        if readme_table is not None:
            readme_model, readme_seconds, _, _, _ = load_or_train(name, readme_table, args, "README table", "-readme")
        for lookup in lookups:
            backoff, index_seconds, index_bytes, index_peak = backoffs[lookup]
            scores = {band: probe(model, table, band_pairs, backoff=backoff) for band, band_pairs in probes.items()}
            row = {"name": name, "description": CANDIDATES[name][0], "arch": CANDIDATES[name][1],
                   "lookup": lookup, "lookup_description": LOOKUPS[lookup][0], "lookup_settings": LOOKUPS[lookup][1],
                   "train_config": config, "train_seconds": seconds, "epochs": epochs, "best_epoch": best,
                   "readme_train_seconds": readme_seconds, **scores[report["bands"][0]], "bands": scores,
                   **similarity(model, table, sets, backoff),
                   "readme": (readme_neighbours(readme_model, readme_table, backoff=readme_backoffs[lookup])
                              if readme_model is not None else None),
                   "index_seconds": index_seconds, "index_bytes": index_bytes, "index_peak_bytes": index_peak,
                   "index_words": len(backoff.index) if backoff is not None else 0}
            log(f"{name} + {lookup}: typo cos {row['typo_cos']:.3f} top-10 {row['top10']:.3f}; "
                + ", ".join(f"{k} {v:.1f}" for k, v in row["similarity"].items())
                + ("; corssing: " + ", ".join(n for n, _ in row["readme"]["corssing"]) if row["readme"] else ""))
            report["models"].append(row)
            report["wall_seconds"] = time.perf_counter() - _START
            write_atomic(out.with_suffix(".json"), json.dumps(report, indent=1, ensure_ascii=False))
            write_atomic(out.with_suffix(".md"), markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
