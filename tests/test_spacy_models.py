"""The `spacy-models` workflow: spaCy's tagger + morphologizer + parser configs (with and without
Mimick) train, and UAS/LAS overall and on tokens without a vector count what they should."""
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from spacy.training.initialize import init_nlp
from spacy.training.loop import train
from spacy.util import load_config

import spacy_mimick.static_vectors  # noqa: F401  (registers the layer when run from a checkout)
from spacy_mimick.scorer import score_dependencies, token_outcomes
from spacy_mimick.significance import compare_outcomes
from spacy_mimick.static_vectors import is_mimick_static_vectors

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "configs"
EWT_SLICE = REPO / "assets" / "UD_English-EWT" / "en_ewt-ud-train.conllu"
TINY = {
    "components.tok2vec.model.encode.width": 32,
    "components.tok2vec.model.encode.depth": 1,
    "components.tok2vec.model.embed.rows": [500, 100, 100, 100],
    "components.parser.model.hidden_width": 16,
    "components.parser.min_action_freq": 1,
    "training.max_steps": 3,
    "training.eval_frequency": 3,
    "training.max_epochs": 0,
    "training.batcher.size.start": 300,
}


@pytest.fixture(scope="module")
def vectors_and_data(glove_small, tmp_path_factory):
    from spacy.vectors import Vectors

    tmp = tmp_path_factory.mktemp("spacy_models")
    vectors_nlp = spacy.blank("en")
    vectors_nlp.vocab.vectors = Vectors(
        strings=vectors_nlp.vocab.strings, data=glove_small.matrix.copy(), keys=glove_small.words)
    vectors_nlp.to_disk(tmp / "vectors")
    blocks = EWT_SLICE.read_text(encoding="utf8").split("\n\n")
    (tmp / "train.conllu").write_text("\n\n".join(blocks[:30]) + "\n\n", encoding="utf8")
    return tmp


@pytest.mark.parametrize("name", ["spacy_tagger_morphologizer_parser", "spacy_tagger_morphologizer_parser_mimick"])
def test_parser_configs_train_a_few_steps_and_parse(name, vectors_and_data, tiny_mimick):
    tmp = vectors_and_data
    overrides = {"paths.train": str(tmp / "train.conllu"), "paths.dev": str(tmp / "train.conllu"),
                 "paths.vectors": str(tmp / "vectors"), **TINY}
    if name.endswith("_mimick"):
        overrides["paths.mimick_model"] = str(tiny_mimick)
    config = load_config(CONFIGS / f"{name}.cfg", overrides=overrides, interpolate=False)
    nlp = init_nlp(config)
    output = tmp / name
    output.mkdir()
    with open(output / "log.txt", "w") as log:
        nlp, _ = train(nlp, output, stdout=log)
    assert nlp.pipe_names[-4:] == ["tok2vec", "tagger", "morphologizer", "parser"]
    assert nlp.get_pipe("parser").labels, "the parser learnt no labels from the CoNLL-U heads and deprels"
    doc = nlp.make_doc("The flatfish was hurtling past a lawnmower , said McNeally .")
    doc = nlp(doc.text)
    assert doc.has_annotation("DEP") and doc.has_annotation("POS") and doc.has_annotation("TAG")
    mimick_layers = [n for n in nlp.get_pipe("tok2vec").model.walk() if is_mimick_static_vectors(n)]
    assert len(mimick_layers) == (1 if name.endswith("_mimick") else 0)
    assert ("mimick_vectors" in nlp.pipe_names) == name.endswith("_mimick")
    # model-best was written and loads (what evaluate-spacy-models reads).
    assert spacy.load(output / "model-best").pipe_names == nlp.pipe_names


def _parsed(vocab, words, heads, deps, pos=None):
    return Doc(vocab, words=words, heads=heads, deps=deps, pos=pos or ["X"] * len(words))


WORDS = ["The", "flatfish", "zorbled", "quickly", "."]
GOLD_HEADS = [1, 2, 2, 2, 2]
GOLD_DEPS = ["det", "nsubj", "ROOT", "advmod", "punct"]


