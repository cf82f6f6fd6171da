"""Reading the Docs the project's commands share: gold test and training sets (``.spacy``
DocBins, or CoNLL-U files) and ``evaluate.py``'s predictions.

* :func:`read_docs`: the Docs of a ``.spacy`` or ``.conllu`` file;
* :func:`training_forms`: the word forms of a training set, the vocabulary that decides which
  test tokens are OOV (the paper's "OOV (UD)" columns);
* :func:`load_examples`: predictions paired with the gold Docs they were made on, checked to be
  the same sentences.
"""
from pathlib import Path
from typing import List, Set

from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.vocab import Vocab

from spacy_mimick.ud.corpus import read_conllu


def read_docs(path: Path, vocab: Vocab) -> List[Doc]:
    """Gold Docs from a .spacy DocBin or a CoNLL-U file."""
    if path.suffix == ".conllu":
        return list(read_conllu(path, vocab))
    return list(DocBin().from_disk(path).get_docs(vocab))


def training_forms(path: Path, vocab: Vocab) -> Set[str]:
    """The word forms of a training set (.spacy): the vocabulary that decides which test tokens
    are OOV (the paper's "OOV (UD)" columns)."""
    return {t.text for doc in DocBin().from_disk(path).get_docs(vocab) for t in doc}


def load_examples(gold_path: Path, pred_path: Path, vocab: Vocab) -> List[Example]:
    """The predictions of ``pred_path`` (.spacy) as Examples against the gold Docs of
    ``gold_path``; an error where they are not the same sentences."""
    gold = list(DocBin().from_disk(gold_path).get_docs(vocab))
    pred = list(DocBin().from_disk(pred_path).get_docs(vocab))
    if len(gold) != len(pred) or any(len(g) != len(p) for g, p in zip(gold, pred)):
        raise SystemExit(f"error: {pred_path} does not hold predictions for the sentences of {gold_path}")
    return [Example(p, g) for p, g in zip(pred, gold)]
