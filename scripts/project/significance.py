"""Paired significance tests between two taggers' predictions on the same test set.

    python scripts/project/significance.py GOLD.spacy A.spacy B.spacy --output OUT.json [--train TRAIN.spacy] \
        [--vectors VECTORS]

Runs :func:`spacy_mimick.ud.significance.compare_systems` (POS accuracy: McNemar's test;
attribute micro-F1: the paper's bootstrapped Z-test over sentences) on system A (the baseline,
e.g. No-Char) against system B (e.g. Mimick); differences are B - A. With ``--train``, also
McNemar's test on the test tokens outside the training vocabulary (the paper's "OOV (UD)"
columns); with ``--vectors``, on the test tokens without a pretrained vector (``oov_vec``) and on
those whose exact form has no row but whose lowercase has one (``lowercase_only``: zeros for
spaCy's StaticVectors, the lowercase row for mimick_vectors). A.spacy / B.spacy are ``evaluate.py``'s predictions, in the gold file's order.

When both systems' predictions carry dependencies (pipelines with a parser), ``outcomes`` holds,
for all tokens, ``oov_train`` and ``oov_vec``, McNemar's test per token for POS, whole-FEATS
morph, UAS and LAS and the sentence bootstrap Z-test for LAS
(:func:`spacy_mimick.ud.significance.compare_outcomes`).
"""
import argparse
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import numpy
import spacy
from spacy.training import Example

from spacy_mimick.ud.scorer import token_level_results, token_outcomes
from spacy_mimick.ud.significance import compare_outcomes, compare_systems, mcnemar

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docbins import load_examples, training_forms  # noqa: E402
from json_files import write_json  # noqa: E402


def subset_test(examples_a: List[Example], examples_b: List[Example], outside: Callable[[str], bool]) -> Dict[str, Any]:
    """POS accuracies and McNemar's test on the gold tokens whose form ``outside`` accepts
    (not in the training words, or without a pretrained vector)."""
    mask = numpy.array([outside(t.text) for eg in examples_a for t in eg.reference if t.pos], dtype=bool)
    a = token_level_results(examples_a).pos_correct[mask]
    b = token_level_results(examples_b).pos_correct[mask]
    if not mask.any():
        return {"n_tokens": 0, "pos_acc_a": None, "pos_acc_b": None, "pos_acc_delta": None, "pos_p_value": None}
    statistic, p_value = mcnemar(a, b)
    return {
        "n_tokens": int(mask.sum()),
        "pos_acc_a": float(a.mean()),
        "pos_acc_b": float(b.mean()),
        "pos_acc_delta": float(b.mean() - a.mean()),
        "pos_mcnemar_statistic": statistic,
        "pos_p_value": p_value,
    }


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gold", type=Path, help="Gold test set (.spacy)")
    parser.add_argument("system_a", type=Path, help="Baseline predictions (.spacy)")
    parser.add_argument("system_b", type=Path, help="Compared predictions (.spacy)")
    parser.add_argument("--output", "-o", type=Path, required=True, help="JSON file to write")
    parser.add_argument("--train", type=Path, default=None, help="Training set (.spacy) for the OOV subset")
    parser.add_argument("--vectors", default=None,
                        help="Pipeline or `spacy init vectors` dir: also test the tokens without a pretrained "
                             "vector (neither the form nor its lowercase is a key), the tokens Mimick serves")
    parser.add_argument("--n-samples", type=int, default=1000, help="Bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0, help="Bootstrap seed")
    args = parser.parse_args(argv)

    vocab = spacy.blank("xx").vocab
    examples_a = load_examples(args.gold, args.system_a, vocab)
    examples_b = load_examples(args.gold, args.system_b, vocab)
    result: Dict[str, Any] = {
        "a": args.system_a.stem,
        "b": args.system_b.stem,
        "gold": str(args.gold),
        "n_samples": args.n_samples,
        **compare_systems(examples_a, examples_b, n_samples=args.n_samples, seed=args.seed),
    }
    subsets: Dict[str, Callable[[str], bool]] = {}
    if args.train is not None:
        train_words = training_forms(args.train, vocab)
        subsets["oov_train"] = lambda text: text not in train_words
    if args.vectors is not None:
        vectors_vocab = spacy.load(args.vectors, exclude=["mimick_vectors", "mimick_tagger"]).vocab
        subsets["oov_vec"] = lambda text: not (vectors_vocab.has_vector(text) or vectors_vocab.has_vector(text.lower()))
        # No row for the exact form (spaCy's StaticVectors gives zeros) but one for the lowercase
        # (mimick_vectors' lowercase backoff gives that row): capitalized words with a lowercase table.
        subsets["lowercase_only"] = lambda text: (not vectors_vocab.has_vector(text)
                                                  and vectors_vocab.has_vector(text.lower()))
    for name, outside in subsets.items():
        result[name] = subset_test(examples_a, examples_b, outside)
    if all(eg.predicted.has_annotation("DEP") for eg in examples_a + examples_b):
        outcomes_a, outcomes_b = token_outcomes(examples_a), token_outcomes(examples_b)
        result["outcomes"] = {"all": compare_outcomes(outcomes_a, outcomes_b, n_samples=args.n_samples,
                                                      seed=args.seed)}
        for name, outside in subsets.items():
            mask = numpy.array([outside(form) for form in outcomes_a.forms], dtype=bool)
            result["outcomes"][name] = compare_outcomes(outcomes_a, outcomes_b, mask, n_samples=args.n_samples,
                                                        seed=args.seed)
    write_json(args.output, result)

    def fmt(delta, p):
        return "-" if delta is None else f"{100 * delta:+.2f} (p={p:.3g})"

    line = (f"{result['b']} vs {result['a']}: POS {fmt(result['pos_acc_delta'], result['pos_p_value'])}, "
            f"attributes micro-F1 {fmt(result['attr_micro_f_delta'], result['attr_p_value'])}")
    if "oov_train" in result:
        oov = result["oov_train"]
        line += f", OOV POS {fmt(oov['pos_acc_delta'], oov['pos_p_value'])} on {oov['n_tokens']:,} tokens"
    if "oov_vec" in result:
        oov = result["oov_vec"]
        line += f", OOV(vec) POS {fmt(oov['pos_acc_delta'], oov['pos_p_value'])} on {oov['n_tokens']:,} tokens"
    for name, outcome in result.get("outcomes", {}).items():
        print(f"  {name}: " + ", ".join(
            f"{metric.upper()} {fmt(outcome[f'{metric}_acc_delta'], outcome[f'{metric}_p_value'])}"
            for metric in ("pos", "morph", "uas", "las")) + f" on {outcome['las_n_tokens']:,} words")
    print(line + f" -> {args.output}")


if __name__ == "__main__":
    main(sys.argv[1:])
