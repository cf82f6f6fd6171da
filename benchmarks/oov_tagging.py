"""OOV-token tagging with the default Mimick model vs the paper-faithful one (N_train = 5,000).

    python benchmarks/oov_tagging.py [--langs en,ru,fr] [--vectors-dir en=/tmp/tg/vec100k] \
        [--output docs/oov_tagging]

The tagger is the Mimick variant of ``scripts/tagger_experiments.py`` (the joint UPOS + attribute
tagger whose input for words without a pretrained vector is Mimick's prediction). Both sides use
the same training subsample, seed, epochs and test set; only the Mimick model differs:

* default: ``training/tagger_experiments/<lang>`` (``python scripts/tagger_experiments.py``,
  models/*-default, what docs/tagging_results.md reports);
* paper: ``training/tagger_paper_mimick/<lang>`` (``python scripts/tagger_experiments.py
  --paper-mimick --variants mimick --work-dir training/tagger_paper_mimick``, models/*-paper);
  this script runs it for languages where it is missing.

For each language the table gives POS accuracy and attribute micro-F1 over all test tokens, over
OOV(train) tokens and over OOV(vec) tokens (no pretrained vector: the only tokens whose input
differs), and McNemar's test on POS for all tokens and for OOV(vec)
(``scripts/project/significance.py --vectors``), and each model's POS gain over No-Char
(the same No-Char run, McNemar). Writes OUTPUT.md and OUTPUT.json.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[1]
SCORES = (("pos_acc", "POS"), ("attr_micro_f", "attr F1"), ("oov_train_pos_acc", "OOV(train) POS"),
          ("oov_vec_pos_acc", "OOV(vec) POS"), ("oov_vec_attr_micro_f", "OOV(vec) attr F1"))


def run(command: List[str]) -> None:
    print("$ " + " ".join(shlex.quote(c) for c in command), flush=True)
    subprocess.run(command, check=True, cwd=ROOT, env={**os.environ, "OMP_NUM_THREADS": "1"})


def significance(gold: Path, a: Path, b: Path, output: Path, train: Path, *extra: str) -> Dict:
    """``scripts/project/significance.py`` of A (baseline) against B; returns its JSON."""
    run([sys.executable, "scripts/project/significance.py", str(gold), str(a), str(b), "--output", str(output),
         "--train", str(train), "--n-samples", "1000", *extra])
    return json.loads(output.read_text(encoding="utf8"))


def scores(path: Path) -> Dict:
    data = json.loads(path.read_text(encoding="utf8"))
    return data.get("scores", data)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--langs", default="en,ru,fr")
    parser.add_argument("--default-work", type=Path, default=ROOT / "training" / "tagger_experiments")
    parser.add_argument("--paper-work", type=Path, default=ROOT / "training" / "tagger_paper_mimick")
    parser.add_argument("--vectors-dir", action="append", default=[], metavar="LANG=DIR",
                        help="passed on to tagger_experiments.py")
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "oov_tagging")
    args = parser.parse_args(argv)
    rows = {}
    for lang in [x.strip() for x in args.langs.split(",") if x.strip()]:
        default, paper = args.default_work / lang, args.paper_work / lang
        if not (default / "metrics" / "mimick.spacy").exists():
            raise SystemExit(f"error: no default-model run for {lang} in {default}: run "
                             f"python scripts/tagger_experiments.py --langs {lang} first")
        if not (paper / "metrics" / "mimick.spacy").exists():
            run([sys.executable, "scripts/tagger_experiments.py", "--paper-mimick", "--langs", lang,
                 "--variants", "mimick", "--work-dir", str(args.paper_work),
                 "--output", str(ROOT / "docs" / "tagging_paper_mimick"),
                 *[f"--vectors-dir={v}" for v in args.vectors_dir]])
        gold, train = default / "test.spacy", next(default.glob("train_5000_seed*.spacy"))
        sig = significance(gold, paper / "metrics" / "mimick.spacy", default / "metrics" / "mimick.spacy",
                           paper / "metrics" / "sig_paper_vs_default.json", train,
                           "--vectors", str(default / "models" / "nochar" / "model-best"))
        vs_nochar = {}
        for name, work in (("paper", paper), ("default", default)):
            path = work / "metrics" / "sig_nochar_mimick.json"
            if name == "default" and path.exists():  # the default run's own test is already there
                vs_nochar[name] = json.loads(path.read_text(encoding="utf8"))
            else:
                vs_nochar[name] = significance(gold, default / "metrics" / "nochar.spacy",
                                               work / "metrics" / "mimick.spacy", path, train)
        commands = {e["step"]: e for e in json.loads((paper / "commands.json").read_text(encoding="utf8"))}
        rows[lang] = {
            "paper": scores(paper / "metrics" / "mimick.json"),
            "default": scores(default / "metrics" / "mimick.json"),
            "significance": sig,
            "vs_nochar": vs_nochar,
            "paper_mimick_train": commands.get("mimick-train"),
        }
    args.output.with_suffix(".json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf8")
    lines = [
        "# OOV-token tagging: default Mimick model vs the paper-faithful one",
        "",
        f"Made by `python benchmarks/oov_tagging.py {' '.join(map(shlex.quote, sys.argv[1:]))}` "
        f"({time.strftime('%Y-%m-%d')}); see its docstring. Mimick variant of the joint tagger, "
        "N_train = 5,000 tokens, seed 0, 40 epochs, each treebank's test set, scores x 100. "
        "Only the Mimick model differs between the two rows of a language: the default (character "
        "n-gram bag, typo augmentation) or the paper's character BiLSTM (`--paper`).",
        "",
        "| lang | Mimick model | " + " | ".join(t for _, t in SCORES) + " | POS p (all, default vs paper) | POS p (OOV(vec), default vs paper) "
        "| POS Δ vs No-Char (p) |",
        "|---|---|" + "---:|" * (len(SCORES) + 3),
    ]
    for lang, row in rows.items():
        sig = row["significance"]
        oov_vec = sig.get("oov_vec") or {}
        for name in ("paper", "default"):
            cells = [f"{100 * row[name][k]:.2f}" if row[name].get(k) is not None else "—" for k, _ in SCORES]
            ps = ["", ""] if name == "paper" else [f"{sig['pos_p_value']:.2g}", f"{oov_vec.get('pos_p_value', float('nan')):.2g}"]
            nc = row["vs_nochar"][name]
            ps.append(f"{100 * nc['pos_acc_delta']:+.2f} ({nc['pos_p_value']:.2g})")
            lines.append(f"| {lang} | {name} | " + " | ".join(cells) + f" | {' | '.join(ps)} |")
    lines += ["", "OOV(vec) tokens per language: " + ", ".join(
        f"{lang} {(row['significance'].get('oov_vec') or {}).get('n_tokens', 0):,}" for lang, row in rows.items()) + "."]
    lines.append("")
    args.output.with_suffix(".md").write_text("\n".join(lines), encoding="utf8")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
