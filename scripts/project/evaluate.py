"""Run trained tagger pipelines on a test set and write the paper's metrics and the predictions.

    python scripts/project/evaluate.py TEST.spacy|TEST.conllu MODELS_DIR OUTPUT_DIR --train TRAIN.spacy \
        [--variants nochar,mimick,chartag,both,spacy] [--treebank UD_English-EWT --lang en --n-tokens 5000 --seed 0]

For each variant whose ``MODELS_DIR/<variant>/model-best`` exists (the others are skipped): tag the test sentences (gold
words) and write ``OUTPUT_DIR/<variant>.json`` (the scores below plus run facts) and
``OUTPUT_DIR/<variant>.spacy`` (the predicted Docs, for ``significance.py``). A variant whose
JSON is newer than its model and the test file is skipped (``--force`` re-evaluates), so the
command can run on every ``spacy project run`` without redoing finished work.

Scores (fractions; see ``spacy_mimick.ud.scorer``): ``pos_acc``, ``attr_micro_p/r/f``,
``attr_macro_f``, ``attr_per_type``, ``morph_acc``, and the same on the tokens outside the
tagger's training vocabulary (``oov_train_*``, the paper's OOV) and on those without a
pretrained vector (``oov_vec_*``), from the tagger component's own ``score``.

Variant ``spacy`` is spaCy's own tagger + morphologizer (configs/spacy_tagger_morphologizer.cfg),
the baseline beside the paper's four. A pipeline without a ``mimick_tagger`` is scored by
:func:`spacy_mimick.ud.scorer.score_attributes` on the same metrics: POS and attributes from
``token.pos`` and ``token.morph`` (set by spaCy's morphologizer; its tagger sets only
``token.tag_``, scored as the extra ``tag_acc``), OOV(train) against the forms of ``--train``
(the same file the run trained on), OOV(vec) against the pipeline's static vectors (exact or
lowercase form, as the Mimick taggers' lowercase backoff).

A pipeline with a parser (the ``spacy-models`` workflow) also gets ``dep_uas`` / ``dep_las``
(every word, punctuation included) overall, ``oov_train_*`` and ``oov_vec_*``
(:func:`spacy_mimick.ud.scorer.score_dependencies`), spaCy's own parser scores (punctuation left
out) as ``spacy_dep_uas`` / ``spacy_dep_las``, and its predictions keep HEAD and DEP.
"""
import argparse
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import spacy
from spacy.language import Language
from spacy.scorer import Scorer
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from spacy_mimick.vectors.mimick_vectors import table_of
from spacy_mimick.ud.scorer import score_attributes, score_dependencies

sys.path.insert(0, str(Path(__file__).resolve().parent))
import torch_threads  # noqa: E402,F401  (one torch thread, see torch_threads.py)
from docbins import read_docs  # noqa: E402
from json_files import write_json  # noqa: E402
from variants import VARIANTS  # noqa: E402


def newest_mtime(path: Path) -> float:
    if path.is_file():
        return path.stat().st_mtime
    return max((p.stat().st_mtime for p in path.rglob("*") if p.is_file()), default=0.0)


def component_name(nlp: Language, factory: str) -> Optional[str]:
    """The name of ``nlp``'s first component made by ``factory``, if any."""
    return next((name for name in nlp.pipe_names if nlp.get_pipe_meta(name).factory == factory), None)


def tagger_name(nlp: Language) -> Optional[str]:
    return component_name(nlp, "mimick_tagger")


def untagged_copies(gold: List[Doc], vocab) -> List[Doc]:
    """The gold Docs' words and spaces, without annotation, as Docs of ``vocab``."""
    return [Doc(vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc]) for doc in gold]


def evaluate_pipeline(nlp: Language, gold: List[Doc], train_words: Optional[set] = None) -> Dict[str, Any]:
    """Tag copies of the gold Docs' words; return (scores, predicted docs, seconds)."""
    inputs = untagged_copies(gold, nlp.vocab)
    start = time.perf_counter()
    predicted = list(nlp.pipe(inputs, batch_size=256))
    seconds = time.perf_counter() - start
    return {"scores": score_predictions(nlp, predicted, gold, train_words), "predicted": predicted,
            "seconds": seconds}


