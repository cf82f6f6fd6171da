"""A measurement, not a feature: the Both tagger with no Mimick vector for forms that hold a space.

Vietnamese VTB writes syllable groups as one word with spaces (``hàng xóm``, 21% of its tokens),
while the original release's Vietnamese Mimick model learned from Polyglot's whitespace tokens
(its 2,967 characters have no space): its vectors for those forms are outside what it was trained
on. Stanza scored 2.5 UPOS higher without them (docs/stanza_peer.md). This file asks whether Both
does too. Put this folder first on PYTHONPATH and Python imports it at start-up in every process of
a run (``spacy project run`` starts ``spacy train`` and ``evaluate.py`` as subprocesses), where it
makes ``MimickVectors`` give such forms no vector: the tagger's unknown-word input in the static
vectors (source NONE) and zeros in its Mimick spelling input::

    PYTHONPATH=benchmarks/no_vectors_for_spaced_forms python -m spacy project run train-tagger-both . \\
        ... --vars.recipe=_lowres-nospace     # the commands `paper.py ... --var recipe=_lowres-nospace --dry-run` lists

Measured on Vietnamese's five 5,000-token samples: no gain (docs/low_resource.md), so nothing of
it is in the package.
"""
import numpy

from spacy_mimick.vectors import mimick_vectors as mv

_plan, _source, _predict = mv.MimickVectors._plan, mv.MimickVectors._source, mv.MimickVectors.predict


def plan_without_spaced(self, keys):
    sources, rows, texts = _plan(self, keys)
    for i in numpy.flatnonzero(sources == mv.MIMICK).tolist():
        if " " in texts[keys[i]]:
            sources[i] = mv.NONE
    return sources, rows, texts


def source_without_spaced(self, key):
    source, row, text = _source(self, key)
    if source == mv.MIMICK and " " in text:
        return mv.NONE, -1, None
    return source, row, text


def predict_without_spaced(self, words):
    out = numpy.array(_predict(self, words))
    spaced = [i for i, word in enumerate(words) if " " in word]
    if spaced:
        out[spaced] = 0.0
    return out


mv.MimickVectors._plan = plan_without_spaced
mv.MimickVectors._source = source_without_spaced
mv.MimickVectors.predict = predict_without_spaced
