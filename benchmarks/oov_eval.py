"""Beyond MIMICK: train Mimick-style OOV models side by side and evaluate them on one table.

One command trains, on the same pretrained vectors, the paper's Mimick (char BiLSTM, l2), the
BoS-style n-gram baseline (l2) and candidate set-ups, and evaluates each on:

1. Rare-word similarity (en: Stanford Rare Word, 2,034 pairs; ru: Russian SimLex-999), words
   lowercased before lookup, Spearman x 100 over all pairs (a pair with a missing vector scores 0,
   as in the paper): "table + model" (a table word keeps its vector, the other words get the
   model's) and "model only" (every word from the model), plus "model only" on the in-vocabulary
   pairs (on those, "table + model" is the table itself and the same for all models).
2. Held-out similarity: a seeded random 20% of the table's words is removed, each model is trained
   a second time on the remaining 80%, and the SimLex-999 / MEN pairs (ru: Russian SimLex) whose
   two words are both in the full table and at least one of which was removed are scored with the
   model's vectors for the removed words and the table's vectors for the others; "true" scores the
   same pairs with the table's own vectors (the upper bound).
3. Typo robustness: 1,000 words sampled (seeded) from table ranks 1,000-5,000 (alphabetic, at least
   5 characters), one synthetic misspelling each from ``make_typo`` (re-drawn until it differs from
   the word and is not itself a table word); the mean cosine between the model's vector for the
   misspelling and the word's true vector, and top-10 recovery: the share of misspellings whose
   predicted vector has the true word among its 10 nearest table words (cosine, whole table).
   "clean cos" is the same cosine for the correctly spelled word (how well the model fits
   in-vocabulary words it was trained on).
4. Cost: training wall seconds on the full table (and epochs run / best epoch), inference words/s
   (``model.predict`` on 10,000 table words).

Usage (one core, as the docs were made):

    OMP_NUM_THREADS=1 python benchmarks/oov_eval.py --vectors \
        ../shared/data/embeddings/glove.6B.50d.top100k.txt.gz --lang en --limit 100000

Writes ``metrics/oov_eval_{lang}.md`` and ``.json`` (``--out PREFIX`` to change), the command first;
docs/oov_vectors.md discusses the reports.
"""
import argparse
import json
import shlex
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

import numpy
import torch

from spacy_mimick.vectors.mimick_model import MimickModel
from spacy_mimick.vectors.mimick_trainer import TrainConfig, train_mimick
from spacy_mimick.vectors.similarity import (SimilarityPair, evaluate_similarity, read_similarity_pairs, row_cosines,
                                     typo_pairs, typo_scores)
from spacy_mimick.vectors.vectors_io import WordVectors, read_vectors

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data"

NGRAM = {"@architectures": "spacy_mimick.MimickNgram.v1"}
HYBRID = {"@architectures": "spacy_mimick.MimickHybrid.v1"}