def score_predictions(
    nlp: Language, predicted: List[Doc], gold: List[Doc], train_words: Optional[set] = None
) -> Dict[str, Any]:
    """The scores of ``predicted`` (Docs tagged by ``nlp``'s components) against ``gold``."""
    examples = [Example(pred, ref) for pred, ref in zip(predicted, gold)]
    name = tagger_name(nlp)
    if name is not None:
        scores = nlp.get_pipe(name).score(examples)
    else:  # any other tagger: the same metrics, OOV = outside the training words if given
        table = table_of(nlp.vocab.vectors)  # the table's own rows, not Mimick's predictions
        in_vectors = lambda t: t.orth in table or t.lower in table  # noqa: E731
        scores = score_attributes(examples, train_words=train_words, in_vectors=in_vectors)
        if any(nlp.get_pipe_meta(n).factory == "tagger" for n in nlp.pipe_names):
            # spaCy's tagger predicts the XPOS (token.tag_); POS comes from the morphologizer.
            scores["tag_acc"] = Scorer.score_token_attr(examples, "tag")["tag_acc"]
        parser = component_name(nlp, "parser")
        if parser is not None:
            scores.update(score_dependencies(examples, train_words=train_words, in_vectors=in_vectors))
            spacy_scores = nlp.get_pipe(parser).score(examples)
            scores["spacy_dep_uas"], scores["spacy_dep_las"] = spacy_scores["dep_uas"], spacy_scores["dep_las"]
    return scores


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("test", type=Path, help="Gold test set (.spacy or .conllu)")
    parser.add_argument("models_dir", type=Path, help="Folder with <variant>/model-best pipelines")
    parser.add_argument("output_dir", type=Path, help="Folder for <variant>.json and <variant>.spacy")
    parser.add_argument("--train", type=Path, default=None, help="The training set (.spacy or .conllu): its size, "
                        "and its words for the scores outside the training vocabulary")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="Comma-separated variants to evaluate")
    parser.add_argument("--model-subdir", default="model-best", help="Pipeline folder inside each variant's folder")
    parser.add_argument("--treebank", default=None)
    parser.add_argument("--lang", default=None)
    parser.add_argument("--n-tokens", type=int, default=None, help="The run's token budget (0: full)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--force", action="store_true", help="Re-evaluate up-to-date variants too")
    args = parser.parse_args(argv)

    args.output_dir.mkdir(parents=True, exist_ok=True)
    train_docs = None
    done = 0
    for variant in [v.strip() for v in args.variants.split(",") if v.strip()]:
        model = args.models_dir / variant / args.model_subdir
        out_json = args.output_dir / f"{variant}.json"
        if not model.is_dir():
            print(f"{variant}: no pipeline at {model}, skipped")
            continue
        inputs_mtime = max(newest_mtime(model), newest_mtime(args.test))
        if not args.force and out_json.exists() and out_json.stat().st_mtime > inputs_mtime:
            print(f"{variant}: {out_json} is up to date")
            done += 1
            continue
        nlp = spacy.load(model)
        gold = read_docs(args.test, nlp.vocab)
        if args.train is not None and train_docs is None:
            train_docs = read_docs(args.train, nlp.vocab)
        train_words = {t.text for d in train_docs for t in d} if train_docs is not None else None
        result = evaluate_pipeline(nlp, gold, train_words)
        n_test = sum(len(d) for d in gold)
        record = {
            "treebank": args.treebank,
            "lang": args.lang or nlp.lang,
            "variant": variant,
            "n_tokens": args.n_tokens,
            "seed": args.seed,
            "n_train_tokens": sum(len(d) for d in train_docs) if train_docs is not None else None,
            "n_train_sentences": len(train_docs) if train_docs is not None else None,
            "n_test_tokens": n_test,
            "n_test_sentences": len(gold),
            "model": str(model),
            "pipeline": nlp.pipe_names,
            "vectors": {"rows": nlp.vocab.vectors.shape[0], "width": nlp.vocab.vectors.shape[1],
                        "name": nlp.vocab.vectors.name},
            "test": str(args.test),
            "eval_seconds": round(result["seconds"], 3),
            "words_per_second": round(n_test / result["seconds"], 1) if result["seconds"] else None,
            "scores": result["scores"],
        }
        tagger = tagger_name(nlp)
        if tagger:  # the decoding weights chosen on dev while training (unseen_words.py, seen_words.py)
            record["unseen_penalty"] = nlp.get_pipe(tagger).unseen_penalty
            record["seen_word_prior"] = nlp.get_pipe(tagger).seen_word_prior
            record["seen_feature_sets"] = bool(nlp.get_pipe(tagger).feature_set_table()) and \
                nlp.get_pipe(tagger).seen_feature_sets
            record["seen_feature_set_prior"] = nlp.get_pipe(tagger).seen_feature_set_prior
            record["spaced_parts_prior"] = nlp.get_pipe(tagger).spaced_parts_prior
        attrs = ["ORTH", "SPACY", "TAG", "POS", "MORPH"] + (["HEAD", "DEP"] if component_name(nlp, "parser") else [])
        DocBin(docs=result["predicted"], attrs=attrs).to_disk(
            args.output_dir / f"{variant}.spacy"
        )
        write_json(out_json, record)
        scores = result["scores"]
        attr = scores.get("attr_micro_f")
        print(f"{variant}: POS {100 * scores['pos_acc']:.2f}, attributes micro-F1 "
              f"{'-' if attr is None else f'{100 * attr:.2f}'}"
              + (f", UAS {100 * scores['dep_uas']:.2f}, LAS {100 * scores['dep_las']:.2f}"
                 if "dep_las" in scores else "")
              + f" ({n_test:,} tokens, "
              f"{record['words_per_second']:,.0f} words/s) -> {out_json}")
        done += 1
    if not done:
        raise SystemExit(f"error: no pipelines found under {args.models_dir}")


if __name__ == "__main__":
    main(sys.argv[1:])
