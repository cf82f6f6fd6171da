"""Word-similarity evaluation: Spearman's rho between human ratings and vector cosines.

Convention (as in Pinter et al. 2017, whose Rare Word table reports all pairs):

- the model's similarity for a pair is the cosine of the two words' vectors;
- a pair where either word has no vector gets similarity ``oov_score`` (0.0 by default, the common
  practice) and is still counted, so ``spearman`` is over **all** pairs and penalizes missing
  vectors; ``spearman_covered`` is over the pairs where both words had a vector;
- rho is reported x 100; it is NaN when fewer than two pairs or a constant column leave it
  undefined.

Words are looked up exactly as written in the data set: no lowercasing here, callers decide (the
``lookup`` callable can lowercase, back off to Mimick, etc.).

The typo probe of ``benchmarks/typo_probe.py`` and ``benchmarks/oov_eval.py`` is here too:
``typo_pairs`` draws seeded one-edit misspellings of a table's frequent words, ``typo_scores``
scores the vectors a lookup gives them against the true words' vectors.
"""
import math
import random
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy


@dataclass
class SimilarityPair:
    word1: str
    word2: str
    score: float


@dataclass
class SimilarityResult:
    spearman: float  # rho x 100 over all pairs
    n_pairs: int
    n_covered: int  # pairs where both words had a vector
    spearman_covered: float  # rho x 100 over the covered pairs only

    def as_row(self) -> dict:
        return asdict(self)


def read_similarity_pairs(path: Union[str, Path]) -> List[SimilarityPair]:
    """Read ``word1 word2 score [...]`` lines, tab-separated (or space-separated when a line has
    no tab). Extra fields (the individual ratings of the Rare Word set) are ignored, blank lines
    skipped, and a first line whose score is not a number is taken as a header (SimLex Russian).
    """
    pairs = []
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, start=1):
            line = line.strip()
            if not line:
                continue
            fields = line.split("\t") if "\t" in line else line.split()
            fields = [field.strip() for field in fields]
            score = _number(fields[2]) if len(fields) >= 3 else None
            if score is None and line_no == 1 and len(fields) >= 3:
                continue  # header
            if score is None or not fields[0] or not fields[1] or not math.isfinite(score):
                raise ValueError(
                    f"{path}: line {line_no}: {line!r}: expected 'word1 word2 score' with a numeric score"
                )
            pairs.append(SimilarityPair(fields[0], fields[1], score))
    if not pairs:
        raise ValueError(f"{path}: no word pairs found")
    return pairs


def _number(text: str) -> Optional[float]:
    try:
        return float(text)
    except ValueError:
        return None


def cosine_similarity(a: numpy.ndarray, b: numpy.ndarray) -> float:
    """Cosine of two vectors; 0.0 when either is all zeros."""
    a = numpy.asarray(a, dtype=numpy.float64).ravel()
    b = numpy.asarray(b, dtype=numpy.float64).ravel()
    norm = numpy.linalg.norm(a) * numpy.linalg.norm(b)
    return float(a @ b / norm) if norm > 0 else 0.0


def evaluate_similarity(
    pairs: Sequence[SimilarityPair],
    lookup: Callable[[str], Optional[numpy.ndarray]],
    *,
    oov_score: float = 0.0,
) -> SimilarityResult:
    """Score ``pairs`` with the vectors ``lookup`` returns (None: no vector), each word looked up
    once. See the module docstring for how missing vectors count."""
    vectors: Dict[str, Optional[numpy.ndarray]] = {}

    def vector(word: str) -> Optional[numpy.ndarray]:
        if word not in vectors:
            vectors[word] = lookup(word)
        return vectors[word]

    gold, predicted, covered = [], [], []
    for pair in pairs:
        v1, v2 = vector(pair.word1), vector(pair.word2)
        is_covered = v1 is not None and v2 is not None
        gold.append(pair.score)
        predicted.append(cosine_similarity(v1, v2) if is_covered else oov_score)
        covered.append(is_covered)
    gold_a, predicted_a, covered_a = numpy.array(gold), numpy.array(predicted), numpy.array(covered, dtype=bool)
    return SimilarityResult(
        spearman=_spearman(gold_a, predicted_a),
        n_pairs=len(gold),
        n_covered=int(covered_a.sum()),
        spearman_covered=_spearman(gold_a[covered_a], predicted_a[covered_a]),
    )


def _spearman(x: numpy.ndarray, y: numpy.ndarray) -> float:
    """Spearman's rho x 100; NaN (without scipy's warning) where it is undefined."""
    if len(x) < 2 or numpy.all(x == x[0]) or numpy.all(y == y[0]):
        return float("nan")
    from scipy.stats import spearmanr  # imported here: scipy.stats costs ~0.5 s of CLI start-up

    return float(spearmanr(x, y).statistic) * 100


def typo_pairs(table, n: int, seed: int, lo: int = 1000, hi: int = 5000) -> List[Tuple[str, str]]:
    """``(word, misspelling)`` pairs: ``n`` seeded one-edit misspellings (``make_typo``: swap two
    neighbours, drop a letter, insert or substitute a keyboard neighbour) of ``table``'s words of
    ranks ``lo``..``hi`` (1-based; alphabetic, at least 5 characters), each re-drawn (up to 20
    times) until it is not a table word. The words and edits depend only on ``seed``."""
    from .mimick_trainer import make_typo  # torch: only when a probe is made

    rng = random.Random(seed)
    pool = [w for w in table.words[lo - 1 : hi] if len(w) >= 5 and w.isalpha()]
    rng.shuffle(pool)
    out = []
    for word in pool:
        for _ in range(20):
            typo = make_typo(word, rng)
            if typo != word and table.get(typo) is None:
                out.append((word, typo))
                break
        if len(out) == n:
            break
    return out


def row_cosines(a: numpy.ndarray, b: numpy.ndarray) -> numpy.ndarray:
    """Cosine of each row of ``a`` with the same row of ``b``."""
    norms = numpy.linalg.norm(a, axis=1) * numpy.linalg.norm(b, axis=1)
    return (a * b).sum(axis=1) / numpy.maximum(norms, 1e-8)


def typo_scores(vectors: numpy.ndarray, table, pairs: Sequence[Tuple[str, str]], k: int = 10) -> Dict:
    """How near ``vectors`` (one row per pair: a lookup's vector for the misspelling) are to the
    true words of ``pairs`` in ``table``: "typo_cos", the mean cosine with the true word's vector,
    and "top10", the share whose true word is among the ``k`` nearest table words (cosine, whole
    table) of its row."""
    vectors = numpy.asarray(vectors, dtype="float32")
    words = [w for w, _ in pairs]
    true = numpy.stack([table.get(w) for w in words])
    unit = table.matrix / numpy.maximum(numpy.linalg.norm(table.matrix, axis=1, keepdims=True), 1e-8)
    query = vectors / numpy.maximum(numpy.linalg.norm(vectors, axis=1, keepdims=True), 1e-8)
    hits = 0
    for start in range(0, len(pairs), 250):  # a 250 x table-size similarity matrix at a time
        sims = query[start : start + 250] @ unit.T
        top = numpy.argpartition(-sims, k, axis=1)[:, :k] if sims.shape[1] > k else numpy.argsort(-sims, axis=1)
        hits += sum(w in {table.words[j] for j in row} for w, row in zip(words[start : start + 250], top.tolist()))
    return {"n": len(pairs), "typo_cos": float(row_cosines(vectors, true).mean()) if len(pairs) else float("nan"),
            "top10": hits / len(pairs) if pairs else float("nan")}
