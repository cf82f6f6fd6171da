"""Write the meta.json for ``spacy package``: name, data sources, licenses, accuracy, requirements, model card.

    python scripts/project/package_meta.py MODEL_DIR OUTPUT.json --sources corpus/<tb>/sources.json \
        --metrics metrics/<tb>/<setting>/both.json --name mimick_ud_ewt --version 0.1.0 \
        [--baseline metrics/<tb>/<setting>/spacy.json --significance metrics/<tb>/<setting>/sig-spacy-both.json] \
        [--command "the command that built it"]

Starts from the trained pipeline's own meta.json and fills in what a published pipeline needs:
the UD treebank and the vectors it was trained on (with their licenses, from ``data.py``'s
``sources.json``; the package's license is the treebank's, which governs models trained on it),
the paper metrics of ``evaluate.py`` on the test set as ``performance``, and ``spacy-mimick`` in
``requirements`` (the pipeline's components come from it).

The model card is meta.json's ``notes``, which spaCy's ``package`` (and ``spacy huggingface-hub
push``) put into the generated README under the accuracy table: the test scores beside spaCy's
tagger + morphologizer trained on the same data and vectors (``--baseline``) with the paired
tests (``--significance``), the license of every part and what it means for use (a treebank
under a NonCommercial license makes the package non-commercial; a Mimick model converted from the
original MIMICK release is GPL-3.0), and the command that built it. A pipeline trained on the
project's embedded slice (``data_dir`` assets) says in its description and card that it is a demo.
``performance`` has spaCy's keys (``pos_acc``, ``morph_acc``; ``morph_micro_f``/``_p``/``_r`` are
the paper's attribute micro-F1, ``attr_micro_*``, under spaCy's morph prefix) and the OOV ones.
"""
import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import spacy_mimick

sys.path.insert(0, str(Path(__file__).resolve().parent))
from data import prefix_language  # noqa: E402
from json_files import read_json, write_json  # noqa: E402
from markdown_tables import pct  # noqa: E402

PAPER = {
    "name": "MIMICK (Pinter, Guthrie & Eisenstein 2017): Mimicking Word Embeddings using Subword RNNs",
    "url": "https://aclanthology.org/D17-1010/",
}
# Fractions only: spaCy's generated README shows every performance value x 100.
PERFORMANCE_KEYS = (
    "pos_acc", "morph_acc", "attr_micro_p", "attr_micro_r", "attr_micro_f", "attr_macro_f",
    "oov_train_pos_acc", "oov_train_attr_micro_f", "oov_vec_pos_acc", "oov_vec_attr_micro_f",
)
# Raw-text scores (score_raw_text): F1 of the words aligned to the gold words, and of those with the
# right UPOS / FEATS.
RAW_TEXT_KEYS = {"raw_words_f": "words", "raw_upos_f": "upos", "raw_ufeats_f": "ufeats"}
# spaCy's names for the paper's attribute micro scores (its morphologizer reports morph_micro_*).
SPACY_ALIASES = {"morph_micro_p": "attr_micro_p", "morph_micro_r": "attr_micro_r", "morph_micro_f": "attr_micro_f"}
ORIGINAL_RELEASE = {
    "name": "Original MIMICK release model (Pinter et al. 2017, github.com/yuvalpinter/Mimick), converted",
    "url": "https://github.com/yuvalpinter/Mimick",
    "license": "GPL-3.0",
}
DEMO_NOTE = ("DEMO: trained on the project's embedded slice of the treebank (a few thousand tokens, a small "
             "vectors table) to show the packaging end to end; its accuracy is far below a full-data "
             "pipeline. Not for use.")


def is_non_commercial(license_name: Optional[str]) -> bool:
    """Whether a license name (data.py's detect_license) is a NonCommercial one (CC BY-NC...)."""
    return bool(license_name) and ("-NC" in license_name.upper() or "NONCOMMERCIAL" in license_name.upper().replace("-", ""))


def is_demo(sources: Dict[str, Any]) -> bool:
    """Trained on the project's embedded data (``data_dir`` the project's assets folder, relative or
    absolute; not a download into assets/full)."""
    return Path(sources.get("data_dir") or "").name == "assets"


def release_mimick_meta(model_dir: Path) -> Optional[Dict[str, Any]]:
    """The meta of the pipeline's Mimick model if it was converted from the original MIMICK release
    (``spacy_mimick import-original`` records ``converted_from``), else None."""
    for config in sorted(model_dir.rglob("config.json")):
        try:
            meta = json.loads(config.read_text(encoding="utf8")).get("meta") or {}
        except (ValueError, AttributeError):
            continue
        if isinstance(meta, dict) and meta.get("converted_from"):
            return meta
    return None


