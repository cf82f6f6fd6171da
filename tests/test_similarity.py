import math

import numpy
import pytest
from scipy.stats import spearmanr

from spacy_mimick.vectors.similarity import (
    SimilarityPair,
    cosine_similarity,
    evaluate_similarity,
    read_similarity_pairs,
)
from spacy_mimick.vectors.vectors_io import read_vectors

from conftest import GLOVE, RARE_WORD, SHARED_DATA

SIMILARITY = SHARED_DATA / "similarity"


def test_rare_word_set(shared_data):
    pairs = read_similarity_pairs(RARE_WORD)
    assert len(pairs) == 2034
    assert pairs[0] == SimilarityPair("squishing", "squirt", 5.88)
    assert all(0 <= p.score <= 10 for p in pairs)


@pytest.mark.parametrize(
    "name,n_pairs,first",
    [
        ("en/EN-SIMLEX-999.txt", 999, SimilarityPair("old", "new", 1.58)),
        ("en/EN-MEN-TR-3k.txt", 3000, SimilarityPair("sun", "sunlight", 50.0)),
        ("en/EN-WS-353-ALL.txt", 353, SimilarityPair("love", "sex", 6.77)),  # CRLF lines
        ("ru/simlex-russian.txt", 999, SimilarityPair("старый", "новый", 0.0)),  # header line
    ],
)
def test_other_sets(shared_data, name, n_pairs, first):
    pairs = read_similarity_pairs(SIMILARITY / name)
    assert len(pairs) == n_pairs and pairs[0] == first


def test_glove_on_rare_words_counts_missing_pairs(shared_data):
    vectors = read_vectors(GLOVE, limit=20000)
    pairs = read_similarity_pairs(RARE_WORD)
    result = evaluate_similarity(pairs, lambda w: vectors.get(w.lower()))
    assert result.n_pairs == 2034 and 0 < result.n_covered < 2034
    assert result.spearman < result.spearman_covered  # missing pairs (scored 0) cost correlation
    assert set(result.as_row()) == {"spearman", "n_pairs", "n_covered", "spearman_covered"}


def test_read_errors_name_the_line(tmp_path):
    path = tmp_path / "pairs.txt"
    path.write_text("a\tb\t1.0\nc\td\tx\n")
    with pytest.raises(ValueError, match=r"pairs.txt: line 2: 'c\\td\\tx': expected 'word1 word2 score'"):
        read_similarity_pairs(path)
    path.write_text("a b 1\n\nc d\n")
    with pytest.raises(ValueError, match=r"line 3: 'c d'"):
        read_similarity_pairs(path)
    path.write_text("a\t\t1\n")
    with pytest.raises(ValueError, match=r"line 1"):
        read_similarity_pairs(path)
    path.write_text("w1 w2 score\n")
    with pytest.raises(ValueError, match=r"no word pairs"):
        read_similarity_pairs(path)


def test_space_separated_and_extra_ratings(tmp_path):
    path = tmp_path / "pairs.txt"
    path.write_text("Word1 Word2 Score\nCat dog 7.5 8 7\n\nA b 1e0\n")
    assert read_similarity_pairs(path) == [SimilarityPair("Cat", "dog", 7.5), SimilarityPair("A", "b", 1.0)]


def test_cosine_similarity():
    assert cosine_similarity(numpy.array([1.0, 0.0]), numpy.array([2.0, 0.0])) == pytest.approx(1.0)
    assert cosine_similarity(numpy.array([1.0, 0.0]), numpy.array([0.0, 3.0])) == pytest.approx(0.0)
    assert cosine_similarity(numpy.array([1, 1], numpy.float32), numpy.array([-1, -1])) == pytest.approx(-1.0)
    assert cosine_similarity(numpy.zeros(3), numpy.ones(3)) == 0.0


def test_evaluate_convention():
    vectors = {"a": numpy.array([1.0, 0.0]), "b": numpy.array([1.0, 0.2]), "c": numpy.array([0.0, 1.0]),
               "d": numpy.array([1.0, 1.0])}
    pairs = [SimilarityPair("a", "b", 9.0), SimilarityPair("a", "d", 6.0), SimilarityPair("a", "c", 1.0),
             SimilarityPair("a", "zzz", 8.0)]
    calls = []

    def lookup(word):
        calls.append(word)
        return vectors.get(word)

    result = evaluate_similarity(pairs, lookup)
    assert sorted(calls) == ["a", "b", "c", "d", "zzz"]  # each word looked up once
    assert result.n_pairs == 4 and result.n_covered == 3
    assert result.spearman_covered == pytest.approx(100.0)
    cosines = [cosine_similarity(vectors["a"], vectors[w]) for w in "bdc"]
    expected = spearmanr([9, 6, 1, 8], cosines + [0.0]).statistic * 100
    assert result.spearman == pytest.approx(expected)
    shifted = evaluate_similarity(pairs, vectors.get, oov_score=0.99)
    assert shifted.spearman == pytest.approx(spearmanr([9, 6, 1, 8], cosines + [0.99]).statistic * 100)


def test_evaluate_undefined_correlation_is_nan():
    pairs = [SimilarityPair("a", "b", 1.0), SimilarityPair("c", "d", 2.0)]
    result = evaluate_similarity(pairs, lambda w: None)  # all predictions equal: rho undefined
    assert math.isnan(result.spearman) and math.isnan(result.spearman_covered) and result.n_covered == 0
