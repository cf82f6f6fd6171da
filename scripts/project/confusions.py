"""Where two taggers' POS errors lie: the confusions (gold -> predicted UPOS) of system A and of
system B on the same test set, pooled over runs (subsamples), with the errors each makes where the
other is right.

    python scripts/project/confusions.py GOLD.spacy RUN_DIR [RUN_DIR ...] --a spacy --b both \
        --train-template corpus/UD_French-Sequoia/train.{run}.spacy --output OUT.json [--top 15]

Each RUN_DIR holds ``evaluate.py``'s predictions ``A.spacy`` and ``B.spacy`` (e.g.
``metrics/UD_French-Sequoia_lowres/n10000.s0``); ``--a-template`` / ``--b-template`` take a
system's predictions from another recipe's folder instead (``{run}`` being the run folder's name,
e.g. ``metrics/UD_Vietnamese-VTB_lowres-xposfix/{run}/spacy.spacy``); ``--train-template`` names
each run's training set, for the split by training vocabulary ("OOV" = a form not in that run's
training set, as in the paper's OOV columns). Prints a Markdown table of the
``--top`` confusions by the two systems' errors together and the forms behind B's errors where A
is right, then the same for the morphological attributes (per attribute: F1 of each system, on
all and on OOV tokens, and how many more errors B makes; the value confusions behind each system's
errors where the other is right), and the feature sets (UFeats exact match) split by whether the
token's gold sentence has any features: in a treebank that annotates features in some sentences
only (UD_Kazakh-KTB leaves them out of every sentence of one of its sources), a system is scored
there on whether it predicts none; writes every count to the JSON file.

This is how the project finds out where the points go between two systems that
``significance.py`` says differ: a confusion one system makes far more often than the other
is a candidate for a change, one both make is not.
"""
import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Optional

import spacy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docbins import load_examples, training_forms  # noqa: E402
from json_files import write_json  # noqa: E402

from spacy_mimick.ud.scorer import attribute_counts  # noqa: E402


def count_confusions(examples_a, examples_b, train_words: Optional[set] = None) -> Dict[str, Counter]:
    """Counters keyed by (gold POS, predicted POS) for ``a``, ``b``, ``a_only`` (A wrong, B right),
    ``b_only``, their ``_oov`` parts (form not in ``train_words``), and ``b_only_forms`` /
    ``a_only_forms`` keyed by (gold, predicted, form). Tokens without a gold POS are skipped, as
    the scorer skips them; ``n_tokens`` counts the others."""
    counts: Dict[str, Counter] = {k: Counter() for k in (
        "a", "b", "a_only", "b_only", "a_oov", "b_oov", "a_only_forms", "b_only_forms", "n_tokens",
        "attr_a_only", "attr_b_only")}
    for eg_a, eg_b in zip(examples_a, examples_b):
        for gold, pred_a, pred_b in zip(eg_a.reference, eg_a.predicted, eg_b.predicted):
            if gold.morph.key:
                count_values(counts, gold.morph.to_dict(), pred_a.morph.to_dict(), pred_b.morph.to_dict())
            if not gold.pos:
                continue
            counts["n_tokens"]["all"] += 1
            oov = train_words is not None and gold.text not in train_words
            counts["n_tokens"]["oov"] += oov
            for name, pred, other in (("a", pred_a, pred_b), ("b", pred_b, pred_a)):
                if pred.pos_ == gold.pos_:
                    continue
                key = (gold.pos_, pred.pos_)
                counts[name][key] += 1
                if oov:
                    counts[f"{name}_oov"][key] += 1
                if other.pos_ == gold.pos_:
                    counts[f"{name}_only"][key] += 1
                    counts[f"{name}_only_forms"][(gold.pos_, pred.pos_, gold.text)] += 1
    return counts


NONE = "NONE"


def count_values(counts: Dict[str, Counter], gold: Dict[str, str], a: Dict[str, str], b: Dict[str, str]) -> None:
    """One token's attribute values: ``attr_a_only`` counts (attribute, gold value, A's value)
    where A's value is wrong and B's right (NONE for an attribute the token lacks); likewise
    ``attr_b_only``."""
    for attr in set(gold) | set(a) | set(b):
        right = gold.get(attr, NONE)
        got_a, got_b = a.get(attr, NONE), b.get(attr, NONE)
        if got_a != right and got_b == right:
            counts["attr_a_only"][(attr, right, got_a)] += 1
        elif got_b != right and got_a == right:
            counts["attr_b_only"][(attr, right, got_b)] += 1


