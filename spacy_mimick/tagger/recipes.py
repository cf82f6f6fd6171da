"""The tagger's ``spacy train`` configs: one template per variant, three recipes.

The templates (``configs/tagger_<variant>.cfg`` beside this module, shipped with the package)
hold the project's default: ``MimickTagger.v3`` with the low-resource training recipe, the
network and recipe that every measured regime of the project uses (docs/low_resource.md). The
paper's network and recipe (``MimickTagger.v1``: 128 hidden units, dropout 0.5, momentum-free
Adam at a constant rate, batches of 400 padded tokens, 40 epochs, patience 5000, no parameter
averages) are the same template with :data:`PAPER_RECIPE` applied. ``python -m spacy_mimick
init-config`` writes any of them, as ``spacy init config`` does for spaCy's own components.

The ``typos`` recipe (:data:`TYPOS_RECIPE`) is the default one for text with misspellings: each
training sentence is read clean and, where the seeded ``typo_augmenter.v2`` gave 15% of its words
one typo each, once more misspelled, and the pipeline trains and tags with ``mimick_vectors``'
spelling backoff on (docs/typo_tagging.md measures it against the default recipe: with a Mimick
model trained with ``train``'s default loss, l2 + InfoNCE, it gains 3.6-3.9 POS at 30% typos in
English with no significant change on clean text; with an l2 model, less, and less steadily).

The four variants are the paper's (section 4): No-Char (static vectors, UNK for OOV words),
Mimick (Mimick's vectors for OOV words), char->tag (a character BiLSTM trained on the tagging
data) and Both.
"""
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Optional

if TYPE_CHECKING:  # confection (pydantic) is imported where a config is read: the CLI starts faster
    from confection import Config

VARIANTS = ("nochar", "mimick", "chartag", "both")
RECIPES = ("default", "paper", "typos")

_REMOVE = object()  # a key that the recipe takes out of the template

# Dotted config paths -> the paper recipe's value (or _REMOVE).
PAPER_RECIPE: Dict[str, Any] = {
    "components.mimick_tagger.model.@architectures": "spacy_mimick.MimickTagger.v1",
    "components.mimick_tagger.model.hidden_width": 128,
    "components.mimick_tagger.model.dropout": 0.5,
    "components.mimick_tagger.model.case_features": _REMOVE,
    "components.mimick_tagger.model.word_dropout": _REMOVE,
    "components.mimick_tagger.model.mimick_features": _REMOVE,
    "components.mimick_vectors.predict_all": _REMOVE,
    "training.batcher.size": 400,
    "training.eval_frequency": 500,
    "training.max_epochs": 40,
    "training.patience": 5000,
    "training.optimizer.use_averages": False,
    "training.optimizer.learn_rate": 0.005,  # replaces the warm-up + linear decay schedule
    "training.before_to_disk": None,  # the paper's decoding: no word priors chosen on dev
}


# Dotted config paths -> the typos recipe's value: the default recipe trained on misspelled copies.
TYPOS_RECIPE: Dict[str, Any] = {
    "corpora.train.@readers": "spacy_mimick.ConllCorpus.v2",
    "corpora.train.augmenter": {"@augmenters": "spacy_mimick.typo_augmenter.v2", "rate": 0.15,
                                "keep_original": True, "seed": "${system.seed}"},
    "components.mimick_vectors.spelling_backoff": True,
}

OVERRIDES = {"default": {}, "paper": PAPER_RECIPE, "typos": TYPOS_RECIPE}

# Dotted config paths -> the value when the typos recipe continues a trained pipeline's tagger
# (``init-config --recipe typos --source PIPELINE``) instead of training one from scratch: a short
# run at a fifth of the rate, its checkpoints scored on dev read clean and misspelled (the same
# typos at every evaluation).
FINETUNE: Dict[str, Any] = {
    "training.max_steps": 10000,
    "training.eval_frequency": 1000,
    "training.optimizer.learn_rate.initial_rate": 0.001,
    "training.optimizer.learn_rate.warmup_steps": 100,
    "corpora.dev.@readers": "spacy_mimick.ConllCorpus.v2",
    "corpora.dev.augmenter": {"@augmenters": "spacy_mimick.fixed_typos.v1", "rate": 0.15,
                              "keep_original": True, "seed": "${system.seed}"},
}

