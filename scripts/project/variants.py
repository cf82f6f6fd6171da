"""The systems the project trains and compares, named once for every script.

* :data:`TAGGER_VARIANTS`: the paper's four Mimick taggers, No-Char, Mimick, char->tag and Both
  (``configs/tagger_<variant>*.cfg``; the runs' files ``<variant>.json`` / ``<variant>.spacy``);
* :data:`BASELINES`: spaCy's own tagger + morphologizer (``spacy``), trained on the same samples;
* :data:`PAIRS`: which variant each Mimick variant is tested against (``significance``);
* :data:`LABELS`: the names the tables and plots show;
* :data:`RELEASE_VARIANTS` and :func:`release_package_name`: the release's tagger (Both, or
  char->tag where a language has no Mimick model) and its package's name.
"""
import re

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


def release_package_name(treebank: str) -> str:
    """``mimick_ud_<name>`` of a ``UD_<Language>-<Name>`` folder (UD_English-EWT: mimick_ud_ewt)."""
    name = treebank.split("-", 1)[1] if "-" in treebank else treebank
    return "mimick_ud_" + re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
