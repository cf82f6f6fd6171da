"""The n-gram attention pooling (MimickNgram.v2) and typo'd copies (TrainConfig.typo_copies)."""
import numpy
import pytest
import torch

from spacy_mimick.mimick_model import MimickModel
from spacy_mimick.mimick_trainer import TrainConfig, train_mimick
from spacy_mimick.pytorch_mimick_model import NgramAttentionBag, NgramBag

V2 = {"@architectures": "spacy_mimick.MimickNgram.v2"}


def _batch(ids, lengths):
    offsets = numpy.zeros(len(lengths), dtype="int64")
    numpy.cumsum(lengths[:-1], out=offsets[1:])
    return {"ngrams": torch.tensor(ids), "offsets": torch.from_numpy(offsets)}


def test_attention_bag_starts_as_the_mean_and_learns_weights():
    torch.manual_seed(0)
    attn, mean = NgramAttentionBag(10, 4), NgramBag(10, 4)
    mean.bag.weight.data.copy_(attn.bag.weight.data)
    batch = _batch([1, 2, 3, 4, 5], [3, 2])
    assert torch.allclose(attn(batch), mean(batch), atol=1e-6)
    attn.score.weight.data[1] = 5.0  # n-gram 1 dominates the first word only
    out = attn(batch)
    assert torch.allclose(out[0], attn.bag.weight[1], atol=0.05)
    assert torch.allclose(out[1], mean(batch)[1], atol=1e-6)


def test_v2_trains_saves_and_loads_on_real_glove(glove_small, tmp_path):
    small = glove_small.subset(numpy.arange(1500))
    result = train_mimick(small, V2, TrainConfig(max_epochs=3, dev_fraction=0.05, typo_copies=1),
                          progress=False)
    assert result.history[-1].dev_loss < result.history[0].dev_loss
    scores = result.model.module.score.weight.detach().numpy()
    assert scores.std() > 0  # the weights moved away from the plain mean
    result.model.to_disk(tmp_path / "m")
    loaded = MimickModel.from_disk(tmp_path / "m")
    words = ["corssing", "the", "flatfish"]
    numpy.testing.assert_allclose(loaded.predict(words), result.model.predict(words), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="pooling"):
        train_mimick(small, {**V2, "pooling": "max"}, TrainConfig(max_epochs=1), progress=False)


def test_typo_copies_change_training_and_are_validated(glove_small):
    small = glove_small.subset(numpy.arange(600))
    plain = train_mimick(small, V2, TrainConfig(max_epochs=1, dev_fraction=0.05, typo_prob=0.0), progress=False)
    copies = train_mimick(small, V2, TrainConfig(max_epochs=1, dev_fraction=0.05, typo_prob=0.0, typo_copies=1),
                          progress=False)
    assert not numpy.allclose(plain.model.predict(["keyboard"]), copies.model.predict(["keyboard"]))
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="typo_copies"):
            train_mimick(small, V2, TrainConfig(typo_copies=bad), progress=False)
