"""The release's table: per treebank, the packaged variant's test scores beside spaCy's baseline.

    python scripts/project/release_table.py [--metrics metrics] [--dist packages/dist] [--recipe _lowres]

Reads what ``paper.py --release`` wrote for each treebank with a full-data run
(``metrics/<treebank><recipe>/n0.s0/``: ``both.json`` or ``chartag.json``, ``spacy.json``,
``sig-spacy-<variant>.json``) and the package files in ``--dist``, and prints a Markdown table:
training words, POS, morph (UFeats exact match) and attribute micro-F1 of the package and of
spaCy's tagger + morphologizer, the McNemar p of the POS difference and the bootstrap p of the
attribute difference, POS on the words outside the training data, the wheel's size. A treebank
whose runs are not finished is listed with what is missing.
"""
import argparse
import sys
from pathlib import Path
from typing import List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
from json_files import read_json  # noqa: E402
from markdown_tables import pct  # noqa: E402
from variants import RELEASE_VARIANTS, release_package_name, release_recipe  # noqa: E402


def p_value(value: Optional[float]) -> str:
    return "—" if value is None else f"{value:.2g}"


def rows(metrics_dir: Path, dist: Path, recipe: str) -> List[str]:
    lines = []
    for folder in sorted(metrics_dir.glob(f"UD_*{recipe}")):
        treebank = folder.name[: -len(recipe)] if recipe else folder.name
        packaged = release_recipe(treebank, recipe)  # the run its dev set chose, if it had candidates
        run = metrics_dir / f"{treebank}{packaged}" / "n0.s0"
        variant = next((v for v in RELEASE_VARIANTS if (run / f"{v}.json").exists()), None)
        spacy = read_json(run / "spacy.json")
        if variant is None:
            if run.is_dir():
                lines.append(f"| {treebank} | (not finished: no both.json / chartag.json in {run}) |" + " |" * 10)
            continue
        ours = read_json(run / f"{variant}.json") or {}
        chosen = (ours.get("dev_choice") or {}).get("chosen")
        shown = f"{variant} ({chosen[len(recipe):].lstrip('-')}, chosen on dev)" if chosen and chosen != recipe else variant
        sig = read_json(run / f"sig-spacy-{variant}.json") or {}
        scores, base = ours.get("scores", {}), (spacy or {}).get("scores", {})
        lang = ours.get("lang") or ""
        name = release_package_name(treebank)
        wheels = sorted(dist.glob(f"*_{name}-*.whl")) if dist.is_dir() else []
        size = f"{wheels[0].stat().st_size / 1e6:.1f} MB" if wheels else "not packaged"
        package = f"`{wheels[0].name.split('-')[0]}`" if wheels else f"`{lang}_{name}`" if lang else f"`*_{name}`"
        lines.append(
            f"| {treebank} | {package} | {ours.get('n_train_tokens') or 0:,} | {shown} | "
            f"{pct(scores.get('pos_acc'))} | {pct(scores.get('morph_acc'))} | {pct(scores.get('attr_micro_f'))} | "
            f"{pct(base.get('pos_acc')) if spacy else 'not run'} | {pct(base.get('morph_acc')) if spacy else '—'} | "
            f"{pct(base.get('attr_micro_f')) if spacy else '—'} | {p_value(sig.get('pos_p_value'))} / "
            f"{p_value(sig.get('attr_p_value'))} | {pct(scores.get('oov_train_pos_acc'))} | {size} |")
    return lines


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--metrics", type=Path, default=Path("metrics"))
    parser.add_argument("--dist", type=Path, default=Path("packages/dist"))
    parser.add_argument("--recipe", default="_lowres", help="The runs' suffix (paper.py --release: _lowres)")
    args = parser.parse_args(argv)
    body = rows(args.metrics, args.dist, args.recipe)
    if not body:
        raise SystemExit(f"error: no full-data runs (UD_*{args.recipe}/n0.s0) under {args.metrics}")
    print("| treebank | package | train words | variant | POS | morph | attr. micro-F1 | spaCy POS | spaCy morph | "
          "spaCy attr. F1 | p (POS / attr.) | POS, words not in training | wheel |")
    print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    print("\n".join(body))


if __name__ == "__main__":
    main(sys.argv[1:])
