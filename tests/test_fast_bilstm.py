"""The C steps of the paper model's BiLSTM (fast_bilstm.py) against nn.Embedding + nn.LSTM."""
import platform
from dataclasses import replace

import numpy
import pytest
import torch

from conftest import can_build_extensions
from spacy_mimick.vectors import fast_bilstm
from spacy_mimick.vectors.mimick_trainer import PAPER_ARCH, PAPER_CONFIG, train_mimick
from spacy_mimick.vectors.paper_step import PaperModelStep
from spacy_mimick.vectors.pytorch_mimick_model import MimickBiLSTM


def test_the_extension_is_built_where_a_compiler_is():
    # `pip install` compiles it; only an install without a C compiler (or Python's headers) lacks it.
    assert fast_bilstm.available() or not can_build_extensions(), (
        "spacy_mimick.vectors._cpu_kernels was not built although a C compiler and Python's headers are here; "
        "reinstall with `pip install -e .` and read the build's output"
    )


def _modules(n_chars=60, char_embed=20, hidden=50, seed=0, scale=1.0):
    torch.manual_seed(seed)
    embed = torch.nn.Embedding(n_chars, char_embed, padding_idx=0)
    lstm = torch.nn.LSTM(char_embed, hidden, batch_first=True, bidirectional=True)
    with torch.no_grad():
        for p in list(lstm.parameters()) + [embed.weight]:
            p.mul_(scale)
    return embed, lstm


def _reference(embed, lstm, chars):
    _, (h, _) = lstm(embed(chars))
    return torch.cat([h[0], h[1]], dim=1)


def _outputs_and_gradients(fn, embed, lstm, chars, weights):
    params = [embed.weight] + list(lstm.parameters())
    for p in params:
        p.grad = None
    out = fn(embed, lstm, chars)
    (out * weights).sum().backward()
    return out.detach(), [p.grad.clone() for p in params]


needs_extension = pytest.mark.skipif(not fast_bilstm.available(), reason="built without a C compiler")


def test_the_recurrences_run_in_c_with_torchs_sgemm():
    # torch's x86 wheels export MKL's sgemm_: each recurrence is then one C call.
    if fast_bilstm.available() and platform.machine() in ("x86_64", "AMD64"):
        assert fast_bilstm._cpu_kernels.has_sgemm()


@pytest.fixture(params=["C", "Python"])
def recurrences(request, monkeypatch):
    """Both ways of running the recurrences: in C with sgemm, and the loops in Python with bmm."""
    if request.param == "C" and not (fast_bilstm.available() and fast_bilstm._cpu_kernels.has_sgemm()):
        pytest.skip("no sgemm in torch's library here: the loops in Python run")
    monkeypatch.setitem(fast_bilstm._SGEMM, "on", request.param == "C")
    return request.param


@needs_extension
@pytest.mark.parametrize("n_words,n_chars", [(128, 7), (37, 3), (1, 1), (5, 20), (300, 4), (16, 12)])
@pytest.mark.parametrize("scale", [1.0, 8.0])
def test_same_states_and_gradients_as_nn_lstm(n_words, n_chars, scale, recurrences):
    # scale 8: gates far into the sigmoid's and tanh's flat parts, where the exp approximation clamps
    embed, lstm = _modules(scale=scale)
    gen = torch.Generator().manual_seed(n_words * 100 + n_chars)
    chars = torch.randint(1, embed.num_embeddings, (n_words, n_chars), generator=gen)
    weights = torch.randn(n_words, 2 * lstm.hidden_size, generator=gen)
    ref, ref_grads = _outputs_and_gradients(_reference, embed, lstm, chars, weights)
    out, grads = _outputs_and_gradients(fast_bilstm.char_bilstm_states, embed, lstm, chars, weights)
    assert out.shape == ref.shape
    assert torch.allclose(out, ref, atol=2e-6, rtol=0)
    names = ["embed.weight"] + [name for name, _ in lstm.named_parameters()]
    for name, a, b in zip(names, ref_grads, grads):
        assert torch.allclose(a, b, atol=2e-5 * max(1.0, float(a.abs().max())), rtol=0), name


@needs_extension
def test_padding_row_gets_no_gradient_and_unused_characters_none(recurrences):
    embed, lstm = _modules()
    chars = torch.tensor([[3, 4, 5], [5, 4, 3]])
    out = fast_bilstm.char_bilstm_states(embed, lstm, chars)
    out.sum().backward()
    used = torch.zeros(embed.num_embeddings, dtype=torch.bool)
    used[[3, 4, 5]] = True
    assert embed.weight.grad[~used].abs().max() == 0
    assert (embed.weight.grad[used].abs().sum(dim=1) > 0).all()


