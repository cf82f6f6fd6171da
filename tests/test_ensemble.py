"""scripts/project/ensemble.py (an ensemble of trained taggers), on Mimick taggers or spaCy's
morphologizers, each trained for a few steps on 40 EWT sentences by ``spacy train``."""
import gzip
import json
import sys
from itertools import islice
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.cli.train import train
from spacy.tokens import DocBin

from spacy_mimick.tagger.recipes import config_text
from spacy_mimick.ud.corpus import read_conllu

from conftest import REPO, first_sentences

sys.path.insert(0, str(REPO / "scripts" / "project"))

import ensemble as ensemble_script  # noqa: E402
import evaluate as evaluate_script  # noqa: E402

EWT = REPO / "assets" / "UD_English-EWT"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two seeds each of char->tag (the paper's recipe, ``init-config --variant chartag --recipe
    paper``) and of spaCy's morphologizer (configs/spacy_morphologizer.cfg, with 500 GloVe rows),
    evaluated by evaluate.py as the project does."""
    tmp = tmp_path_factory.mktemp("ensemble")
    for split, n in (("train", 40), ("dev", 10), ("test", 15)):
        (tmp / f"{split}.conllu").write_text(first_sentences(EWT / f"en_ewt-ud-{split}.conllu", n), encoding="utf8")
    vectors = spacy.blank("en")
    with gzip.open(REPO / "assets" / "glove.6B.50d.top20k.txt.gz", "rt", encoding="utf8") as f:
        for line in islice(f, 500):
            word, *values = line.rstrip().split(" ")
            vectors.vocab.set_vector(word, numpy.asarray(values, dtype="float32"))
    vectors.to_disk(tmp / "vectors")
    paths = {"paths.train": str(tmp / "train.conllu"), "paths.dev": str(tmp / "dev.conllu")}
    (tmp / "tagger_chartag.cfg").write_text(config_text("chartag", "paper"), encoding="utf8")
    for seed in (0, 1):
        train(tmp / "tagger_chartag.cfg", tmp / f"s{seed}" / "chartag", overrides={
            **paths, "system.seed": seed, "training.max_steps": 20, "training.eval_frequency": 20})
        train(REPO / "configs" / "spacy_morphologizer.cfg", tmp / f"s{seed}" / "spacy", overrides={
            **paths, "paths.vectors": str(tmp / "vectors"), "system.seed": seed,
            "training.max_steps": 10, "training.eval_frequency": 10})
        evaluate_script.main([str(tmp / "test.conllu"), str(tmp / f"s{seed}"), str(tmp / f"metrics{seed}"),
                              "--train", str(tmp / "train.conllu"), "--variants", "chartag,spacy"])
    return tmp


def _predictions(path: Path):
    vocab = spacy.blank("en").vocab
    return [(t.pos_, str(t.morph)) for d in DocBin().from_disk(path).get_docs(vocab) for t in d]


def _ensemble(runs: Path, variant: str, seeds, name: str):
    models = [str(runs / f"s{s}" / variant / "model-best") for s in seeds]
    ensemble_script.main([str(runs / "test.conllu"), str(runs / "out"), name, *models,
                          "--train", str(runs / "train.conllu")])
    record = json.loads((runs / "out" / f"{name}.json").read_text())
    return record, _predictions(runs / "out" / f"{name}.spacy")


@pytest.mark.parametrize("variant", ["chartag", "spacy"])
def test_a_model_with_itself_is_the_model(runs, variant):
    """Averaging a model with itself changes nothing: the predictions and scores are evaluate.py's."""
    record, predicted = _ensemble(runs, variant, (0, 0), f"{variant}-self")
    alone = json.loads((runs / "metrics0" / f"{variant}.json").read_text())
    assert predicted == _predictions(runs / "metrics0" / f"{variant}.spacy")
    assert record["scores"]["pos_acc"] == pytest.approx(alone["scores"]["pos_acc"])
    assert record["scores"]["attr_micro_f"] == pytest.approx(alone["scores"]["attr_micro_f"])
    assert [m["pos_acc"] for m in record["members"]] == pytest.approx([alone["scores"]["pos_acc"]] * 2)


@pytest.mark.parametrize("variant", ["chartag", "spacy"])
def test_two_seeds_average_their_probabilities(runs, variant):
    """Where the two members agree (on POS and every attribute for the Mimick tagger's heads, on
    the joint label for the morphologizer), the average agrees with them; the record keeps each
    member's own POS accuracy; the scores are those of the written predictions."""
    record, predicted = _ensemble(runs, variant, (0, 1), f"{variant}-2")
    a, b = (_predictions(runs / f"metrics{s}" / f"{variant}.spacy") for s in (0, 1))
    assert len(predicted) == len(a) == record["n_test_tokens"] > 200
    agree = [i for i in range(len(a)) if a[i] == b[i]]
    assert 0 < len(agree) < len(a)  # the seeds differ, so the test says something
    assert all(predicted[i] == a[i] for i in agree)
    for member, s in zip(record["members"], (0, 1)):
        alone = json.loads((runs / f"metrics{s}" / f"{variant}.json").read_text())
        assert member["pos_acc"] == pytest.approx(alone["scores"]["pos_acc"])
    vocab = spacy.blank("en").vocab
    gold = [t.pos_ for d in read_conllu(runs / "test.conllu", vocab) for t in d]
    assert record["scores"]["pos_acc"] == pytest.approx(sum(p == g for (p, _), g in zip(predicted, gold)) / len(gold))


def test_members_must_share_their_labels(runs):
    models = [str(runs / "s0" / v / "model-best") for v in ("chartag", "spacy")]
    with pytest.raises(SystemExit, match="predicts other labels than"):
        ensemble_script.main([str(runs / "test.conllu"), str(runs / "bad"), "mixed", *models])
    with pytest.raises(SystemExit, match="two or more models"):
        ensemble_script.main([str(runs / "test.conllu"), str(runs / "bad"), "one", models[0]])


@pytest.mark.parametrize("variant", ["chartag", "spacy"])
def test_spacy_evaluate_with_gold_words_gives_the_cards_scores(runs, variant):
    """The cards' POS and morph (evaluate.py, UD's words) are what ``spacy evaluate --gold-preproc``
    prints for the same test set converted by ``spacy_mimick convert``: a user can check them with
    spaCy's own command (without --gold-preproc spaCy tokenizes the text again)."""
    from spacy.cli.evaluate import evaluate as spacy_evaluate

    from spacy_mimick.ud.corpus import conllu_to_docbin

    test = runs / f"test-{variant}.spacy"
    conllu_to_docbin(runs / "test.conllu", "en").to_disk(test)
    scores = spacy_evaluate(str(runs / "s0" / variant / "model-best"), test, gold_preproc=True, silent=True)
    card = json.loads((runs / "metrics0" / f"{variant}.json").read_text())["scores"]
    assert scores["pos_acc"] == pytest.approx(card["pos_acc"])
    assert scores["morph_acc"] == pytest.approx(card["morph_acc"])
