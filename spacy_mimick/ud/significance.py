"""Paired significance tests between two taggers on the same test set (Pinter et al. 2017, 5.2).

* POS accuracy: McNemar's test on the tokens where exactly one system is right.
* Attribute micro-F1: the paper's "bootstrapped Z-test": resample the test sentences with
  replacement (paired: both systems see the same resample), take the standard deviation of the
  F1 difference over the resamples as its standard error, and compare the observed difference
  with it as a Z score (two-sided normal p-value). This follows the paper's wording (a Z-test,
  used to mark both improvements and degradations), rather than the one-sided paired bootstrap
  of Berg-Kirkpatrick et al. (2012), and gives smooth p-values that do not bottom out at
  1 / n_samples. Sentences, not tokens, are resampled because tagging errors within a sentence
  are correlated. Micro-F1 is not a mean over tokens, so each resample recomputes it from the
  pooled counts.
* Per-token outcomes of any subset of tokens (:func:`compare_outcomes`, pipelines with a
  parser): McNemar's test for POS, whole-FEATS morph, UAS and LAS, and for LAS also the same
  sentence bootstrap Z-test (a sentence's LAS counts are (correct, words, words), whose
  "micro-F1" is the accuracy), which allows for errors being correlated within a sentence.

Differences are always system B minus system A (positive: B is better).
"""
import math
from typing import Any, Dict, Iterable, NamedTuple, Optional, Tuple

import numpy
from scipy import stats
from spacy.training import Example

from .scorer import TokenOutcomes, token_level_results

OUTCOME_METRICS = ("pos", "morph", "uas", "las")

# Below this many discordant pairs the chi-squared approximation is poor; use the exact test.
EXACT_BELOW = 25
# Resampled sentence indices held in memory at once (per chunk of bootstrap samples).
_CHUNK_ELEMENTS = 2_000_000


class BootstrapResult(NamedTuple):
    delta: float  # observed micro-F1 of B minus that of A
    p_value: float  # two-sided, from z
    z: float
    std: float  # standard deviation of the bootstrapped difference


def mcnemar(correct_a: numpy.ndarray, correct_b: numpy.ndarray) -> Tuple[float, float]:
    """McNemar's test on paired per-token outcomes; returns ``(statistic, p_value)``.

    With b (only A right) + c (only B right) < :data:`EXACT_BELOW`: the exact two-sided binomial
    test of b ~ Binomial(b + c, 1/2), statistic min(b, c). Otherwise the chi-squared test with
    continuity correction, statistic (|b - c| - 1)^2 / (b + c) on 1 degree of freedom.
    No discordant pair at all: (0.0, 1.0).
    """
    correct_a = numpy.asarray(correct_a, dtype=bool)
    correct_b = numpy.asarray(correct_b, dtype=bool)
    if correct_a.shape != correct_b.shape:
        raise ValueError(f"paired outcomes differ in shape: {correct_a.shape} vs {correct_b.shape}")
    return mcnemar_counts(int(numpy.sum(correct_a & ~correct_b)), int(numpy.sum(~correct_a & correct_b)))


def mcnemar_counts(only_a: int, only_b: int) -> Tuple[float, float]:
    """:func:`mcnemar` from the discordant counts: tokens only A / only B got right."""
    n = only_a + only_b
    if n == 0:
        return 0.0, 1.0
    if n < EXACT_BELOW:
        return float(min(only_a, only_b)), float(stats.binomtest(only_a, n, 0.5).pvalue)
    statistic = (abs(only_a - only_b) - 1) ** 2 / n
    return float(statistic), float(stats.chi2.sf(statistic, df=1))


def _micro_f1(counts: numpy.ndarray) -> numpy.ndarray:
    """Micro-F1 from [..., (correct, predicted, gold)] counts: 2c / (p + g), 0 where p + g = 0."""
    correct, predicted, gold = counts[..., 0], counts[..., 1], counts[..., 2]
    denominator = predicted + gold
    return numpy.divide(2.0 * correct, denominator, out=numpy.zeros(denominator.shape), where=denominator > 0)


