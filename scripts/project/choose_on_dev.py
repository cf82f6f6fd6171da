"""Choose each tagger run's setting on dev: of the same sample trained with several settings
(runs' folders, one per candidate recipe), keep the one whose model-best scored highest on dev.

    python scripts/project/choose_on_dev.py TREEBANK UNIT --candidates _lowres,_lowres-ls10 --output-recipe _lowres-dev \
        [--variants nochar,mimick,chartag,both] [--training-dir training] [--metrics-dir metrics]

UNIT is a run's folder name, ``n<tokens>.s<seed>``. For every tagger variant that ran under
every candidate (``training/<TREEBANK><candidate>/<UNIT>/<variant>/model-best``, evaluated into
``metrics/<TREEBANK><candidate>/<UNIT>/<variant>.json``), the dev score of each candidate is the
one ``spacy train`` chose its model-best by: the run's ``[training.score_weights]`` applied to
the dev scores in model-best's ``meta.json`` (``performance``). The candidate with the highest
score wins, the first listed on a tie (list the plain recipe first: a setting must beat it on
dev to be used). The winner's test metrics and predictions are copied to
``metrics/<TREEBANK><output-recipe>/<UNIT>/``, with the choice recorded in its JSON
(``dev_choice``) and in ``dev_choice.json`` there; spaCy's baseline (``spacy.json``,
``spacy.spacy``), which trains once, is copied from the first candidate that has it, so that
``significance-spacy`` and ``report.py`` read the chosen runs like any other set. The chosen
runs' folders get a path of the same shape, ``training/<TREEBANK><output-recipe>/<UNIT>/<variant>``:
a relative link to the winner's folder (no copy of the model), which ``package`` and the
benchmarks take like any run.

This is the per-language choice of docs/low_resource.md: a setting such as label smoothing
helps French and costs English, and dev, not test, says which language gets it. Test scores
are never read to choose.
"""
import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Dict, List, Optional

from thinc.api import Config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from json_files import write_json  # noqa: E402
from variants import BASELINES, TAGGER_VARIANTS  # noqa: E402


def dev_score(model_best: Path) -> float:
    """The score ``spacy train`` chose model-best by: its config's ``[training.score_weights]``
    applied to meta.json's dev ``performance`` (a weight of null or 0 does not count)."""
    meta_path, config_path = model_best / "meta.json", model_best / "config.cfg"
    for path in (meta_path, config_path):
        if not path.is_file():
            raise SystemExit(f"error: {path} is missing: is {model_best} a finished `spacy train` run?")
    performance = json.loads(meta_path.read_text(encoding="utf8")).get("performance") or {}
    weights = Config().from_disk(config_path, interpolate=False)["training"].get("score_weights", {})
    weighted = {name: float(w) for name, w in weights.items() if w}
    if not weighted:
        raise SystemExit(f"error: {config_path} has no [training.score_weights] to choose by")
    missing = sorted(name for name in weighted if not isinstance(performance.get(name), (int, float)))
    if missing:
        raise SystemExit(f"error: {meta_path} has no dev score {', '.join(missing)} (weighted in {config_path})")
    return sum(w * float(performance[name]) for name, w in weighted.items())


def copy_run(source: Path, out_dir: Path, variant: str, treebank: str, **fields) -> None:
    """``evaluate.py``'s files of one run (``<variant>.json``, ``<variant>.spacy``) from ``source``
    to ``out_dir``, the JSON's ``treebank`` set to the chosen set's and ``fields`` added."""
    record = json.loads((source / f"{variant}.json").read_text(encoding="utf8"))
    record.update(treebank=treebank, **fields)
    out_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source / f"{variant}.spacy", out_dir / f"{variant}.spacy")
    write_json(out_dir / f"{variant}.json", record)


def link_run(source: Path, link: Path) -> None:
    """Point ``link`` at the run folder ``source`` with a relative symlink, replacing an earlier
    link (a new choice) but never a real folder."""
    if link.exists() and not link.is_symlink():
        raise SystemExit(f"error: {link} is a folder, not the link to a chosen run that choose-on-dev "
                         "makes; move it away to choose again")
    link.parent.mkdir(parents=True, exist_ok=True)
    tmp = link.parent / f".{link.name}.link-tmp"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    os.symlink(os.path.relpath(source, link.parent), tmp)
    os.replace(tmp, link)


