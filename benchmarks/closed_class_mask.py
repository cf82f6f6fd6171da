"""Would a closed-class rule for unseen words help the tagger? A decoding experiment, no training.

For each trained Both pipeline, tags the test set (gold words) once and decodes UPOS two ways:
as the tagger does (the best-scoring tag), and with UD's closed classes (ADP, AUX, CCONJ, DET,
PART, PRON, SCONJ) ruled out for the tokens whose form is not in the training sample. Prints
one table row per pipeline: POS accuracy both ways, on all tokens and on the unseen ones, and
how many unseen test tokens are closed-class in the gold standard (what the rule gets wrong).

    python benchmarks/closed_class_mask.py \
        training/UD_Vietnamese-VTB_lowres/n5000.s0/both/model-best,corpus/UD_Vietnamese-VTB/test.spacy,corpus/UD_Vietnamese-VTB/train.n5000.s0.spacy \
        [PIPELINE,TEST.spacy,TRAIN.spacy ...]

docs/low_resource.md (Vietnamese) has what it measured: a gain in Vietnamese, a loss in Basque
and English, so the rule is not part of the tagger.
"""
import argparse
from pathlib import Path
from typing import List, Tuple

import numpy
import spacy
from spacy.tokens import Doc, DocBin

# UD's closed classes (universaldependencies.org/u/pos), less NUM: unseen numbers are common.
CLOSED = ("ADP", "AUX", "CCONJ", "DET", "PART", "PRON", "SCONJ")


def measure(pipeline: Path, test: Path, train: Path, batch_size: int = 256) -> Tuple[int, int, int, int, int, int, int]:
    """(tokens, right, right with the rule, unseen tokens, right, right with the rule, unseen
    tokens closed-class in gold)."""
    nlp = spacy.load(pipeline)
    tagger = nlp.get_pipe("mimick_tagger")
    gold = list(DocBin().from_disk(test).get_docs(nlp.vocab))
    train_words = {t.text for doc in DocBin().from_disk(train).get_docs(nlp.vocab) for t in doc}
    values = tagger._heads[0][1]  # UPOS values: the first head, the first len(values) scores
    closed = [i for i, v in enumerate(values) if v in CLOSED]
    docs = [Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d]) for d in gold]
    docs = list(nlp.pipe(docs, disable=["mimick_tagger"]))  # mimick_vectors, as the tagger reads them
    counts = numpy.zeros(7, dtype=int)
    for start in range(0, len(docs), batch_size):
        batch = docs[start:start + batch_size]
        tagger._set_featurizer()
        for doc, ref, scores in zip(batch, gold[start:start + batch_size], tagger.model.predict(batch)):
            pos = numpy.asarray(scores)[:, :len(values)]
            unseen = numpy.array([t.text not in train_words for t in doc], dtype=bool)
            ruled = pos.copy()
            ruled[numpy.ix_(unseen, closed)] = -numpy.inf
            plain_ids, ruled_ids = pos.argmax(axis=1), ruled.argmax(axis=1)
            for i, token in enumerate(ref):
                if not token.pos_:
                    continue
                right, right_ruled = values[plain_ids[i]] == token.pos_, values[ruled_ids[i]] == token.pos_
                counts[:3] += (1, right, right_ruled)
                if unseen[i]:
                    counts[3:] += (1, right, right_ruled, token.pos_ in CLOSED)
    return tuple(int(c) for c in counts)


def _pct(part: int, whole: int) -> float:
    return 100 * part / whole if whole else float("nan")


def main(argv: List[str] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", help="PIPELINE,TEST.spacy,TRAIN.spacy")
    args = parser.parse_args(argv)
    print("| pipeline | POS | POS, rule | difference | unseen POS | unseen POS, rule | unseen tokens | of them closed-class |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for run in args.runs:
        parts = run.split(",")
        if len(parts) != 3:
            raise SystemExit(f"error: {run!r}: expected PIPELINE,TEST.spacy,TRAIN.spacy")
        n, right, right_ruled, n_unseen, unseen_right, unseen_ruled, unseen_closed = measure(*map(Path, parts))
        print(f"| {parts[0]} | {_pct(right, n):.2f} | {_pct(right_ruled, n):.2f} | {_pct(right_ruled - right, n):+.2f} | "
              f"{_pct(unseen_right, n_unseen):.2f} | {_pct(unseen_ruled, n_unseen):.2f} | {n_unseen} | {unseen_closed} |",
              flush=True)


if __name__ == "__main__":
    main()
