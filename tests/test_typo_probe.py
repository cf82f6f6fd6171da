"""benchmarks/typo_probe.py's probe: seeded one-edit misspellings that are not table words."""
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
