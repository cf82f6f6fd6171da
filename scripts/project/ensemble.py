"""Tag a test set with an ensemble of trained tagger pipelines and score it as evaluate.py does.

    python scripts/project/ensemble.py TEST.spacy OUTPUT_DIR NAME MODEL MODEL [MODEL ...] --train TRAIN.spacy

Every MODEL is a pipeline trained on the same data with the same tagging component: the Mimick
taggers' ``mimick_tagger`` (Both, char->tag, ...) or spaCy's ``morphologizer``. Each tags its own
copy of the test words with its own earlier components (``mimick_vectors``, ``tok2vec``); the
ensemble averages the members' probabilities, per head for the Mimick tagger (POS and each
attribute; its scores are logits, softened per head) and over the morphologizer's joint POS+morph
labels, and takes the most probable value. The first MODEL's component writes the result onto
its Docs, so whatever else that pipeline predicts (spaCy's tagger's XPOS) is the first member's.

Writes ``OUTPUT_DIR/NAME.json`` (evaluate.py's record, ``members`` listing the models, and each
member's own POS accuracy) and ``OUTPUT_DIR/NAME.spacy`` (the predictions, for significance.py).

An ensemble costs as many trainings and taggings as it has members; docs/low_resource.md
("Ensembles") measures what it buys against spaCy's pipeline, ensembled the same way.
"""
import argparse
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy
import spacy
from spacy.language import Language
from spacy.tokens import Doc, DocBin

from spacy_mimick.tagger.feature_sets import decode_feature_sets
from spacy_mimick.tagger.pytorch_tagger_model import head_offsets
from spacy_mimick.tagger.tagger_component import heads_log_softmax

sys.path.insert(0, str(Path(__file__).resolve().parent))
import torch_threads  # noqa: E402,F401  (one torch thread, see torch_threads.py)
from docbins import read_docs  # noqa: E402
from evaluate import component_name, score_predictions, tagger_name, untagged_copies  # noqa: E402
from json_files import write_json  # noqa: E402

BATCH_SIZE = 256


def ensembled_component(nlp: Language, model: Path) -> Tuple[str, Any]:
    """The component the ensemble averages: the Mimick tagger, else spaCy's morphologizer."""
    name = tagger_name(nlp) or component_name(nlp, "morphologizer")
    if name is None:
        raise SystemExit(f"error: {model} has neither a mimick_tagger nor a morphologizer "
                         f"(pipeline: {nlp.pipe_names})")
    return name, nlp.get_pipe(name)


def labels_of(component: Any) -> List[Tuple[str, List[str]]]:
    """(name, values) of each output head, which every member must share, in the same order."""
    if hasattr(component, "_heads"):
        return [(name, list(values)) for name, values in component._heads]
    return [("morph", list(component.labels))]


