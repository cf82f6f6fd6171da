"""The spelling backoff: table words one edit from a word the table lacks (spacy_mimick.vectors.spelling),
in MimickVectors, the mimick_vectors component and the neighbors / predict commands."""
import pickle

import numpy
import pytest
import spacy
from typer.testing import CliRunner

from conftest import GLOVE
from spacy_mimick.cli import app
from spacy_mimick.vectors.mimick_model import MimickModel
from spacy_mimick.vectors.mimick_vectors import MIMICK, MimickVectors
from spacy_mimick.vectors.similarity import typo_pairs
from spacy_mimick.vectors.spelling import (
    DEFAULT_TYPO_MARGIN, CharLM, SpellingIndex, blend, for_word_vectors, one_edit,
)
from spacy_mimick.vectors.vectors_io import read_vectors


@pytest.mark.parametrize("a,b,expected", [
    ("crossing", "corssing", True),   # transposition
    ("government", "goverment", True),  # deletion
    ("goverment", "government", True),  # insertion
    ("value", "vlaue", True), ("value", "valye", True),  # transposition, substitution
    ("cat", "act", True), ("cats", "cat", True), ("cat", "scat", True),
    ("cat", "cat", False), ("abcd", "badc", False), ("abc", "ca", False), ("value", "vale_x", False),
    ("crossing", "crosing", True), ("crossing", "crosisng", True), ("crossing", "xrossinh", False),
])
def test_one_edit(a, b, expected):
    assert one_edit(a, b) is expected and one_edit(b, a) is expected


def test_index_finds_exactly_the_words_one_edit_away(glove_small):
    index = SpellingIndex((w, i) for i, w in enumerate(glove_small.words))
    pairs = typo_pairs(glove_small, 60, seed=7)
    queries = [t for _, t in pairs] + ["form", "thier", "Thier", "teh", "x1y2", "flatfish"]
    words = [w for w in glove_small.words if w.isalpha() and len(w) >= 3]
    for query in queries:
        found = index.candidates(query)
        brute = sorted((glove_small.words.index(w), w) for w in words if one_edit(query, w)) if (
            query.isalpha() and len(query) >= 4) else []
        assert [(row, w) for w, row in found] == brute, query
    for word, typo in pairs:  # a seeded one-edit typo of a table word finds that word
        assert word in {w for w, _ in index.candidates(typo)}
    assert index.candidates("teh") == [] and index.candidates("flatfish") == []


def add_strings(nlp, table):
    # As `spacy init vectors` does: the table's words are the vocab's strings.
    for word in table.words:
        nlp.vocab.strings.add(word)


@pytest.fixture()
def spelled(nlp_glove, tiny_mimick, glove_small):
    """The 3,000-row GloVe pipeline's vectors with the Mimick model and the spelling backoff."""
    add_strings(nlp_glove, glove_small)
    vectors = MimickVectors(strings=nlp_glove.vocab.strings, table=nlp_glove.vocab.vectors,
                            model=MimickModel.from_disk(tiny_mimick), spelling_backoff=True)
    nlp_glove.vocab.vectors = vectors
    return nlp_glove, vectors


def test_seeded_typos_recover_the_table_word(spelled, glove_small):
    nlp, vectors = spelled
    pairs = typo_pairs(glove_small, 100, seed=45)
    for _, typo in pairs:
        nlp.vocab.strings.add(typo)
    recovered = [vectors.spelled_from(typo) == word for word, typo in pairs]
    assert sum(recovered) >= 80, f"{sum(recovered)} of {len(pairs)} typos recovered their word"
    batch, sources = vectors.lookup([nlp.vocab.strings[t] for _, t in pairs])
    plain = vectors.predict([t for _, t in pairs])
    for i, (word, typo) in enumerate(pairs):
        source = vectors.spelled_from(typo)
        assert sources[i] == MIMICK
        if source is None:
            numpy.testing.assert_array_equal(batch[i], plain[i])
            continue
        expected = blend(glove_small.get(source), plain[i], 0.5)
        numpy.testing.assert_allclose(batch[i], expected, rtol=1e-5, atol=1e-6)
        numpy.testing.assert_allclose(vectors[typo], expected, rtol=1e-5, atol=1e-6)
    true = numpy.stack([glove_small.get(w) for w, _ in pairs])
    cos = lambda a: (a * true).sum(1) / numpy.linalg.norm(a, axis=1) / numpy.linalg.norm(true, axis=1)  # noqa: E731
    assert cos(batch).mean() > cos(plain).mean() + 0.2