@needs_extension
def test_a_nan_weight_gives_nan_states(recurrences):
    # The exponentials are clamped; a NaN must not be clamped into a number (a diverged training
    # has to show a NaN loss, which the trainer turns into an error).
    embed, lstm = _modules()
    with torch.no_grad():
        lstm.weight_hh_l0[0, 0] = float("nan")
    chars = torch.randint(1, embed.num_embeddings, (4, 5))
    out = fast_bilstm.char_bilstm_states(embed, lstm, chars)
    assert torch.isnan(out[:, : lstm.hidden_size]).any()


@needs_extension
@pytest.mark.parametrize("bad", [-1, 60, 1000])
def test_character_ids_outside_the_table_are_refused(bad):
    embed, lstm = _modules(n_chars=60)
    chars = torch.tensor([[1, 2, 3], [4, bad, 6]])
    with pytest.raises(IndexError, match=rf"character id {bad} of word 1 \(character 1\).*60 characters"):
        fast_bilstm.char_bilstm_states(embed, lstm, chars)


def test_used_only_while_training_on_same_length_words(monkeypatch):
    calls = []
    real = fast_bilstm.char_bilstm_states
    monkeypatch.setattr(fast_bilstm, "char_bilstm_states", lambda *a: calls.append(1) or real(*a))
    module = MimickBiLSTM(n_chars=30, width=8)
    same = {"chars": torch.randint(1, 30, (4, 5)), "lengths": torch.full((4,), 5)}
    mixed = {"chars": torch.randint(1, 30, (2, 5)), "lengths": torch.tensor([5, 3])}
    module.train()
    module(same)
    assert len(calls) == (1 if fast_bilstm.available() else 0)
    module(mixed)  # padded words: nn.LSTM over a packed sequence
    with torch.no_grad():
        module(same)  # no gradient wanted (prediction): nn.LSTM
    module.eval()
    module(same)
    assert len(calls) == (1 if fast_bilstm.available() else 0)


@needs_extension
def test_training_with_it_follows_nn_lstm(glove_small, monkeypatch):
    """Three epochs of `train --paper` on real GloVe rows: the same dev losses either way."""
    config = replace(PAPER_CONFIG, max_epochs=3, patience=5)
    vectors = glove_small.subset(numpy.arange(1500))
    fast = train_mimick(vectors, PAPER_ARCH, config, progress=False, log=lambda m: None)
    monkeypatch.setattr(fast_bilstm, "_cpu_kernels", None)
    assert not fast_bilstm.available()
    plain = train_mimick(vectors, PAPER_ARCH, config, progress=False, log=lambda m: None)
    fast_dev = [row.dev_loss for row in fast.history]
    plain_dev = [row.dev_loss for row in plain.history]
    assert len(fast_dev) == len(plain_dev) == 3
    assert fast_dev == pytest.approx(plain_dev, rel=1e-4)
    assert fast_dev[-1] < fast_dev[0]  # it learns


@needs_extension
@pytest.mark.parametrize("n_words,n_chars", [(128, 7), (3, 1), (41, 12)])
def test_paper_step_gives_autograds_loss_and_gradients(n_words, n_chars, recurrences):
    """PaperModelStep (no autograd) against autograd through MimickBiLSTM with nn.LSTM."""
    torch.manual_seed(n_words)
    module = MimickBiLSTM(n_chars=70, width=50)
    assert PaperModelStep.usable(module)
    chars = torch.randint(1, 70, (n_words, n_chars))
    gold = torch.randn(n_words, 50)
    batch = {"chars": chars, "lengths": torch.full((n_words,), n_chars)}
    module.eval()  # eval: MimickBiLSTM runs nn.LSTM (autograd still records)
    reference = ((module(batch) - gold) ** 2).sum(dim=1)
    reference.mean().backward()
    expected = {name: p.grad.clone() for name, p in module.named_parameters()}
    for p in module.parameters():
        p.grad = None
    module.train()
    losses = PaperModelStep(module)(chars, gold)
    assert torch.allclose(losses, reference.detach(), rtol=1e-5, atol=1e-5)
    for name, p in module.named_parameters():
        assert p.grad is not None, name
        scale = max(1e-3, float(expected[name].abs().max()))
        assert torch.allclose(p.grad, expected[name], atol=1e-5 * scale, rtol=0), name


def test_paper_step_applies_to_the_paper_model_only():
    from spacy_mimick.vectors.pytorch_mimick_model import MimickHybrid, NgramBag

    assert PaperModelStep.usable(MimickBiLSTM(n_chars=30, width=8)) == fast_bilstm.available()
    assert not PaperModelStep.usable(MimickBiLSTM(n_chars=30, width=8, dropout=0.2))
    assert not PaperModelStep.usable(MimickBiLSTM(n_chars=30, width=8, layers=2))
    assert not PaperModelStep.usable(MimickHybrid(MimickBiLSTM(n_chars=30, width=8), NgramBag(50, 8)))