# name -> (description, arch config, TrainConfig settings beyond the shared ones)
CANDIDATES: Dict[str, tuple] = {
    "paper": ("Mimick (paper): char BiLSTM, l2", {"@architectures": "spacy_mimick.Mimick.v1"},
              dict(loss="l2")),
    "bos": ("BoS baseline: n-gram 3-6 mean, l2", NGRAM, dict(loss="l2")),
    "bos-cos": ("n-gram, cosine", NGRAM, dict(loss="cosine")),
    "bos-cos-lr01": ("n-gram, cosine, lr 0.01", NGRAM, dict(loss="cosine", learning_rate=0.01)),
    "bos-cos-lr03": ("n-gram, cosine, lr 0.03", NGRAM, dict(loss="cosine", learning_rate=0.03)),
    "bos-l2-lr01": ("n-gram, l2, lr 0.01", NGRAM, dict(loss="l2", learning_rate=0.01)),
    "bos-l2-lr03": ("n-gram, l2, lr 0.03", NGRAM, dict(loss="l2", learning_rate=0.03)),
    "bos-l2cos-lr01": ("n-gram, l2+cosine, lr 0.01", NGRAM, dict(loss="l2+cosine", learning_rate=0.01)),
    "bos-l2-lr01-typo": ("n-gram, l2, lr 0.01, typo 0.08", NGRAM,
                         dict(loss="l2", learning_rate=0.01, typo_prob=0.08)),
    "bos-l2-lr01-mc5": ("n-gram (min count 5), l2, lr 0.01", {**NGRAM, "min_ngram_count": 5},
                        dict(loss="l2", learning_rate=0.01)),
    "bos-cos-lr01-typo": ("n-gram, cosine, lr 0.01, typo 0.08", NGRAM,
                          dict(loss="cosine", learning_rate=0.01, typo_prob=0.08)),
    "bos-cos-lr01-freq": ("n-gram, cosine, lr 0.01, freq weight", NGRAM,
                          dict(loss="cosine", learning_rate=0.01, freq_weight=True)),
    "hybrid-l2cos": ("hybrid (BiLSTM + n-gram), l2+cosine", HYBRID, dict(loss="l2+cosine")),
    "hybrid-cos-lr01-typo": ("hybrid, cosine, lr 0.01, typo 0.08", HYBRID,
                             dict(loss="cosine", learning_rate=0.01, typo_prob=0.08)),
    "hybrid-l2cos-lr01-typo": ("hybrid, l2+cosine, lr 0.01, typo 0.08", HYBRID,
                               dict(loss="l2+cosine", learning_rate=0.01, typo_prob=0.08)),
    "bos-nce-typo": ("n-gram, contrastive (InfoNCE, t 0.07, batch + 256 random negatives), lr 0.01, "
                     "typo 0.08", NGRAM,
                     dict(loss="contrastive", temperature=0.07, learning_rate=0.01, typo_prob=0.08)),
    "bos-l2nce-typo": ("n-gram, l2 + 0.1 x contrastive, lr 0.01, typo 0.08", NGRAM,
                       dict(loss="l2+contrastive", temperature=0.07, contrastive_weight=0.1, learning_rate=0.01,
                            typo_prob=0.08)),
    "bos-l2nce03-typo": ("n-gram, l2 + 0.3 x contrastive, lr 0.01, typo 0.08", NGRAM,
                         dict(loss="l2+contrastive", temperature=0.07, contrastive_weight=0.3, learning_rate=0.01,
                              typo_prob=0.08)),
    "bos-l2-lr01-typo-p5": ("n-gram, l2, lr 0.01, typo 0.08, patience 5 (30 epochs)", NGRAM,
                            dict(loss="l2", learning_rate=0.01, typo_prob=0.08, patience=5, max_epochs=30)),
    "bos-nce-t01-typo": ("n-gram, contrastive, t 0.1, lr 0.01, typo 0.08", NGRAM,
                         dict(loss="contrastive", temperature=0.1, learning_rate=0.01, typo_prob=0.08)),
    "bos-nce-n1024-typo": ("n-gram, contrastive, 1024 random negatives, lr 0.01, typo 0.08", NGRAM,
                           dict(loss="contrastive", temperature=0.07, negatives=1024, learning_rate=0.01,
                                typo_prob=0.08)),
    "bos-nce-t02-typo": ("n-gram, contrastive, t 0.2, lr 0.01, typo 0.08", NGRAM,
                         dict(loss="contrastive", temperature=0.2, learning_rate=0.01, typo_prob=0.08)),
    "bos-nce-t03-typo": ("n-gram, contrastive, t 0.3, lr 0.01, typo 0.08", NGRAM,
                         dict(loss="contrastive", temperature=0.3, learning_rate=0.01, typo_prob=0.08)),
    "hybrid-nce-typo": ("hybrid (BiLSTM + n-gram), contrastive, lr 0.01, typo 0.08", HYBRID,
                        dict(loss="contrastive", temperature=0.07, learning_rate=0.01, typo_prob=0.08)),
}
DEFAULT_CANDIDATES = {
    "en": ["paper", "bos", "bos-l2-lr01", "bos-l2-lr01-typo"],
    "ru": ["paper", "bos", "bos-l2-lr01-typo"],
}

