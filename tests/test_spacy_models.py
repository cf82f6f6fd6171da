"""The `spacy-models` workflow: spaCy's tagger + morphologizer + parser configs (with and without
Mimick) train, and UAS/LAS overall and on tokens without a vector count what they should."""
import json
import shutil
import sys
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.training.initialize import init_nlp
from spacy.training.loop import train
from spacy.util import load_config

from spacy_mimick.ud.scorer import score_dependencies, token_outcomes
from spacy_mimick.ud.significance import compare_outcomes
from spacy_mimick.vectors.mimick_vectors import MimickVectors
from spacy_mimick.ud.corpus import conllu_to_docbin, read_conllu

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts" / "project"))

from test_static_vectors import TINY as STATIC_VECTORS_TINY  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "configs"
EWT_SLICE = REPO / "assets" / "UD_English-EWT" / "en_ewt-ud-train.conllu"
# The tiny widths of test_static_vectors.py, and a tiny parser.
TINY = {
    **STATIC_VECTORS_TINY,
    "components.parser.model.hidden_width": 16,
    "components.parser.min_action_freq": 1,
    "training.max_steps": 3,
    "training.eval_frequency": 3,
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


NAMES = {"spacy": "spacy_tagger_morphologizer_parser", "mimick": "spacy_tagger_morphologizer_parser_mimick"}


@pytest.fixture(scope="module")
def trained_runs(vectors_and_data, tiny_mimick):
    """Both configs trained 3 steps with the same seed, as train-spacy-models lays them out."""
    tmp = vectors_and_data
    runs = tmp / "training" / "UD_English-EWT" / "n0.s0"
    pipelines = {}
    for variant, name in NAMES.items():
        overrides = {"paths.train": str(tmp / "train.conllu"), "paths.dev": str(tmp / "train.conllu"),
                     "paths.vectors": str(tmp / "vectors"), **TINY}
        if variant == "mimick":
            overrides["paths.mimick_model"] = str(tiny_mimick)
        config = load_config(CONFIGS / f"{name}.cfg", overrides=overrides, interpolate=False)
        nlp = init_nlp(config)
        (runs / variant).mkdir(parents=True)
        with open(runs / variant / "log.txt", "w") as log:
            nlp, _ = train(nlp, runs / variant, stdout=log)
        pipelines[variant] = nlp
    return tmp, runs, pipelines


@pytest.mark.parametrize("variant", sorted(NAMES))
def test_parser_configs_train_a_few_steps_and_parse(variant, trained_runs):
    _, runs, pipelines = trained_runs
    nlp = pipelines[variant]
    assert nlp.pipe_names[-4:] == ["tok2vec", "tagger", "morphologizer", "parser"]
    assert nlp.get_pipe("parser").labels, "the parser learnt no labels from the CoNLL-U heads and deprels"
    doc = nlp("The flatfish was hurtling past a lawnmower , said McNeally .")
    assert doc.has_annotation("DEP") and doc.has_annotation("POS") and doc.has_annotation("TAG")
    assert isinstance(nlp.vocab.vectors, MimickVectors) == (variant == "mimick")
    assert ("mimick_vectors" in nlp.pipe_names) == (variant == "mimick")
    # model-best was written and loads (what evaluate-spacy-models reads).
    assert spacy.load(runs / variant / "model-best").pipe_names == nlp.pipe_names


def test_evaluate_significance_and_report_of_a_run(trained_runs, capsys):
    """The workflow's last three commands on the tiny runs: evaluate.py scores UAS/LAS on all,
    no-vector and unseen tokens and keeps the parses; significance.py tests them; the report
    has the tables; the tagger report (report.py) does not take these runs for its own."""
    import evaluate
    import report
    import significance
    import spacy_models_report

    tmp, runs, _ = trained_runs
    test_path = tmp / "test.spacy"
    conllu_to_docbin(tmp / "train.conllu", "en", limit=12).to_disk(test_path)
    conllu_to_docbin(tmp / "train.conllu", "en").to_disk(tmp / "train.spacy")
    metrics = tmp / "metrics" / "spacy_models" / "UD_English-EWT" / "n0.s0"
    if not (runs / "spacy_lower").exists():  # stands in for the lowercase-keys control
        shutil.copytree(runs / "spacy", runs / "spacy_lower")
    evaluate.main([str(test_path), str(runs), str(metrics), "--variants", "spacy,mimick,spacy_lower", "--train",
                   str(tmp / "train.conllu"), "--treebank", "UD_English-EWT", "--n-tokens", "0", "--seed", "0"])
    for variant in NAMES:
        scores = json.loads((metrics / f"{variant}.json").read_text())["scores"]
        assert 0 <= scores["dep_las"] <= scores["dep_uas"] <= 1
        assert scores["oov_vec_dep_n_tokens"] == scores["oov_vec_n_tokens"] > 0
        assert scores["oov_train_dep_n_tokens"] == 0  # the test sentences are training sentences
        parsed = list(DocBin().from_disk(metrics / f"{variant}.spacy").get_docs(spacy.blank("en").vocab))
        assert all(doc.has_annotation("DEP") for doc in parsed)
    significance.main([str(test_path), str(metrics / "spacy.spacy"), str(metrics / "mimick.spacy"),
                       "--output", str(metrics / "sig-spacy-mimick.json"), "--train", str(tmp / "train.spacy"),
                       "--vectors", str(tmp / "vectors"), "--n-samples", "20"])
    significance.main([str(test_path), str(metrics / "spacy_lower.spacy"), str(metrics / "mimick.spacy"),
                       "--output", str(metrics / "sig-spacy_lower-mimick.json"), "--vectors", str(tmp / "vectors"),
                       "--n-samples", "20"])
    sig = json.loads((metrics / "sig-spacy-mimick.json").read_text())
    n_test = sum(len(doc) for doc in DocBin().from_disk(test_path).get_docs(spacy.blank("en").vocab))
    assert sig["outcomes"]["all"]["las_n_tokens"] == n_test
    assert sig["outcomes"]["oov_vec"]["las_n_tokens"] == sig["oov_vec"]["n_tokens"] > 0
    assert sig["outcomes"]["oov_vec"]["las_bootstrap_p_value"] is not None
    vectors_vocab = spacy.load(tmp / "vectors").vocab
    test_forms = [t.text for doc in DocBin().from_disk(test_path).get_docs(vectors_vocab) for t in doc]
    capitalized = [f for f in test_forms if not vectors_vocab.has_vector(f) and vectors_vocab.has_vector(f.lower())]
    assert "The" in capitalized
    assert sig["outcomes"]["lowercase_only"]["las_n_tokens"] == sig["lowercase_only"]["n_tokens"] == len(capitalized)
    spacy_models_report.main([str(tmp / "metrics" / "spacy_models"), "--output", str(tmp / "report.md")])
    text = (tmp / "report.md").read_text()
    assert "## UD_English-EWT, full (seeds 0)" in text and "| no vector | LAS |" in text
    assert "| spaCy, lowercase keys |" in text and "| 0 | no vector, vs lowercase keys |" in text
    assert not report.load_results(tmp / "metrics").runs


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
    assert (result["las_only_a"], result["las_only_b"]) == (0, 1)  # flatfish: only B's label is right
    assert result["morph_n_tokens"] == 0 and result["morph_p_value"] is None  # no FEATS in these docs
    everything = compare_outcomes(outcomes_a, outcomes_b, n_samples=50)
    assert everything["las_n_tokens"] == 5 and everything["las_acc_delta"] == pytest.approx(2 / 5)
    assert everything["pos_acc_delta"] == 0.0  # one fixed, one broken
    with pytest.raises(ValueError, match="mask"):
        compare_outcomes(outcomes_a, outcomes_b, no_vector[:3])


def test_report_pools_the_discordant_tokens_of_the_seeds():
    import spacy_models_report

    from spacy_mimick.ud.significance import mcnemar_counts

    seeds = [{"las_acc_delta": 0.02, "las_only_a": 10, "las_only_b": 20},
             {"las_acc_delta": 0.04, "las_only_a": 5, "las_only_b": 25}]
    _, p_value = mcnemar_counts(15, 45)
    assert spacy_models_report.pooled(seeds, "las") == f"+3.00 (p={spacy_models_report.p_fmt(p_value)})"
    assert spacy_models_report.pooled(seeds + [{"las_acc_delta": None}], "las") == spacy_models_report.DASH


@pytest.mark.parametrize("name", ["spacy_morphologizer_parser", "spacy_morphologizer_parser_mimick"])
def test_morphologizer_parser_configs_train_without_xpos(name, vectors_and_data, tiny_mimick, tmp_path):
    """The configs for treebanks without an XPOS column (UD_French-Sequoia): no tagger to fail on
    the empty tags; UPOS, FEATS and the parse are learnt."""
    lines = []
    for line in (vectors_and_data / "train.conllu").read_text(encoding="utf8").splitlines():
        columns = line.split("\t")
        if len(columns) == 10:
            columns[4] = "_"
        lines.append("\t".join(columns))
    (tmp_path / "train.conllu").write_text("\n".join(lines) + "\n", encoding="utf8")
    overrides = {"paths.train": str(tmp_path / "train.conllu"), "paths.dev": str(tmp_path / "train.conllu"),
                 "paths.vectors": str(vectors_and_data / "vectors"),
                 **TINY}
    if name.endswith("_mimick"):
        overrides["paths.mimick_model"] = str(tiny_mimick)
    nlp = init_nlp(load_config(CONFIGS / f"{name}.cfg", overrides=overrides, interpolate=False))
    (tmp_path / "output").mkdir()
    with open(tmp_path / "log.txt", "w") as log:
        nlp, _ = train(nlp, tmp_path / "output", stdout=log)
    assert nlp.pipe_names[-3:] == ["tok2vec", "morphologizer", "parser"] and "tagger" not in nlp.pipe_names
    doc = nlp("Le poisson plat dépassait une tondeuse .")
    assert doc.has_annotation("DEP") and doc.has_annotation("POS")
    assert ("mimick_vectors" in nlp.pipe_names) == name.endswith("_mimick")


def test_vectors_lower_keys_treebank_forms_to_their_lowercase_row(vectors_and_data, tmp_path):
    import vectors_lower

    tmp = vectors_and_data
    vectors_lower.main([str(tmp / "vectors"), str(tmp_path / "lower"), str(tmp / "train.conllu")])
    before, after = spacy.load(tmp / "vectors").vocab, spacy.load(tmp_path / "lower").vocab
    assert not before.has_vector("The") and before.has_vector("the")
    numpy.testing.assert_array_equal(after.get_vector("The"), before.get_vector("the"))
    assert after.vectors.shape == before.vectors.shape  # keys added, no row
    numpy.testing.assert_array_equal(after.vectors.data, before.vectors.data)
    forms = {t.text for doc in read_conllu(tmp / "train.conllu", after) for t in doc}
    assert all(after.has_vector(f) == (before.has_vector(f) or before.has_vector(f.lower())) for f in forms)
