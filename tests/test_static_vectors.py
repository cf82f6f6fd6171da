"""MimickStaticVectors: Mimick vectors for OOV tokens inside spaCy's own tok2vec (spacy train,
inference, spacy.load, nlp.pipe(n_process=2)), and the config example."""
import warnings
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.ml.staticvectors import StaticVectors
from spacy.training.initialize import init_nlp
from spacy.training.loop import train
from spacy.util import load_config

import spacy_mimick.static_vectors  # noqa: F401  (registers the layer when run from a checkout)
from spacy_mimick.mimick_model import MimickModel
from spacy_mimick.pipeline_links import MimickLayerWarning
from spacy_mimick.static_vectors import (
    MimickStaticVectors, input_vectors, is_mimick_static_vectors, replace_static_vectors,
)
from spacy_mimick.token_vectors import OOV_VECTORS_KEY

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "configs" / "spacy_tagger_morphologizer_mimick.cfg"
ORIGINAL = REPO / "configs" / "spacy_tagger_morphologizer.cfg"
EWT_SLICE = REPO / "assets" / "UD_English-EWT" / "en_ewt-ud-train.conllu"
TEXT = "The flatfish was hurtling past a lawnmower , said McNeally ."
TINY = {
    "components.tok2vec.model.encode.width": 32,
    "components.tok2vec.model.encode.depth": 1,
    "components.tok2vec.model.embed.rows": [500, 100, 100, 100],
    "training.max_steps": 4,
    "training.eval_frequency": 2,
    "training.max_epochs": 0,
    "training.batcher.size.start": 300,
}


def first_sentences(path: Path, n: int, out: Path) -> Path:
    blocks = path.read_text(encoding="utf8").split("\n\n")
    out.write_text("\n\n".join(blocks[:n]) + "\n\n", encoding="utf8")
    return out


@pytest.fixture(scope="module")
def trained(glove_small, tiny_mimick, tmp_path_factory):
    """spaCy's tagger+morphologizer with MimickStaticVectors, trained 4 steps on 40 sentences
    of the embedded EWT slice, with a 3,000-row GloVe table; saved to disk."""
    from spacy.vectors import Vectors

    tmp = tmp_path_factory.mktemp("spacy_layer")
    vectors_nlp = spacy.blank("en")
    vectors_nlp.vocab.vectors = Vectors(
        strings=vectors_nlp.vocab.strings, data=glove_small.matrix.copy(), keys=glove_small.words)
    vectors_nlp.to_disk(tmp / "vectors")
    train_path = first_sentences(EWT_SLICE, 40, tmp / "train.conllu")
    overrides = {
        "paths.train": str(train_path), "paths.dev": str(train_path),
        "paths.vectors": str(tmp / "vectors"), "paths.mimick_model": str(tiny_mimick), **TINY,
    }
    config = load_config(CONFIG, overrides=overrides, interpolate=False)
    nlp = init_nlp(config)
    (tmp / "output").mkdir()
    nlp, _ = train(nlp, tmp / "output", stdout=open("/dev/null", "w"))
    nlp.to_disk(tmp / "pipeline")
    return nlp, tmp / "pipeline"


def embed_layer(nlp):
    (layer,) = [n for n in nlp.get_pipe("tok2vec").model.walk() if is_mimick_static_vectors(n)]
    return layer