def test_words_far_from_the_table_and_table_words_are_unchanged(spelled, glove_small):
    nlp, vectors = spelled
    for word in ("flatfish", "compartmentalize", "teh", "x1y2z3"):
        nlp.vocab.strings.add(word)
        assert vectors.spelled_from(word) is None
        numpy.testing.assert_array_equal(vectors[word], vectors.predict([word])[0])
    # "form" is one edit from "from", but has its own row; "Form" its lowercase form's.
    numpy.testing.assert_array_equal(vectors["form"], glove_small.get("form"))
    nlp.vocab.strings.add("Form")
    numpy.testing.assert_array_equal(vectors["Form"], glove_small.get("form"))
    assert vectors.spelled_from("form") is None and vectors.spelled_from("Form") is None
    # Capitalised typos back off to the lowercase form's neighbours.
    nlp.vocab.strings.add("Goverment")
    assert vectors.spelled_from("Goverment") == "government"


def test_on_by_default_off_when_asked_and_settings_travel(nlp_glove, tiny_mimick, glove_small, tmp_path):
    add_strings(nlp_glove, glove_small)
    nlp_glove.vocab.strings.add("goverment")
    mimick = nlp_glove.add_pipe("mimick_vectors")
    mimick.initialize(model_path=tiny_mimick)
    vectors = nlp_glove.vocab.vectors
    assert vectors.spelling_backoff and vectors.spelling_typo_margin == DEFAULT_TYPO_MARGIN
    assert vectors.spelled_from("goverment") == "government"
    plain = vectors.predict(["goverment"])[0]
    assert not numpy.array_equal(vectors["goverment"], plain)

    nlp_glove.remove_pipe("mimick_vectors")
    mimick = nlp_glove.add_pipe("mimick_vectors", config={"spelling_backoff": False})
    mimick.initialize(model_path=tiny_mimick)
    vectors = nlp_glove.vocab.vectors
    numpy.testing.assert_array_equal(vectors["goverment"], plain)
    assert vectors.spelled_from("goverment") is None

    nlp_glove.remove_pipe("mimick_vectors")
    mimick = nlp_glove.add_pipe("mimick_vectors", config={"spelling_backoff": True, "spelling_weight": 1.0})
    mimick.initialize(model_path=tiny_mimick)
    doc = nlp_glove("The goverment said")
    government = nlp_glove.vocab.vectors.table["government"]
    numpy.testing.assert_array_equal(doc[1].vector, government)
    assert nlp_glove.vocab.vectors.spelled_from("goverment") == "government"

    nlp_glove.to_disk(tmp_path / "nlp")
    loaded = spacy.load(tmp_path / "nlp")
    assert loaded.get_pipe("mimick_vectors").cfg["spelling_backoff"] is True
    numpy.testing.assert_array_equal(loaded("The goverment said")[1].vector, government)
    again = pickle.loads(pickle.dumps(loaded.vocab.vectors))
    assert again.spelling_backoff and again.spelling_weight == 1.0
    # The component's setting syncs to the vectors, as its other settings.
    loaded.get_pipe("mimick_vectors").cfg["spelling_backoff"] = False
    assert loaded.get_pipe("mimick_vectors").vectors.spelling_backoff is False
    numpy.testing.assert_array_equal(loaded.vocab.vectors["goverment"], loaded.vocab.vectors.predict(["goverment"])[0])


def test_keys_without_strings_are_named(glove_small, tiny_mimick):
    from spacy.vectors import Vectors

    nlp = spacy.blank("en")  # a table whose keys were hashed without adding their strings
    table = Vectors(strings=nlp.vocab.strings, data=glove_small.matrix.copy(), keys=glove_small.words)
    vectors = MimickVectors(strings=nlp.vocab.strings, table=table,
                            model=MimickModel.from_disk(tiny_mimick), spelling_backoff=True)
    nlp.vocab.strings.add("goverment")
    with pytest.warns(UserWarning, match=r"\d+ of the table's 3000 keys have no string"):
        assert vectors.spelled_from("goverment") is None


def test_bad_settings_are_refused(nlp_glove):
    with pytest.raises(ValueError, match="weight"):
        MimickVectors(strings=nlp_glove.vocab.strings, table=nlp_glove.vocab.vectors, spelling_weight=0.0)
    with pytest.raises(ValueError, match="max_rows"):
        MimickVectors(strings=nlp_glove.vocab.strings, table=nlp_glove.vocab.vectors, spelling_max_rows=-1)


