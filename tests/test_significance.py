"""spacy_mimick.ud.significance: McNemar's test and the bootstrapped Z-test for micro-F1."""
import math

import numpy
import pytest
import spacy
from scipy import stats
from spacy.tokens import Doc
from spacy.training import Example

from spacy_mimick.ud.significance import bootstrap_f1, compare_systems, mcnemar
from spacy_mimick.ud.corpus import read_conllu

from conftest import UD

KAZAKH_DEV = UD / "UD_Kazakh-KTB" / "kk-ud-dev.conllu"


def _paired(only_a: int, only_b: int, both: int = 50, neither: int = 5):
    a = [True] * only_a + [False] * only_b + [True] * both + [False] * neither
    b = [False] * only_a + [True] * only_b + [True] * both + [False] * neither
    return numpy.array(a), numpy.array(b)


def test_mcnemar_identical_systems():
    a, _ = _paired(0, 0)
    assert mcnemar(a, a) == (0.0, 1.0)


def test_mcnemar_exact_for_few_discordant_pairs():
    statistic, p = mcnemar(*_paired(10, 2))
    # Two-sided exact binomial, n = 12: 2 * P(X <= 2) = 2 * (1 + 12 + 66) / 2**12
    assert statistic == 2.0
    assert p == pytest.approx(2 * (1 + 12 + 66) / 2**12)
    assert p == pytest.approx(stats.binomtest(2, 12).pvalue)
    assert mcnemar(*_paired(6, 6))[1] == pytest.approx(1.0)


def test_mcnemar_chi_squared_with_continuity_correction():
    statistic, p = mcnemar(*_paired(30, 10))
    assert statistic == pytest.approx((20 - 1) ** 2 / 40)
    assert p == pytest.approx(math.erfc(math.sqrt(statistic / 2)))  # chi2(1) survival function
    assert p == pytest.approx(0.002663, abs=1e-6)
    assert mcnemar(*_paired(10, 30)) == (statistic, p)  # symmetric
    with pytest.raises(ValueError):
        mcnemar(numpy.ones(3, bool), numpy.ones(4, bool))


def _counts(correct):
    """Sentences with 10 gold and 10 predicted attribute values each: micro-F1 = mean(correct) / 10."""
    correct = numpy.asarray(correct)
    return numpy.stack([correct, numpy.full_like(correct, 10), numpy.full_like(correct, 10)], axis=1)


def test_bootstrap_identical_systems():
    counts = _counts(numpy.random.default_rng(0).integers(0, 11, size=200))
    result = bootstrap_f1(counts, counts)
    assert (result.delta, result.p_value, result.std) == (0.0, 1.0, 0.0)


def test_bootstrap_clearly_better_system():
    rng = numpy.random.default_rng(1)
    a = rng.integers(3, 7, size=200)
    result = bootstrap_f1(_counts(a), _counts(numpy.minimum(a + 3, 10)))
    assert result.delta == pytest.approx(numpy.mean(numpy.minimum(a + 3, 10) - a) / 10)
    assert result.z > 10 and result.p_value < 1e-10
    worse = bootstrap_f1(_counts(numpy.minimum(a + 3, 10)), _counts(a))
    assert worse.delta == -result.delta and worse.z < -10 and worse.p_value < 1e-10


def test_bootstrap_standard_error_matches_the_analytic_one():
    rng = numpy.random.default_rng(2)
    a = rng.integers(2, 9, size=400)
    b = a + rng.choice([-2, -1, 0, 1, 2], p=[0.17, 0.2, 0.2, 0.23, 0.2], size=400)  # slightly better
    result = bootstrap_f1(_counts(a), _counts(b), n_samples=4000, seed=3)
    # Here F1 is a mean over sentences, so the bootstrap SE of the difference is that of a mean.
    diff = (b - a) / 10
    assert result.std == pytest.approx(diff.std() / math.sqrt(len(diff)), rel=0.05)
    assert result.p_value == pytest.approx(2 * stats.norm.sf(abs(diff.mean()) / result.std))
    assert 0.05 < result.p_value < 0.5
    assert result.p_value == pytest.approx(stats.ttest_rel(b, a).pvalue, abs=0.02)  # scipy: 0.270
    assert bootstrap_f1(_counts(a), _counts(b), n_samples=4000, seed=3) == result  # seeded
    # No difference on average: the mirrored system gains exactly what it loses.
    balanced = bootstrap_f1(_counts(numpy.r_[a, b]), _counts(numpy.r_[b, a]))
    assert balanced.delta == 0.0 and balanced.p_value == 1.0 and balanced.std > 0


def test_compare_systems_on_real_sentences():
    nlp = spacy.blank("xx")
    gold_docs = list(read_conllu(KAZAKH_DEV, nlp.vocab))
    rng = numpy.random.default_rng(0)

    def system(error_rate: float):
        examples = []
        for gold in gold_docs:
            pred = Doc(nlp.vocab, words=[t.text for t in gold], spaces=[bool(t.whitespace_) for t in gold])
            for g, p in zip(gold, pred):
                wrong = rng.random() < error_rate
                p.pos_ = "X" if wrong else g.pos_
                p.set_morph("" if wrong else str(g.morph))
            examples.append(Example(pred, gold))
        return examples

    weak, strong = system(0.3), system(0.05)
    result = compare_systems(weak, strong)
    assert result["pos_acc_b"] > result["pos_acc_a"] and result["pos_acc_delta"] > 0.15
    assert result["pos_p_value"] < 1e-6
    assert result["attr_micro_f_delta"] == pytest.approx(result["attr_micro_f_b"] - result["attr_micro_f_a"])
    assert result["attr_micro_f_delta"] > 0 and result["attr_p_value"] < 0.01
    same = compare_systems(strong, strong)
    assert same["pos_p_value"] == 1.0 and same["attr_p_value"] == 1.0 and same["pos_acc_delta"] == 0.0
    with pytest.raises(ValueError):
        compare_systems(weak, strong[:-1])