def card_notes(meta: Dict[str, Any], metrics: Optional[Dict[str, Any]], baseline: Optional[Dict[str, Any]],
               significance: Optional[Dict[str, Any]], command: str, demo: bool, release: Optional[Dict[str, Any]],
               table: bool = False, raw_text: Optional[Dict[str, Any]] = None, segmentation: str = "") -> str:
    """The model card (meta.json ``notes``, shown by spaCy's generated README). ``raw_text``:
    :func:`score_raw_text`'s result, what a user should expect on text this pipeline tokenizes."""
    lines: List[str] = []
    package = f"{meta.get('lang')}_{meta.get('name')}"  # the name users install and load
    if demo:
        lines += [f"**{DEMO_NOTE}**", ""]
    scores = (metrics or {}).get("scores", {})
    if scores:
        lines += ["### Test set, gold words", "",
                  f"UD test set ({(metrics or {}).get('n_test_tokens') or 0:,} words, the treebank's own "
                  "tokenization), scored by spacy-mimick's evaluate.py:", "",
                  "| system | POS | morph (UFeats exact) | attribute micro-F1 | POS, words not in training | POS, words without a vector |",
                  "|---|---:|---:|---:|---:|---:|"]
        rows = [("this package", scores)]
        if baseline and baseline.get("scores"):
            rows.append(("spaCy tagger + morphologizer, same data and vectors", baseline["scores"]))
        for name, s in rows:
            lines.append(f"| {name} | {pct(s.get('pos_acc'))} | {pct(s.get('morph_acc'))} | {pct(s.get('attr_micro_f'))} | "
                         f"{pct(s.get('oov_train_pos_acc'))} | {pct(s.get('oov_vec_pos_acc'))} |")
        lines.append("")
        lines += [f"spaCy's own command prints the same POS and morph: `python -m spacy evaluate "
                  f"{package} TEST.spacy --gold-preproc`, with the test set's UD "
                  f"words in TEST.spacy (`python -m spacy_mimick convert TEST.conllu --output-dir . --lang "
                  f"{meta.get('lang')}`). Without `--gold-preproc` spaCy tokenizes the text again and scores "
                  "its own tokens, which gives lower numbers.", ""]
        if not (baseline and baseline.get("scores")):
            lines += ["spaCy's tagger + morphologizer was not trained on this data for comparison "
                      "(the `release` workflow trains it beside every package).", ""]
        if significance:
            lines += [significance_line(significance), ""]
        choice = (metrics or {}).get("dev_choice")
        if choice:
            lines += [dev_choice_line(choice), ""]
        if (metrics or {}).get("unseen_penalty"):
            lines += [f"On words outside its training data the tagger lowers the tags that its training "
                      f"sample shows rarely falling on new words (weight {metrics['unseen_penalty']:g}, "
                      f"chosen on the dev set).", ""]
        if (metrics or {}).get("seen_word_prior"):
            lines += [f"On words of its training data the tagger raises the tags that the word had there "
                      f"(weight {metrics['seen_word_prior']:g}, chosen on the dev set).", ""]
        if (metrics or {}).get("spaced_parts_prior"):
            lines += [f"On a new word written with spaces the tagger raises the tags of the training words that "
                      f"contain its parts (weight {metrics['spaced_parts_prior']:g}, chosen on the dev set).", ""]
        if (metrics or {}).get("seen_feature_sets"):
            lines += ["Each word's features are one feature set that its training data shows with the word's "
                      "part of speech (the most probable of them), not each feature on its own.", ""]
        if (metrics or {}).get("seen_feature_sets") and metrics.get("seen_feature_set_prior"):
            lines += [f"On words of its training data the tagger raises the feature sets that the word had there "
                      f"(weight {metrics['seen_feature_set_prior']:g}, chosen on the dev set).", ""]
        lines += raw_text_lines(raw_text, scores)
        if segmentation:
            lines += [segmentation, ""]
    if table:  # the spelling backoff has table words to offer
        lines += ["### Text with typos", "",
                  "The vectors' spelling backoff is off in this pipeline, as when its scores were measured. "
                  "For text with misspellings, load it on: the tagger then reads, for a word it takes for a "
                  "misspelling of a table word, that word (English, 5,000 training tokens: +1.27 POS with 30% of "
                  "the words misspelled, nothing lost on clean text; spacy-mimick's docs/typo_tagging.md):", "",
                  "```python",
                  f"nlp = spacy.load(\"{package}\", "
                  "config={\"components.mimick_vectors.spelling_backoff\": True})",
                  "```", ""]
    license_name = meta.get("license")
    lines += ["### Licenses", ""]
    for source in meta.get("sources", []):
        lines.append(f"- {source.get('name')}: {source.get('license') or 'unknown'}")
    lines.append("")
    if is_non_commercial(license_name):
        lines += [f"**Non-commercial use only**: the treebank's license ({license_name}) forbids commercial use, "
                  "and the trained weights are shared under its terms.", ""]
    if release:
        lines += ["The Mimick model inside is converted from the original MIMICK release, which is GPL-3.0: "
                  "the package as a whole carries the GPL-3.0's obligations as well as the treebank's license.", ""]
    if command:
        lines += ["### How it was built", "", "```", command, "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def score_raw_text(model_dir: Path, test: Path) -> Dict[str, Any]:
    """The pipeline on the test set's raw text (each sentence's ``# text``, its own tokenizer),
    aligned to the gold words as the CoNLL 2018 shared task's evaluation aligns them: F1 of the
    words, and of the words with the right UPOS / FEATS. A test set without ``# text`` lines
    (older treebanks, which have no ``SpaceAfter`` either) gives ``{"missing": reason}``: its raw
    text cannot be rebuilt."""
    import spacy

    from spacy_mimick.ud.aligned import MissingRawTextError, evaluate_raw_text

    try:
        scores = evaluate_raw_text(spacy.load(model_dir), test)
    except MissingRawTextError as err:
        return {"missing": str(err)}
    return {key: scores[name]["f"] for key, name in RAW_TEXT_KEYS.items()}


# Languages whose words spaCy's tokenizer cannot find in raw text as the treebank has them: what
# the card tells a user to do instead.
SEGMENTATION_NOTES = {
    "zh": ("Chinese is written without spaces, and spaCy's default Chinese tokenizer splits text into "
           "single characters, not the treebank's words. Give the pipeline words "
           "(`Doc(nlp.vocab, words=[...])`), or segment with jieba (`pip install jieba`, then "
           "`from spacy.lang.zh import ChineseTokenizer; nlp.tokenizer = ChineseTokenizer(nlp.vocab, "
           "segmenter=\"jieba\")`), whose words are closer to the treebank's than characters."),
    "vi": ("Vietnamese words are syllables joined by spaces (*cửa sổ*, window), which spaCy's tokenizer "
           "splits: give the pipeline words (`Doc(nlp.vocab, words=[...])`) from a Vietnamese word "
           "segmenter."),
}


def raw_text_lines(raw_text: Optional[Dict[str, Any]], scores: Dict[str, Any]) -> List[str]:
    """The card's paragraph on raw text: the measured F1 where the test set has its text."""
    caveat = ("spaCy's tokenizer, whose words differ from UD's in places (multiword tokens such as French "
              "*du* = *de le* are one token)")
    if not raw_text or "missing" in raw_text:
        why = " (this treebank's test set has no raw text to measure it on)" if raw_text else ""
        return [f"On raw text the pipeline tokenizes with {caveat}: expect lower scores there than on UD's "
                f"gold words{why}.", ""]
    return ["### Raw text", "",
            f"What to expect on real text: the test set's raw text (`# text`) tokenized by the pipeline, with "
            f"{caveat}, its words aligned to the gold words as in the CoNLL 2018 shared task: words F1 "
            f"{pct(raw_text.get('raw_words_f'))}, UPOS F1 {pct(raw_text.get('raw_upos_f'))}, UFeats F1 "
            f"{pct(raw_text.get('raw_ufeats_f'))} (on the gold words: POS {pct(scores.get('pos_acc'))}, "
            f"morph {pct(scores.get('morph_acc'))}).", ""]


def dev_choice_line(choice: Dict[str, Any]) -> str:
    """The card's sentence on the setting chosen on dev (choose_on_dev.py's ``dev_choice``, with
    ``settings``: :func:`recipe_settings` of the chosen run, where known)."""
    scores = choice.get("dev_scores") or {}
    listed = ", ".join(f"{name} {100 * float(score):.2f}" for name, score in scores.items())
    settings = choice.get("settings")
    what = (f" (the tagger's settings that differ from the default recipe: "
            f"{'; '.join(f'`{s}`' for s in settings)})" if settings else "")
    return (f"Training setting chosen on the dev set, not on test: `{choice.get('chosen')}`{what} "
            f"(weighted dev score of each candidate: {listed}).")


def recipe_settings(model_dir: Path, variant: str, component: str = "mimick_tagger") -> List[str]:
    """The settings of ``component`` in ``model_dir``'s config that differ from the default
    recipe's template of ``variant``, as ``key value`` (``spacy train``'s override without its
    ``--components.<component>.``). A key the template leaves out is compared with its default:
    the architecture's (``model.*``) or the factory's, so the defaults that training writes into
    a saved config do not count."""
    import inspect

    from spacy.language import Language
    from spacy.util import registry
    from thinc.api import Config

    import spacy_mimick.tagger.tagger_component  # noqa: F401  (registers the factory)
    from spacy_mimick.tagger.recipes import config_text

    def flat(block: Dict[str, Any], prefix: str = "") -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for key, value in block.items():
            out.update(flat(value, f"{prefix}{key}.") if isinstance(value, dict) else {f"{prefix}{key}": value})
        return out

    config_path = model_dir / "config.cfg"
    used_block = Config().from_disk(config_path, interpolate=False)["components"].get(component) if config_path.is_file() else None
    if not used_block:
        return []
    used = flat(used_block)
    base = flat(Config().from_str(config_text(variant, "default"), interpolate=False)["components"][component])
    defaults = flat(Language.get_factory_meta(used_block["factory"]).default_config)
    architecture = used.get("model.@architectures")
    if architecture:
        parameters = inspect.signature(registry.architectures.get(architecture)).parameters
        defaults.update({f"model.{name}": p.default for name, p in parameters.items() if p.default is not p.empty})
    differ = [key for key in sorted(used) if key != "factory" and used[key] != base.get(key, defaults.get(key, used[key]))]
    return [f"{key} {json.dumps(used[key]) if not isinstance(used[key], str) else used[key]}" for key in differ]


def significance_line(sig: Dict[str, Any]) -> str:
    """One sentence from significance.py's JSON (A: spaCy's pipeline, B: this package's variant)."""
    def delta(value: Optional[float], p: Optional[float]) -> str:
        if value is None:
            return "—"
        return f"{100 * value:+.2f} points (p = {p:.2g})" if p is not None else f"{100 * value:+.2f} points"

    text = (f"Paired tests against spaCy's pipeline on the same test words: POS "
            f"{delta(sig.get('pos_acc_delta'), sig.get('pos_p_value'))} (McNemar), attribute micro-F1 "
            f"{delta(sig.get('attr_micro_f_delta'), sig.get('attr_p_value'))} (bootstrap)")
    oov = sig.get("oov_train") or {}
    if oov.get("n_tokens"):
        text += f"; POS on the {oov['n_tokens']:,} words not in training {delta(oov.get('pos_acc_delta'), oov.get('pos_p_value'))}"
    return text + "."


def requirement() -> str:
    major, minor = spacy_mimick.__version__.split(".")[:2]
    return f"spacy-mimick>={major}.{minor}.0,<{major}.{int(minor) + 1}.0"


def build_meta(model_meta: Dict[str, Any], sources: Dict[str, Any], metrics: Optional[Dict[str, Any]],
               name: str, version: str, baseline: Optional[Dict[str, Any]] = None,
               significance: Optional[Dict[str, Any]] = None, command: str = "",
               release: Optional[Dict[str, Any]] = None, raw_text: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    meta = dict(model_meta)
    demo = is_demo(sources)
    treebank = sources.get("treebank", "")
    pretty = treebank[3:].replace("-", " ") if treebank.startswith("UD_") else treebank
    vectors = sources.get("vectors") or {}
    train = ""
    if metrics and metrics.get("n_train_tokens"):
        train = f" ({metrics['n_train_tokens']:,} training tokens)"
    tested = ""
    if metrics and metrics.get("n_test_tokens"):
        scores = metrics.get("scores", {})
        tested = (f" Performance: on the {metrics['n_test_tokens']:,} test tokens; oov_train_*: on the "
                  f"{scores.get('oov_train_n_tokens') or 0:,} outside the training vocabulary, oov_vec_*: on the "
                  f"{scores.get('oov_vec_n_tokens') or 0:,} without a pretrained vector.")
    meta.update(
        name=name,
        version=version,
        description=(
            f"Joint UPOS and morphological feature tagger (MIMICK, Pinter et al. 2017) trained on "
            f"Universal Dependencies {pretty}{train}, with "
            + (f"{vectors.get('name')} vectors and Mimick vectors, predicted from spelling, for "
               f"out-of-vocabulary words." if vectors else "randomly initialized word embeddings.")
            + tested
        ),
        license=sources.get("treebank_license") or "see sources",
    )
    if demo:
        meta["description"] = DEMO_NOTE + " " + meta["description"]
    if is_non_commercial(meta["license"]):
        meta["description"] += f" Non-commercial use only (the treebank's license, {meta['license']})."
    meta["author"] = meta.get("author") or "spacy-mimick"
    meta["url"] = meta.get("url") or PAPER["url"]
    source_list: List[Dict[str, str]] = [{
        "name": f"Universal Dependencies {pretty}",
        "url": sources.get("treebank_url", ""),
        "license": sources.get("treebank_license") or "see the treebank's LICENSE.txt",
    }]
    if sources.get("treebank_source"):
        source_list[0]["version"] = " ".join(sources["treebank_source"].split())[:200]
    if vectors:
        source_list.append({
            "name": f"{vectors.get('name')} word vectors" + (f": {vectors['description']}" if vectors.get("description") else ""),
            "url": vectors.get("url") or "",
            "license": vectors.get("license") or "see the vectors' distribution",
        })
    if release:
        source_list.append({**ORIGINAL_RELEASE, "version": str(release.get("source") or "")[:200]})
    source_list.append({"name": PAPER["name"], "url": PAPER["url"], "license": "spacy-mimick: MIT"})
    meta["sources"] = source_list
    if metrics:
        scores = metrics.get("scores", {})
        meta["performance"] = {key: scores.get(key) for key in PERFORMANCE_KEYS if scores.get(key) is not None}
        meta["performance"].update({alias: scores[key] for alias, key in SPACY_ALIASES.items()
                                    if scores.get(key) is not None})
        if raw_text and "missing" not in raw_text:
            meta["performance"].update(raw_text)
        if metrics.get("words_per_second"):
            meta["speed"] = {"cpu": metrics["words_per_second"]}
        if metrics.get("dev_choice"):  # the run's setting, chosen on dev (paper.py's default path)
            meta["dev_choice"] = metrics["dev_choice"]
    requirements = [r for r in meta.get("requirements", []) if not r.startswith("spacy-mimick")]
    meta["requirements"] = requirements + [requirement()]
    # The treebank's language, from its files' prefix: an xx package (Vietnamese) has it only there.
    language = prefix_language(sources["prefix"]) if sources.get("prefix") else meta.get("lang")
    meta["notes"] = card_notes(meta, metrics, baseline, significance, command, demo, release, table=bool(vectors),
                               raw_text=raw_text, segmentation=SEGMENTATION_NOTES.get(language, ""))
    return meta


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir", type=Path, help="The trained pipeline (model-best)")
    parser.add_argument("output", type=Path, help="meta.json to write")
    parser.add_argument("--sources", type=Path, required=True, help="data.py's sources.json")
    parser.add_argument("--metrics", type=Path, default=None, help="evaluate.py's JSON for this pipeline")
    parser.add_argument("--name", required=True, help="Package name without the language, e.g. mimick_ud_ewt")
    parser.add_argument("--version", default="0.1.0")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="evaluate.py's JSON of spaCy's pipeline trained on the same data (if it exists)")
    parser.add_argument("--significance", type=Path, default=None,
                        help="significance.py's JSON of spaCy's pipeline against this one (if it exists)")
    parser.add_argument("--command", default="", help="The command that built the pipeline, for the card")
    parser.add_argument("--raw-test", type=Path, default=None,
                        help="The test set's CoNLL-U: the pipeline is also scored on its raw text (`# text`), "
                             "for the card and meta.json's raw_* scores")
    args = parser.parse_args(argv)

    model_meta = json.loads((args.model_dir / "meta.json").read_text(encoding="utf8"))
    sources = json.loads(args.sources.read_text(encoding="utf8"))
    metrics = read_json(args.metrics)
    if metrics and metrics.get("dev_choice") and metrics.get("variant"):  # what the chosen run changed
        metrics["dev_choice"] = {**metrics["dev_choice"],
                                 "settings": recipe_settings(args.model_dir, metrics["variant"])}
    meta = build_meta(model_meta, sources, metrics, args.name, args.version,
                      baseline=read_json(args.baseline), significance=read_json(args.significance),
                      command=args.command, release=release_mimick_meta(args.model_dir),
                      raw_text=score_raw_text(args.model_dir, args.raw_test) if args.raw_test else None)
    from spacy.schemas import ModelMetaSchema, validate

    errors = validate(ModelMetaSchema, meta)
    if errors:
        raise SystemExit("error: invalid meta.json:\n" + "\n".join(errors))
    write_json(args.output, meta)
    print(f"{meta['lang']}_{meta['name']}-{meta['version']}: license {meta['license']}, "
          f"requirements {meta['requirements']} -> {args.output}")


if __name__ == "__main__":
    main(sys.argv[1:])