def attribute_table(per_type: Dict[str, Dict[str, Dict[str, List[int]]]], counts: Dict[str, Counter],
                    name_a: str, name_b: str, top: int, oov: bool = True) -> str:
    """A Markdown table of the attributes by how many more errors B makes than A (errors: a
    wrong, missing or extra value; F1 as the scorer's), with F1 on OOV tokens if ``oov``, then the
    value confusions behind each system's errors where the other is right."""
    def errors(c: List[int]) -> int:
        return c[1] + c[2] - 2 * c[0]

    def f1(c: Optional[List[int]]) -> str:
        return f"{100 * 2 * c[0] / (c[1] + c[2]):.2f}" if c and c[1] + c[2] else "-"

    a_all, b_all = per_type["a"]["all"], per_type["b"]["all"]
    attrs = sorted(set(a_all) | set(b_all), key=lambda t: (-(errors(b_all.get(t, [0, 0, 0]))
                                                             - errors(a_all.get(t, [0, 0, 0]))), t))
    header = ["attribute", "gold values", f"{name_a} F1", f"{name_b} F1", f"{name_a} errors", f"{name_b} errors",
              f"{name_b} − {name_a} errors"] + ([f"{name_a} F1 on OOV", f"{name_b} F1 on OOV"] if oov else [])
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    for attr in attrs:
        a, b = a_all.get(attr, [0, 0, 0]), b_all.get(attr, [0, 0, 0])
        cells = [attr, str(max(a[2], b[2])), f1(a), f1(b), str(errors(a)), str(errors(b)), f"{errors(b) - errors(a):+d}"]
        if oov:
            cells += [f1(per_type["a"]["oov_train"].get(attr)), f1(per_type["b"]["oov_train"].get(attr))]
        lines.append("| " + " | ".join(cells) + " |")
    for name, other, key in ((name_b, name_a, "attr_b_only"), (name_a, name_b, "attr_a_only")):
        common = ", ".join(f"{attr} {gold}->{pred} {c}" for (attr, gold, pred), c in counts[key].most_common(top))
        lines += ["", f"{name}'s attribute values wrong where {other}'s are right, most frequent: {common or '-'}"]
    return "\n".join(lines)


WITH, WITHOUT = "sentences with features", "sentences without"


def count_feature_sets(examples_a, examples_b) -> Counter:
    """UFeats exact match by gold sentence: (part, system, what) -> tokens, ``part`` WITH (the
    gold sentence has a feature on some token) or WITHOUT, ``system`` "a" or "b", ``what``
    "tokens", "right" (the whole feature set right) or "given" (the system gave the token some
    feature). Tokens without a gold POS are skipped, as in :func:`count_confusions`."""
    counts: Counter = Counter()
    for eg_a, eg_b in zip(examples_a, examples_b):
        part = WITH if any(str(t.morph) for t in eg_a.reference) else WITHOUT
        for gold, pred_a, pred_b in zip(eg_a.reference, eg_a.predicted, eg_b.predicted):
            if not gold.pos:
                continue
            for system, pred in (("a", pred_a), ("b", pred_b)):
                counts[(part, system, "tokens")] += 1
                counts[(part, system, "right")] += str(pred.morph) == str(gold.morph)
                counts[(part, system, "given")] += bool(str(pred.morph))
    return counts


def feature_set_table(counts: Counter, name_a: str, name_b: str) -> str:
    """A Markdown table of each system's UFeats on the tokens of sentences with and without gold
    features, and how many tokens it gave features."""
    header = ["gold sentences", "tokens", f"{name_a} UFeats", f"{name_b} UFeats", f"{name_b} − {name_a}",
              f"tokens given features: {name_a}", name_b]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    for part in (WITH, WITHOUT, "all"):
        parts = (WITH, WITHOUT) if part == "all" else (part,)
        n, right_a, right_b, given_a, given_b = (sum(counts[(p, system, what)] for p in parts) for system, what in (
            ("a", "tokens"), ("a", "right"), ("b", "right"), ("a", "given"), ("b", "given")))
        if not n:
            continue
        acc_a, acc_b = 100 * right_a / n, 100 * right_b / n
        lines.append(f"| {part} | {n:,} | {acc_a:.2f} | {acc_b:.2f} | {acc_b - acc_a:+.2f} | {given_a:,} | {given_b:,} |")
    return "\n".join(lines)


