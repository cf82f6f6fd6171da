"""Per-token vectors of a Doc: the static table first, then Mimick's predictions for OOV tokens.

The ``mimick_vectors`` component stores its predictions in ``doc.user_data[OOV_VECTORS_KEY]``
(a ``{word: float32 vector}`` dict). ``user_data`` survives ``DocBin`` (``store_user_data=True``)
and ``nlp.pipe(n_process=...)``, unlike ``doc.user_hooks``; this module reads vectors from the
two sources without going through the hooks, so downstream components (the tagger) get the same
vectors whether or not the hooks are installed.
"""
from typing import Dict, Optional, Tuple

import numpy
from spacy.tokens import Doc
from spacy.vectors import Mode

OOV_VECTORS_KEY = "spacy_mimick.oov_vectors"
# Mimick's prediction for every token form, in-vocabulary ones too (``mimick_vectors`` with
# ``predict_all``): the spelling input of MimickTagger.v3's ``mimick_features``.
SPELLING_VECTORS_KEY = "spacy_mimick.spelling_vectors"
# ``mimick_vectors`` with ``mimick_only``: the OOV table holds every non-space token and the
# static table is not used at all (it may be in another space or width). The width is stored
# too, for docs whose tokens are all whitespace.
MIMICK_ONLY_KEY = "spacy_mimick.mimick_only"
MIMICK_WIDTH_KEY = "spacy_mimick.mimick_width"


def to_numpy(array) -> numpy.ndarray:
    """``array`` as numpy: spaCy keeps the vectors table (and ``Vectors.find``'s rows) on the
    GPU under ``spacy train --gpu-id N``, and cupy refuses implicit conversion."""
    return array.get() if hasattr(array, "get") else numpy.asarray(array)


def get_oov_table(doc: Doc) -> Dict[str, numpy.ndarray]:
    """The Mimick predictions stored on ``doc`` ({} when there are none)."""
    return doc.user_data.get(OOV_VECTORS_KEY, {})


def is_mimick_only(doc: Doc) -> bool:
    """Whether ``doc``'s vectors are Mimick's alone (``mimick_vectors`` with ``mimick_only``)."""
    return bool(doc.user_data.get(MIMICK_ONLY_KEY, False))


def mimick_only_width(doc: Doc) -> Optional[int]:
    """The width of a Mimick-only doc's vectors (None for other docs)."""
    if not is_mimick_only(doc):
        return None
    width = doc.user_data.get(MIMICK_WIDTH_KEY)
    if width is None:
        table = get_oov_table(doc)
        width = len(next(iter(table.values()))) if table else 0
    return int(width)


def spelling_vectors(doc: Doc, width: int) -> numpy.ndarray:
    """Mimick's prediction for each token of ``doc``, float32 (n_tokens, width).

    Raises ValueError when ``doc`` has none (no ``mimick_vectors`` with ``predict_all`` ran
    on it), a token's form is missing, or the width differs, rather than feeding zeros or
    wrong columns to a model trained on them.
    """
    if len(doc) == 0:
        return numpy.zeros((0, width), dtype="float32")
    table = doc.user_data.get(SPELLING_VECTORS_KEY)
    if table is None:
        raise ValueError(
            "this Doc has no Mimick predictions for its in-vocabulary tokens: put "
            "mimick_vectors with predict_all = true before the component that needs them "
            "(and, in training, list it in [training] annotating_components)"
        )
    try:
        out = numpy.stack([table[token.text] for token in doc]).astype("float32", copy=False)
    except KeyError as err:
        raise ValueError(
            f"no Mimick prediction stored for the token {err.args[0]!r} (was the Doc "
            f"retokenized after mimick_vectors?)"
        ) from None
    if out.shape[1] != width:
        raise ValueError(
            f"the Doc's Mimick predictions are {out.shape[1]}-d, expected {width}-d "
            f"(a Mimick model trained on other vectors?)"
        )
    return out


def doc_vectors(doc: Doc) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """Return ``(vectors, has_vector, predicted)`` for the tokens of ``doc``.

    vectors: float32 (n_tokens, width); has_vector: bool (n_tokens,), True where the static
    table or Mimick gave a vector; predicted: bool, True where the vector is Mimick's.
    Rows with neither are zeros. ``width`` is the static table's width (0 if it is empty).
    In a Mimick-only doc (``is_mimick_only``) every vector is Mimick's, at Mimick's width,
    and the static table is ignored; whitespace tokens have none.
    """
    vectors = doc.vocab.vectors
    n = len(doc)
    only_width = mimick_only_width(doc)
    if only_width is not None:
        table = get_oov_table(doc)
        out = numpy.zeros((n, only_width), dtype="float32")
        has_vector = numpy.zeros((n,), dtype=bool)
        for i, token in enumerate(doc):
            vec = table.get(token.text)
            if vec is not None:
                out[i] = vec
                has_vector[i] = True
        return out, has_vector, has_vector.copy()
    width = vectors.shape[1] if vectors.shape[0] else 0
    table = get_oov_table(doc)
    if width == 0 and table:
        width = len(next(iter(table.values())))
    out = numpy.zeros((n, width), dtype="float32")
    has_vector = numpy.zeros((n,), dtype=bool)
    predicted = numpy.zeros((n,), dtype=bool)
    if n == 0 or width == 0:
        return out, has_vector, predicted
    if vectors.mode == Mode.floret:
        # floret tables have a vector for every string: nothing is OOV.
        for i, token in enumerate(doc):
            out[i] = doc.vocab.get_vector(token.orth)
        has_vector[:] = True
        return out, has_vector, predicted
    rows = vectors.find(keys=[t.orth for t in doc]) if vectors.shape[0] else numpy.full((n,), -1)
    rows = to_numpy(rows)
    found = rows >= 0
    if found.any():
        data = to_numpy(vectors.data)
        out[found] = data[rows[found]]
        has_vector[found] = True
    if table:
        for i in numpy.flatnonzero(~found):
            vec = table.get(doc[i].text)
            if vec is not None:
                out[i] = vec
                has_vector[i] = True
                predicted[i] = True
    return out, has_vector, predicted
