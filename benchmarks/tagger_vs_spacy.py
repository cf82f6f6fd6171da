"""Our joint tagger (mimick_tagger) vs spaCy's own tagger + morphologizer, side by side.

Both are trained by `spacy train` on the same UD data (gold words, the same token budget and
seed) with the same static vectors; then each is timed on the test set. Reported: POS accuracy,
attribute micro-F1 (the paper's metric), spaCy's morph_acc, training wall time, and inference
tokens/s with `nlp.pipe` on the gold-tokenised test sentences, with the same number of torch
and BLAS threads for both.

    python benchmarks/tagger_vs_spacy.py --treebank ../shared/data/ud/UD_English-EWT --prefix en_ewt \\
        --vectors VECTORS_DIR --mimick-model MIMICK_DIR [--n-tokens 5000] [--max-steps 2000] [--threads 2]

VECTORS_DIR is a `spacy init vectors` output; MIMICK_DIR a `python -m spacy_mimick train` output.
"""
import argparse
import json
import time
from pathlib import Path

import spacy
import torch
from spacy.cli.train import train as spacy_train
from spacy.tokens import Doc
from spacy.training import Example

from spacy_mimick.scorer import score_attributes
from spacy_mimick.ud import read_conllu

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = {
    "mimick_tagger (Mimick variant)": ROOT / "configs/tagger_mimick.cfg",
    "spaCy tagger + morphologizer": ROOT / "configs/spacy_tagger_morphologizer.cfg",
}


def evaluate(nlp, gold_docs, repeat: int):
    """Scores on the gold docs, and the best-of-`repeat` tokens/s of nlp.pipe on their words."""
    best = float("inf")
    predicted = []
    for _ in range(repeat):
        docs = [Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d])
                for d in gold_docs]
        start = time.perf_counter()
        predicted = list(nlp.pipe(docs, batch_size=256))
        best = min(best, time.perf_counter() - start)
    examples = [Example(p, g) for p, g in zip(predicted, gold_docs)]
    scores = score_attributes(examples)
    n_tokens = sum(len(d) for d in gold_docs)
    return scores, n_tokens / best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--treebank", type=Path, required=True)
    parser.add_argument("--prefix", required=True, help="file prefix, e.g. en_ewt")
    parser.add_argument("--lang", default="en")
    parser.add_argument("--vectors", type=Path, required=True)
    parser.add_argument("--mimick-model", type=Path, required=True)
    parser.add_argument("--n-tokens", type=int, default=5000)
    parser.add_argument("--max-steps", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--output", type=Path, default=Path("training/tagger_vs_spacy"))
    parser.add_argument("--report", type=Path, default=None, help="write the Markdown table here too")
    parser.add_argument("--reuse", action="store_true",
                        help="reuse OUTPUT/<config>/model-best trained by an earlier run (its training time "
                             "is read from train_seconds.json): time inference again on a quieter machine")
    parser.add_argument("--extra", action="append", default=[], metavar="NAME=PIPELINE",
                        help="also evaluate and time an already trained pipeline (not trained here)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    train = args.treebank / f"{args.prefix}-ud-train.conllu"
    dev = args.treebank / f"{args.prefix}-ud-dev.conllu"
    test = args.treebank / f"{args.prefix}-ud-test.conllu"
    rows = []
    for name, config in SYSTEMS.items():
        out = args.output / config.stem
        overrides = {
            "paths.train": str(train), "paths.dev": str(dev), "paths.vectors": str(args.vectors),
            "nlp.lang": args.lang, "corpora.train.n_tokens": args.n_tokens,
            "training.max_steps": args.max_steps, "training.max_epochs": 0,
            # several dev evaluations, so that model-best is a trained model
            "training.eval_frequency": max(1, args.max_steps // 4),
        }
        if "mimick_model" in config.read_text():
            overrides["paths.mimick_model"] = str(args.mimick_model)
        seconds_file = out / "train_seconds.json"
        if args.reuse and (out / "model-best").is_dir() and seconds_file.exists():
            train_seconds = json.loads(seconds_file.read_text())["train_s"]
            print(f"== reusing {out / 'model-best'} (trained in {train_seconds:.0f} s)", flush=True)
        else:
            print(f"== training {name} ({config.name}), max {args.max_steps} steps", flush=True)
            start = time.perf_counter()
            spacy_train(config, out, overrides=overrides)
            train_seconds = time.perf_counter() - start
            seconds_file.write_text(json.dumps({"train_s": train_seconds, "overrides": overrides}, indent=2))
        nlp = spacy.load(out / "model-best")
        gold = list(read_conllu(test, nlp.vocab))
        scores, tokens_per_s = evaluate(nlp, gold, args.repeat)
        rows.append({"system": name, "pos_acc": scores["pos_acc"], "attr_micro_f": scores["attr_micro_f"],
                     "morph_acc": scores["morph_acc"], "train_s": train_seconds, "tokens_per_s": tokens_per_s})
    for item in args.extra:
        name, _, path = item.partition("=")
        nlp = spacy.load(path)
        gold = list(read_conllu(test, nlp.vocab))
        scores, tokens_per_s = evaluate(nlp, gold, args.repeat)
        rows.insert(-1, {"system": f"{name} (trained elsewhere: {path})", "pos_acc": scores["pos_acc"],
                         "attr_micro_f": scores["attr_micro_f"], "morph_acc": scores["morph_acc"],
                         "train_s": None, "tokens_per_s": tokens_per_s})
    base = rows[-1]["tokens_per_s"]
    lines = [
        f"{args.prefix} test, trained on {args.n_tokens or 'all'} tokens, max {args.max_steps} steps, "
        f"{args.threads} threads",
        "",
        "| system | POS acc | attr micro-F1 | morph_acc | train s | inference tokens/s | speed vs spaCy |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['system']} | {100 * r['pos_acc']:.2f} | {100 * (r['attr_micro_f'] or 0):.2f} | "
                     f"{100 * r['morph_acc']:.2f} | {'—' if r['train_s'] is None else format(r['train_s'], '.0f')} | "
                     f"{r['tokens_per_s']:,.0f} | "
                     f"{r['tokens_per_s'] / base:.2f}x |")
    table = "\n".join(lines)
    print(table)
    (args.output / "results.json").write_text(json.dumps(rows, indent=2))
    if args.report:
        args.report.write_text(f"# Tagger vs spaCy\n\nCommand: `python benchmarks/tagger_vs_spacy.py "
                               f"{' '.join(__import__('sys').argv[1:])}`\n\n{table}\n")


if __name__ == "__main__":
    main()
