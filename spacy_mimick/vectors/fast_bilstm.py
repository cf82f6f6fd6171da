"""The paper model's character BiLSTM for training on the CPU, faster than ``nn.LSTM``.

Same function and gradients as ``nn.Embedding`` -> ``nn.LSTM(bidirectional=True)`` (one layer,
final states), computed differently:

- The input part of every gate depends on the character only: ``W_ih e_c + b_ih + b_hh`` is one
  table of 4H numbers per character and direction, computed once per batch (V x 20 x 4H products
  instead of one per character of every word). Each step gathers its rows.
- The recurrences run in ``_cpu_kernels.c``: each one C call whose matrix products go to the
  ``sgemm`` of torch's own BLAS (found in its library and checked on a small product when this
  module is imported; without it, the loops run here in Python with torch's ``bmm``), the gates'
  element-wise work one pass per character over a layout where the words of the batch are
  contiguous.

``MimickBiLSTM`` uses it while training on the CPU when every word of the batch has the same
length (the trainer batches them so); ``paper_step.PaperModelStep`` builds the whole training
step of ``train --paper`` on it. Without the extension (``pip install`` compiles it; no C
compiler at hand) ``nn.LSTM`` runs instead: the same results, slower. Measured in
``benchmarks/train_throughput.py``; equality with ``nn.LSTM`` in ``tests/test_fast_bilstm.py``.
"""
import ctypes
import sys
from pathlib import Path
from typing import Optional, Tuple

import torch
from torch import nn

from ..devices import on_cpu

try:
    from . import _cpu_kernels
except ImportError:  # built without a C compiler: MimickBiLSTM keeps nn.LSTM
    _cpu_kernels = None


def _find_sgemm() -> int:
    """The address of the BLAS ``sgemm_`` in torch's CPU library (MKL in the x86 wheels), checked
    on a small product; 0 where there is none or it does not give the right answer."""
    path = Path(torch.__file__).parent / "lib" / ("libtorch_cpu" + (".dylib" if sys.platform == "darwin" else ".so"))
    try:
        sgemm = ctypes.CDLL(str(path)).sgemm_
    except (OSError, AttributeError):
        return 0
    a = torch.arange(6, dtype=torch.float32).view(2, 3)
    b = torch.arange(12, dtype=torch.float32).view(3, 4) - 5
    c = torch.full((2, 4), float("nan"))
    i32, f32 = ctypes.c_int32, ctypes.c_float
    ref = ctypes.byref
    # row-major c = a @ b as the column-major c^T = b^T a^T
    sgemm(b"N", b"N", ref(i32(4)), ref(i32(2)), ref(i32(3)), ref(f32(1.0)), ctypes.c_void_p(b.data_ptr()),
          ref(i32(4)), ctypes.c_void_p(a.data_ptr()), ref(i32(3)), ref(f32(0.0)), ctypes.c_void_p(c.data_ptr()),
          ref(i32(4)))
    return ctypes.cast(sgemm, ctypes.c_void_p).value if torch.equal(c, a @ b) else 0


if _cpu_kernels is not None:
    # With it, each recurrence is one C call (no Python per character); without, the loops below.
    _cpu_kernels.set_sgemm(_find_sgemm())


_SGEMM = {"on": True}  # tests switch the C recurrences off to check the loops in Python


def has_sgemm() -> bool:
    """Whether the recurrences (and PaperModelStep) run as single C calls."""
    return _cpu_kernels is not None and _SGEMM["on"] and _cpu_kernels.has_sgemm()


def character_ids(chars: torch.Tensor, vocab: int) -> torch.Tensor:
    """(2, T, B) int32: the characters each step reads, per direction, from ``chars`` (B, T) int64;
    an IndexError names the first id outside the table (the C steps index it with them)."""
    n_words, n_steps = chars.shape
    if chars.dtype != torch.int64:
        raise TypeError(f"character ids must be int64, got {chars.dtype}")
    chars = chars.contiguous()
    ids = torch.empty(2, n_steps, n_words, dtype=torch.int32)
    bad = _cpu_kernels.prepare_ids(n_steps, n_words, vocab, chars.data_ptr(), ids.data_ptr())
    if bad >= 0:
        word, step = divmod(bad, n_steps)
        raise IndexError(f"character id {int(chars[word, step])} of word {word} (character {step}) "
                         f"is outside the model's {vocab} characters")
    return ids


