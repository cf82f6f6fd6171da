"""The original MIMICK release's 23 models, converted (spacy_mimick/vectors/original_release.py)."""
import functools
import os
import pickle
import tarfile
import unicodedata

import numpy
import pytest
from typer.testing import CliRunner

from conftest import SHARED_DATA
from spacy_mimick.cli import app
from spacy_mimick.vectors.features import BOW, EOW, PAD, UNK
from spacy_mimick.vectors.mimick_model import MimickModel
from spacy_mimick.vectors.original_release import (
    OriginalReleaseError, load_original_release, max_reference_diff, parse_c2i,
    parse_dynet_text, read_reference,
)

RELEASE = SHARED_DATA / "original_mimick"
LANGS = "ar bg cs da el en es eu fa he hi hu id it kk lv ro ru sv ta tr vi zh".split()
TOLERANCE = 1e-4
runner = CliRunner()


@functools.lru_cache(maxsize=None)
def release_model(lang: str) -> MimickModel:
    """Each language is converted once per test session."""
    return load_original_release(RELEASE / f"{lang}-lstm-est.tar.gz")


@functools.lru_cache(maxsize=None)
def release_parts(lang: str):
    """(bin bytes, c2i bytes) of a released tarball."""
    with tarfile.open(RELEASE / f"{lang}-lstm-est.tar.gz") as tar:
        return tuple(tar.extractfile(f"models/{lang}-lstm-est.{ext}").read() for ext in ("bin", "c2i"))


def write_unpacked(tmp_path, lang="tr", bin_bytes=None, c2i_bytes=None):
    real_bin, real_c2i = release_parts(lang)
    bin_path = tmp_path / f"{lang}-lstm-est.bin"
    bin_path.write_bytes(real_bin if bin_bytes is None else bin_bytes)
    (tmp_path / f"{lang}-lstm-est.c2i").write_bytes(real_c2i if c2i_bytes is None else c2i_bytes)
    return bin_path