_START = time.perf_counter()


def log(message: str) -> None:
    elapsed = time.perf_counter() - _START
    print(f"[{elapsed:7.1f}s] {message}", flush=True)


def similarity_sets(lang: str, data: Path) -> Dict[str, Path]:
    sim = data / "similarity"
    if lang == "en":
        return {"rare": sim / "en" / "rw.txt", "SimLex": sim / "en" / "EN-SIMLEX-999.txt",
                "MEN": sim / "en" / "EN-MEN-TR-3k.txt"}
    return {"rare": sim / "ru" / "simlex-russian.txt", "SimLex-ru": sim / "ru" / "simlex-russian.txt"}


def lower_pairs(pairs: Sequence[SimilarityPair]) -> List[SimilarityPair]:
    return [SimilarityPair(p.word1.lower(), p.word2.lower(), p.score) for p in pairs]


def predicted_lookup(model: MimickModel, words: Sequence[str]) -> Dict[str, numpy.ndarray]:
    keys = sorted(set(words))
    return dict(zip(keys, model.predict(keys))) if keys else {}


def backoff_lookup(table_get: Callable, predicted: Dict[str, numpy.ndarray]) -> Callable:
    def lookup(word: str) -> Optional[numpy.ndarray]:
        vector = table_get(word)
        return vector if vector is not None else predicted.get(word)
    return lookup


def make_typo_set(table: WordVectors, n: int, seed: int, lo: int = 1000, hi: int = 5000):
    """(word, misspelling) pairs: words of table ranks lo..hi, alphabetic, >= 5 characters."""
    return typo_pairs(table, n, seed, lo, hi)


def typo_eval(model: MimickModel, table: WordVectors, typos, k: int = 10) -> Dict:
    words = [w for w, _ in typos]
    scores = typo_scores(model.predict([t for _, t in typos]), table, typos, k)
    true = numpy.stack([table.get(w) for w in words])
    return {
        "n": len(typos),
        "typo_cos": scores["typo_cos"],
        "typo_top10": scores["top10"],
        "clean_cos": float(row_cosines(model.predict(words), true).mean()),
    }


def heldout_eval(model: MimickModel, table: WordVectors, removed: set, sets: Dict[str, List]) -> Dict:
    out = {}
    for name, pairs in sets.items():
        pairs = [p for p in pairs if table.get(p.word1) is not None and table.get(p.word2) is not None
                 and (p.word1 in removed or p.word2 in removed)]
        oov_words = [w for p in pairs for w in (p.word1, p.word2) if w in removed]
        predicted = predicted_lookup(model, oov_words)
        lookup = lambda w: predicted[w] if w in removed else table.get(w)  # noqa: E731
        out[name] = {
            "n_pairs": len(pairs),
            "n_removed_words": len(set(oov_words)),
            "model": evaluate_similarity(pairs, lookup).spearman,
            "true": evaluate_similarity(pairs, table.get).spearman,
        }
    return out


