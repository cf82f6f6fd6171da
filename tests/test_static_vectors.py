"""spaCy's own StaticVectors reads Mimick's vectors through the vocab (MimickVectors): a stock
tagger + morphologizer + parser config with static vectors, trained a few steps (spacy train's
own functions), inference, spacy.load, and the names of older saved configs."""
import warnings
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.ml.staticvectors import StaticVectors, forward as static_vectors_forward
from spacy.training.initialize import init_nlp
from spacy.training.loop import train
from spacy.util import load_config, registry

from spacy_mimick.vectors.mimick_model import MimickModel
from spacy_mimick.vectors.mimick_vectors import MimickVectors

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "configs" / "spacy_tagger_morphologizer_parser_mimick.cfg"
ORIGINAL = REPO / "configs" / "spacy_tagger_morphologizer_parser.cfg"
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
    """spaCy's tagger+morphologizer+parser (stock layers) with mimick_vectors first, trained 4
    steps on 40 sentences of the embedded EWT slice, with a 3,000-row GloVe table; saved."""
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


def static_layer(nlp):
    (layer,) = [n for n in nlp.get_pipe("tok2vec").model.walk() if n._func is static_vectors_forward]
    return layer


def test_static_vectors_inputs_of_oov_tokens_are_mimicks_predictions(trained, tiny_mimick):
    nlp, _ = trained
    assert isinstance(nlp.vocab.vectors, MimickVectors)
    layer = static_layer(nlp)  # spaCy's own layer: no custom architecture in the config
    doc = nlp(TEXT)
    table = nlp.vocab.vectors.table
    oov = [i for i, t in enumerate(doc) if t.orth not in table and t.lower not in table]
    assert {doc[i].text for i in oov} >= {"flatfish", "hurtling", "lawnmower", "McNeally"}
    V = nlp.vocab.vectors.get_batch(doc.to_array("ORTH"))  # what StaticVectors reads
    mimick = MimickModel.from_disk(tiny_mimick)
    for i, token in enumerate(doc):
        numpy.testing.assert_array_equal(V[i], token.vector)
        if i in oov:
            numpy.testing.assert_allclose(V[i], mimick.predict([token.text])[0], atol=1e-6)
            assert numpy.abs(V[i]).sum() > 0
        elif token.orth in table:
            numpy.testing.assert_array_equal(V[i], table[token.orth])
    # The layer's output is W times those rows; over the plain table, spaCy gives OOV rows zeros.
    W = layer.get_param("W")
    ours = layer.predict([doc]).data
    numpy.testing.assert_allclose(ours, V @ W.T, rtol=1e-5, atol=1e-5)
    assert numpy.abs(ours[oov]).sum(axis=1).min() > 0
    plain = spacy.blank("en")
    plain.vocab.vectors = table
    plain_doc = plain.make_doc(TEXT)
    theirs = StaticVectors(layer.get_dim("nO"), layer.get_dim("nM"))
    theirs.initialize(X=[plain_doc])
    theirs.set_param("W", W.copy())
    assert not theirs.predict([plain_doc]).data[oov].any()


def test_docs_that_skipped_the_component_get_the_same_inputs(trained):
    nlp, _ = trained
    layer = static_layer(nlp)
    bare = nlp.make_doc(TEXT)  # never passed through mimick_vectors
    numpy.testing.assert_array_equal(layer.predict([bare]).data, layer.predict([nlp(TEXT)]).data)
    assert not bare.user_data and not bare.user_token_hooks


def test_saved_pipeline_predicts_the_same(trained):
    nlp, path = trained
    loaded = spacy.load(path)
    a, b = nlp(TEXT), loaded(TEXT)
    assert [t.pos_ for t in a] == [t.pos_ for t in b] and [t.dep_ for t in a] == [t.dep_ for t in b]
    numpy.testing.assert_array_equal(static_layer(loaded).predict([b]).data, static_layer(nlp).predict([a]).data)


@pytest.mark.parametrize("mimick_config,original_config", [
    (REPO / "configs" / "spacy_tagger_morphologizer_mimick.cfg", REPO / "configs" / "spacy_tagger_morphologizer.cfg"),
    (CONFIG, ORIGINAL),
    (REPO / "configs" / "spacy_morphologizer_parser_mimick.cfg", REPO / "configs" / "spacy_morphologizer_parser.cfg"),
], ids=["tagger_morphologizer", "tagger_morphologizer_parser", "morphologizer_parser"])
def test_config_example_differs_from_the_original_only_by_the_component(mimick_config, original_config):
    ours = load_config(mimick_config, interpolate=False)
    original = load_config(original_config, interpolate=False)
    assert ours["nlp"]["pipeline"] == ["mimick_vectors"] + original["nlp"]["pipeline"]
    assert ours["components"]["mimick_vectors"]["factory"] == "mimick_vectors"
    assert ours["initialize"]["components"]["mimick_vectors"] == {"model_path": "${paths.mimick_model}"}
    assert ours["paths"]["mimick_model"] is None
    ours["nlp"]["pipeline"] = ours["nlp"]["pipeline"][1:]
    del ours["components"]["mimick_vectors"]
    del ours["initialize"]["components"]["mimick_vectors"]
    del ours["paths"]["mimick_model"]
    assert ours == original


def test_names_of_older_saved_configs_build_spacys_layers_and_say_so():
    import spacy_mimick.tagger.legacy_layers as legacy

    legacy._warned = False
    build = registry.architectures.get("spacy_mimick.MultiHashEmbed.v1")
    with pytest.warns(UserWarning, match="spacy.MultiHashEmbed.v2"):
        model = build(width=8, attrs=["NORM"], rows=[100], include_static_vectors=True)
    ours = [n.name for n in model.walk()]
    theirs = [n.name for n in registry.architectures.get("spacy.MultiHashEmbed.v2")(
        width=8, attrs=["NORM"], rows=[100], include_static_vectors=True).walk()]
    assert ours == theirs and "static_vectors" in ours
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process
        registry.architectures.get("spacy_mimick.MimickStaticVectors.v1")(8, 50)