def table(counts: Dict[str, Counter], name_a: str, name_b: str, top: int, oov: bool = True) -> str:
    """A Markdown table of the ``top`` confusions (with the OOV columns if ``oov``), a row for the
    rest and one for all, then the most frequent forms behind each system's errors where the
    other is right."""
    n = counts["n_tokens"]["all"]
    total_a, total_b = sum(counts["a"].values()), sum(counts["b"].values())
    pairs = sorted(set(counts["a"]) | set(counts["b"]), key=lambda k: (-(counts["a"][k] + counts["b"][k]), k))
    columns = ["a", "b", "a_only", "b_only"] + (["a_oov", "b_oov"] if oov else [])

    def row(label: str, keys) -> str:
        a, b, *rest = (sum(counts[column][k] for k in keys) for column in columns)
        return "| " + " | ".join([label, str(a), str(b), f"{b - a:+d}", *map(str, rest)]) + " |"

    header = [name_a, name_b, f"{name_b} − {name_a}", f"{name_a} only", f"{name_b} only"]
    header += [f"{name_a} on OOV", f"{name_b} on OOV"] if oov else []
    lines = [
        f"{n:,} test tokens; POS errors: {name_a} {total_a:,} ({100 * total_a / n:.2f}%), "
        f"{name_b} {total_b:,} ({100 * total_b / n:.2f}%)",
        "",
        "| gold -> predicted | " + " | ".join(header) + " |",
        "|---|" + "---:|" * len(header),
        *(row(f"{key[0]} -> {key[1]}", [key]) for key in pairs[:top]),
    ]
    if pairs[top:]:
        lines.append(row(f"{len(pairs[top:])} other confusions", pairs[top:]))
    lines.append(row("all", pairs))
    for name, other, key in ((name_b, name_a, "b_only_forms"), (name_a, name_b, "a_only_forms")):
        common = ", ".join(f"{form} ({gold}->{pred}) {c}" for (gold, pred, form), c in counts[key].most_common(top))
        lines += ["", f"{name} wrong where {other} is right, most frequent: {common or '-'}"]
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gold", type=Path, help="Gold test set (.spacy)")
    parser.add_argument("runs", type=Path, nargs="+", help="Folders holding A.spacy and B.spacy (evaluate.py's)")
    parser.add_argument("--a", default="spacy", help="System A: the predictions' file name without .spacy")
    parser.add_argument("--b", default="both", help="System B: the predictions' file name without .spacy")
    for system in ("a", "b"):
        parser.add_argument(f"--{system}-template", default=None,
                            help=f"System {system.upper()}'s predictions (.spacy), {{run}} standing for the run "
                                 f"folder's name (default: RUN_DIR/{system.upper()}.spacy)")
    parser.add_argument("--train-template", default=None,
                        help="Each run's training set (.spacy), {run} standing for the run folder's name")
    parser.add_argument("--output", "-o", type=Path, required=True, help="JSON file to write")
    parser.add_argument("--top", type=int, default=15, help="Confusions and forms to print")
    args = parser.parse_args(argv)
    for option, template, example in (("--train-template", args.train_template, "corpus/UD_French-Sequoia/train.{run}.spacy"),
                                      ("--a-template", args.a_template, "metrics/UD_French-Sequoia_lowres/{run}/spacy.spacy"),
                                      ("--b-template", args.b_template, "metrics/UD_French-Sequoia_lowres/{run}/both.spacy")):
        if template is not None and "{run}" not in template:
            raise SystemExit(f"error: {option} {template!r} has no {{run}} (e.g. {example})")

    vocab = spacy.blank("xx").vocab
    total: Dict[str, Counter] = {}
    feature_sets: Counter = Counter()
    per_type: Dict[str, Dict[str, Dict[str, List[int]]]] = {"a": {"all": {}, "oov_train": {}},
                                                            "b": {"all": {}, "oov_train": {}}}
    for run in args.runs:
        train_words = None
        if args.train_template is not None:
            train_path = Path(args.train_template.format(run=run.name))
            if not train_path.exists():
                raise SystemExit(f"error: {train_path} (--train-template for run {run}) does not exist")
            train_words = training_forms(train_path, vocab)
        paths = [Path(template.format(run=run.name)) if template is not None else run / f"{name}.spacy"
                 for name, template in ((args.a, args.a_template), (args.b, args.b_template))]
        for option, path in zip(("--a-template", "--b-template"), paths):
            if not path.exists():
                raise SystemExit(f"error: {path} (the predictions for run {run}; {option} or RUN_DIR) does not exist")
        examples = [load_examples(args.gold, path, vocab) for path in paths]
        for key, counter in count_confusions(*examples, train_words).items():
            total.setdefault(key, Counter()).update(counter)
        feature_sets.update(count_feature_sets(*examples))
        for system, system_examples in zip("ab", examples):
            for part, attrs in attribute_counts(system_examples, train_words=train_words).items():
                for attr, counts in attrs.items():
                    pooled = per_type[system][part].setdefault(attr, [0, 0, 0])
                    for i, c in enumerate(counts):
                        pooled[i] += c
    result: Dict[str, Any] = {
        "a": args.a, "b": args.b, "gold": str(args.gold), "runs": [str(r) for r in args.runs],
        "a_template": args.a_template, "b_template": args.b_template,
        "n_tokens": dict(total["n_tokens"]),
        **{key: [[*k, c] for k, c in total[key].most_common()] for key in total if key != "n_tokens"},
        "attributes": {system: {part: {attr: dict(zip(("correct", "predicted", "gold"), c)) for attr, c in attrs.items()}
                                for part, attrs in parts.items()} for system, parts in zip((args.a, args.b), per_type.values())},
        "feature_sets": {part: {name: {what: feature_sets[(part, system, what)] for what in ("tokens", "right", "given")}
                                for system, name in (("a", args.a), ("b", args.b))} for part in (WITH, WITHOUT)},
    }
    write_json(args.output, result, indent=1, ensure_ascii=False)
    print(table(total, args.a, args.b, args.top, oov=args.train_template is not None))
    if any(per_type[system]["all"] for system in per_type):
        print("\nAttributes (FEATS), by the errors B makes beyond A's:\n")
        print(attribute_table(per_type, total, args.a, args.b, args.top, oov=args.train_template is not None))
        print("\nFeature sets (UFeats exact match) by gold sentence:\n")
        print(feature_set_table(feature_sets, args.a, args.b))
    print(f"\n-> {args.output}")


if __name__ == "__main__":
    main(sys.argv[1:])
