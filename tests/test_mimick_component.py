"""The mimick_vectors component: OOV vectors in spaCy, serialization, multiprocessing."""
import subprocess
import sys

import numpy
import pytest
import spacy
from spacy.tokens import DocBin
from spacy.vectors import Vectors

from spacy_mimick.mimick_component import restore_vector_hooks
from spacy_mimick.mimick_model import MimickModel
from spacy_mimick.token_vectors import OOV_VECTORS_KEY, doc_vectors

TEXT = "The flatfish was hurtling past a lawnmower , said McNeally ."


@pytest.fixture()
def nlp(nlp_glove, tiny_mimick):
    nlp_glove.add_pipe("mimick_vectors")
    nlp_glove.get_pipe("mimick_vectors").initialize(model_path=tiny_mimick)
    return nlp_glove


def test_add_pipe_works_without_importing_the_package():
    code = "import spacy; nlp = spacy.blank('en'); print(type(nlp.add_pipe('mimick_vectors')).__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "MimickVectors"


def test_initialize_without_model_path_is_a_clear_error(nlp_glove):
    nlp_glove.add_pipe("mimick_vectors")
    with pytest.raises(ValueError, match="model_path"):
        nlp_glove.initialize()


def test_oov_tokens_get_mimick_vectors_known_tokens_keep_theirs(nlp, tiny_mimick):
    doc = nlp(TEXT)
    model = MimickModel.from_disk(tiny_mimick)
    for token in doc:
        assert token.has_vector
        if token.orth in nlp.vocab.vectors:
            numpy.testing.assert_array_equal(token.vector, nlp.vocab.vectors[token.orth])
            assert token._.mimick_vector is None
        elif token.lower in nlp.vocab.vectors:  # lowercase backoff
            numpy.testing.assert_array_equal(token.vector, nlp.vocab.vectors[token.lower])
        else:
            numpy.testing.assert_allclose(token.vector, model.predict([token.text])[0], atol=1e-6)
            assert token._.mimick_vector is not None
    oov = [t for t in doc if t.orth not in nlp.vocab.vectors]
    assert {t.text for t in oov} >= {"flatfish", "hurtling", "lawnmower", "McNeally"}
    sim = oov[0].similarity(doc[0])
    assert -1 <= sim <= 1 and sim != 0
    assert oov[0].similarity(oov[0]) == pytest.approx(1.0)
    span = doc[1:4]
    numpy.testing.assert_allclose(span.vector, numpy.mean([t.vector for t in span], axis=0), atol=1e-6)
    numpy.testing.assert_allclose(doc.vector, numpy.mean([t.vector for t in doc], axis=0), atol=1e-6)
    assert doc.has_vector and span.has_vector and doc.similarity(nlp("A fish .")) != 0


def test_lowercase_backoff(nlp):
    doc = nlp("The THE")
    numpy.testing.assert_array_equal(doc[1].vector, nlp.vocab.vectors[nlp.vocab.strings["the"]])
    nlp.get_pipe("mimick_vectors").cfg["lowercase_backoff"] = False
    doc = nlp("The THE")
    assert not numpy.array_equal(doc[1].vector, nlp.vocab.vectors[nlp.vocab.strings["the"]])


def test_doc_vectors_helper_agrees_with_hooks(nlp):
    doc = nlp(TEXT)
    vectors, has_vector, predicted = doc_vectors(doc)
    numpy.testing.assert_array_equal(vectors, numpy.vstack([t.vector for t in doc]))
    assert has_vector.all()
    assert predicted.tolist() == [t.orth not in nlp.vocab.vectors for t in doc]


def test_docbin_round_trip_keeps_vectors(nlp):
    doc = nlp(TEXT)
    data = DocBin(docs=[doc], store_user_data=True).to_bytes()
    (back,) = DocBin().from_bytes(data).get_docs(nlp.vocab)
    assert back.user_data[OOV_VECTORS_KEY].keys() == doc.user_data[OOV_VECTORS_KEY].keys()
    assert back[1]._.mimick_vector is not None  # extension works without hooks
    restore_vector_hooks(back)
    numpy.testing.assert_array_equal(numpy.vstack([t.vector for t in back]),
                                     numpy.vstack([t.vector for t in doc]))


def test_multiprocessing_pipe_matches_single_process(nlp):
    texts = [TEXT, "Secretive developiong of compartmentalize .", "pesky expectedly MCT"] * 4
    single = [numpy.vstack([t.vector for t in d]) for d in nlp.pipe(texts)]
    multi = list(nlp.pipe(texts, n_process=2, batch_size=2))
    assert len(multi) == len(texts)
    for doc, expected in zip(multi, single):
        restore_vector_hooks(doc)
        numpy.testing.assert_allclose(numpy.vstack([t.vector for t in doc]), expected, atol=1e-6)


