"""Decoding rules for words outside the training sample: do they help the tagger? No training.

For each trained Both pipeline, scores the dev and test sets (gold words) once and decodes UPOS
with each rule, on the tokens whose form the tagger did not see in training (the paper's OOV):

- ``plain``: the best-scoring tag, as the tagger does;
- ``closed``: UD's closed classes (ADP, AUX, CCONJ, DET, PART, PRON, SCONJ) ruled out;
- ``prior L``: each tag's score raised by L x log(P(new | tag) / P(new)), the share of the tag's
  training tokens whose form occurs once (``spacy_mimick.tagger.unseen_words``), estimated from
  the run's own training sample;
- ``penalty L``: the same, for the tags rarer than average on new words only (no tag raised):
  the tagger's ``unseen_penalty``;
- ``chosen on dev``: the penalty weight (of 0 and the ``--priors``) with the best dev POS, as the
  default recipe's ``spacy_mimick.choose_unseen_penalty.v1`` chooses it while training.

    python benchmarks/unseen_word_rules.py --priors 1,2,4 UD_Vietnamese-VTB:n5000.s0 [...]

A run is TREEBANK:RUN (the project's layout: training/TREEBANK_lowres/RUN/both/model-best,
corpus/TREEBANK/train.RUN.spacy, dev.spacy, test.spacy) or PIPELINE,TRAIN.spacy,DEV.spacy,TEST.spacy.

Prints one table row per pipeline and rule: POS accuracy on dev and test, the difference to
``plain``, the accuracy on unseen test tokens, and McNemar's p on test against ``plain`` (the
project's test, ``spacy_mimick.ud.significance.mcnemar``, as ``significance.py`` runs it); then a
summary, one row per run (test POS of ``plain``, ``closed`` and the weight chosen on dev).
"""
import argparse
from pathlib import Path
from typing import Dict, List, Tuple

import numpy
import spacy
from spacy.tokens import Doc, DocBin

from spacy_mimick.tagger.unseen_words import choose_weight, decode_pos, hapax_pos_log_prior, penalty_vector
from spacy_mimick.ud.significance import mcnemar

# UD's closed classes (universaldependencies.org/u/pos), less NUM: unseen numbers are common.
CLOSED = ("ADP", "AUX", "CCONJ", "DET", "PART", "PRON", "SCONJ")


def tagger_scores(nlp, docs: List[Doc], batch_size: int = 256) -> Tuple[List[Doc], numpy.ndarray]:
    """The gold words of ``docs`` as new Docs through the components before the tagger, and the
    tagger's scores of every head on them, (n_tokens, n_outputs)."""
    tagger = nlp.get_pipe("mimick_tagger")
    words = [Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d]) for d in docs]
    words = list(nlp.pipe(words, disable=["mimick_tagger"]))  # mimick_vectors, as the tagger reads them
    return words, numpy.concatenate([s for i in range(0, len(words), batch_size)
                                     for s in tagger.scores(words[i:i + batch_size])])


def pos_scores(nlp, docs: List[Doc], values: List[str], batch_size: int = 256) -> numpy.ndarray:
    """(n_tokens, len(values)) UPOS scores of the gold-word Docs (``values``: the tagger's UPOS
    values, in column order)."""
    return tagger_scores(nlp, docs, batch_size)[1][:, :len(values)]


def run_paths(run: str, files: Tuple[str, ...]) -> List[Path]:
    """The pipeline and the ``files`` (``train``, ``dev``, ``test``) of a run given as
    TREEBANK:RUN (the project's layout: training/TREEBANK_lowres/RUN/both/model-best,
    corpus/TREEBANK/train.RUN.spacy, dev.spacy, test.spacy) or as the paths, comma-separated."""
    parts = run.split(",")
    if len(parts) == 1 and run.count(":") == 1:
        treebank, unit = run.split(":")
        corpus = Path("corpus") / treebank
        names = {"train": f"train.{unit}.spacy", "dev": "dev.spacy", "test": "test.spacy"}
        parts = [f"training/{treebank}_lowres/{unit}/both/model-best"] + [corpus / names[f] for f in files]
    if len(parts) != 1 + len(files):
        expected = ",".join(["PIPELINE"] + [f"{f.upper()}.spacy" for f in files])
        raise SystemExit(f"error: {run!r}: expected TREEBANK:RUN or {expected}")
    return [Path(part) for part in parts]