def available() -> bool:
    """Whether the C extension was built."""
    return _cpu_kernels is not None


def supports(lstm: nn.LSTM) -> bool:
    """Whether the C steps compute ``lstm`` (built; one bidirectional float32 layer on the CPU)."""
    return (
        _cpu_kernels is not None
        and lstm.num_layers == 1
        and lstm.bidirectional
        and lstm.bias
        and lstm.batch_first
        and lstm.proj_size == 0
        and on_cpu(lstm.weight_hh_l0.device)
        and lstm.weight_hh_l0.dtype == torch.float32
    )


def usable(lstm: nn.LSTM, chars: torch.Tensor) -> bool:
    """Whether ``char_bilstm_states`` can stand in for ``lstm`` on this batch (gradients wanted)."""
    return (
        torch.is_grad_enabled()
        and supports(lstm)
        and on_cpu(chars.device)
        and chars.dim() == 2
        and chars.shape[0] > 0
        and chars.shape[1] > 0
    )


def gate_rows_stride(n_steps: int, n_words: int) -> int:
    """The distance between rows of the gate gradients (2, 4H, T x B): 16 floats more than a row,
    so that with B = 128 the rows do not all fall in 8 of the L1 cache's 64 sets (_cpu_kernels.c)."""
    return n_steps * n_words + 16


def stacked_weights(lstm: nn.LSTM) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Both directions' W_ih (2, 4H, E), W_hh (2, 4H, H) and b_ih + b_hh (2, 4H)."""
    w_ih = torch.stack([lstm.weight_ih_l0, lstm.weight_ih_l0_reverse])
    w_hh = torch.stack([lstm.weight_hh_l0, lstm.weight_hh_l0_reverse])
    bias = torch.stack([lstm.bias_ih_l0 + lstm.bias_hh_l0, lstm.bias_ih_l0_reverse + lstm.bias_hh_l0_reverse])
    return w_ih, w_hh, bias