def member_probabilities(nlp: Language, name: str, component: Any, gold: List[Doc]) -> Tuple[List[Doc], numpy.ndarray]:
    """One member on copies of the gold words: the Docs as the components before ``name`` leave
    them, and the (n_tokens, n_outputs) probabilities of ``name``."""
    after = nlp.pipe_names[nlp.pipe_names.index(name):]
    docs = list(nlp.pipe(untagged_copies(gold, nlp.vocab), batch_size=BATCH_SIZE, disable=after))
    scores = []
    for i in range(0, len(docs), BATCH_SIZE):
        scores.extend(component.model.predict(docs[i : i + BATCH_SIZE]))
    flat = numpy.concatenate([component.model.ops.to_numpy(s) for s in scores]).astype("float64")
    if hasattr(component, "_heads"):  # logits, one softmax per head
        flat = numpy.exp(heads_log_softmax(flat, head_offsets([len(values) for _, values in component._heads])))
    return docs, flat


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("test", type=Path, help="Gold test set (.spacy or .conllu)")
    parser.add_argument("output_dir", type=Path, help="Folder for NAME.json and NAME.spacy")
    parser.add_argument("name", help="The ensemble's name (the files' stem), e.g. both-ensemble")
    parser.add_argument("models", type=Path, nargs="+", help="Two or more trained pipelines")
    parser.add_argument("--train", type=Path, default=None, help="The members' training set (.spacy or .conllu)")
    args = parser.parse_args(argv)
    if len(args.models) < 2:
        raise SystemExit(f"error: an ensemble needs two or more models, got {len(args.models)}")

    start = time.perf_counter()
    total = None
    first = None
    gold = None
    members = []
    for model in args.models:
        nlp = spacy.load(model)
        if gold is None:
            gold = read_docs(args.test, nlp.vocab)  # the first member's vocab, which scores the result
        name, component = ensembled_component(nlp, model)
        heads = labels_of(component)
        if first is not None and heads != first["heads"]:
            raise SystemExit(f"error: {model}'s {name} predicts other labels than {args.models[0]}'s "
                             f"{first['name']}; ensemble members must be trained on the same data")
        docs, probs = member_probabilities(nlp, name, component, gold)
        own = single_pos_accuracy(probs, heads, gold)
        members.append({"model": str(model), "pos_acc": own})
        print(f"{model}: POS {100 * own:.2f} alone")
        total = probs if total is None else total + probs
        if first is None:
            first = {"nlp": nlp, "name": name, "component": component, "heads": heads, "docs": docs}

    nlp, name, component, heads, predicted = (first[k] for k in ("nlp", "name", "component", "heads", "docs"))
    offsets = head_offsets([len(values) for _, values in heads])
    ids = numpy.stack([total[:, a:b].argmax(axis=1) for a, b in zip(offsets[:-1], offsets[1:])], axis=1)
    # The tagger's own decoding of the attributes: one feature set seen with the POS.
    table = component.feature_set_table() if getattr(component, "seen_feature_sets", False) else {}
    if table and len(heads) > 1:
        with numpy.errstate(divide="ignore"):  # a probability of 0 is a log of -inf: never chosen
            logs = [numpy.log(total[:, a:b]) for a, b in zip(offsets[1:-1], offsets[2:])]
        ids[:, 1:] = decode_feature_sets(logs, ids[:, 0], table)
    lengths = [len(d) for d in gold]
    per_doc = numpy.split(ids, numpy.cumsum(lengths)[:-1])
    # The first member's Docs, as its components before the averaged one left them; its
    # components after it (none in the project's pipelines) then run as they would.
    if hasattr(component, "_heads"):
        component.set_annotations(predicted, per_doc)
    else:
        component.set_annotations(predicted, [row[:, 0] for row in per_doc])
    later = nlp.pipe_names[nlp.pipe_names.index(name) + 1 :]
    if later:
        keep = nlp.pipe_names[: nlp.pipe_names.index(name) + 1]
        predicted = list(nlp.pipe(predicted, batch_size=BATCH_SIZE, disable=keep))
    seconds = time.perf_counter() - start

    train_docs = read_docs(args.train, nlp.vocab) if args.train is not None else None
    train_words = {t.text for d in train_docs for t in d} if train_docs is not None else None
    scores = score_predictions(nlp, predicted, gold, train_words)
    args.output_dir.mkdir(parents=True, exist_ok=True)
    record: Dict[str, Any] = {
        "variant": args.name,
        "members": members,
        "n_train_tokens": sum(len(d) for d in train_docs) if train_docs is not None else None,
        "n_test_tokens": sum(lengths),
        "test": str(args.test),
        "eval_seconds": round(seconds, 3),
        "scores": scores,
    }
    DocBin(docs=predicted, attrs=["ORTH", "SPACY", "TAG", "POS", "MORPH"]).to_disk(
        args.output_dir / f"{args.name}.spacy"
    )
    out_json = args.output_dir / f"{args.name}.json"
    write_json(out_json, record)
    print(f"{args.name} ({len(members)} members): POS {100 * scores['pos_acc']:.2f}, attributes micro-F1 "
          f"{100 * scores['attr_micro_f']:.2f} -> {out_json}")


def single_pos_accuracy(probs: numpy.ndarray, heads: List[Tuple[str, List[str]]], gold: List[Doc]) -> float:
    """One member's POS accuracy (for the Mimick tagger its POS head; for the morphologizer the
    POS of its joint label), so that the record shows what the ensemble adds."""
    values = heads[0][1]
    width = len(values)
    best = probs[:, :width].argmax(axis=1)
    gold_pos = [t.pos_ for d in gold for t in d]
    if heads[0][0] == "morph":  # joint labels "POS=NOUN|Gender=Masc|..." (spaCy's morphologizer)
        predicted = [_label_pos(values[i]) for i in best]
    else:
        predicted = [values[i] for i in best]
    return float(numpy.mean([p == g for p, g in zip(predicted, gold_pos)]))


def _label_pos(label: str) -> str:
    for part in label.split("|"):
        if part.startswith("POS="):
            return part[4:]
    return ""


if __name__ == "__main__":
    main(sys.argv[1:])