def test_neighbors_and_predict_commands(tmp_path, tiny_mimick, glove_small):
    import gzip

    path = tmp_path / "glove.txt.gz"
    with gzip.open(GLOVE, "rt") as src, gzip.open(path, "wt") as out:
        for _, line in zip(range(3000), src):
            out.write(line)
    runner = CliRunner()

    def invoke(*args):
        result = runner.invoke(app, [str(a) for a in args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    plain = invoke("neighbors", tiny_mimick, path, "goverment", "flatfish", "-k", 3, "--no-spelling-backoff")
    assert "| goverment | no |" in plain
    spelled = invoke("neighbors", tiny_mimick, path, "goverment", "flatfish", "-k", 3, "--spelling-weight", 1)
    assert "| goverment | no (one edit from government) | government (1.00)," in spelled  # on by default
    assert spelled.splitlines()[-1] == plain.splitlines()[-1]  # flatfish: no table word one edit away
    model = MimickModel.from_disk(tiny_mimick)
    predicted = model.predict(["goverment", "flatfish"])
    expected = for_word_vectors(glove_small).apply(["goverment", "flatfish"], predicted)[0]
    for flag in ([], ["--spelling-backoff"]):  # on by default with --vectors
        rows = invoke("predict", tiny_mimick, "goverment", "flatfish", "--vectors", path, *flag).splitlines()
        got = numpy.array([[float(x) for x in row.split()[1:]] for row in rows])
        numpy.testing.assert_allclose(got, expected, atol=2e-6)
        numpy.testing.assert_allclose(got[1], predicted[1], atol=2e-6)
    for args in (["--vectors", path, "--no-spelling-backoff"], []):  # off when asked, or without a table
        rows = invoke("predict", tiny_mimick, "goverment", "flatfish", *args).splitlines()
        got = numpy.array([[float(x) for x in row.split()[1:]] for row in rows])
        numpy.testing.assert_allclose(got, predicted, atol=2e-6)
    result = runner.invoke(app, ["predict", str(tiny_mimick), "goverment", "--spelling-backoff"])
    assert result.exit_code != 0 and "--spelling-backoff needs --vectors" in result.output


def test_char_lm_scores_words_above_their_misspellings(glove_small):
    lm = CharLM(w for w in glove_small.words if w.isalpha())
    for word, typo in typo_pairs(glove_small, 50, seed=3):
        assert lm.logprob(typo) < lm.logprob(word) or len(typo) < len(word), (word, typo)
    assert lm.typo_score("corssing", "crossing") > DEFAULT_TYPO_MARGIN  # broken n-grams
    assert lm.logprob("the") > lm.logprob("xqz")
    # Characters never seen get the unseen share, not an error or -inf.
    assert numpy.isfinite(lm.logprob("ħ€llo")) and lm.logprob("ħ€llo") < lm.logprob("hello")
    with pytest.raises(ValueError, match="order"):
        CharLM(["a"], order=0)


def test_typo_gate_keeps_recovery_and_spares_real_rare_words():
    """On the README's 20k GloVe table: seeded misspellings of frequent words pass the gate, Rare
    Word's words without a table row (real words) mostly do not."""
    from conftest import RARE_WORD
    from spacy_mimick.vectors.similarity import read_similarity_pairs

    table = read_vectors(GLOVE, limit=20000)
    gated, ungated = for_word_vectors(table), for_word_vectors(table, typo_margin=None)
    typos = [t for _, t in typo_pairs(table, 300, seed=11, lo=1000, hi=5000)]
    rare = sorted({w.lower() for p in read_similarity_pairs(RARE_WORD) for w in (p.word1, p.word2)
                   if table.get(w.lower()) is None})
    spelled = lambda backoff, words: sum(backoff.vector(w, table.matrix[0])[1] is not None for w in words)  # noqa: E731
    assert spelled(ungated, typos) == len(typos)  # every one-edit typo of a table word has a candidate
    assert spelled(gated, typos) >= 0.8 * len(typos)
    real_ungated, real_gated = spelled(ungated, rare), spelled(gated, rare)
    assert real_ungated > 100 and real_gated < 0.4 * real_ungated, (real_ungated, real_gated)
    assert gated.vector("corssing", table.matrix[0])[1] == "crossing"
    with pytest.raises(ValueError, match="typo_margin"):
        for_word_vectors(table, typo_margin=float("nan"))


def test_registered_vectors_v1_unchanged_and_v2_gated_on():
    """A released v1 keeps its behaviour (off, and ungated when on); v2 is the gated default."""
    from spacy.util import registry

    vocab = spacy.blank("en").vocab
    v1 = registry.vectors.get("spacy_mimick.MimickVectors.v1")()(vocab)
    v1_on = registry.vectors.get("spacy_mimick.MimickVectors.v1")(spelling_backoff=True)(vocab)
    v2 = registry.vectors.get("spacy_mimick.MimickVectors.v2")()(vocab)
    assert (v1.spelling_backoff, v1.spelling_typo_margin) == (False, None)
    assert (v1_on.spelling_backoff, v1_on.spelling_typo_margin) == (True, None)
    assert (v2.spelling_backoff, v2.spelling_typo_margin) == (True, DEFAULT_TYPO_MARGIN)