def test_uas_and_las_overall_and_on_tokens_without_a_vector():
    vocab = spacy.blank("en").vocab
    gold = _parsed(vocab, WORDS, GOLD_HEADS, GOLD_DEPS)
    # flatfish: right head, wrong label (LAS only); zorbled: root, UD's "root" spelling (right);
    # quickly: wrong head; ".": right (punctuation counts).
    pred = _parsed(vocab, WORDS, [1, 2, 2, 1, 2], ["det", "nsubj:pass", "root", "advmod", "punct"])
    example = Example(pred, gold)
    scores = score_dependencies([example], train_words={"The", "quickly", "."},
                                in_vectors={"The", "quickly", ".", "zorbled"})
    assert scores["dep_n_tokens"] == 5
    assert scores["dep_uas"] == pytest.approx(4 / 5)
    assert scores["dep_las"] == pytest.approx(3 / 5)
    # No vector: flatfish only (right head, wrong label).
    assert scores["oov_vec_dep_n_tokens"] == 1
    assert scores["oov_vec_dep_uas"] == 1.0 and scores["oov_vec_dep_las"] == 0.0
    # Unseen in training: flatfish, zorbled.
    assert scores["oov_train_dep_n_tokens"] == 2
    assert scores["oov_train_dep_uas"] == 1.0 and scores["oov_train_dep_las"] == 0.5


def test_unparsed_predictions_and_sentences_without_gold_heads():
    vocab = spacy.blank("en").vocab
    gold = _parsed(vocab, WORDS, GOLD_HEADS, GOLD_DEPS)
    unparsed = Doc(vocab, words=WORDS)
    no_tree = Doc(vocab, words=["Hi", "!"])  # a gold sentence without heads is not scored
    scores = score_dependencies([Example(unparsed, gold), Example(Doc(vocab, words=["Hi", "!"]), no_tree)])
    assert scores["dep_n_tokens"] == 5
    assert scores["dep_uas"] == 0.0 and scores["dep_las"] == 0.0
    assert scores["oov_vec_dep_uas"] is None and scores["oov_vec_dep_n_tokens"] is None


def test_paired_outcomes_on_a_subset_of_tokens():
    vocab = spacy.blank("en").vocab
    gold = _parsed(vocab, WORDS, GOLD_HEADS, GOLD_DEPS, pos=["DET", "NOUN", "VERB", "ADV", "PUNCT"])
    a = _parsed(vocab, WORDS, [1, 2, 2, 1, 2], ["det", "obj", "ROOT", "advmod", "punct"],
                pos=["DET", "VERB", "VERB", "ADV", "PUNCT"])
    b = _parsed(vocab, WORDS, GOLD_HEADS, GOLD_DEPS, pos=["DET", "NOUN", "VERB", "ADJ", "PUNCT"])
    outcomes_a, outcomes_b = token_outcomes([Example(a, gold)]), token_outcomes([Example(b, gold)])
    assert outcomes_a.forms == WORDS
    assert outcomes_a.correct["las"].tolist() == [True, False, True, False, True]
    assert outcomes_b.correct["pos"].tolist() == [True, True, True, False, True]
    no_vector = numpy.array([form in {"flatfish", "zorbled"} for form in outcomes_a.forms])
    result = compare_outcomes(outcomes_a, outcomes_b, no_vector, n_samples=50)
    assert result["las_n_tokens"] == 2 and result["pos_n_tokens"] == 2
    assert result["las_acc_a"] == 0.5 and result["las_acc_b"] == 1.0 and result["las_acc_delta"] == 0.5
    assert result["uas_acc_delta"] == 0.0  # flatfish had the right head in A too
    assert result["pos_acc_delta"] == 0.5
    assert result["morph_n_tokens"] == 0 and result["morph_p_value"] is None  # no FEATS in these docs
    everything = compare_outcomes(outcomes_a, outcomes_b, n_samples=50)
    assert everything["las_n_tokens"] == 5 and everything["las_acc_delta"] == pytest.approx(2 / 5)
    assert everything["pos_acc_delta"] == 0.0  # one fixed, one broken
    with pytest.raises(ValueError, match="mask"):
        compare_outcomes(outcomes_a, outcomes_b, no_vector[:3])