def bootstrap_f1(
    counts_a: numpy.ndarray, counts_b: numpy.ndarray, n_samples: int = 1000, seed: int = 0
) -> BootstrapResult:
    """Bootstrapped Z-test of the micro-F1 difference B - A (see the module docstring).

    counts_a, counts_b: (n_sentences, 3) per-sentence (correct, predicted, gold) attribute
    counts on the same sentences (``TokenLevelResults.attr_counts``). Deterministic per seed.
    A zero spread (e.g. identical systems) gives p = 1 if the difference is 0, else p = 0.
    """
    counts_a = numpy.asarray(counts_a, dtype=numpy.float64)
    counts_b = numpy.asarray(counts_b, dtype=numpy.float64)
    if counts_a.shape != counts_b.shape or counts_a.ndim != 2 or counts_a.shape[1] != 3:
        raise ValueError(f"expected two (n_sentences, 3) arrays, got {counts_a.shape} and {counts_b.shape}")
    n = counts_a.shape[0]
    if n == 0:
        raise ValueError("no sentences to resample")
    paired = numpy.concatenate([counts_a, counts_b], axis=1)
    delta = float(_micro_f1(counts_b.sum(axis=0)) - _micro_f1(counts_a.sum(axis=0)))
    rng = numpy.random.default_rng(seed)
    chunk = max(1, _CHUNK_ELEMENTS // n)
    deltas = []
    for start in range(0, n_samples, chunk):
        idx = rng.integers(0, n, size=(min(chunk, n_samples - start), n))
        sums = paired[idx].sum(axis=1)
        deltas.append(_micro_f1(sums[:, 3:]) - _micro_f1(sums[:, :3]))
    std = float(numpy.std(numpy.concatenate(deltas), ddof=1)) if n_samples > 1 else 0.0
    if std == 0.0:  # no spread (identical systems): all or nothing
        z = 0.0 if delta == 0.0 else math.copysign(math.inf, delta)
        return BootstrapResult(delta, 1.0 if delta == 0.0 else 0.0, z, 0.0)
    z = delta / std
    return BootstrapResult(delta, float(2 * stats.norm.sf(abs(z))), float(z), std)


def compare_systems(
    examples_a: Iterable[Example], examples_b: Iterable[Example], *, n_samples: int = 1000, seed: int = 0
) -> Dict[str, Any]:
    """Compare two systems' predictions on the same gold examples (same order).

    Returns POS accuracies, their difference and McNemar's p-value, and attribute micro-F1s,
    their difference and the bootstrapped Z-test p-value (None when the test set has no
    attributes). Differences are B - A.
    """
    a, b = token_level_results(examples_a), token_level_results(examples_b)
    same_gold = numpy.array_equal(a.attr_counts[:, 2], b.attr_counts[:, 2])
    if a.pos_correct.shape != b.pos_correct.shape or not same_gold:
        raise ValueError("the two systems were not scored on the same gold examples")
    statistic, pos_p = mcnemar(a.pos_correct, b.pos_correct)
    pos_a, pos_b = (float(r.pos_correct.mean()) if r.pos_correct.size else None for r in (a, b))
    result: Dict[str, Any] = {
        "pos_acc_a": pos_a,
        "pos_acc_b": pos_b,
        "pos_acc_delta": pos_b - pos_a if pos_a is not None else None,
        "pos_mcnemar_statistic": statistic,
        "pos_p_value": pos_p,
        "attr_micro_f_a": None,
        "attr_micro_f_b": None,
        "attr_micro_f_delta": None,
        "attr_z": None,
        "attr_p_value": None,
    }
    if a.attr_counts[:, 1:].any() or b.attr_counts[:, 1:].any():
        boot = bootstrap_f1(a.attr_counts, b.attr_counts, n_samples=n_samples, seed=seed)
        result.update(
            attr_micro_f_a=float(_micro_f1(a.attr_counts.sum(axis=0))),
            attr_micro_f_b=float(_micro_f1(b.attr_counts.sum(axis=0))),
            attr_micro_f_delta=boot.delta,
            attr_z=boot.z,
            attr_p_value=boot.p_value,
        )
    return result


def compare_outcomes(
    a: TokenOutcomes, b: TokenOutcomes, mask: Optional[numpy.ndarray] = None, *, n_samples: int = 1000,
    seed: int = 0,
) -> Dict[str, Any]:
    """Paired tests of B against A on the tokens in ``mask`` (all tokens if None).

    For each metric in :data:`OUTCOME_METRICS` scored on some of those tokens: ``<m>_n_tokens``,
    ``<m>_acc_a``, ``<m>_acc_b``, ``<m>_acc_delta`` (B - A), McNemar's ``<m>_mcnemar_statistic``
    and ``<m>_p_value``, and its discordant counts ``<m>_only_a`` / ``<m>_only_b`` (tokens only
    A / only B got right; summed over runs they give a pooled test). For LAS also
    ``las_bootstrap_z`` / ``las_bootstrap_p_value`` (sentences resampled, only the masked tokens
    counted). Metrics with no scored token are None.
    """
    if not numpy.array_equal(a.sentence, b.sentence) or any(
            not numpy.array_equal(a.scored[m], b.scored[m]) for m in OUTCOME_METRICS):
        raise ValueError("the two systems were not scored on the same gold examples")
    mask = numpy.ones(a.sentence.shape, dtype=bool) if mask is None else numpy.asarray(mask, dtype=bool)
    if mask.shape != a.sentence.shape:
        raise ValueError(f"mask has {mask.shape[0]} entries for {a.sentence.shape[0]} tokens")
    result: Dict[str, Any] = {}
    for metric in OUTCOME_METRICS:
        keep = mask & a.scored[metric]
        n = int(keep.sum())
        result[f"{metric}_n_tokens"] = n
        if not n:
            for key in ("acc_a", "acc_b", "acc_delta", "mcnemar_statistic", "p_value", "only_a", "only_b"):
                result[f"{metric}_{key}"] = None
            continue
        ca, cb = a.correct[metric][keep], b.correct[metric][keep]
        statistic, p_value = mcnemar(ca, cb)
        result.update({
            f"{metric}_acc_a": float(ca.mean()), f"{metric}_acc_b": float(cb.mean()),
            f"{metric}_acc_delta": float(cb.mean() - ca.mean()),
            f"{metric}_mcnemar_statistic": statistic, f"{metric}_p_value": p_value,
            f"{metric}_only_a": int(numpy.sum(ca & ~cb)), f"{metric}_only_b": int(numpy.sum(~ca & cb)),
        })
    result["las_bootstrap_z"] = result["las_bootstrap_p_value"] = None
    if result["las_n_tokens"]:
        keep = mask & a.scored["las"]
        n_sentences = int(a.sentence.max()) + 1
        words = numpy.bincount(a.sentence[keep], minlength=n_sentences)
        counts = []
        for outcomes in (a, b):
            correct = numpy.bincount(a.sentence[keep], weights=outcomes.correct["las"][keep].astype(numpy.float64),
                                     minlength=n_sentences)
            counts.append(numpy.stack([correct, words, words], axis=1))
        boot = bootstrap_f1(counts[0], counts[1], n_samples=n_samples, seed=seed)
        result["las_bootstrap_z"], result["las_bootstrap_p_value"] = boot.z, boot.p_value
    return result
