"""The mimick_vectors component and MimickVectors: OOV vectors in spaCy, serialization,
multiprocessing (fork and spawn), with no hook and no extra call."""
import json
import pickle
import subprocess
import sys
import warnings

import numpy
import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.vectors import Vectors

from spacy_mimick.vectors.mimick_model import MimickModel
from spacy_mimick.vectors.mimick_vectors import LOWERCASE, MIMICK, NONE, TABLE, MimickVectors, vectors_and_sources

TEXT = "The flatfish was hurtling past a lawnmower , said McNeally ."


@pytest.fixture()
def nlp(nlp_glove, tiny_mimick):
    nlp_glove.add_pipe("mimick_vectors")
    nlp_glove.get_pipe("mimick_vectors").initialize(model_path=tiny_mimick)
    return nlp_glove


def test_add_pipe_works_without_importing_the_package():
    code = "import spacy; nlp = spacy.blank('en'); print(type(nlp.add_pipe('mimick_vectors')).__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "MimickVectorsComponent"
    code = ("import spacy; print([spacy.util.registry.vectors.get(f'spacy_mimick.MimickVectors.v{n}').__name__ "
            "for n in (1, 2, 3)])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(["create_mimick_vectors", "create_mimick_vectors_v2", "create_mimick_vectors_v3"])


def test_initialize_without_model_path_is_a_clear_error(nlp_glove):
    nlp_glove.add_pipe("mimick_vectors")
    with pytest.raises(ValueError, match="model_path"):
        nlp_glove.initialize()


def vectors_of(doc):
    return numpy.vstack([t.vector for t in doc])


def test_oov_tokens_get_mimick_vectors_known_tokens_keep_theirs(nlp, tiny_mimick):
    doc = nlp(TEXT)
    model = MimickModel.from_disk(tiny_mimick)
    vectors = nlp.vocab.vectors
    assert isinstance(vectors, MimickVectors) and not doc.user_token_hooks and not doc.user_data
    table = vectors.table
    for token in doc:
        assert token.has_vector and not token.is_oov  # as spaCy documents for floret vectors
        if token.orth in table:
            numpy.testing.assert_array_equal(token.vector, table[token.orth])
        elif token.lower in table:  # lowercase backoff
            numpy.testing.assert_array_equal(token.vector, table[token.lower])
        else:
            numpy.testing.assert_allclose(token.vector, model.predict([token.text])[0], atol=1e-6)
    oov = [t for t in doc if t.orth not in table and t.lower not in table]
    assert {t.text for t in oov} >= {"flatfish", "hurtling", "lawnmower", "McNeally"}
    sim = oov[0].similarity(doc[0])
    assert -1 <= sim <= 1 and sim != 0
    assert oov[0].similarity(oov[0]) == pytest.approx(1.0)
    span = doc[1:4]
    numpy.testing.assert_allclose(span.vector, numpy.mean([t.vector for t in span], axis=0), atol=1e-6)
    numpy.testing.assert_allclose(doc.vector, numpy.mean([t.vector for t in doc], axis=0), atol=1e-6)
    assert doc.has_vector and span.has_vector and doc.similarity(nlp("A fish .")) != 0


def test_lowercase_backoff(nlp):
    the = nlp.vocab.vectors.table[nlp.vocab.strings["the"]]
    doc = nlp("The THE")
    numpy.testing.assert_array_equal(doc[1].vector, the)
    assert nlp.vocab.vectors.sources([doc[1].orth]).tolist() == [LOWERCASE]
    nlp.get_pipe("mimick_vectors").cfg["lowercase_backoff"] = False
    doc = nlp("The THE")
    assert not numpy.array_equal(doc[1].vector, the)
    assert nlp.vocab.vectors.sources([doc[1].orth]).tolist() == [MIMICK]


def test_sources_and_batches_agree_with_token_vectors(nlp):
    doc = nlp(TEXT + "  x")
    vectors, sources = vectors_and_sources(nlp.vocab, [doc])
    numpy.testing.assert_array_equal(vectors, vectors_of(doc))
    numpy.testing.assert_array_equal(nlp.vocab.vectors.get_batch(doc.to_array("ORTH")), vectors)
    table = nlp.vocab.vectors.table
    expected = [NONE if t.is_space else TABLE if t.orth in table else LOWERCASE if t.lower in table else MIMICK
                for t in doc]
    assert sources.tolist() == expected and NONE in expected and MIMICK in expected
    space = [t for t in doc if t.is_space][0]
    assert not space.has_vector and not space.vector.any()  # whitespace: no vector, as in spaCy


def test_docbin_and_doc_bytes_keep_vectors_in_another_process(nlp, tmp_path):
    """A DocBin written in one process and read in another (with the saved pipeline's vocab),
    and Doc.to_bytes: the same vectors, no hook, no call."""
    doc = nlp(TEXT)
    nlp.to_disk(tmp_path / "pipeline")
    DocBin(docs=[doc]).to_disk(tmp_path / "docs.spacy")
    back = Doc(nlp.vocab).from_bytes(doc.to_bytes())
    numpy.testing.assert_array_equal(vectors_of(back), vectors_of(doc))
    numpy.save(tmp_path / "expected.npy", vectors_of(doc))
    code = (
        "import sys, numpy, spacy; from spacy.tokens import DocBin; p = sys.argv[1]; "
        "nlp = spacy.load(p + '/pipeline'); (doc,) = DocBin().from_disk(p + '/docs.spacy').get_docs(nlp.vocab); "
        "v = numpy.vstack([t.vector for t in doc]); e = numpy.load(p + '/expected.npy'); "
        "print(numpy.abs(v - e).max(), all(t.has_vector for t in doc))")
    out = subprocess.run([sys.executable, "-W", "error::UserWarning", "-c", code, str(tmp_path)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    diff, has = out.stdout.split()
    assert float(diff) < 1e-6 and has == "True"


def test_pickling_keeps_the_vectors_and_reads_new_strings(nlp):
    doc = nlp(TEXT)
    vocab = pickle.loads(pickle.dumps(nlp.vocab))
    assert isinstance(vocab.vectors, MimickVectors) and vocab.vectors.strings is vocab.strings
    numpy.testing.assert_allclose(vocab.get_vector("flatfish"), doc[1].vector, atol=1e-6)
    fresh = nlp.vocab.vectors.predict(["zqxjunkword"])[0]
    numpy.testing.assert_allclose(vocab.get_vector("zqxjunkword"), fresh, atol=1e-6)  # a string added after loading


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_multiprocessing_pipe_matches_single_process(nlp, tmp_path, method):
    """nlp.pipe(n_process=2) under both start methods, in a fresh interpreter: the docs that come
    back have Mimick's vectors, with no warning (spaCy's W109 included)."""
    nlp.to_disk(tmp_path / "pipeline")
    code = f"""
import multiprocessing, sys, warnings, numpy, spacy
if __name__ == "__main__":
    multiprocessing.set_start_method("{method}")
    warnings.simplefilter("error")
    nlp = spacy.load(sys.argv[1])
    texts = [{TEXT!r}, "Secretive developiong of compartmentalize .", "pesky expectedly MCT"] * 3
    single = [numpy.vstack([t.vector for t in d]) for d in nlp.pipe(texts)]
    multi = [numpy.vstack([t.vector for t in d]) for d in nlp.pipe(texts, n_process=2, batch_size=2)]
    assert len(multi) == len(texts)
    print(max(float(numpy.abs(a - b).max()) for a, b in zip(single, multi)), min(float(numpy.abs(m).sum()) for m in multi))
"""
    script = tmp_path / "run.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, str(script), str(tmp_path / "pipeline")], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    diff, smallest = map(float, out.stdout.split())
    assert diff < 1e-6 and smallest > 0


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


def test_settings_given_at_load_win_over_the_saved_ones(nlp, tmp_path):
    """spacy.load(..., config=...) sets the vectors' run-time settings of a saved pipeline; the
    component's saved cfg used to put its own values back without a word."""
    from spacy_mimick.vectors.mimick_vectors import MimickVectors

    nlp.to_disk(tmp_path / "pipeline")
    overrides = {"spelling_backoff": False, "n_threads": 2, "cache_size": 77, "spelling_typo_margin": 0.2}
    loaded = spacy.load(tmp_path / "pipeline", config={"components": {"mimick_vectors": overrides}})
    vectors = loaded.vocab.vectors
    assert isinstance(vectors, MimickVectors)
    assert (vectors.spelling_backoff, vectors.n_threads, vectors.cache_size, vectors.spelling_typo_margin) == (
        False, 2, 77, 0.2)
    assert {k: loaded.get_pipe("mimick_vectors").cfg[k] for k in overrides} == overrides
    plain = spacy.load(tmp_path / "pipeline")  # without overrides: what was saved
    assert plain.vocab.vectors.spelling_backoff is True and plain.vocab.vectors.cache_size == 100_000


def spaced_doc(nlp):
    return Doc(nlp.vocab, words=["New York", "zorblax  quibbit", "the", "zorblax"])


def test_spaced_forms_get_the_mean_of_their_parts(nlp, tiny_mimick):
    """A token with white space inside (a multiword token) that the table lacks: the mean of its
    parts' vectors, each found as any token's (table, lowercase row, Mimick), as Span.vector is;
    predict() gives it the mean of the parts' predictions."""
    vectors = nlp.vocab.vectors
    assert vectors.spaced_from_parts is True  # the component's default
    table, model = vectors.table, MimickModel.from_disk(tiny_mimick)
    doc = spaced_doc(nlp)
    new_york = numpy.mean([table[nlp.vocab.strings["new"]], table[nlp.vocab.strings["york"]]], axis=0)
    numpy.testing.assert_allclose(doc[0].vector, new_york, atol=1e-6)
    parts = model.predict(["zorblax", "quibbit"])
    numpy.testing.assert_allclose(doc[1].vector, parts.mean(axis=0), atol=1e-6)
    numpy.testing.assert_allclose(doc[3].vector, parts[0], atol=1e-6)
    batch, sources = vectors.lookup(doc.to_array("ORTH"))
    numpy.testing.assert_array_equal(batch, vectors_of(doc))  # get_batch and token.vector agree
    assert sources.tolist() == [MIMICK, MIMICK, TABLE, MIMICK]
    whole = model.predict(["New York"])[0]
    assert not numpy.allclose(doc[0].vector, whole, atol=1e-3)
    numpy.testing.assert_allclose(vectors.predict(["New York"])[0], model.predict(["New", "York"]).mean(axis=0),
                                  atol=1e-6)


def test_spaced_forms_whole_when_the_setting_is_off(nlp_glove, tiny_mimick):
    nlp_glove.add_pipe("mimick_vectors", config={"spaced_from_parts": False})
    nlp_glove.get_pipe("mimick_vectors").initialize(model_path=tiny_mimick)
    doc = spaced_doc(nlp_glove)
    whole = MimickModel.from_disk(tiny_mimick).predict(["New York", "zorblax  quibbit"])
    numpy.testing.assert_allclose(vectors_of(doc)[:2], whole, atol=1e-6)


def test_spaced_forms_in_saved_pipelines_and_the_registered_vectors(nlp, tmp_path):
    """A pipeline saved before the setting existed (no key in its config or cfg) gets it on; the
    registered vectors: v1 and v2 as they were released (off), v3 on."""
    from spacy.util import registry

    nlp.to_disk(tmp_path / "pipeline")
    config = tmp_path / "pipeline" / "config.cfg"
    config.write_text("\n".join(line for line in config.read_text().splitlines()
                                if not line.startswith("spaced_from_parts")))
    cfg = tmp_path / "pipeline" / "mimick_vectors" / "cfg"
    saved = json.loads(cfg.read_text())
    del saved["spaced_from_parts"]
    cfg.write_text(json.dumps(saved))
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.vocab.vectors.spaced_from_parts is True
    numpy.testing.assert_array_equal(vectors_of(spaced_doc(loaded)), vectors_of(spaced_doc(nlp)))
    made = {name: registry.vectors.get(f"spacy_mimick.MimickVectors.{name}")()(nlp.vocab).spaced_from_parts
            for name in ("v1", "v2", "v3")}
    assert made == {"v1": False, "v2": False, "v3": True}


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
    numpy.testing.assert_array_equal(doc[0].vector, nlp.vocab.vectors.table.get_batch([doc[0].orth])[0])


def test_add_to_vectors_writes_rows(nlp):
    pipe = nlp.get_pipe("mimick_vectors")
    pipe.cfg["add_to_vectors"] = True
    table = nlp.vocab.vectors.table
    before = table.n_keys
    doc = nlp("zorgblat")
    assert table.n_keys == before + 1
    numpy.testing.assert_array_equal(table[nlp.vocab.strings["zorgblat"]], doc[0].vector)


def test_cache_is_bounded(nlp):
    pipe = nlp.get_pipe("mimick_vectors")
    pipe.cfg["cache_size"] = 3
    nlp("aaaq bbbq cccq dddq eeeq")
    cache = nlp.vocab.vectors._cache
    assert len(cache) == 3 and "eeeq" in cache
    with pytest.raises(ValueError):
        cache["eeeq"][0] = 1.0  # read-only: the cache shares its rows


def test_unique_oov_types_predicted_once_per_batch(nlp, monkeypatch):
    pipe = nlp.get_pipe("mimick_vectors")
    calls = []
    real = pipe.model.predict
    monkeypatch.setattr(pipe.model, "predict", lambda words: calls.append(list(words)) or real(words))
    docs = list(nlp.pipe(["zzyzx qwop zzyzx", "qwop zzyzx"]))
    assert calls == [["zzyzx", "qwop"]]
    [t.vector for doc in docs for t in doc]  # served from the cache
    assert len(calls) == 1


def test_refine_rare_blends_only_the_rarest_rows_once(nlp_glove, tiny_mimick, glove_small, tmp_path):
    from spacy_mimick.vectors.mimick_component import blend_with_table
    from spacy_mimick.vectors.mimick_model import MimickModel

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


def test_refine_rare_leaves_rows_without_strings_and_warns(glove_small, tiny_mimick):
    nlp_glove = spacy.blank("en")  # a table whose keys were hashed without adding their strings
    nlp_glove.vocab.vectors = Vectors(strings=nlp_glove.vocab.strings, data=glove_small.matrix.copy(),
                                      keys=glove_small.words)
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


def test_predict_all_warms_every_form_and_leaves_vectors_alone(nlp_glove, tiny_mimick):
    from spacy_mimick.tagger.tagger_model import spelling_vectors

    nlp_glove.add_pipe("mimick_vectors", config={"predict_all": True}).initialize(model_path=tiny_mimick)
    doc = nlp_glove(TEXT)
    cache = nlp_glove.vocab.vectors._cache
    assert {t.text for t in doc} <= set(cache)  # in-table forms predicted too
    model = MimickModel.from_disk(tiny_mimick)
    texts = [t.text for t in doc]
    numpy.testing.assert_allclose(spelling_vectors([doc], texts, 50), model.predict(texts), atol=1e-6)
    dot = doc[-1]
    table = nlp_glove.vocab.vectors.table
    assert dot.orth in table
    numpy.testing.assert_array_equal(dot.vector, table[dot.orth])  # keeps its table vector
    with pytest.raises(ValueError, match="expected 7-d"):
        spelling_vectors([doc], texts, 7)
    plain = spacy.blank("en")
    with pytest.raises(ValueError, match="no Mimick model"):
        spelling_vectors([plain("a b")], ["a", "b"], 50)


def test_predict_all_keeps_the_lowercase_backoff_whatever_the_cache_holds(nlp_glove, tiny_mimick):
    """predict_all caches Mimick's prediction of "The"; "The" must still get the row of "the"."""
    nlp_glove.add_pipe("mimick_vectors", config={"predict_all": True})
    nlp_glove.get_pipe("mimick_vectors").initialize(model_path=tiny_mimick)
    table = nlp_glove.vocab.vectors.table
    assert nlp_glove.vocab.strings.add("The") not in table  # OOV, "the" is not
    first, second = nlp_glove("The cat ."), nlp_glove("The cat .")
    assert "The" in nlp_glove.vocab.vectors._cache
    for doc in (first, second):
        numpy.testing.assert_array_equal(doc[0].vector, table[nlp_glove.vocab.strings["the"]])


def test_vectors_class_in_a_config_needs_no_component(tiny_mimick, glove_small, tmp_path):
    """[nlp.vectors] @vectors = "spacy_mimick.MimickVectors.v1": Mimick's vectors with no
    component; saved with the vocab, so the loaded pipeline needs neither the path nor a call."""
    from thinc.api import Config

    config = Config().from_str(f"""
[nlp]
lang = "en"
pipeline = []
[nlp.vectors]
@vectors = "spacy_mimick.MimickVectors.v1"
model_path = "{tiny_mimick}"
[components]
""")
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    table = nlp.vocab.vectors.table
    for word, row in zip(glove_small.words, glove_small.matrix):
        table.resize((len(glove_small), 50)) if table.shape[0] == 0 else None
        table.add(nlp.vocab.strings.add(word), vector=row)
    doc = nlp("the zorblaxian .")
    model = MimickModel.from_disk(tiny_mimick)
    numpy.testing.assert_allclose(doc[1].vector, model.predict(["zorblaxian"])[0], atol=1e-6)
    numpy.testing.assert_array_equal(doc[0].vector, table[doc[0].orth])
    nlp.to_disk(tmp_path / "p")
    assert (tmp_path / "p" / "vocab" / "mimick").is_dir()
    moved = tmp_path / "p2"
    (tmp_path / "p").rename(moved)
    cfg = (moved / "config.cfg").read_text().replace(str(tiny_mimick), str(tmp_path / "nowhere"))
    (moved / "config.cfg").write_text(cfg)
    loaded = spacy.load(moved)
    numpy.testing.assert_array_equal(vectors_of(loaded("the zorblaxian .")), vectors_of(doc))