def input_table(embed_weight: torch.Tensor, w_ih: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """(2, 4H, V): the input part of the gates for every character of the vocabulary."""
    return torch.baddbmm(bias.unsqueeze(2), w_ih, embed_weight.t().unsqueeze(0).expand(2, -1, -1))


def char_bilstm_states(embed: nn.Embedding, lstm: nn.LSTM, chars: torch.Tensor) -> torch.Tensor:
    """(B, 2H): the final forward and backward states of ``lstm`` over ``embed(chars)``.

    ``chars`` (B, T): the character ids of B words of T characters each (no padding).
    """
    w_ih, w_hh, bias = stacked_weights(lstm)
    states = _CharBiLSTM.apply(input_table(embed.weight, w_ih, bias), w_hh, chars)  # (2, H, B)
    return states.permute(2, 0, 1).reshape(chars.shape[0], -1)


class SavedStates:
    """What the backward recurrence needs from the forward one."""

    __slots__ = ("w_hh", "ids", "acts", "cs", "tcs", "hs", "vocab")

    def __init__(self, w_hh, ids, acts, cs, tcs, hs, vocab):
        self.w_hh, self.ids, self.acts, self.cs, self.tcs, self.hs, self.vocab = w_hh, ids, acts, cs, tcs, hs, vocab


def forward_states(table: torch.Tensor, w_hh: torch.Tensor, chars: torch.Tensor) -> Tuple[torch.Tensor, SavedStates]:
    """The final states (2, H, B) and what the backward recurrence needs."""
    n_words, n_steps = chars.shape
    hidden, vocab = w_hh.shape[2], table.shape[2]
    gates = 4 * hidden
    # Kept in variables: the C calls read their addresses, so the tensors must outlive them.
    table, w_hh = table.contiguous(), w_hh.contiguous()
    ids = character_ids(chars, vocab)  # (2, T, B); backward direction reversed
    acts = torch.empty(n_steps, 2, gates, n_words)
    cs = torch.empty(n_steps + 1, 2, hidden, n_words)
    tcs = torch.empty(n_steps, 2, hidden, n_words)
    hs = torch.empty(2, hidden, n_steps + 1, n_words)
    cs[0] = 0.0  # c_-1 and h_-1; every later step is written by the C step
    hs[:, :, 0] = 0.0
    sizes = (n_steps, hidden, n_words, vocab)
    addresses = (acts.data_ptr(), table.data_ptr(), ids.data_ptr(), cs.data_ptr(), tcs.data_ptr(), hs.data_ptr())
    if has_sgemm():
        _cpu_kernels.forward_all(*sizes, *addresses, w_hh.data_ptr())
    else:
        for t in range(n_steps):
            if t:  # the recurrent part of the gates; at t = 0, h is zero
                torch.bmm(w_hh, hs[:, :, t], out=acts[t])
            _cpu_kernels.forward_step(*sizes, t, *addresses)
    return hs[:, :, n_steps], SavedStates(w_hh, ids, acts, cs, tcs, hs, vocab)


def backward_states(saved: SavedStates, d_states: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """The gradients of the table (2, V, 4H: transposed) and of W_hh from those of the states."""
    w_hh, ids, acts, cs, tcs, hs = saved.w_hh, saved.ids, saved.acts, saved.cs, saved.tcs, saved.hs
    n_steps, _, gates, n_words = acts.shape
    hidden = gates // 4
    dh = d_states.contiguous().clone()
    dc = torch.zeros_like(dh)
    ld = gate_rows_stride(n_steps, n_words)
    dgates_rows = torch.empty(2, gates, ld)
    dgates = dgates_rows[:, :, : n_steps * n_words]
    d_table = torch.zeros(2, saved.vocab, gates)
    if has_sgemm():
        d_w_hh = torch.empty_like(w_hh)
        _cpu_kernels.backward_all(
            n_steps, hidden, n_words, saved.vocab, acts.data_ptr(), cs.data_ptr(), tcs.data_ptr(), hs.data_ptr(),
            w_hh.data_ptr(), ids.data_ptr(), dh.data_ptr(), dc.data_ptr(), dgates.data_ptr(), ld,
            d_w_hh.data_ptr(), d_table.data_ptr())
        return d_table, d_w_hh
    w_hh_t = w_hh.transpose(1, 2)
    addresses = (acts.data_ptr(), cs.data_ptr(), tcs.data_ptr(), dh.data_ptr(), dc.data_ptr(), dgates.data_ptr(), ld)
    steps = dgates.view(2, gates, n_steps, n_words)
    for t in range(n_steps - 1, -1, -1):
        _cpu_kernels.backward_step(n_steps, hidden, n_words, t, *addresses)
        if t:
            torch.bmm(w_hh_t, steps[:, :, t], out=dh)
    # h_t-1 for every step: (2, H, T x B) without a copy (hs keeps h_-1 = 0 at t = 0).
    h_prev = hs.as_strided((2, hidden, n_steps * n_words), hs.stride()[:2] + (1,))
    d_w_hh = torch.bmm(dgates, h_prev.transpose(1, 2))
    _cpu_kernels.table_grad(n_steps, hidden, n_words, saved.vocab, dgates.data_ptr(), ld, ids.data_ptr(),
                            d_table.data_ptr())
    return d_table, d_w_hh


class _CharBiLSTM(torch.autograd.Function):
    @staticmethod
    def forward(ctx, table: torch.Tensor, w_hh: torch.Tensor, chars: torch.Tensor) -> torch.Tensor:
        states, ctx.saved = forward_states(table, w_hh, chars)
        return states

    @staticmethod
    def backward(ctx, d_states: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]:
        d_table, d_w_hh = backward_states(ctx.saved, d_states)
        del ctx.saved
        return d_table.transpose(1, 2), d_w_hh, None