def run_candidate(name: str, table: WordVectors, train80: WordVectors, removed: set, args,
                  rare_pairs, rare_invocab, heldout_sets, typos, infer_words) -> Dict:
    desc, arch, settings = CANDIDATES[name]
    arch = {**arch, **(args.arch_override or {}).get(name, {})}
    config = TrainConfig(**{"max_epochs": args.max_epochs, "patience": args.patience, "seed": args.seed,
                            "batch_size": 64, "learning_rate": 0.003, **settings})
    row: Dict = {"name": name, "description": desc, "arch": arch, "train_config": asdict(config)}

    def train(vectors: WordVectors, tag: str):
        start = time.perf_counter()
        result = train_mimick(vectors, arch, config, progress=False,
                              log=lambda m: log(f"{name} [{tag}] {m}"))
        seconds = time.perf_counter() - start
        log(f"{name} [{tag}] trained in {seconds:.0f}s, {len(result.history)} epochs, "
            f"best {result.best_epoch}")
        return result, seconds

    log(f"=== {name}: {desc}")
    result, seconds = train(table, "full")
    model = result.model
    if args.save_models:
        model.to_disk(Path(args.save_models) / name)
    row.update(train_seconds=seconds, epochs=len(result.history), best_epoch=result.best_epoch,
               seconds_per_epoch=seconds / max(1, len(result.history)))

    # Rare-word similarity.
    rare_words = [w for p in rare_pairs for w in (p.word1, p.word2)]
    predicted = predicted_lookup(model, rare_words)
    row["rare_all_table_model"] = evaluate_similarity(rare_pairs, backoff_lookup(table.get, predicted)).spearman
    row["rare_all_model"] = evaluate_similarity(rare_pairs, predicted.get).spearman
    row["rare_invocab_model"] = evaluate_similarity(rare_invocab, predicted.get).spearman

    # Typos and speed.
    row["typo"] = typo_eval(model, table, typos)
    start = time.perf_counter()
    model.predict(infer_words)
    row["infer_words_per_s"] = len(infer_words) / (time.perf_counter() - start)
    log(f"{name}: rare all {row['rare_all_table_model']:.1f} (model only {row['rare_all_model']:.1f}, "
        f"in-vocab model only {row['rare_invocab_model']:.1f}); typo cos {row['typo']['typo_cos']:.3f} "
        f"top10 {row['typo']['typo_top10']:.3f}; {row['infer_words_per_s']:,.0f} words/s")

    if not args.skip_heldout:
        result80, seconds80 = train(train80, "80%")
        row.update(heldout_train_seconds=seconds80, heldout_epochs=len(result80.history))
        row["heldout"] = heldout_eval(result80.model, table, removed, heldout_sets)
        log(f"{name}: held-out " + ", ".join(
            f"{k} {v['model']:.1f} (true {v['true']:.1f}, N={v['n_pairs']})" for k, v in row["heldout"].items()))
    return row


def fmt(x, spec=".1f"):
    return "—" if x is None or (isinstance(x, float) and x != x) else format(x, spec)


