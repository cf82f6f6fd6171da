"""Cells of the Markdown tables the report scripts write, and the writing of a report.

Scores are fractions, shown x 100 with two decimals; a missing one is a dash (``report.py``'s
em dash by default; ``spacy_models_report.py`` passes its en dash, as its tables always had).
"""
import statistics
from pathlib import Path
from typing import Optional, Sequence

DASH = "—"


def pct(value: Optional[float], digits: int = 2, dash: str = DASH) -> str:
    """A fraction x 100."""
    return dash if value is None else f"{100 * value:.{digits}f}"


def mean_std(values: Sequence[float], dash: str = DASH) -> str:
    """Mean +- sample standard deviation x 100 (the mean alone for one value)."""
    if not values:
        return dash
    if len(values) == 1:
        return f"{100 * values[0]:.2f}"
    return f"{100 * statistics.mean(values):.2f} ± {100 * statistics.stdev(values):.2f}"


def write_report(text: str, output: Path) -> None:
    """Write the Markdown to ``output`` (its folder made if missing) and show it."""
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf8")
    print(text)
    print(f"-> {output}")