def test_pipeline_serialization_round_trip(nlp, tmp_path):
    doc = nlp(TEXT)
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    doc2 = loaded(TEXT)
    numpy.testing.assert_array_equal(numpy.vstack([t.vector for t in doc]), numpy.vstack([t.vector for t in doc2]))
    from_bytes = spacy.blank("en")
    from_bytes.add_pipe("mimick_vectors")
    from_bytes.from_bytes(nlp.to_bytes())
    doc3 = from_bytes(TEXT)
    numpy.testing.assert_array_equal(numpy.vstack([t.vector for t in doc]), numpy.vstack([t.vector for t in doc3]))


def test_dimension_mismatch_is_rejected(tiny_mimick):
    nlp = spacy.blank("en")
    nlp.vocab.vectors = Vectors(strings=nlp.vocab.strings, data=numpy.ones((2, 7), "f"), keys=["a", "b"])
    pipe = nlp.add_pipe("mimick_vectors")
    with pytest.raises(ValueError, match="50-dimensional vectors but the pipeline's vectors are 7"):
        pipe.initialize(model_path=tiny_mimick)


def test_no_static_vectors_means_mimick_alone(tiny_mimick):
    nlp = spacy.blank("en")
    nlp.add_pipe("mimick_vectors").initialize(model_path=tiny_mimick)
    doc = nlp("cats purr")
    assert doc[0].has_vector and doc[0].vector.shape == (50,)
    assert doc.vector.shape == (50,) and doc.has_vector


def test_floret_vectors_are_left_alone(tiny_mimick):
    nlp = spacy.blank("en")
    nlp.vocab.vectors = Vectors(
        strings=nlp.vocab.strings, data=numpy.ones((10, 50), "f"), mode="floret", minn=3, maxn=4, hash_count=1
    )
    pipe = nlp.add_pipe("mimick_vectors")
    with pytest.warns(UserWarning, match="floret"):
        pipe.initialize(model_path=tiny_mimick)
    doc = nlp("anything goes")
    assert OOV_VECTORS_KEY not in doc.user_data and not doc.user_token_hooks


def test_add_to_vectors_writes_rows(nlp):
    pipe = nlp.get_pipe("mimick_vectors")
    pipe.cfg["add_to_vectors"] = True
    before = nlp.vocab.vectors.n_keys
    doc = nlp("zorgblat")
    assert nlp.vocab.vectors.n_keys == before + 1
    numpy.testing.assert_array_equal(nlp.vocab.vectors[nlp.vocab.strings["zorgblat"]], doc[0].vector)


def test_cache_is_bounded(nlp):
    pipe = nlp.get_pipe("mimick_vectors")
    pipe.cfg["cache_size"] = 3
    nlp("aaaq bbbq cccq dddq eeeq")
    assert len(pipe._cache) == 3 and "eeeq" in pipe._cache


def test_unique_oov_types_predicted_once_per_batch(nlp, monkeypatch):
    pipe = nlp.get_pipe("mimick_vectors")
    calls = []
    real = pipe.model.predict
    monkeypatch.setattr(pipe.model, "predict", lambda words: calls.append(list(words)) or real(words))
    list(nlp.pipe(["zzyzx qwop zzyzx", "qwop zzyzx"]))
    assert calls == [["zzyzx", "qwop"]]