# And, for the variants with a char->tag BiLSTM, only the word and character encoders train: the
# sentence BiLSTM and the heads stay the source's (``freezing.py``). On full EWT, from the
# release's tagger, three seeds: +3.07 to +3.14 POS at 30% typos for -0.07 to -0.08 on clean text
# (McNemar p 0.11 to 0.23); every module trained gave +3.74 to +3.82 for -0.12 to -0.16 (p 0.019
# to 0.079), the recipe from scratch +5.27 for -0.38 (docs/typo_tagging.md). The continuation is
# for pipelines trained on full data: from 5,000-token taggers (English, French, Russian) freezing
# gained less than every module (``--initialize.after_init null``), and the recipe from scratch
# most. No-Char and Mimick (``char_embed = 0``), whose misspelled words have no encoder of their
# own to learn, continue every module.
FINETUNE_FROZEN: Dict[str, Any] = {
    "initialize.after_init": {"@callbacks": "spacy_mimick.freeze_tagger_modules.v1",
                              "modules": ["lstm", "heads"]},
}


def template_text(variant: str) -> str:
    """The default recipe's config of ``variant``, comments included."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown tagger variant {variant!r}: expected one of {', '.join(VARIANTS)}")
    return (resources.files(__package__) / "configs" / f"tagger_{variant}.cfg").read_text(encoding="utf8")


def tagger_config(variant: str, recipe: str = "default", source: Optional[str] = None) -> "Config":
    """The (uninterpolated) training config of ``variant`` with ``recipe``; with ``source`` (a
    trained pipeline's folder, typos recipe only), the config that continues that pipeline's
    tagger (:data:`FINETUNE`, and :data:`FINETUNE_FROZEN` for the variants with characters), with
    its vectors table, Mimick model and language."""
    from confection import Config

    if recipe not in RECIPES:
        raise ValueError(f"unknown recipe {recipe!r}: expected one of {', '.join(RECIPES)}")
    if source is not None and recipe != "typos":
        raise ValueError(f"a source pipeline is continued with the typos recipe, not {recipe!r}")
    config = Config().from_str(template_text(variant), interpolate=False)
    overrides = dict(OVERRIDES[recipe])
    if source is not None:
        overrides.update(FINETUNE)
        if config["components"]["mimick_tagger"]["model"].get("char_embed", 0) > 0:
            overrides.update(FINETUNE_FROZEN)
        overrides["components.mimick_tagger"] = {"source": str(source)}
        overrides["paths.vectors"] = str(source)
        source_config = Path(source) / "config.cfg"
        lang = (Config().from_disk(source_config, interpolate=False).get("nlp", {}).get("lang")
                if source_config.is_file() else None)
        if lang:  # the source's language (its tokenizer and lexical attributes)
            overrides["nlp.lang"] = lang
        if "mimick_model" in config["paths"]:
            overrides["paths.mimick_model"] = str(Path(source) / "vocab" / "mimick")
    for dotted, value in overrides.items():
        *path, key = dotted.split(".")
        section = config
        for name in path:
            section = section.get(name, {})  # a variant without mimick_vectors lacks its section
        if value is _REMOVE:
            section.pop(key, None)
        else:
            section[key] = dict(value) if isinstance(value, dict) else value
    return config


def config_text(variant: str, recipe: str = "default", source: Optional[str] = None) -> str:
    """What ``init-config`` writes: the template as it is for the default recipe; for the
    others, the config with their overrides and a header saying how it was made."""
    if recipe == "default" and source is None:
        tagger_config(variant, recipe)  # validates both names
        return template_text(variant)
    if source is not None:
        config = tagger_config(variant, recipe, source)
        header = (f"# The {variant} variant's tagger of {source}, continued on misspelled copies of its\n"
                  f"# sentences (the typos recipe, a short run at a fifth of the rate), written by\n"
                  f"#   python -m spacy_mimick init-config OUTPUT --variant {variant} --recipe typos --source {source}\n"
                  "# from the default config with spacy_mimick.tagger.recipes.TYPOS_RECIPE and FINETUNE.\n"
                  + ("# Only the word and character encoders train (FINETUNE_FROZEN), as measured best from a\n"
                     "# tagger trained on full data; for one trained on a few thousand tokens the typos recipe\n"
                     "# from scratch measured best (no --source), and --initialize.after_init null (every\n"
                     "# module trains) better than this.\n" if config["initialize"]["after_init"] else "")
                  + "# The vectors table and Mimick model are the source's; give --paths.train and --paths.dev.\n\n")
        return header + config.to_str()
    what = {"paper": "with the paper's network and recipe (MimickTagger.v1)",
            "typos": "trained on misspelled copies of its sentences, spelling backoff on (the typos recipe)"}[recipe]
    header = (f"# The {variant} variant {what}, written by\n"
              f"#   python -m spacy_mimick init-config OUTPUT --variant {variant} --recipe {recipe}\n"
              f"# from the default config (--recipe default) with spacy_mimick.tagger.recipes.{recipe.upper()}_RECIPE.\n\n")
    return header + tagger_config(variant, recipe).to_str()
