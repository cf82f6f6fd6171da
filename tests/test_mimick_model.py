"""The Mimick model: spelling features, prediction, training, serialization, bad input."""
import numpy
import pytest

from spacy_mimick.vectors.features import BOW, EOW, UNK, CharVocab, NgramVocab, clip_word, word_ngrams
from spacy_mimick.vectors.mimick_model import MimickModel, MimickModelError, length_batches
from spacy_mimick.vectors.mimick_trainer import TrainConfig, make_typo, split_dev, train_mimick

PAPER = {"@architectures": "spacy_mimick.Mimick.v1"}


def test_char_vocab_unknown_and_boundaries():
    vocab = CharVocab.build(["abc", "abd", "xyz"], min_count=2)
    assert vocab.chars == ["a", "b"]
    ids = vocab.encode("abé", max_chars=64)
    assert ids[0] == BOW and ids[-1] == EOW
    assert ids[3] == UNK  # "é" was never seen
    assert ids[1] == vocab.index["a"]


def test_nfc_normalisation_merges_spellings():
    vocab = CharVocab.build(["caf\u00e9"])
    assert vocab.encode("cafe\u0301", 64) == vocab.encode("caf\u00e9", 64)


def test_huge_words_are_clipped_at_both_ends():
    word = "a" * 5000 + "middle" + "z" * 5000
    clipped = clip_word(word, 64)
    assert len(clipped) == 64 and clipped.startswith("a" * 32) and clipped.endswith("z" * 32)
    assert clip_word("short", 64) == "short"


def test_ngrams_have_boundaries_and_no_whole_word():
    grams = word_ngrams("cat", 3, 6, 64)
    assert "<ca" in grams and "at>" in grams and "<cat>" not in grams
    vocab = NgramVocab.build(["cat", "cats"], 3, 6, 64)
    assert vocab.encode("qqqq", 64) == [0]  # nothing known: the UNK n-gram


@pytest.mark.parametrize("bad,error", [("", ValueError), (None, TypeError), (3, TypeError)])
def test_predict_rejects_bad_words(bad, error):
    model = MimickModel.create(PAPER, ["cat", "dog"], 8)
    with pytest.raises(error, match="empty string|expected a word"):
        model.predict(["ok", bad])


def test_predict_any_unicode_and_huge_words():
    model = MimickModel.create(PAPER, ["cat", "dog"], 8)
    out = model.predict(["猫", "🙂🙂", "x" * 100_000, "cat"])
    assert out.shape == (4, 8) and numpy.isfinite(out).all()


def test_prediction_is_deterministic_and_order_independent(tiny_mimick):
    model = MimickModel.from_disk(tiny_mimick)
    words = ["unbelievable", "McNeally", "corssing", "a", "lawnmower", "flatfish", "x" * 70]
    first = model.predict(words)
    again = model.predict(list(reversed(words)))[::-1]
    numpy.testing.assert_array_equal(first, again)
    one_by_one = numpy.vstack([model.predict([w]) for w in words])
    numpy.testing.assert_allclose(first, one_by_one, atol=1e-6)


def test_ngram_prediction_does_not_depend_on_the_batch(glove_small):
    """The n-gram model's vector for a word is the same bits alone or among any other words (the
    BiLSTM's differ by ~1e-7 with the batch, above), so what mimick_vectors caches does not depend
    on what was predicted with it, and a training that reads it is the same run after run."""
    small = glove_small.subset(numpy.arange(800))
    model = train_mimick(small, {"@architectures": "spacy_mimick.MimickNgram.v1"},
                         TrainConfig(max_epochs=1, dev_fraction=0.05), progress=False).model
    words = ["unbelievable", "McNeally", "corssing", "a", "lawnmower", "flatfish", "x" * 70]
    others = [w + suffix for w in small.words[:300] for suffix in ("s", "ing")]
    alone = numpy.vstack([model.predict([w]) for w in words])
    numpy.testing.assert_array_equal(alone, model.predict(words))
    numpy.testing.assert_array_equal(alone, model.predict(others[:250] + words + others[250:])[250:250 + len(words)])


def test_length_batches_group_equal_lengths():
    words = ["aa", "b", "cc", "ddd", "e"]
    batches = length_batches(words, 10, 64)
    assert [[words[i] for i in b] for b in batches] == [["b", "e"], ["aa", "cc"], ["ddd"]]


def test_round_trip_disk_and_bytes(tiny_mimick, tmp_path):
    model = MimickModel.from_disk(tiny_mimick)
    words = ["pesky", "Vercellotti", "hurtling"]
    model.to_disk(tmp_path / "copy")
    numpy.testing.assert_array_equal(model.predict(words), MimickModel.from_disk(tmp_path / "copy").predict(words))
    numpy.testing.assert_array_equal(model.predict(words), MimickModel.from_bytes(model.to_bytes()).predict(words))
    assert model.meta["n_train"] > 0 and "train_config" in model.meta