def test_refine_rare_blends_only_the_rarest_rows_once(nlp_glove, tiny_mimick, glove_small, tmp_path):
    from spacy_mimick.mimick_component import blend_with_table
    from spacy_mimick.mimick_model import MimickModel

    for word in glove_small.words:  # as `spacy init vectors` does: keys have strings
        nlp_glove.vocab.strings.add(word)
    before = numpy.array(nlp_glove.vocab.vectors.data, copy=True)
    pipe = nlp_glove.add_pipe("mimick_vectors", config={"refine_rare": 0.5})
    pipe.initialize(model_path=tiny_mimick)
    after = numpy.asarray(nlp_glove.vocab.vectors.data)
    n = len(glove_small)
    assert pipe.cfg["refined_rows"] == n // 2
    numpy.testing.assert_array_equal(after[: n // 2], before[: n // 2])  # frequent rows untouched
    rare = list(range(n // 2, n))
    assert not numpy.allclose(after[rare], before[rare])
    numpy.testing.assert_allclose(numpy.linalg.norm(after[rare], axis=1), numpy.linalg.norm(before[rare], axis=1),
                                  rtol=1e-5)
    predicted = MimickModel.from_disk(tiny_mimick).predict([glove_small.words[-1]])[0]
    numpy.testing.assert_allclose(after[-1], blend_with_table(before[-1], predicted), rtol=1e-5, atol=1e-6)
    word = glove_small.words[-1]
    assert numpy.allclose(nlp_glove(word)[0].vector, after[-1])  # tokens see the refined row
    pipe.initialize()  # a second initialize does not blend again
    numpy.testing.assert_array_equal(numpy.asarray(nlp_glove.vocab.vectors.data), after)
    nlp_glove.to_disk(tmp_path / "p")
    loaded = spacy.load(tmp_path / "p")
    numpy.testing.assert_allclose(numpy.asarray(loaded.vocab.vectors.data), after)
    assert loaded.get_pipe("mimick_vectors").cfg["refine_rare"] == 0.5
    loaded.get_pipe("mimick_vectors").initialize(model_path=tiny_mimick)  # a loaded table: not again
    numpy.testing.assert_allclose(numpy.asarray(loaded.vocab.vectors.data), after)
    loaded.vocab.vectors.data[:] = before  # a fresh table (e.g. [initialize] vectors reloaded): refined
    loaded.get_pipe("mimick_vectors").initialize()
    numpy.testing.assert_allclose(numpy.asarray(loaded.vocab.vectors.data), after, rtol=1e-5, atol=1e-6)


def test_refine_rare_leaves_rows_without_strings_and_warns(nlp_glove, tiny_mimick):
    before = numpy.array(nlp_glove.vocab.vectors.data, copy=True)
    pipe = nlp_glove.add_pipe("mimick_vectors", config={"refine_rare": 0.5})
    with pytest.warns(UserWarning, match="no string"):
        pipe.initialize(model_path=tiny_mimick)
    after = numpy.asarray(nlp_glove.vocab.vectors.data)
    changed = (~numpy.isclose(after, before).all(axis=1)).sum()
    assert changed == pipe.cfg["refined_rows"] < 1500


def test_refine_rare_must_be_a_share(nlp_glove):
    with pytest.raises(ValueError, match="refine_rare"):
        nlp_glove.add_pipe("mimick_vectors", config={"refine_rare": 1.5})


def test_predict_all_stores_every_tokens_prediction_and_leaves_vectors_alone(nlp_glove, tiny_mimick):
    from spacy_mimick.token_vectors import SPELLING_VECTORS_KEY, spelling_vectors

    nlp_glove.add_pipe("mimick_vectors", config={"predict_all": True})
    nlp_glove.get_pipe("mimick_vectors").initialize(model_path=tiny_mimick)
    plain = spacy.blank("en", vocab=nlp_glove.vocab)
    plain.add_pipe("mimick_vectors").initialize(model_path=tiny_mimick)
    doc, doc_plain = nlp_glove(TEXT), plain(TEXT)
    assert SPELLING_VECTORS_KEY not in doc_plain.user_data
    model = MimickModel.from_disk(tiny_mimick)
    width = nlp_glove.vocab.vectors.shape[1]
    numpy.testing.assert_allclose(
        spelling_vectors(doc, width), model.predict([t.text for t in doc]), atol=1e-6
    )
    # In-vocabulary tokens get a prediction too, but keep their table vector.
    the = doc[-1]  # "."
    assert the.orth in nlp_glove.vocab.vectors
    numpy.testing.assert_array_equal(the.vector, nlp_glove.vocab.vectors[the.orth])
    for a, b in zip(doc, doc_plain):
        numpy.testing.assert_array_equal(a.vector, b.vector)
    # Survives DocBin; a doc without it, or with the wrong width, is a clear error.
    back = next(DocBin(docs=[doc], store_user_data=True).get_docs(nlp_glove.vocab))
    numpy.testing.assert_array_equal(spelling_vectors(back, width), spelling_vectors(doc, width))
    with pytest.raises(ValueError, match="predict_all = true"):
        spelling_vectors(doc_plain, width)
    with pytest.raises(ValueError, match="expected 7-d"):
        spelling_vectors(doc, 7)
    assert spelling_vectors(nlp_glove(""), width).shape == (0, width)


def test_predict_all_keeps_the_lowercase_backoff_whatever_the_cache_holds(nlp_glove, tiny_mimick):
    """predict_all caches Mimick's prediction of "The"; "The" must still get the row of "the"."""
    nlp_glove.add_pipe("mimick_vectors", config={"predict_all": True})
    nlp_glove.get_pipe("mimick_vectors").initialize(model_path=tiny_mimick)
    assert nlp_glove.vocab.strings.add("The") not in nlp_glove.vocab.vectors  # OOV, "the" is not
    first, second = nlp_glove("The cat ."), nlp_glove("The cat .")
    assert "The" in nlp_glove.get_pipe("mimick_vectors")._cache
    for doc in (first, second):
        numpy.testing.assert_array_equal(doc[0].vector, nlp_glove.vocab.vectors[nlp_glove.vocab.strings["the"]])
    numpy.testing.assert_array_equal(first.user_data[OOV_VECTORS_KEY]["The"], second.user_data[OOV_VECTORS_KEY]["The"])