def invoke(*args, code=0):
    result = runner.invoke(app, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def flat(output: str) -> str:
    """wasabi wraps long messages: compare with whitespace collapsed."""
    return " ".join(output.split())


def test_the_release_has_23_languages():
    assert sorted(p.name.split("-")[0] for p in RELEASE.glob("*-lstm-est.tar.gz")) == LANGS
    assert sorted(p.stem for p in (RELEASE / "reference").glob("*.json")) == LANGS


@pytest.mark.parametrize("lang", LANGS)
def test_conversion_reproduces_the_original_vectors(lang, record_property):
    model = release_model(lang)
    n_words, diff = max_reference_diff(model, RELEASE / "reference" / f"{lang}.json")
    record_property("max_abs_diff", diff)
    print(f"{lang}: {n_words} words, max abs diff {diff:.2e}")
    assert n_words >= 150
    assert diff <= TOLERANCE
    assert model.arch_config["@architectures"] == "spacy_mimick.Mimick.v1"
    assert model.width == 64


def test_words_that_nfc_would_change_keep_the_original_vectors():
    """The Hindi, Hebrew and Greek references hold words that NFC changes; they match only
    because the converted vocab reads characters as they come (normalize=None)."""
    changed = 0
    for lang in ("hi", "he", "el"):
        _, words, expected = read_reference(RELEASE / "reference" / f"{lang}.json")
        idx = [i for i, w in enumerate(words) if unicodedata.normalize("NFC", w) != w]
        changed += len(idx)
        got = release_model(lang).predict([words[i] for i in idx])
        assert numpy.abs(got - expected[idx]).max() <= TOLERANCE
    assert changed >= 10
    assert release_model("hi").features["chars"].normalize is None


def test_boundary_pad_and_meta():
    model = release_model("tr")
    vocab = model.features["chars"]
    emb = model.module.embed.weight.detach().numpy()
    assert not emb[PAD].any()
    numpy.testing.assert_array_equal(emb[BOW], emb[EOW])
    assert "<*>" not in vocab.chars and len(vocab) == 479 + 4  # 480 rows, <*> became BOW/EOW
    meta = model.meta
    assert meta["lang"] == "tr" and meta["targets"] == "Polyglot 64d"
    assert meta["source"] == "tr-lstm-est.tar.gz" and len(meta["source_sha256"]) == 64
    assert "GPL-3.0" in meta["license"]


# -- characters the original never saw ----------------------------------------------------------
def test_unseen_characters_case_swap_then_accent_base_then_mean_row():
    model = release_model("en")
    vocab = model.features["chars"]
    assert "é" not in vocab.index and "e" in vocab.index and "ǘ" not in vocab.index
    # 1. other case: a capital the alphabet lacks reads as its lowercase letter
    upper_missing = [c for c in vocab.chars if c.islower() and len(c.upper()) == 1 and c.upper() not in vocab.index]
    if upper_missing:
        c = upper_missing[0]
        assert vocab.encode(c.upper(), 64) == vocab.encode(c, 64)
    # 2. accents stripped: "café" reads as "cafe", "ǘ" as "u"
    numpy.testing.assert_array_equal(model.predict(["café"]), model.predict(["cafe"]))
    assert vocab.encode("ǘ", 64)[1] == vocab.index["u"]
    # 3. otherwise the UNK row, the mean of the character rows (all but <*>)
    assert vocab.encode("a☃", 64) == [BOW, vocab.index["a"], UNK, EOW]
    emb = model.module.embed.weight.detach().numpy()
    numpy.testing.assert_allclose(emb[UNK], emb[4:].mean(axis=0), atol=1e-6)
    assert numpy.isfinite(model.predict(["a☃"])).all()


def test_unseen_rules_can_be_turned_off_and_survive_saving(tmp_path):
    plain = load_original_release(RELEASE / "en-lstm-est.tar.gz", unseen=())
    assert plain.features["chars"].encode("é", 64) == [BOW, UNK, EOW]
    release_model("en").to_disk(tmp_path / "en")
    loaded = MimickModel.from_disk(tmp_path / "en")
    assert loaded.features["chars"].unseen == ("swapcase", "nfkd_base")
    assert loaded.features["chars"].normalize is None
    words = ["café", "Zürich", "a☃", "hello"]
    numpy.testing.assert_array_equal(loaded.predict(words), release_model("en").predict(words))


# -- the pickle is data, never code ---------------------------------------------------------------
class _Exploit:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
def test_a_pickle_that_would_run_code_is_refused(tmp_path, protocol):
    marker = tmp_path / "pwned"
    data = pickle.dumps({"a": 0, "<*>": 1, "b": _Exploit(marker)}, protocol=protocol)
    with pytest.raises(OriginalReleaseError, match="refused"):
        parse_c2i(data, "evil.c2i")
    assert not marker.exists()
    # Through the whole loader too.
    bin_path = write_unpacked(tmp_path, c2i_bytes=data)
    with pytest.raises(OriginalReleaseError, match="posix.system|os.system|nt.system"):
        load_original_release(bin_path)
    assert not marker.exists()


@pytest.mark.parametrize("obj, message", [
    (["a", "b"], "expected a dict"),
    ({"ab": 0, "<*>": 1}, "one-character string"),
    ({b"a": 0, "<*>": 1}, "one-character string"),
    ({"a": True, "<*>": 1}, "non-negative int"),
    ({"a": -1, "<*>": 1}, "non-negative int"),
    ({"a": 1.0, "<*>": 1}, "non-negative int"),
    ({"a": 0, "b": 1}, "boundary symbol"),
    ({"a": 0, "b": 0, "<*>": 1}, "share a row"),
    ({"<*>": 0}, "no character besides"),
])
def test_a_character_table_that_is_not_char_to_row_is_refused(obj, message):
    # Protocol 3: bytes need no global there (protocol 0 pickles them through _codecs.encode).
    with pytest.raises(OriginalReleaseError, match=message):
        parse_c2i(pickle.dumps(obj, protocol=3), "x.c2i")


def test_truncated_pickle_is_a_clear_error():
    data = pickle.dumps({"a": 0, "<*>": 1}, protocol=0)
    with pytest.raises(OriginalReleaseError, match="x.c2i: not a readable pickle"):
        parse_c2i(data[:-3], "x.c2i")


def test_the_released_c2i_is_python2_protocol0_and_parses():
    c2i = parse_c2i(release_parts("tr")[1], "tr.c2i")
    assert release_parts("tr")[1].startswith(b"(dp")
    assert len(c2i) == 480 and c2i["<*>"] in range(480) and sorted(c2i.values()) == list(range(480))


# -- broken files ---------------------------------------------------------------------------------
def _edit_bin(edit):
    lines = release_parts("tr")[0].decode("ascii").split("\n")
    edit(lines)
    return "\n".join(lines).encode("ascii")


def _drop_last_value(lines):
    lines[3] = lines[3].rsplit(" ", 2)[0]


def _drop_parameter(lines):
    del lines[14:16]  # /Hb


def _wrong_dims(lines):
    lines[16] = lines[16].replace("/O {64,64}", "/O {32,128}")


def _nan(lines):
    lines[1] = "nan " + lines[1].split(" ", 1)[1]


def _not_a_number(lines):
    lines[1] = "+1.0e-01x " + lines[1].split(" ", 1)[1]


def _bad_header(lines):
    lines[0] = "#Parameter /vanilla-lstm-builder/_0 200,20"


@pytest.mark.parametrize("edit, message", [
    (_drop_last_value, r":4: /vanilla-lstm-builder/_1 \{200,50\}: expected 10000 values, got 9999"),
    (_drop_parameter, "missing parameter /Hb"),
    (_wrong_dims, r"/O has dims \{32,128\}, expected \{32,64\}"),
    (_nan, r":2: /vanilla-lstm-builder/_0: value 0 is nan"),
    (_not_a_number, r":2: /vanilla-lstm-builder/_0: not a number"),
    (_bad_header, ":1: expected a header"),
])
def test_corrupt_parameter_files_are_clear_errors(tmp_path, edit, message):
    bin_path = write_unpacked(tmp_path, bin_bytes=_edit_bin(edit))
    with pytest.raises(OriginalReleaseError, match=message) as err:
        load_original_release(bin_path)
    assert str(bin_path) in str(err.value)


def test_truncated_parameter_file(tmp_path):
    data = release_parts("tr")[0]
    bin_path = write_unpacked(tmp_path, bin_bytes=data[: len(data) // 2])
    with pytest.raises(OriginalReleaseError, match="expected .* values, got|missing parameter"):
        load_original_release(bin_path)


def test_truncated_tarball_and_missing_c2i(tmp_path):
    data = (RELEASE / "tr-lstm-est.tar.gz").read_bytes()
    broken = tmp_path / "tr-lstm-est.tar.gz"
    broken.write_bytes(data[: len(data) // 2])
    with pytest.raises(OriginalReleaseError, match="tr-lstm-est.tar.gz"):
        load_original_release(broken)
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "tr-lstm-est.bin").write_bytes(release_parts("tr")[0])
    with pytest.raises(OriginalReleaseError, match=r"tr-lstm-est.c2i: missing the character table"):
        load_original_release(alone / "tr-lstm-est.bin")


def test_c2i_of_another_model_is_refused(tmp_path):
    bin_path = write_unpacked(tmp_path, c2i_bytes=release_parts("en")[1])
    with pytest.raises(OriginalReleaseError, match="maps 119 characters .* but /ce has 480 rows"):
        load_original_release(bin_path)


def test_parse_dynet_text_is_column_major():
    params = parse_dynet_text(
        "#Parameter# /W {2,3} 97 ZERO_GRAD\n1 2 3 4 5 6\n#Parameter# /b {2} 33 ZERO_GRAD\n7 8\n", "x.bin")
    numpy.testing.assert_array_equal(params["/W"], [[1, 3, 5], [2, 4, 6]])
    numpy.testing.assert_array_equal(params["/b"], [7, 8])


# -- the command line -----------------------------------------------------------------------------
def test_import_original_then_predict(tmp_path):
    out = tmp_path / "tr"
    ref = RELEASE / "reference" / "tr.json"
    output = invoke("import-original", RELEASE / "tr-lstm-est.tar.gz", out, "--check-reference", ref)
    assert "300 words, max abs diff" in flat(output)
    _, words, expected = read_reference(ref)
    words_file = tmp_path / "words.txt"
    words_file.write_text("\n".join(words[:20]) + "\n", encoding="utf8")
    printed = invoke("predict", out, "--words-file", words_file)
    rows = [line.split(" ") for line in printed.splitlines() if line]
    assert [r[0] for r in rows] == words[:20]
    got = numpy.array([[float(x) for x in r[1:]] for r in rows])
    assert numpy.abs(got - expected[:20]).max() <= 1e-5  # 6 printed decimals
    assert MimickModel.from_disk(out).meta["lang"] == "tr"


def test_import_original_from_unpacked_files_and_folder(tmp_path):
    unpacked = tmp_path / "unpacked"
    unpacked.mkdir()
    bin_path = write_unpacked(unpacked)
    reference = release_model("tr").predict(["kitaplar", "İstanbul"])
    for source in (bin_path, bin_path.with_suffix(".c2i"), bin_path.parent):
        out = tmp_path / f"out-{source.name}"
        invoke("import-original", source, out)
        model = MimickModel.from_disk(out)
        numpy.testing.assert_array_equal(model.predict(["kitaplar", "İstanbul"]), reference)
        assert model.meta["source"] == "tr-lstm-est.bin" and "c2i_sha256" in model.meta


def test_import_original_refuses_a_foreign_folder_and_replaces_a_model(tmp_path):
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    output = invoke("import-original", RELEASE / "tr-lstm-est.tar.gz", foreign, code=1)
    assert "refusing to overwrite" in flat(output)
    assert (foreign / "notes.txt").read_text() == "keep me"
    out = tmp_path / "model"
    invoke("import-original", RELEASE / "tr-lstm-est.tar.gz", out)
    invoke("import-original", RELEASE / "kk-lstm-est.tar.gz", out)
    assert MimickModel.from_disk(out).meta["lang"] == "kk"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["foreign", "model"]  # no temp folders left


def test_import_original_check_reference_failure_and_broken_input(tmp_path):
    wrong = RELEASE / "reference" / "kk.json"  # another language's vectors
    output = invoke("import-original", RELEASE / "tr-lstm-est.tar.gz", tmp_path / "x",
                    "--check-reference", wrong, code=1)
    assert "max abs diff 0.527 > 0.0001" in flat(output) and not (tmp_path / "x").exists()
    bad = tmp_path / "junk.tar.gz"
    bad.write_bytes(b"not a tarball")
    output = invoke("import-original", bad, tmp_path / "y", code=1)
    assert "junk.tar.gz" in output and not (tmp_path / "y").exists()


def test_trained_models_char_vocab_is_unchanged():
    """The new CharVocab options default to what trained models always did (NFC, UNK)."""
    from spacy_mimick.vectors.features import CharVocab

    vocab = CharVocab.from_json({"chars": ["e", "é"]})
    assert vocab.to_json() == {"chars": ["e", "é"]}
    decomposed = "e\u0301"
    assert vocab.encode(decomposed, 64) == [BOW, vocab.index["é"], EOW]
    assert vocab.encode("É", 64) == [BOW, UNK, EOW]
    with pytest.raises(ValueError, match="unknown unseen-character rules"):
        CharVocab(["a"], unseen=["guess"])


# -- Mimick-only mode ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tr_model_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("release") / "tr"
    release_model("tr").to_disk(path)
    return path


def _mimick_only_nlp(model_dir, nlp=None):
    import spacy

    nlp = nlp if nlp is not None else spacy.blank("tr")
    nlp.add_pipe("mimick_vectors", config={"mimick_only": True}).initialize(model_path=model_dir)
    return nlp


TR_TEXT = "Kitaplarımızdan birini  okudum ."  # the double space makes a whitespace token


def test_mimick_only_in_a_blank_pipeline_without_vectors(tr_model_dir):
    from spacy_mimick.vectors.mimick_vectors import MIMICK, NONE, vectors_and_sources

    nlp = _mimick_only_nlp(tr_model_dir)
    assert nlp.vocab.vectors.table.shape[0] == 0
    doc = nlp(TR_TEXT)
    words = [t.text for t in doc if not t.is_space]
    assert len(words) == len(doc) - 1  # one whitespace token
    expected = release_model("tr").predict(words)
    got = numpy.array([t.vector for t in doc if not t.is_space])
    numpy.testing.assert_allclose(got, expected, atol=1e-6)
    space = [t for t in doc if t.is_space][0]
    assert not space.has_vector and not space.vector.any() and space.vector.shape == (64,)
    assert all(t.has_vector for t in doc if not t.is_space)
    a, b = doc[0], doc[1]
    cos = float(expected[0] @ expected[1] / numpy.linalg.norm(expected[0]) / numpy.linalg.norm(expected[1]))
    assert a.similarity(b) == pytest.approx(cos, abs=1e-5)
    assert doc[0:2].similarity(doc) == pytest.approx(
        float(doc[0:2].vector @ doc.vector / numpy.linalg.norm(doc[0:2].vector) / numpy.linalg.norm(doc.vector)), abs=1e-5)
    numpy.testing.assert_allclose(doc[0:2].vector, expected[:2].mean(axis=0), atol=1e-6)
    numpy.testing.assert_allclose(doc.vector, numpy.array([t.vector for t in doc]).mean(axis=0), atol=1e-6)
    assert nlp.vocab.vectors.mimick_only and not doc.user_data
    vectors, sources = vectors_and_sources(nlp.vocab, [doc])
    assert vectors.shape == (len(doc), 64)
    numpy.testing.assert_allclose(vectors[sources == MIMICK], expected, atol=1e-6)
    assert sources.tolist() == [NONE if t.is_space else MIMICK for t in doc]


def test_mimick_only_ignores_a_table_of_another_width(tr_model_dir, nlp_glove):
    """GloVe 50d in the vocab, the Polyglot-64d release model: the default mode refuses the
    pair, Mimick-only gives every token (in-vocabulary ones too) Mimick's 64-d vector."""
    from spacy_mimick.vectors.mimick_vectors import vectors_and_sources

    with pytest.raises(ValueError, match="64-dimensional vectors but the pipeline's vectors are 50-dimensional"):
        nlp_glove.add_pipe("mimick_vectors", name="default_mode").initialize(model_path=tr_model_dir)
    nlp_glove.remove_pipe("default_mode")
    nlp = _mimick_only_nlp(tr_model_dir, nlp_glove)
    doc = nlp("the cat zorblaxed")
    assert doc[0].orth in nlp.vocab.vectors.table  # "the" has a GloVe row, which is not used
    expected = release_model("tr").predict(["the", "cat", "zorblaxed"])
    numpy.testing.assert_allclose(numpy.array([t.vector for t in doc]), expected, atol=1e-6)
    numpy.testing.assert_allclose(vectors_and_sources(nlp.vocab, [doc])[0], expected, atol=1e-6)
    assert doc.vector.shape == (64,)


def test_mimick_only_refuses_writing_into_the_table():
    import spacy

    nlp = spacy.blank("tr")
    for setting in ({"add_to_vectors": True}, {"refine_rare": 0.5}):
        with pytest.raises(ValueError, match="mimick_only ignores the vectors table"):
            nlp.add_pipe("mimick_vectors", config={"mimick_only": True, **setting})


def test_mimick_only_default_is_off(tr_model_dir):
    import spacy

    nlp = spacy.blank("tr")
    assert nlp.add_pipe("mimick_vectors").cfg["mimick_only"] is False


def test_mimick_only_survives_to_disk_and_docbin(tr_model_dir, tmp_path):
    import spacy
    from spacy.tokens import DocBin

    nlp = _mimick_only_nlp(tr_model_dir)
    nlp.to_disk(tmp_path / "nlp")
    loaded = spacy.load(tmp_path / "nlp")
    assert loaded.get_pipe("mimick_vectors").cfg["mimick_only"] is True
    doc = loaded(TR_TEXT)
    expected = numpy.array([t.vector for t in nlp(TR_TEXT)])
    numpy.testing.assert_array_equal(numpy.array([t.vector for t in doc]), expected)
    data = DocBin(docs=[doc]).to_bytes()
    restored = list(DocBin().from_bytes(data).get_docs(loaded.vocab))[0]
    numpy.testing.assert_array_equal(numpy.array([t.vector for t in restored]), expected)
    assert [t.has_vector for t in restored] == [not t.is_space for t in restored]


# -- the tagger in a language without a vectors table ---------------------------------------------
TR_UD = SHARED_DATA / "ud" / "UD_Turkish-IMST"


@pytest.fixture(scope="module")
def empty_vectors_dir(tmp_path_factory):
    import spacy

    path = tmp_path_factory.mktemp("empty") / "nlp"
    spacy.blank("tr").to_disk(path)
    return path


@pytest.mark.parametrize("variant, recipe, vectors", [
    ("nochar", "paper", None), ("chartag", "paper", None), ("mimick", "paper", None), ("both", "paper", None),
    ("mimick", "default", None), ("mimick", "paper", "empty"),
])
def test_tagger_variants_train_without_a_vectors_table(tr_model_dir, empty_vectors_dir, tmp_path, variant, recipe,
                                                       vectors):
    import spacy
    from spacy.cli.train import train
    from spacy_mimick.tagger.recipes import config_text

    config = tmp_path / "config.cfg"
    config.write_text(config_text(variant, recipe), encoding="utf8")
    train(
        config,
        tmp_path / "out",
        overrides={
            "nlp.lang": "tr",
            "paths.train": str(TR_UD / "tr_imst-ud-train.conllu"),
            "paths.dev": str(TR_UD / "tr_imst-ud-dev.conllu"),
            "paths.vectors": str(empty_vectors_dir) if vectors else None,
            "paths.mimick_model": str(tr_model_dir),
            "corpora.train.limit": 20,
            "corpora.dev.limit": 5,
            "training.max_steps": 3,
            "training.eval_frequency": 3,
        },
    )
    nlp = spacy.load(tmp_path / "out" / "model-last")
    assert nlp.vocab.vectors.shape[0] == 0
    tagger = nlp.get_pipe("mimick_tagger")
    featurizer = tagger.model.get_ref("featurizer")
    uses_mimick = "mimick_vectors" in nlp.pipe_names
    assert nlp.pipe_names == (["mimick_vectors", "mimick_tagger"] if uses_mimick else ["mimick_tagger"])
    doc = nlp("Kitaplarımızdan birini okudum .")
    assert all(t.pos_ for t in doc)
    inputs = featurizer.predict([doc])
    if uses_mimick:
        # Mimick's vectors are the static vectors: 64-d, exactly the model's predictions.
        assert featurizer.get_dim("nV") == 64 and tagger.cfg["shapes"]["nV"] == 64
        expected = release_model("tr").predict([t.text for t in doc])
        numpy.testing.assert_allclose(inputs.vectors, expected, atol=1e-6)
        assert not featurizer.get_param("unk").any()
    else:
        # No-Char and char->tag without a table keep the trainable word table.
        assert featurizer.get_dim("nV") == 0 and inputs.vectors.shape == (len(doc), 0)


def test_tagger_uses_mimick_only_vectors_beside_a_table_of_another_width(tr_model_dir, nlp_glove):
    from spacy.tokens import Doc
    from spacy.training import Example
    from spacy_mimick.ud.corpus import read_conllu

    nlp = _mimick_only_nlp(tr_model_dir, nlp_glove)
    nlp.add_pipe("mimick_tagger", config={"model": {"@architectures": "spacy_mimick.MimickTagger.v1"}})
    examples = [
        Example(Doc(nlp.vocab, words=[t.text for t in ref]), ref)
        for ref in read_conllu(TR_UD / "tr_imst-ud-train.conllu", nlp.vocab, limit=10)
    ]
    nlp.initialize(lambda: examples)
    featurizer = nlp.get_pipe("mimick_tagger").model.get_ref("featurizer")
    assert nlp.vocab.vectors.table.shape[1] == 50 and featurizer.get_dim("nV") == 64
    doc = nlp("the cat okudum")
    numpy.testing.assert_allclose(
        featurizer.predict([doc]).vectors, release_model("tr").predict(["the", "cat", "okudum"]), atol=1e-6)