def markdown(report: Dict) -> str:
    rows = report["models"]
    heldout_names = list(report["heldout_sets"]) if not report["settings"]["skip_heldout"] else []
    rare = report["rare_name"]
    lines = [
        f"# OOV evaluation ({report['lang']}): {Path(report['vectors']).name}, {report['n_words']:,} words",
        "",
        "Command:",
        "",
        "```",
        report["command"],
        "```",
        "",
        f"Generated by `benchmarks/oov_eval.py` ({report['settings']['threads']} torch thread(s), "
        f"max {report['settings']['max_epochs']} epochs, patience {report['settings']['patience']}, "
        f"seed {report['settings']['seed']}); total wall time {report['wall_seconds']:.0f}s.",
        "",
    ]
    head = ["model", f"{rare} all: table+model", f"{rare} all: model only", f"{rare} in-vocab: model only"]
    head += [f"{h} held-out: model / true" for h in heldout_names]
    head += ["typo cos", "typo top-10", "clean cos", "train s (epochs/best)", "s/epoch", "infer words/s"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    base = report["table_only"]
    cells = ["table only", fmt(base["rare_all"]), "—", fmt(base["rare_invocab"])]
    cells += [f"— / {fmt(report['heldout_true'].get(h))}" for h in heldout_names]
    cells += ["—", "0.000", "—", "—", "—", "—"]
    lines.append("| " + " | ".join(cells) + " |")
    for r in rows:
        cells = [f"`{r['name']}`: {r['description']}", fmt(r["rare_all_table_model"]), fmt(r["rare_all_model"]),
                 fmt(r["rare_invocab_model"])]
        for h in heldout_names:
            ho = r.get("heldout", {}).get(h)
            cells.append(f"{fmt(ho['model'])} / {fmt(ho['true'])}" if ho else "—")
        t = r["typo"]
        cells += [fmt(t["typo_cos"], ".3f"), fmt(t["typo_top10"], ".3f"), fmt(t["clean_cos"], ".3f"),
                  f"{r['train_seconds']:.0f} ({r['epochs']}/{r['best_epoch']})", f"{r['seconds_per_epoch']:.1f}",
                  f"{r['infer_words_per_s']:,.0f}"]
        lines.append("| " + " | ".join(cells) + " |")
    n = report["counts"]
    lines += [
        "",
        "How it was measured:",
        "",
        f"- {rare}: {n['rare_pairs']} pairs, {n['rare_invocab']} with both (lowercased) words in the table; "
        f"the table alone covers {n['rare_table_covered']} pairs, and missing pairs score 0 (counted). "
        "\"table+model\": table vector when the word has one, else the model's; \"model only\": every "
        "word from the model; on the in-vocabulary pairs table+model equals the table-only row. "
        "Spearman x 100.",
    ]
    if heldout_names:
        lines.append(
            f"- held-out: a seeded random {report['settings']['heldout_fraction']:.0%} of the "
            f"{report['n_words']:,} table words ({n['removed']:,} words) was removed and every model "
            "trained a second time on the remaining words (same settings); the pairs of each set whose "
            "two (lowercased) words are in the full table and at least one was removed are scored with "
            "the 80% model's vectors for removed words and table vectors for the rest; \"true\" scores "
            "the same pairs with the table's vectors (upper bound). Pairs: " + ", ".join(
                f"{h} {report['heldout_n'][h]}" for h in heldout_names) + ".")
    lines += [
        f"- typos: {n['typos']} words from table ranks 1,000-5,000 (alphabetic, >= 5 characters, seeded "
        "sample), one `make_typo` misspelling each (swap, delete, keyboard-neighbour insert or "
        "substitute; re-drawn until it is not a table word); cosine of the prediction for the "
        "misspelling with the true vector (mean), and the share whose true word is among the 10 "
        "nearest table words of that prediction. \"clean cos\": the prediction for the correct "
        "spelling. The table alone has no vector for a misspelling.",
        "- train s: wall seconds of the full-table training (1 thread), epochs run / best epoch "
        "(early stopping on a 1% dev split); infer: `model.predict` on 10,000 table words.",
        "",
    ]
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vectors")
    parser.add_argument("--lang", choices=["en", "ru"])
    parser.add_argument("--limit", type=int, default=100000)
    parser.add_argument("--candidates", default="", help="comma-separated names (default: per language)")
    parser.add_argument("--max-epochs", type=int, default=15)
    parser.add_argument("--patience", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--heldout-fraction", type=float, default=0.2)
    parser.add_argument("--typos", type=int, default=1000)
    parser.add_argument("--skip-heldout", action="store_true", help="no 80%% trainings (pilots)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--out", default="", help="output prefix (default metrics/oov_eval_{lang})")
    parser.add_argument("--arch-override", default=None, type=json.loads,
                        help='JSON {"candidate": {arch settings}} (experiments)')
    parser.add_argument("--save-models", default="", help="save each candidate's full-table model to DIR/NAME")
    parser.add_argument("--list", action="store_true", help="list the candidates and exit")
    args = parser.parse_args(argv)
    if args.list:
        for name, (desc, arch, settings) in CANDIDATES.items():
            print(f"{name:24s} {desc}  {arch} {settings}")
        return
    if not args.vectors or not args.lang:
        parser.error("--vectors and --lang are required")
    torch.set_num_threads(args.threads)
    names = [n for n in args.candidates.split(",") if n] or DEFAULT_CANDIDATES[args.lang]
    unknown = [n for n in names if n not in CANDIDATES]
    if unknown:
        parser.error(f"unknown candidates {unknown}; --list shows them")
    command = "OMP_NUM_THREADS=1 python " + " ".join(shlex.quote(a) for a in [
        "benchmarks/oov_eval.py", *(sys.argv[1:] if argv is None else argv)])

    table = read_vectors(args.vectors, limit=args.limit or None)
    log(f"{len(table):,} words x {table.dim} dims from {args.vectors}; candidates {names}")
    data = Path(args.data)
    paths = similarity_sets(args.lang, data)
    rare_pairs = lower_pairs(read_similarity_pairs(paths.pop("rare")))
    rare_invocab = [p for p in rare_pairs if table.get(p.word1) is not None and table.get(p.word2) is not None]
    heldout_sets = {name: lower_pairs(read_similarity_pairs(path)) for name, path in paths.items()}

    rng = numpy.random.default_rng(args.seed)
    n_removed = int(round(len(table) * args.heldout_fraction))
    removed_rows = rng.choice(len(table), size=n_removed, replace=False)
    keep = numpy.ones(len(table), dtype=bool)
    keep[removed_rows] = False
    train80 = table.subset(keep)  # frequency order kept
    removed = {table.words[i] for i in removed_rows}
    typos = make_typo_set(table, args.typos, args.seed)
    infer_rng = numpy.random.default_rng(args.seed + 1)
    infer_words = [table.words[i] for i in infer_rng.choice(len(table), size=min(10000, len(table)), replace=False)]

    report: Dict = {
        "command": command, "lang": args.lang, "vectors": args.vectors, "n_words": len(table),
        "dim": table.dim, "rare_name": "RW" if args.lang == "en" else "SimLex-ru",
        "settings": {"max_epochs": args.max_epochs, "patience": args.patience, "seed": args.seed,
                     "heldout_fraction": args.heldout_fraction, "threads": args.threads,
                     "skip_heldout": args.skip_heldout},
        "heldout_sets": {k: str(v) for k, v in paths.items()},
        "counts": {
            "rare_pairs": len(rare_pairs), "rare_invocab": len(rare_invocab),
            "rare_table_covered": evaluate_similarity(rare_pairs, table.get).n_covered,
            "removed": n_removed, "typos": len(typos),
        },
        "table_only": {
            "rare_all": evaluate_similarity(rare_pairs, table.get).spearman,
            "rare_invocab": evaluate_similarity(rare_invocab, table.get).spearman,
        },
        "typo_examples": typos[:20],
        "models": [],
    }
    if not args.skip_heldout:
        true_ho = heldout_eval(_TrueModel(table), table, removed, heldout_sets)
        report["heldout_true"] = {k: v["true"] for k, v in true_ho.items()}
        report["heldout_n"] = {k: v["n_pairs"] for k, v in true_ho.items()}
    log(f"table only: {report['rare_name']} all {report['table_only']['rare_all']:.1f}, "
        f"in-vocab {report['table_only']['rare_invocab']:.1f} ({len(rare_invocab)} pairs); "
        f"{len(typos)} typos, e.g. {typos[:3]}")
    out = Path(args.out) if args.out else ROOT / "metrics" / f"oov_eval_{args.lang}"
    out.parent.mkdir(parents=True, exist_ok=True)
    for name in names:
        report["models"].append(run_candidate(
            name, table, train80, removed, args, rare_pairs, rare_invocab, heldout_sets, typos, infer_words))
        report["wall_seconds"] = time.perf_counter() - _START
        # Written after every model, so an interrupted run keeps what it measured.
        out.with_suffix(".json").write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf8")
        out.with_suffix(".md").write_text(markdown(report), encoding="utf8")
    print()
    print(markdown(report))
    log(f"wrote {out}.md and {out}.json")


class _TrueModel:
    """Stands in for a model in ``heldout_eval``: the table's own vectors (for pair counts)."""

    def __init__(self, table: WordVectors):
        self.table = table

    def predict(self, words):
        return numpy.stack([self.table.get(w) for w in words]) if words else numpy.zeros((0, self.table.dim))


if __name__ == "__main__":
    main()