def rules(values: List[str], prior: Dict[str, float], weights: List[float]) -> Dict[str, numpy.ndarray]:
    """Per rule, the vector added to an unseen token's UPOS scores."""
    closed = numpy.array([0.0 if v not in CLOSED else -numpy.inf for v in values])
    log_prior = numpy.array([prior.get(v, 0.0) for v in values])
    out = {"plain": numpy.zeros(len(values)), "closed": closed}
    out.update({f"prior {w:g}": w * log_prior for w in weights})
    out.update({f"penalty {w:g}": penalty_vector(prior, values, w) for w in weights})
    return out


def evaluate(nlp, path: Path, values: List[str], shifts: Dict[str, numpy.ndarray]) -> Tuple[Dict[str, Tuple[numpy.ndarray, numpy.ndarray]], tuple]:
    """Per rule, (right per annotated token, unseen per annotated token); and the (scores, gold
    ids, unseen) that ``choose_weight`` reads."""
    gold = list(DocBin().from_disk(path).get_docs(nlp.vocab))
    scores = pos_scores(nlp, gold, values)
    tokens = [t for d in gold for t in d]
    keep = numpy.array([bool(t.pos_) for t in tokens])
    unseen = nlp.get_pipe("mimick_tagger").unseen_tokens(gold)
    gold_ids = numpy.array([values.index(t.pos_) if t.pos_ in values else -1 for t in tokens])
    out = {name: ((decode_pos(scores, unseen, shift) == gold_ids)[keep], unseen[keep])
           for name, shift in shifts.items()}
    return out, (scores, numpy.where(keep, gold_ids, -1), unseen)


def main(argv: List[str] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", help="TREEBANK:RUN or PIPELINE,TRAIN.spacy,DEV.spacy,TEST.spacy")
    parser.add_argument("--priors", default="1,2,4", help="weights L of the hapax prior")
    args = parser.parse_args(argv)
    weights = [float(w) for w in args.priors.split(",") if w]
    summary = []
    print("| pipeline | rule | dev POS | − plain | test POS | − plain | unseen test POS | McNemar p (test) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for run in args.runs:
        pipeline, train, dev, test = run_paths(run, ("train", "dev", "test"))
        nlp = spacy.load(pipeline)
        labels = nlp.get_pipe("mimick_tagger").label_data["pos"]
        # From the training file, not the tagger's cfg: pipelines trained before the estimate
        # was stored have none.
        train_docs = DocBin().from_disk(train).get_docs(nlp.vocab)
        prior = hapax_pos_log_prior((t.text, t.pos_) for d in train_docs for t in d)
        shifts = rules(labels, prior, weights)
        (on_dev, dev_arrays), (on_test, _) = evaluate(nlp, dev, labels, shifts), evaluate(nlp, test, labels, shifts)
        chosen, _ = choose_weight(*dev_arrays, prior, labels, [0.0] + weights)
        choice = "plain" if not chosen else f"penalty {chosen:g}"
        on_dev[f"chosen on dev: {choice}"], on_test[f"chosen on dev: {choice}"] = on_dev[choice], on_test[choice]
        base_dev, base_test = on_dev["plain"][0].mean(), on_test["plain"][0].mean()
        plain, closed, picked = on_test["plain"][0], on_test["closed"][0], on_test[choice][0]
        summary.append(f"| {run} | {100 * base_test:.2f} | {100 * (closed.mean() - base_test):+.2f} "
                       f"({mcnemar(closed, plain)[1]:.2g}) | {chosen:g} | {100 * (picked.mean() - base_test):+.2f} "
                       f"({mcnemar(picked, plain)[1]:.2g}) |")
        for name in on_test:
            (d_right, _), (t_right, t_unseen) = on_dev[name], on_test[name]
            p = mcnemar(t_right, on_test["plain"][0])[1]
            print(f"| {pipeline} | {name} | {100 * d_right.mean():.2f} | {100 * (d_right.mean() - base_dev):+.2f} | "
                  f"{100 * t_right.mean():.2f} | {100 * (t_right.mean() - base_test):+.2f} | "
                  f"{100 * t_right[t_unseen].mean():.2f} | {p:.2g} |", flush=True)
    print("\nSummary, test POS (McNemar p against plain):\n")
    print("| run | plain | closed − plain | weight chosen on dev | chosen − plain |")
    print("|---|---:|---:|---:|---:|")
    print("\n".join(summary))


if __name__ == "__main__":
    main()
