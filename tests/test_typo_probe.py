"""benchmarks/typo_probe.py's probe (shared with benchmarks/oov_eval.py): seeded one-edit misspellings that are not
table words, scored with and without the spelling backoff."""
import importlib.util
from pathlib import Path

import numpy

spec = importlib.util.spec_from_file_location(
    "typo_probe", Path(__file__).resolve().parent.parent / "benchmarks" / "typo_probe.py")
typo_probe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(typo_probe)


def test_probe_is_seeded_one_edit_and_off_table(glove_small):
    pairs = typo_probe.make_probe(glove_small, 100, seed=45)
    assert len(pairs) == 100 and pairs == typo_probe.make_probe(glove_small, 100, seed=45)
    assert pairs != typo_probe.make_probe(glove_small, 100, seed=46)
    for word, typo in pairs:
        assert typo != word and glove_small.get(typo) is None and abs(len(typo) - len(word)) <= 1
        assert glove_small.words.index(word) >= 999 and word.isalpha() and len(word) >= 5


def test_probe_scores_a_perfect_model_as_perfect(glove_small):
    pairs = typo_probe.make_probe(glove_small, 50, seed=45)
    truth = dict((t, glove_small.get(w)) for w, t in pairs)

    class Oracle:
        def predict(self, words):
            return numpy.stack([truth[w] for w in words])

    scores = typo_probe.probe(Oracle(), glove_small, pairs)
    assert abs(scores["typo_cos"] - 1) < 1e-5 and scores["top10"] == 1.0


def test_oov_eval_shares_the_probe(glove_small):
    spec = importlib.util.spec_from_file_location(
        "oov_eval", Path(__file__).resolve().parent.parent / "benchmarks" / "oov_eval.py")
    oov_eval = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(oov_eval)
    pairs = oov_eval.make_typo_set(glove_small, 40, seed=3)
    assert pairs == typo_probe.make_probe(glove_small, 40, seed=3)

    class Table:  # predicts every word as its table vector, or the true word's for a typo
        truth = {t: glove_small.get(w) for w, t in pairs}

        def predict(self, words):
            return numpy.stack([glove_small.get(w) if glove_small.get(w) is not None else self.truth[w] for w in words])

    scores = oov_eval.typo_eval(Table(), glove_small, pairs)
    assert scores["typo_top10"] == 1.0 and abs(scores["typo_cos"] - 1) < 1e-5 and abs(scores["clean_cos"] - 1) < 1e-5


def test_spelling_lookup_recovers_the_probe(glove_small):
    from spacy_mimick.vectors.spelling import for_word_vectors

    pairs = typo_probe.make_probe(glove_small, 50, seed=45)

    class Zero:  # no spelling information at all: only the spelling backoff can recover words
        def predict(self, words):
            return numpy.full((len(words), glove_small.dim), 1e-3, dtype="float32")

    plain = typo_probe.probe(Zero(), glove_small, pairs)
    backoff = for_word_vectors(glove_small, weight=1.0, choice="frequent", min_cosine=-1.0, typo_margin=None)
    spelled = typo_probe.probe(Zero(), glove_small, pairs, backoff=backoff)
    assert plain["spelled"] == 0 and spelled["spelled"] == 50
    # A wrong candidate can still have the true word among its neighbours: top-10 >= right ones.
    assert spelled["top10"] >= spelled["spelled_right"] / 50 >= 0.8 > plain["top10"]