def test_truncated_and_missing_model_files(tiny_mimick, tmp_path):
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(tiny_mimick, broken)
    data = (broken / "model.pt").read_bytes()
    (broken / "model.pt").write_bytes(data[: len(data) // 2])
    with pytest.raises(MimickModelError, match="model.pt.*truncated or corrupt"):
        MimickModel.from_disk(broken)
    (broken / "features.json").unlink()
    with pytest.raises(MimickModelError, match="missing features.json"):
        MimickModel.from_disk(broken)
    with pytest.raises(MimickModelError, match="not a Mimick model directory"):
        MimickModel.from_disk(tmp_path / "nothing-here")
    with pytest.raises(MimickModelError, match="could not be decoded"):
        MimickModel.from_bytes(MimickModel.from_disk(tiny_mimick).to_bytes()[:100])


def test_unknown_architecture_is_rejected():
    with pytest.raises(Exception, match="spacy_mimick.Nope.v1|Could not find"):
        MimickModel.create({"@architectures": "spacy_mimick.Nope.v1"}, ["a"], 4)


def test_training_learns_on_real_glove(glove_small):
    """Dev loss after training is well below the loss of predicting the zero vector."""
    # l2 alone, so that the dev loss is comparable with the zero vector's (the default adds InfoNCE).
    result = train_mimick(glove_small, PAPER, TrainConfig(max_epochs=4, dev_fraction=0.05, loss="l2"),
                          progress=False)
    _, dev = split_dev(len(glove_small), 0.05, 0)
    zero_loss = float((glove_small.matrix[dev] ** 2).sum(axis=1).mean())
    assert result.history[-1].dev_loss < result.history[0].dev_loss
    assert min(r.dev_loss for r in result.history) < 0.95 * zero_loss
    assert result.model.meta["best_epoch"] == result.best_epoch


@pytest.mark.parametrize("arch,loss", [("spacy_mimick.MimickNgram.v1", "cosine"),
                                       ("spacy_mimick.MimickHybrid.v1", "l2+cosine"),
                                       ("spacy_mimick.MimickNgram.v1", "contrastive"),
                                       ("spacy_mimick.MimickNgram.v1", "l2+contrastive")])
def test_other_architectures_and_losses_train(glove_small, arch, loss):
    small = glove_small.subset(numpy.arange(800))
    result = train_mimick(
        small, {"@architectures": arch},
        TrainConfig(max_epochs=2, loss=loss, freq_weight=True, typo_prob=0.2, dev_fraction=0.05),
        progress=False,
    )
    assert numpy.isfinite(result.model.predict(["unseenword"])).all()


def test_info_nce_prefers_own_target_and_masks_duplicate_negatives():
    import torch

    from spacy_mimick.vectors.mimick_trainer import info_nce

    gold = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    good = info_nce(gold.clone(), gold, None, 0.07)
    bad = info_nce(gold.flip(0), gold, None, 0.07)
    assert (good < 0.01).all() and (bad > 5).all()
    # A random negative that is the word's own target must not count against it.
    dup = info_nce(gold.clone(), gold, gold[:1].clone(), 0.07)
    assert torch.allclose(dup[0], good[0])
    assert dup[1] > good[1]  # for the other word it is one more negative
    assert torch.isfinite(info_nce(gold, gold, torch.zeros(0, 2), 0.07)).all()


def test_same_rows_is_the_full_comparison():
    """The InfoNCE mask of negatives equal to a word's target, built from first-coordinate
    matches, is the mask of comparing every pair in full (duplicates and near-collisions too)."""
    import torch

    from spacy_mimick.vectors.mimick_trainer import _same_rows

    gen = torch.Generator().manual_seed(0)
    gold, negatives = torch.randn(16, 5, generator=gen), torch.randn(40, 5, generator=gen)
    negatives[3] = gold[5]
    negatives[7] = gold[5]
    negatives[20] = gold[15]
    negatives[9, 0] = gold[2, 0]  # same first coordinate, another row
    full = (negatives.unsqueeze(0) == gold.unsqueeze(1)).all(dim=2)
    assert int(full.sum()) == 3
    assert torch.equal(_same_rows(gold, negatives), full)
    assert _same_rows(gold, torch.randn(4, 5, generator=gen)) is None


def test_contrastive_training_separates_words(glove_small):
    """After contrastive training, a word's prediction is nearer its own vector than others'."""
    small = glove_small.subset(numpy.arange(1500))
    result = train_mimick(small, {"@architectures": "spacy_mimick.MimickNgram.v1"},
                          TrainConfig(max_epochs=4, loss="contrastive", dev_fraction=0.05, typo_prob=0.0),
                          progress=False)
    assert result.history[-1].dev_loss < result.history[0].dev_loss
    words = small.words[:200]
    pred = result.model.predict(words)
    pred /= numpy.linalg.norm(pred, axis=1, keepdims=True)
    true = small.matrix[:200] / numpy.linalg.norm(small.matrix[:200], axis=1, keepdims=True)
    top1 = (pred @ true.T).argmax(axis=1)
    assert (top1 == numpy.arange(200)).mean() > 0.3
    # Outputs are scaled to the table's mean norm (the loss leaves the norm free).
    mean_norm = numpy.linalg.norm(small.matrix, axis=1).mean()
    predicted_norm = numpy.linalg.norm(result.model.predict(small.words[:1000]), axis=1).mean()
    assert abs(predicted_norm / mean_norm - 1) < 0.2


def test_train_config_is_validated(glove_small):
    with pytest.raises(ValueError, match="loss must be one of"):
        train_mimick(glove_small, PAPER, TrainConfig(loss="l1"), progress=False)
    with pytest.raises(ValueError, match="temperature"):
        train_mimick(glove_small, PAPER, TrainConfig(loss="contrastive", temperature=0), progress=False)


def test_typos_are_one_edit():
    import random

    rng = random.Random(0)
    for _ in range(200):
        typo = make_typo("keyboard", rng)
        assert abs(len(typo) - len("keyboard")) <= 1
    assert make_typo("ab", rng) == "ab"


def test_seeded_training_is_reproducible(glove_small):
    small = glove_small.subset(numpy.arange(500))
    cfg = TrainConfig(max_epochs=1, dev_fraction=0.05, seed=3)
    a = train_mimick(small, PAPER, cfg, progress=False).model.predict(["zzz", "mimic"])
    b = train_mimick(small, PAPER, cfg, progress=False).model.predict(["zzz", "mimic"])
    numpy.testing.assert_array_equal(a, b)
