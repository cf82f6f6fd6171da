"""Mimick: word vectors for out-of-vocabulary words, predicted from their spelling.

Everything between a pretrained vectors table and a spaCy pipeline whose every token has a
vector: the table readers (``vectors_io``, with its binary cache ``vectors_cache``), the
spelling features (``features``: characters, n-grams), the torch networks
(``pytorch_mimick_model``: the paper's character BiLSTM, the n-gram bag, the hybrid) and their
thinc architectures and saved form (``mimick_model``), the trainer (``mimick_trainer``, with
its foreach optimizers in ``optimizers``), spaCy's custom-vectors class (``mimick_vectors``:
``spacy_mimick.MimickVectors.v1``), the ``mimick_vectors`` component (``mimick_component``),
adding Mimick to an installed pipeline (``add_mimick``), the original release's converter
(``original_release``), the opt-in spelling backoff (``spelling``) and the similarity
evaluations (``similarity``).
"""
