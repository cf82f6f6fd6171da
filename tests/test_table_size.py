"""scripts/project/table_size.py: a pipeline's table cut to N rows, the cut words served by Mimick
or by spaCy's pruning (real GloVe rows, a Mimick model trained on them)."""
import sys
from pathlib import Path

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts" / "project"))
import table_size  # noqa: E402

from spacy_mimick.vectors.mimick_vectors import MIMICK, TABLE, MimickVectors, table_of  # noqa: E402


def test_cut_keeps_the_first_rows_and_mimick_serves_the_rest(nlp_glove, tiny_mimick, glove_small):
    nlp_glove.add_pipe("mimick_vectors").initialize(model_path=str(tiny_mimick))
    kept, cut_word = glove_small.words[0], glove_small.words[2500]
    full_row = nlp_glove.vocab[kept].vector.copy()
    table_size.cut(nlp_glove, 1000, "mimick")
    vectors = nlp_glove.vocab.vectors
    assert isinstance(vectors, MimickVectors) and table_of(vectors).shape[0] == 1000
    keys = [nlp_glove.vocab.strings.add(w) for w in (kept, cut_word)]
    assert list(vectors.sources(keys)) == [TABLE, MIMICK]
    numpy.testing.assert_array_equal(nlp_glove.vocab[kept].vector, full_row)
    predicted = vectors.model.predict([cut_word])[0]
    numpy.testing.assert_allclose(nlp_glove.vocab[cut_word].vector, predicted, rtol=1e-5, atol=1e-6)


def test_prune_maps_cut_words_to_a_kept_row(nlp_glove, tiny_mimick, glove_small):
    nlp_glove.add_pipe("mimick_vectors").initialize(model_path=str(tiny_mimick))
    cut_word = glove_small.words[2500]
    for word in glove_small.words:  # as `spacy init vectors` leaves them: prune_vectors reads every key's string
        nlp_glove.vocab.strings.add(word)
    table_size.cut(nlp_glove, 1000, "prune")
    table = table_of(nlp_glove.vocab.vectors)
    assert table.shape[0] == 1000 and table.n_keys >= 3000  # every old word keeps a key
    key = nlp_glove.vocab.strings.add(cut_word)
    assert list(nlp_glove.vocab.vectors.sources([key])) == [TABLE]
    row = table.key2row[key]
    assert row < 1000 and nlp_glove.vocab.vectors.model is not None  # the model stays for OOV words
