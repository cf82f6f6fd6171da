"""Learning curves like the paper's Figure 2: score against training tokens, mean +- std over seeds.

    python scripts/project/plots.py METRICS_DIR [MORE_DIRS ...] --output-dir METRICS_DIR/curves

One PNG per treebank (``<treebank>.png``): POS accuracy (left) and attribute micro-F1 (right)
of each variant against the number of training tokens (log scale, from the smallest budget to
the full training set), the mean over the seeds (random subsamples) with error bars of one
standard deviation. Reads the run JSON files of ``evaluate.py`` (through ``report.py``).
spaCy's own tagger + morphologizer (variant ``spacy``), where it ran, is a fifth curve, dashed black.

A treebank run at one token budget only (``spacy project run all``) has no curve to draw: its
PNG is a bar chart of the variants' scores at that budget (the value on each bar; error bars of
one standard deviation where several seeds ran). Titles say "mean ± std" only over several seeds.
"""
import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import Results, load_results  # noqa: E402
from variants import LABELS, VARIANTS  # noqa: E402

PANELS = (("pos_acc", "Part-of-speech tagging (accuracy)"), ("attr_micro_f", "Morphosyntactic attributes (micro-F1)"))
# variant: (colour, marker, line style)
STYLES = {"nochar": ("tab:gray", "o", "-"), "mimick": ("tab:blue", "s", "-"), "chartag": ("tab:orange", "^", "-"),
          "both": ("tab:green", "D", "-"), "spacy": ("black", "x", "--")}


def curve_points(results: Results, treebank: str, variant: str, metric: str) -> List[Tuple[float, float, float, int]]:
    """(mean training tokens, mean score x 100, std x 100, n seeds) per token budget."""
    by_n: Dict[int, List[dict]] = defaultdict(list)
    for (tb, n, _seed, v), run in results.runs.items():
        if tb == treebank and v == variant and run["scores"].get(metric) is not None:
            by_n[n].append(run)
    points = []
    for n, runs in by_n.items():
        tokens = [r.get("n_train_tokens") or n for r in runs]
        scores = [100 * r["scores"][metric] for r in runs]
        std = statistics.stdev(scores) if len(scores) > 1 else 0.0
        points.append((statistics.mean(tokens), statistics.mean(scores), std, len(scores)))
    return sorted(points)


def seeds_label(seeds: List[int]) -> str:
    """What the points are: a mean over seeds, or one seed's run."""
    if len(seeds) == 1:
        return f"seed {seeds[0]}, one run per variant"
    return f"mean ± std over {len(seeds)} seeds"


def plot_bars(results: Results, treebank: str, output: Path) -> bool:
    """One budget: a bar per variant (mean over seeds, error bar of one std where several ran)."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    drew = False
    tokens: List[float] = []
    for ax, (metric, title) in zip(axes, PANELS):
        bars = []  # (variant, mean, std, n seeds)
        for variant in VARIANTS:
            points = curve_points(results, treebank, variant, metric)
            if points:
                x, mean, std, n = points[0]
                tokens.append(x)
                bars.append((variant, mean, std, n))
        ax.set_title(title, fontsize=10)
        if not bars:
            ax.text(0.5, 0.5, "no scores (no attributes?)", ha="center", va="center", transform=ax.transAxes)
            ax.set_xticks([])
            continue
        xs = list(range(len(bars)))
        means = [b[1] for b in bars]
        errors = [b[2] if b[3] > 1 else 0.0 for b in bars]
        container = ax.bar(xs, means, yerr=errors if any(errors) else None, capsize=4,
                           color=[STYLES[b[0]][0] for b in bars], label="_bars")
        ax.bar_label(container, labels=[f"{m:.2f}" for m in means], padding=2, fontsize=8)
        ax.set_xticks(xs, [LABELS[b[0]] for b in bars], fontsize=8)
        # The differences are a few points: start the axis below the lowest bar, not at 0.
        low = min(m - e for m, e in zip(means, errors))
        high = max(m + e for m, e in zip(means, errors))
        margin = max(1.0, (high - low) * 0.5)
        ax.set_ylim(max(0.0, low - margin), min(100.0, high + margin) + 0.5)
        ax.set_ylabel("score x 100")
        ax.grid(True, axis="y", alpha=0.3)
        drew = True
    seeds = sorted({key[2] for key in results.runs if key[0] == treebank})
    budget = f"{statistics.mean(tokens):,.0f} training tokens" if tokens else "one budget"
    return _save(fig, f"{treebank}: {budget}, {seeds_label(seeds)} (one budget: no learning curve)", output, drew)


def plot_treebank(results: Results, treebank: str, output: Path) -> bool:
    """Learning curves, or :func:`plot_bars` where the treebank was run at one budget only."""
    if len(results.settings(treebank)) < 2:
        return plot_bars(results, treebank, output)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    drew = False
    for ax, (metric, title) in zip(axes, PANELS):
        any_line = False
        ticks: List[float] = []
        for variant in VARIANTS:
            points = curve_points(results, treebank, variant, metric)
            if not points:
                continue
            color, marker, linestyle = STYLES[variant]
            xs, ys, errs, _ = zip(*points)
            ticks += xs
            ax.errorbar(xs, ys, yerr=errs, label=LABELS[variant], color=color, marker=marker,
                        linestyle=linestyle, capsize=3, linewidth=1.5, markersize=5)
            any_line = True
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("training tokens")
        ax.grid(True, alpha=0.3)
        if any_line:
            ax.set_xscale("log")
            # The budgets themselves as ticks (thinned where they would overlap).
            kept: List[float] = []
            for x in sorted(set(round(t) for t in ticks)):
                if not kept or x / kept[-1] >= 1.3:
                    kept.append(x)
            ax.xaxis.set_major_locator(FixedLocator(kept))
            ax.xaxis.set_minor_locator(NullLocator())
            ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,.0f}"))
            ax.legend(fontsize=8)
            drew = True
        else:
            ax.text(0.5, 0.5, "no scores (no attributes?)", ha="center", va="center", transform=ax.transAxes)
    seeds = sorted({key[2] for key in results.runs if key[0] == treebank})
    label = seeds_label(seeds).replace("one run per variant", "one run per variant and budget")
    return _save(fig, f"{treebank}: {label}", output, drew)


def _save(fig, title: str, output: Path, drew: bool) -> bool:
    """Title the figure, write it to OUTPUT when anything was drawn, and close it."""
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    if drew:
        output.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(output, dpi=110)
    plt.close(fig)
    return drew


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("metrics_dir", type=Path)
    parser.add_argument("more_dirs", type=Path, nargs="*", help="Other folders of evaluate.py JSON")
    parser.add_argument("--output-dir", "-o", type=Path, default=None, help="Default: METRICS_DIR/curves")
    args = parser.parse_args(argv)
    results = load_results([args.metrics_dir, *args.more_dirs])
    output_dir = args.output_dir or args.metrics_dir / "curves"
    output_dir.mkdir(parents=True, exist_ok=True)
    written = 0
    for treebank in sorted({key[0] for key in results.runs}):
        path = output_dir / f"{treebank}.png"
        if plot_treebank(results, treebank, path):
            budgets = results.settings(treebank)
            if len(budgets) < 2:
                what = ("one budget: a bar chart of the variants (learning curves need >= 2 budgets, "
                        "e.g. `spacy project run curves`)")
            else:
                what = f"learning curves over {len(budgets)} budgets"
            print(f"{treebank}: {what} -> {path}")
            written += 1
    if not written:
        print(f"no runs found under {args.metrics_dir}: nothing to plot")


if __name__ == "__main__":
    main(sys.argv[1:])
