"""Markdown tables of the `spacy-models` runs: spaCy's tagger + morphologizer + parser with and
without Mimick (docs/spacy_models.md).

    python scripts/project/spacy_models_report.py metrics/spacy_models --output REPORT.md

Reads ``METRICS/<treebank>/n<N>.s<S>/{spacy,mimick}.json`` (``evaluate.py``) and
``sig-spacy-mimick.json`` (``significance.py``). Per setting (treebank, token budget):

1. scores on all test tokens, on tokens without a vector (neither the form nor its lowercase is a
   key of the table: the tokens Mimick serves) and on tokens unseen in the training sample:
   mean +- sample std over seeds (the std is left out for one seed) and the mean difference;
2. per seed: the differences (Mimick - spaCy) and their p-values: McNemar's test per token for
   POS, whole-FEATS morph, UAS and LAS; the sentence bootstrap Z-test for LAS (``boot``); with
   several seeds, a ``pooled`` row: the mean difference and McNemar's test on the discordant
   tokens summed over the seeds. The seeds' runs are scored on the same test tokens, so the
   pooled test treats each (run, token) as one trial: it asks whether Mimick wins across
   training runs, and is optimistic if the runs' errors fall on the same tokens. ``lowercase row
   only``: tokens whose exact form has no row but whose lowercase has one (spaCy's layer gives
   them zeros, mimick_vectors' lowercase backoff the lowercase row).

Where the lowercase-keys control ran (``spacy_lower``: spaCy's pipeline on a table in which each
treebank form whose lowercase has a row is keyed to that row, ``train-spacy-lower``), it gets a
column and the per-seed rows "vs lowercase keys" (Mimick - control): there only the tokens
without a vector in any case get other inputs.

Scores are percentages; UAS/LAS count every word, punctuation included.
"""
import argparse
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from spacy_mimick.ud.significance import mcnemar_counts

sys.path.insert(0, str(Path(__file__).resolve().parent))
from markdown_tables import mean_std, write_report  # noqa: E402

RUN_DIR = re.compile(r"^n(\d+)\.s(\d+)$")
VARIANTS = ("spacy", "mimick")
# (label, score key without the subset prefix)
METRICS = (("POS", "pos_acc"), ("XPOS (tagger)", "tag_acc"), ("morph (FEATS acc.)", "morph_acc"), ("attr. micro-F1", "attr_micro_f"),
           ("UAS", "dep_uas"), ("LAS", "dep_las"))
SUBSETS = (("all", ""), ("no vector", "oov_vec_"), ("unseen in training", "oov_train_"))
DASH = "–"  # en dash: the report's own (report.py's tables have an em dash)


def load_runs(root: Path) -> Dict[Tuple[str, int], Dict[int, Dict[str, Any]]]:
    """{(treebank, n_tokens): {seed: {"spacy": json, "mimick": json, "sig": json}}}, complete seeds only."""
    settings: Dict[Tuple[str, int], Dict[int, Dict[str, Any]]] = {}
    for run_dir in sorted(p for p in root.glob("*/*") if p.is_dir() and RUN_DIR.match(p.name)):
        n_tokens, seed = (int(x) for x in RUN_DIR.match(run_dir.name).groups())
        files = {v: run_dir / f"{v}.json" for v in VARIANTS}
        files["sig"] = run_dir / "sig-spacy-mimick.json"
        if not all(f.exists() for f in files.values()):
            print(f"{run_dir}: incomplete ({', '.join(k for k, f in files.items() if not f.exists())} missing), "
                  f"left out")
            continue
        data = {k: json.loads(f.read_text(encoding="utf8")) for k, f in files.items()}
        for key, name in (("spacy_lower", "spacy_lower.json"), ("sig_lower", "sig-spacy_lower-mimick.json")):
            if (run_dir / name).exists():  # the lowercase-keys control (train-spacy-lower)
                data[key] = json.loads((run_dir / name).read_text(encoding="utf8"))
        settings.setdefault((run_dir.parent.name, n_tokens), {})[seed] = data
    return settings


def p_fmt(p: Optional[float]) -> str:
    if p is None:
        return DASH
    return f"{p:.1e}" if p < 0.001 else f"{p:.3f}"


def delta_p(outcome: Dict[str, Any], metric: str) -> str:
    delta = outcome.get(f"{metric}_acc_delta")
    if delta is None:
        return DASH
    text = f"{100 * delta:+.2f} (p={p_fmt(outcome.get(f'{metric}_p_value'))}"
    if metric == "las" and outcome.get("las_bootstrap_p_value") is not None:
        text += f", boot {p_fmt(outcome['las_bootstrap_p_value'])}"
    return text + ")"


