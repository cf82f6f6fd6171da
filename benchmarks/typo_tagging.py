"""Tagging text with typos: each system on a test set whose words are misspelled at a given rate.

For each rate, a seeded share of the test set's words (alphabetic, 3+ characters) get one edit
from the trainer's own typo generator (``mimick_trainer.make_typo``: swap two neighbours, drop a
letter, insert or substitute a keyboard neighbour), re-drawn until the result differs from the
word; the same words and edits for every system. Gold tokenization: each system tags the
corrupted words, and is scored by the project's scorer (UPOS accuracy, attribute micro-F1) on all
tokens and on the misspelled ones; McNemar's test (UPOS, all tokens) compares each system with
the first one.

    python benchmarks/typo_tagging.py ../shared/data/ud/UD_English-EWT/en_ewt-ud-test.conllu \\
        --system both=training/UD_English-EWT_lowres/n5000.s0/both/model-best \\
        --system spacy=training/UD_English-EWT_lowres/n5000.s0/spacy/model-best \\
        [--rates 0 0.1 0.3] [--seed 0] [--output metrics/typo_tagging.md]
"""
import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import numpy
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_mimick.ud.corpus import read_conllu
from spacy_mimick.ud.scorer import score_attributes, token_level_results
from spacy_mimick.ud.significance import mcnemar
from spacy_mimick.ud.typos import misspell


def corrupt(docs: Sequence[Doc], rate: float, seed: int) -> Tuple[List[Doc], List[numpy.ndarray]]:
    """Copies of the gold ``docs`` with a ``rate`` share of their eligible words misspelled (same
    POS and features), and per doc the mask of misspelled tokens."""
    rng = random.Random(seed)
    out, masks = [], []
    for doc in docs:
        words, mask = misspell([t.text for t in doc], rate, rng)
        copy = Doc(doc.vocab, words=words, spaces=[bool(t.whitespace_) for t in doc],
                   pos=[t.pos_ or None for t in doc], morphs=[str(t.morph) if t.has_morph() else None for t in doc])
        out.append(copy)
        masks.append(numpy.array(mask, dtype=bool))
    return out, masks


def tag(nlp, gold: Sequence[Doc]) -> List[Example]:
    """The pipeline's predictions on the gold words (its tokenizer not used)."""
    inputs = [Doc(nlp.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc]) for doc in gold]
    return [Example(pred, ref) for pred, ref in zip(nlp.pipe(inputs, batch_size=256), gold)]


def misspelled_only(examples: List[Example], masks: List[numpy.ndarray]) -> List[Example]:
    """One example per misspelled token: a single-token doc pair (so the scorer counts only them)."""
    out = []
    for eg, mask in zip(examples, masks):
        for i in numpy.flatnonzero(mask):
            p, r = eg.predicted[int(i)], eg.reference[int(i)]
            pred = Doc(eg.predicted.vocab, words=[p.text], pos=[p.pos_ or None],
                       morphs=[str(p.morph) if p.has_morph() else None])
            ref = Doc(eg.reference.vocab, words=[r.text], pos=[r.pos_ or None],
                      morphs=[str(r.morph) if r.has_morph() else None])
            out.append(Example(pred, ref))
    return out


def pct(x) -> str:
    return "-" if x is None else f"{100 * x:.2f}"


TABLE_HEAD = (
    "| typo rate | system | POS | attr F1 | POS (misspelled) | attr F1 (misspelled) | misspelled tokens | McNemar p |",
    "|---:|---|---:|---:|---:|---:|---:|---:|",
)


def table_row(rate: float, name: str, scores: Dict, typo_scores: Dict, misspelled: int, p: str) -> str:
    """One row of the table (typo_tagging_seeds.py reads these rows back)."""
    return (f"| {rate:.0%} | {name} | {pct(scores['pos_acc'])} | {pct(scores['attr_micro_f'])} | "
            f"{pct(typo_scores.get('pos_acc'))} | {pct(typo_scores.get('attr_micro_f'))} | {misspelled:,} | {p} |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("test", type=Path, help="Gold CoNLL-U test file")
    parser.add_argument("--system", action="append", required=True, nargs="+", metavar="NAME=PIPELINE [SETTING=VALUE]",
                        help="A trained pipeline (folder or package name), then config overrides given to "
                             "spacy.load (e.g. components.mimick_vectors.spelling_backoff=true; values are JSON, "
                             "else strings); the first system is the reference of McNemar")
    parser.add_argument("--rates", type=float, nargs="+", default=[0.0, 0.1, 0.3])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=None, help="Also write the table here (Markdown)")
    args = parser.parse_args(argv)
    systems = []
    for spec, *settings in args.system:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            parser.error(f"--system {spec!r}: expected NAME=PIPELINE")
        config: Dict = {}  # spacy.load takes keys in dot notation, as pipeline_load.py gives them
        for setting in settings:
            key, sep, value = setting.partition("=")
            if not sep or "." not in key:
                parser.error(f"--system {name}: {setting!r}: expected SECTION.KEY=VALUE")
            try:
                config[key] = json.loads(value)
            except json.JSONDecodeError:
                config[key] = value
        systems.append((name, spacy.load(path, config=config)))
    rows = []
    for rate in args.rates:
        gold_all = None
        results: Dict[str, Tuple[Dict, Dict, numpy.ndarray]] = {}
        for name, nlp in systems:
            gold = list(read_conllu(args.test, nlp.vocab))
            corrupted, masks = corrupt(gold, rate, args.seed)
            start = time.perf_counter()
            examples = tag(nlp, corrupted)
            print(f"[typo_tagging] rate {rate:.0%}: {name} tagged {sum(len(d) for d in corrupted):,} tokens "
                  f"({int(sum(m.sum() for m in masks)):,} misspelled) in {time.perf_counter() - start:.1f} s",
                  file=sys.stderr, flush=True)
            scores = score_attributes(examples)
            typo_scores = score_attributes(misspelled_only(examples, masks)) if rate else {}
            results[name] = (scores, typo_scores, token_level_results(examples).pos_correct)
            gold_all = masks
        reference = systems[0][0]
        for name, _ in systems:
            scores, typo_scores, correct = results[name]
            p = "" if name == reference else f"{mcnemar(results[reference][2], correct)[1]:.2g}"
            rows.append(table_row(rate, name, scores, typo_scores, int(sum(m.sum() for m in gold_all)), p))
    table = "\n".join([
        f"Typos in {args.test.name} (seed {args.seed}): UPOS accuracy and attribute micro-F1, all tokens "
        f"and misspelled tokens; McNemar p (UPOS, all tokens) against {systems[0][0]}.",
        "",
        *TABLE_HEAD,
        *rows,
    ])
    print(table)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.output.with_suffix(args.output.suffix + ".tmp")
        tmp.write_text(table + "\n", encoding="utf8")
        tmp.replace(args.output)


if __name__ == "__main__":
    main()
