"""What each change of MimickTagger.v2 is worth: the Mimick variant on EWT, v1 against v2 settings.

    python scripts/tagger_v2_ablation.py --vectors-dir VECTORS_DIR [--seeds 0,1,2] [--n-tokens 5000] \
        [--max-epochs 40] [--eval-frequency 200] [--work-dir training/tagger_v2_ablation] \
        [--output docs/tagger_v2_ablation.md]

VECTORS_DIR: ``spacy init vectors`` of the GloVe 100k rows (as for scripts/tagger_experiments.py).
Every setting trains ``configs/tagger_mimick*.cfg`` with the default Mimick model
(models/glove-default, from ``bash scripts/rare_word.sh``) on the same seeded N_train-token
subsamples, one training at a time (``OMP_NUM_THREADS=1``), and is evaluated on the EWT test set by
``scripts/project/evaluate.py``. Finished runs are reused. The table gives mean and standard
deviation over the seeds.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from tagger_experiments import LANGS, build_docbins  # noqa: E402
V2 = "--components.mimick_tagger.model."

# name, config, overrides of the v2 config's model block, description
SETTINGS: List[Tuple[str, str, List[str], str]] = [
    ("v1", "tagger_mimick.cfg", [], "MimickTagger.v1 (the paper's network, hidden 128)"),
    ("case", "tagger_mimick_v2.cfg", [V2 + "hidden_width", "128", V2 + "word_dropout", "0"],
     "v1 + case classes"),
    ("wide", "tagger_mimick_v2.cfg", [V2 + "case_features", "false", V2 + "word_dropout", "0"],
     "v1 with hidden 256"),
    ("case+wide", "tagger_mimick_v2.cfg", [V2 + "word_dropout", "0"], "case classes + hidden 256"),
    ("v2", "tagger_mimick_v2.cfg", [], "MimickTagger.v2 defaults: case + hidden 256 + word dropout 0.1"),
    ("v2, word dropout 0.25", "tagger_mimick_v2.cfg", [V2 + "word_dropout", "0.25"], "v2 with word dropout 0.25"),
]
SCORES = (("pos_acc", "POS"), ("attr_micro_f", "attr F1"), ("oov_train_pos_acc", "OOV(train) POS"),
          ("oov_vec_pos_acc", "OOV(vec) POS"))


def run(command: List[str], log: Path) -> None:
    print("  $ " + " ".join(command), flush=True)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    with log.open("w", encoding="utf8") as out:
        if subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT).returncode:
            raise SystemExit(f"failed, see {log}")


def train_and_evaluate(index: int, setting: Tuple[str, str, List[str], str], seed: int,
                       args: argparse.Namespace) -> Dict[str, float]:
    name, config, overrides, _ = setting
    work = args.work_dir / f"setting{index}.s{seed}"
    metrics = work / "metrics" / "mimick.json"
    if not metrics.exists():
        work.mkdir(parents=True, exist_ok=True)
        print(f"[{name}, seed {seed}]", flush=True)
        files = build_docbins(LANGS["en"], argparse.Namespace(data_dir=args.data_dir, n_tokens=args.n_tokens,
                                                              seed=seed), "en", args.work_dir)
        run([sys.executable, "-m", "spacy", "train", str(ROOT / "configs" / config),
             "--output", str(work / "models" / "mimick"),
             "--paths.train", str(files["train"]), "--paths.dev", str(files["dev"]),
             "--paths.vectors", str(args.vectors_dir), "--paths.mimick_model", str(args.mimick_model),
             "--nlp.lang", "en", "--corpora.train.n_tokens", str(args.n_tokens), "--system.seed", str(seed),
             "--training.max_epochs", str(args.max_epochs), "--training.eval_frequency", str(args.eval_frequency),
             *overrides], work / "train.log")
        run([sys.executable, str(ROOT / "scripts" / "project" / "evaluate.py"), str(files["test_spacy"]),
             str(work / "models"), str(work / "metrics"), "--train", str(files["train_spacy"]), "--variants", "mimick"],
            work / "evaluate.log")
    scores = json.loads(metrics.read_text(encoding="utf8"))["scores"]
    return {key: scores[key] for key, _ in SCORES}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vectors-dir", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--mimick-model", type=Path, default=ROOT / "models" / "glove-default")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--n-tokens", type=int, default=5000)
    parser.add_argument("--max-epochs", type=int, default=40)
    parser.add_argument("--eval-frequency", type=int, default=200)
    parser.add_argument("--work-dir", type=Path, default=ROOT / "training" / "tagger_v2_ablation")
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "tagger_v2_ablation.md")
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    rows = []
    for i, setting in enumerate(SETTINGS):
        results = [train_and_evaluate(i, setting, seed, args) for seed in seeds]
        rows.append((setting, results))
    lines = [
        "# MimickTagger.v2 ablation: the Mimick variant on UD English-EWT",
        "",
        f"`python scripts/tagger_v2_ablation.py --vectors-dir VECTORS_DIR --seeds {args.seeds} "
        f"--n-tokens {args.n_tokens} --max-epochs {args.max_epochs} --eval-frequency {args.eval_frequency}`",
        "",
        f"N_train = {args.n_tokens:,} tokens (seeded sentence subsamples, seeds {args.seeds}; the seed also "
        f"seeds training), {args.max_epochs} epochs, GloVe 50d top-100k vectors, the default Mimick model; "
        "EWT test set, scores x 100, mean ± standard deviation over the seeds.",
        "",
        "| setting | " + " | ".join(title for _, title in SCORES) + " |",
        "|---|" + "---:|" * len(SCORES),
    ]
    for (name, _, _, description), results in rows:
        cells = []
        for key, _ in SCORES:
            values = [100 * r[key] for r in results]
            spread = statistics.stdev(values) if len(values) > 1 else 0.0
            cells.append(f"{statistics.mean(values):.2f} ± {spread:.2f}")
        lines.append(f"| {name}: {description} | " + " | ".join(cells) + " |")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("\n".join(lines) + "\n", encoding="utf8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
