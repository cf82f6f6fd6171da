"""The end of `spacy project run all`: the headline results of one run, and where everything is.

    python scripts/project/summary.py METRICS_DIR --treebank UD_English-EWT --n-tokens 5000 --seed 0 \
        [--report metrics/report.md] [--plots metrics/curves] [--package packages/.../x.tar.gz] [--dist packages/dist]

Prints, for one treebank, token budget and seed: the POS accuracy and attribute micro-F1 of the
variants (``report.py``'s tables 1 and 2, the same code, restricted to this run), the paired
tests (Mimick vs No-Char, Both vs char->tag: McNemar's for POS, the bootstrapped Z-test for
attributes), and the paths of the report, the plot and the package, saying which are missing.
Writes nothing. Exits with an error where METRICS_DIR has no run of that setting.
"""
import argparse
import sys
from pathlib import Path
from typing import List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import Results, load_results, score_table, setting_label  # noqa: E402
from variants import LABELS, PAIRS  # noqa: E402


def p_text(p_value: Optional[float], alpha: float) -> str:
    if p_value is None:
        return "not tested"
    return f"p = {p_value:.2g}" + (", significant" if p_value < alpha else "")


def delta_text(delta: Optional[float]) -> str:
    return "—" if delta is None else f"{100 * delta:+.2f}"


def significance_lines(results: Results, treebank: str, n: int, alpha: float) -> List[str]:
    """One line per tested pair: the differences (x 100) and the p-values of the main seed's tests."""
    lines = []
    for variant, base in PAIRS.items():
        sig = results.sig(treebank, n, variant)
        if sig is None:
            if results.run(treebank, n, variant) and results.run(treebank, n, base):
                lines.append(f"{LABELS[variant]} vs {LABELS[base]}: not tested (run `significance`)")
            continue
        lines.append(
            f"{LABELS[variant]} vs {LABELS[base]}: POS {delta_text(sig.get('pos_acc_delta'))} "
            f"(McNemar {p_text(sig.get('pos_p_value'), alpha)}), attributes "
            f"{delta_text(sig.get('attr_micro_f_delta'))} (Z-test {p_text(sig.get('attr_p_value'), alpha)})")
    return lines


def where(label: str, path: Optional[Path], missing: str, what: str = "") -> str:
    if path is None:
        return ""
    return f"{label:<9}{path}" + (f" ({what})" if what and path.exists() else "") + (
        "" if path.exists() else f" (not there: {missing})")


def summary(results: Results, treebank: str, n: int, seed: int, alpha: float = 0.01) -> List[str]:
    run = results.subset(treebank, n, seed)
    any_run = next(iter(run.runs.values()))
    test_tokens = any_run.get("n_test_tokens")
    lines = [f"Results of this run: {treebank}, {setting_label(n)}, seed {seed}; test set"
             + (f" {test_tokens:,} tokens" if test_tokens else "") + "; scores x 100, "
             f"**bold** (*italic*): significant gain (loss), p < {alpha}, of Mimick over No-Char and of Both over char→tag.",
             ""]
    for title, metric, p_key, delta_key in (
            ("POS tagging accuracy", "pos_acc", "pos_p_value", "pos_acc_delta"),
            ("Morphosyntactic attributes, micro-F1", "attr_micro_f", "attr_p_value", "attr_micro_f_delta")):
        table = score_table(run, metric, p_key, delta_key, [n], alpha)
        lines += [f"{title}:", ""] + (table if len(table) > 2 else ["(no run of the variants)"]) + [""]
    sig_lines = significance_lines(run, treebank, n, alpha)
    if sig_lines:
        lines += ["Paired tests (differences x 100):"] + [f"  {line}" for line in sig_lines] + [""]
    return lines


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("metrics_dir", type=Path)
    parser.add_argument("--treebank", required=True, help="As evaluate.py recorded it (the recipe appended)")
    parser.add_argument("--n-tokens", type=int, required=True, help="Token budget of the run (0: full data)")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--report", type=Path, default=None, help="report.py's Markdown file")
    parser.add_argument("--plots", type=Path, default=None, help="plots.py's folder (<treebank>.png)")
    parser.add_argument("--package", type=Path, default=None, help="The package's sdist")
    parser.add_argument("--dist", type=Path, default=None,
                        help="The --find-links folder with the package and spacy-mimick's wheel (packages/dist)")
    parser.add_argument("--alpha", type=float, default=0.01, help="Significance level")
    args = parser.parse_args(argv)
    results = load_results(args.metrics_dir)
    if not results.subset(args.treebank, args.n_tokens, args.seed).runs:
        raise SystemExit(f"error: no evaluate.py results for {args.treebank} at n{args.n_tokens}.s{args.seed} "
                         f"under {args.metrics_dir} (run `evaluate` first)")
    lines = summary(results, args.treebank, args.n_tokens, args.seed, args.alpha)
    paths = [where("Report:", args.report, "run `report`", f"every run under {args.metrics_dir}, tables like the paper's"),
             where("Plot:", args.plots / f"{args.treebank}.png" if args.plots else None, "run `plots`"),
             where("Package:", args.package, "run `package`")]
    lines += [line for line in paths if line]
    if args.package is not None and args.package.exists():
        name = args.package.name.rsplit("-", 1)[0]
        if args.dist is not None and (args.dist / args.package.name).exists():
            # The pipeline with the spacy-mimick wheel beside it: no index needs to have spacy-mimick.
            lines.append(f"{'':<9}pip install --find-links {args.dist} {name}")
        else:
            lines.append(f"{'':<9}pip install {args.package}")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