def choose(treebank: str, unit: str, candidates: List[str], output_recipe: str,
           variants=TAGGER_VARIANTS, training_dir: Path = Path("training"),
           metrics_dir: Path = Path("metrics")) -> Dict[str, Dict]:
    """Choose per variant, copy the winners' metrics and predictions; the choices by variant."""
    if len(candidates) < 2:
        raise SystemExit(f"error: --candidates needs at least two recipes to choose from, got {candidates}")
    if output_recipe in candidates:
        raise SystemExit(f"error: --output-recipe {output_recipe!r} is one of the candidates: "
                         "the chosen runs need a folder of their own")
    out_dir = metrics_dir / f"{treebank}{output_recipe}" / unit
    choices: Dict[str, Dict] = {}
    for variant in variants:
        runs = {c: training_dir / f"{treebank}{c}" / unit / variant / "model-best" for c in candidates}
        present = [c for c, path in runs.items() if path.is_dir()]
        if not present:
            continue
        if len(present) < len(candidates):
            absent = ", ".join(str(runs[c]) for c in candidates if c not in present)
            raise SystemExit(f"error: {variant} ran under {', '.join(present)} but not {absent}: "
                             "train every candidate before choosing")
        scores = {c: dev_score(path) for c, path in runs.items()}
        chosen = max(candidates, key=lambda c: (scores[c], -candidates.index(c)))  # first on a tie
        source = metrics_dir / f"{treebank}{chosen}" / unit
        record_path = source / f"{variant}.json"
        if not record_path.is_file() or not (source / f"{variant}.spacy").is_file():
            raise SystemExit(f"error: {record_path} (and {variant}.spacy) missing: evaluate {treebank}{chosen} first")
        choice = {"chosen": chosen, "dev_scores": scores, "candidates": candidates}
        copy_run(source, out_dir, variant, f"{treebank}{output_recipe}", dev_choice=choice)
        link_run(runs[chosen].parent, training_dir / f"{treebank}{output_recipe}" / unit / variant)
        choices[variant] = choice
        print(f"{treebank} {unit} {variant}: " + ", ".join(f"{c} {100 * s:.2f}" for c, s in scores.items())
              + f" on dev -> {chosen}")
    if not choices:
        raise SystemExit(f"error: no tagger run of {', '.join(variants)} under "
                         f"{', '.join(str(training_dir / (treebank + c) / unit) for c in candidates)}")
    for baseline in BASELINES:
        sources = [metrics_dir / f"{treebank}{c}" / unit for c in candidates]
        found = next((d for d in sources if (d / f"{baseline}.json").is_file()), None)
        if found is not None:
            copy_run(found, out_dir, baseline, f"{treebank}{output_recipe}")
            run = training_dir / found.parent.name / unit / baseline
            if run.is_dir():
                link_run(run, training_dir / f"{treebank}{output_recipe}" / unit / baseline)
    # No "variant"/"scores" keys: report.py does not take it for a run.
    write_json(out_dir / "dev_choice.json", {"dev_choices": choices})
    return choices


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("treebank", help="The treebank's folder name, e.g. UD_French-Sequoia")
    parser.add_argument("unit", help="The run's folder, n<tokens>.s<seed>")
    parser.add_argument("--candidates", required=True,
                        help="Comma-separated recipes (runs' folder suffixes), the plain one first, e.g. _lowres,_lowres-ls10")
    parser.add_argument("--output-recipe", required=True, help="Suffix of the chosen runs' metrics folder, e.g. _lowres-dev")
    parser.add_argument("--variants", default=",".join(TAGGER_VARIANTS))
    parser.add_argument("--training-dir", type=Path, default=Path("training"))
    parser.add_argument("--metrics-dir", type=Path, default=Path("metrics"))
    args = parser.parse_args(argv)
    # "" (the paper recipe's folder) is a candidate too: keep empty items, drop only spaces.
    candidates = [c.strip() for c in args.candidates.split(",")]
    if len(set(candidates)) != len(candidates):
        raise SystemExit(f"error: --candidates lists a recipe twice: {args.candidates!r}")
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = sorted(set(variants) - set(TAGGER_VARIANTS))
    if unknown:
        raise SystemExit(f"error: unknown --variants {unknown}; expected some of {', '.join(TAGGER_VARIANTS)}")
    choose(args.treebank, args.unit, candidates, args.output_recipe, variants, args.training_dir, args.metrics_dir)


if __name__ == "__main__":
    main(sys.argv[1:])