def pooled(outcomes: List[Dict[str, Any]], metric: str) -> str:
    deltas = [o.get(f"{metric}_acc_delta") for o in outcomes]
    counts = [(o.get(f"{metric}_only_a"), o.get(f"{metric}_only_b")) for o in outcomes]
    if any(d is None for d in deltas) or any(c is None for pair in counts for c in pair):
        return DASH
    _, p_value = mcnemar_counts(sum(a for a, _ in counts), sum(b for _, b in counts))
    return f"{100 * statistics.mean(deltas):+.2f} (p={p_fmt(p_value)})"


def setting_tables(treebank: str, n_tokens: int, runs: Dict[int, Dict[str, Any]]) -> List[str]:
    seeds = sorted(runs)
    first = runs[seeds[0]]
    budget = "full" if n_tokens == 0 else f"{n_tokens:,} tokens"
    vectors = first["spacy"].get("vectors") or {}
    lines = [f"## {treebank}, {budget} (seeds {', '.join(map(str, seeds))})", ""]
    train = sorted({runs[s]["spacy"].get("n_train_tokens") for s in seeds} - {None})
    scores0 = first["spacy"]["scores"]
    lines.append(
        f"Training tokens: {', '.join(f'{t:,}' for t in train)}; test tokens: {first['spacy']['n_test_tokens']:,}, "
        f"of which {scores0.get('oov_vec_n_tokens') or 0:,} without a vector "
        f"({vectors.get('rows', 0):,} x {vectors.get('width', 0)} table) and "
        + ", ".join(f"{runs[s]['spacy']['scores'].get('oov_train_n_tokens') or 0:,}" for s in seeds)
        + " unseen in training (per seed).")
    lower = all("spacy_lower" in runs[s] and "sig_lower" in runs[s] for s in seeds)
    variants = ("spacy", "spacy_lower", "mimick") if lower else VARIANTS
    lines += ["", "| tokens | metric | spaCy | " + ("spaCy, lowercase keys | " if lower else "") + "+ Mimick | Δ |"
              + (" Δ vs lowercase keys |" if lower else ""),
              "|---|---|---:|---:|---:|" + ("---:|---:|" if lower else "")]
    for subset, prefix in SUBSETS:
        for label, key in METRICS:
            values = {v: [runs[s][v]["scores"].get(prefix + key) for s in seeds] for v in variants}
            if any(x is None for v in variants for x in values[v]):
                continue
            row = f"| {subset} | {label} | " + " | ".join(mean_std(values[v], DASH) for v in variants)
            for base in ("spacy", "spacy_lower") if lower else ("spacy",):
                row += f" | {100 * statistics.mean(b - a for a, b in zip(values[base], values['mimick'])):+.2f}"
            lines.append(row + " |")
    lines += ["", "Per seed, Mimick - spaCy (p: McNemar per token; boot: sentence bootstrap Z-test; pooled: "
              "mean difference, McNemar on the discordant tokens of all seeds):", "",
              "| seed | tokens | n | POS | morph | UAS | LAS |", "|---|---|---:|---|---|---|---|"]
    subsets = (("all", "all"), ("no vector", "oov_vec"), ("lowercase row only", "lowercase_only"),
               ("unseen", "oov_train"))
    for sig_key, against in (("sig", ""), ("sig_lower", ", vs lowercase keys")) if lower else (("sig", ""),):
        for subset, name in subsets:
            for seed in seeds:
                outcome = (runs[seed][sig_key].get("outcomes") or {}).get(name)
                if outcome:
                    lines.append(f"| {seed} | {subset}{against} | {outcome['las_n_tokens']:,} | " + " | ".join(
                        delta_p(outcome, m) for m in ("pos", "morph", "uas", "las")) + " |")
            outcomes = [(runs[seed][sig_key].get("outcomes") or {}).get(name) for seed in seeds]
            if len(seeds) > 1 and all(outcomes):
                lines.append(f"| pooled | {subset}{against} | {sum(o['las_n_tokens'] for o in outcomes):,} | "
                             + " | ".join(pooled(outcomes, m) for m in ("pos", "morph", "uas", "las")) + " |")
    return lines + [""]


def report(root: Path) -> str:
    settings = load_runs(root)
    if not settings:
        raise SystemExit(f"error: no complete run (spacy.json, mimick.json, sig-spacy-mimick.json) under {root}")
    lines = ["# spaCy's tagger + morphologizer + parser, with and without Mimick", "",
             "Generated by scripts/project/spacy_models_report.py from " + str(root) + " (the `spacy-models` "
             "workflow, docs/spacy_models.md). Percentages; UAS/LAS over every word, punctuation included; "
             "mean ± std over seeds.", ""]
    for (treebank, n_tokens) in sorted(settings, key=lambda k: (k[0], k[1] == 0, k[1])):
        lines += setting_tables(treebank, n_tokens, settings[(treebank, n_tokens)])
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("metrics", type=Path, help="metrics/spacy_models")
    parser.add_argument("--output", "-o", type=Path, required=True, help="Markdown file to write")
    args = parser.parse_args(argv)
    write_report(report(args.metrics), args.output)


if __name__ == "__main__":
    main(sys.argv[1:])