def test_oov_inputs_are_mimicks_predictions_and_spacys_layer_gives_zeros(trained, tiny_mimick):
    nlp, _ = trained
    layer = embed_layer(nlp)
    doc = nlp(TEXT)
    vocab_vectors = nlp.vocab.vectors
    oov = [i for i, t in enumerate(doc) if t.orth not in vocab_vectors]
    known = [i for i, t in enumerate(doc) if t.orth in vocab_vectors]
    assert {doc[i].text for i in oov} >= {"flatfish", "hurtling", "lawnmower", "McNeally"}
    mimick = MimickModel.from_disk(tiny_mimick)
    V, unserved = input_vectors([doc], layer.get_dim("nM"))
    assert unserved == 0
    for i in oov:
        token = doc[i]
        expected = (vocab_vectors[token.lower] if token.lower in vocab_vectors
                    else mimick.predict([token.text])[0])
        numpy.testing.assert_allclose(V[i], expected, atol=1e-6)
        numpy.testing.assert_array_equal(V[i], token.vector)  # what mimick_vectors gives
        assert numpy.abs(V[i]).sum() > 0
    for i in known:
        numpy.testing.assert_array_equal(V[i], vocab_vectors[doc[i].orth])
    # The layer's output is W times those inputs; spaCy's StaticVectors with the same W gives
    # zeros to exactly the OOV tokens, and the same output for the others.
    W = layer.get_param("W")
    ours = layer.predict([doc]).data
    numpy.testing.assert_allclose(ours, V @ W.T, rtol=1e-5, atol=1e-6)
    theirs = StaticVectors(layer.get_dim("nO"), layer.get_dim("nM"))
    theirs.initialize(X=[doc])
    theirs.set_param("W", W.copy())
    spacy_out = theirs.predict([doc]).data
    assert not spacy_out[oov].any()
    assert numpy.abs(ours[oov]).sum(axis=1).min() > 0
    numpy.testing.assert_allclose(spacy_out[known], ours[known], rtol=1e-5, atol=1e-6)


def test_docs_that_skipped_the_component_get_the_same_inputs(trained):
    nlp, _ = trained
    layer = embed_layer(nlp)
    annotated = nlp(TEXT)
    bare = nlp.make_doc(TEXT)  # never passed through mimick_vectors
    with warnings.catch_warnings():
        warnings.simplefilter("error", MimickLayerWarning)
        numpy.testing.assert_array_equal(layer.predict([bare]).data, layer.predict([annotated]).data)
    assert OOV_VECTORS_KEY not in bare.user_data  # the layer does not write on the docs


def test_without_a_component_oov_tokens_get_zeros_and_a_warning(nlp_glove):
    layer = MimickStaticVectors(8, 50)
    doc = nlp_glove.make_doc(TEXT)
    layer.initialize(X=[doc])
    with pytest.warns(MimickLayerWarning, match="no mimick_vectors component"):
        out = layer.predict([doc]).data
    oov = [i for i, t in enumerate(doc) if t.orth not in nlp_glove.vocab.vectors]
    assert oov and not out[oov].any()


def test_saved_pipeline_and_two_processes_give_the_same_predictions(trained):
    nlp, path = trained
    texts = [TEXT, "Flibbertigibbets zoomed across Kalamazoo yesterday .", "I like it ."] * 4
    expected = [([t.tag_ for t in d], [str(t.morph) for t in d]) for d in nlp.pipe(texts)]
    loaded = spacy.load(path)
    assert loaded.pipe_names == ["mimick_vectors", "tok2vec", "tagger", "morphologizer"]
    assert [([t.tag_ for t in d], [str(t.morph) for t in d]) for d in loaded.pipe(texts)] == expected
    two = [([t.tag_ for t in d], [str(t.morph) for t in d]) for d in loaded.pipe(texts, n_process=2, batch_size=3)]
    assert two == expected
    tensors = [d.tensor for d in nlp.pipe(texts[:2])]
    for a, b in zip(tensors, (d.tensor for d in loaded.pipe(texts[:2], n_process=2, batch_size=1))):
        numpy.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_replacing_spacys_layer_keeps_in_vocabulary_outputs(nlp_glove):
    model = StaticVectors(16, 50)
    docs = [nlp_glove.make_doc(TEXT)]
    model.initialize(X=docs)
    from thinc.api import chain, noop

    outer = chain(model, noop())
    assert replace_static_vectors(outer) == 1
    (new,) = [n for n in outer.walk() if is_mimick_static_vectors(n)]
    numpy.testing.assert_array_equal(new.get_param("W"), model.get_param("W"))
    known = [i for i, t in enumerate(docs[0]) if t.orth in nlp_glove.vocab.vectors]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MimickLayerWarning)
        numpy.testing.assert_array_equal(new.predict(docs).data[known], model.predict(docs).data[known])


PARSER_CONFIG = REPO / "configs" / "spacy_tagger_morphologizer_parser_mimick.cfg"
PARSER_ORIGINAL = REPO / "configs" / "spacy_tagger_morphologizer_parser.cfg"


@pytest.mark.parametrize("mimick_config,original_config", [
    (CONFIG, ORIGINAL), (PARSER_CONFIG, PARSER_ORIGINAL),
    (REPO / "configs" / "spacy_morphologizer_parser_mimick.cfg", REPO / "configs" / "spacy_morphologizer_parser.cfg"),
], ids=["tagger_morphologizer", "tagger_morphologizer_parser", "morphologizer_parser"])
def test_config_example_differs_from_the_original_only_by_mimick(mimick_config, original_config):
    ours = load_config(mimick_config, interpolate=False)
    original = load_config(original_config, interpolate=False)
    assert ours["nlp"]["pipeline"] == ["mimick_vectors"] + original["nlp"]["pipeline"]
    assert ours["training"]["annotating_components"] == ["mimick_vectors"]
    assert ours["components"]["mimick_vectors"]["factory"] == "mimick_vectors"
    assert ours["initialize"]["components"]["mimick_vectors"] == {"model_path": "${paths.mimick_model}"}
    assert ours["paths"]["mimick_model"] is None
    embed = ours["components"]["tok2vec"]["model"]["embed"]
    assert embed["@architectures"] == "spacy_mimick.MultiHashEmbed.v1"
    # Undo exactly those changes: the rest is the original.
    ours["nlp"]["pipeline"] = ours["nlp"]["pipeline"][1:]
    ours["training"]["annotating_components"] = []
    del ours["components"]["mimick_vectors"]
    del ours["initialize"]["components"]["mimick_vectors"]
    del ours["paths"]["mimick_model"]
    embed["@architectures"] = "spacy.MultiHashEmbed.v2"
    assert ours == original


def test_worker_processes_warn_that_token_vector_loses_its_hooks(tiny_mimick, tmp_path):
    """nlp.pipe(n_process=2): the docs come back without hooks (spaCy W109). The component says
    so, once per worker, naming the fix; the stored vectors are intact."""
    import subprocess
    import sys

    script = tmp_path / "run.py"
    script.write_text(f"""
import warnings, numpy, spacy
from spacy.vectors import Vectors
from spacy_mimick.mimick_component import restore_vector_hooks
from spacy_mimick.vectors_io import read_vectors
table = read_vectors({str(Path(__file__).resolve().parents[1] / 'assets' / 'glove.6B.50d.top20k.txt.gz')!r}, limit=2000)
nlp = spacy.blank("en")
nlp.vocab.vectors = Vectors(strings=nlp.vocab.strings, data=table.matrix, keys=table.words)
nlp.add_pipe("mimick_vectors").initialize(model_path={str(tiny_mimick)!r})
texts = ["the flatfish hurtled"] * 6
docs = list(nlp.pipe(texts, n_process=2, batch_size=2))
fish = docs[0][1]
print("ZERO_BEFORE", not fish.vector.any(), "STORED", fish._.mimick_vector is not None)
restore_vector_hooks(docs[0])
print("RESTORED", bool(docs[0][1].vector.any()))
""")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(Path(__file__).resolve().parents[1]), "PATH": "/usr/bin:/bin",
                               "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr
    assert "ZERO_BEFORE True STORED True" in done.stdout and "RESTORED True" in done.stdout
    assert done.stderr.count("MimickHooksWarning") == 2  # once in each worker
    assert "restore_vector_hooks(doc)" in done.stderr


def test_no_worker_warning_in_the_main_process(nlp_glove, tiny_mimick):
    nlp_glove.add_pipe("mimick_vectors").initialize(model_path=tiny_mimick)
    from spacy_mimick.pipeline_links import MimickHooksWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", MimickHooksWarning)
        assert nlp_glove("the flatfish hurtled")[1].vector.any()
