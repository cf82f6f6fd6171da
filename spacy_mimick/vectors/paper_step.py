"""The paper model's whole training step on the CPU without autograd (``train --paper``).

``PaperModelStep`` computes the loss and every gradient of ``MimickBiLSTM`` on one batch of words
of one length, with the squared-L2 loss averaged over the batch. With torch's sgemm at hand (see
``fast_bilstm``) the whole step is one C call (``_cpu_kernels.paper_step``): the input table, the
BiLSTM, the MLP and the loss forward and backward, the gradients written into one flat buffer.
Otherwise the BiLSTM runs through ``fast_bilstm``'s steps and the MLP's and the table's products
as torch operations. Autograd's bookkeeping (a graph of ~40 nodes and their buffers) and the
dozens of small torch operations were over a third of a step of this small model; the numbers
are autograd's to float rounding (``tests/test_fast_bilstm.py``).
"""
from typing import List

import numpy
import torch
from torch import nn

from ..devices import on_cpu
from . import fast_bilstm
from .fast_bilstm import gate_rows_stride
from .optimizers import flat_views
from .pytorch_mimick_model import MimickBiLSTM


class PaperModelStep:
    """The loss and every gradient of the paper model (``MimickBiLSTM``) on one batch of words of
    one length, with the squared-L2 loss averaged over the batch (``train --paper``), computed
    without autograd: the BiLSTM through the C recurrences above, the MLP's and the table's
    products written out. The same numbers as autograd through ``MimickBiLSTM`` (to float
    rounding; ``tests/test_fast_bilstm.py``), without the graph's bookkeeping, which was a third
    of a step of this small model.

    ``usable(module)`` says whether it applies (``MimickBiLSTM`` on the CPU, one layer, no dropout,
    extension built); the trainer falls back to autograd otherwise and for a batch of mixed lengths.
    """

    # The parameters in the order of _cpu_kernels.c's enum (A_EMBED ... A_B2), by their names in
    # MimickBiLSTM; their gradients follow in the same order.
    PARAMETERS = (
        "embed.weight", "lstm.weight_ih_l0", "lstm.weight_hh_l0", "lstm.bias_ih_l0", "lstm.bias_hh_l0",
        "lstm.weight_ih_l0_reverse", "lstm.weight_hh_l0_reverse", "lstm.bias_ih_l0_reverse",
        "lstm.bias_hh_l0_reverse", "mlp.0.weight", "mlp.0.bias", "mlp.2.weight", "mlp.2.bias",
    )

    def __init__(self, module: nn.Module):
        self.module = module
        named = dict(module.named_parameters())
        self.params: List[torch.Tensor] = [named[name] for name in self.PARAMETERS]
        # The gradients: views of one buffer that the C step writes (reused: each step replaces them).
        self.grad_flat = torch.zeros(sum(p.numel() for p in self.params))
        self.grads = flat_views(self.grad_flat, self.params)
        self._work = None  # the C step's work space (_work_addresses)
        self._grad_addresses = [g.data_ptr() for g in self.grads]
        self._addresses = numpy.empty(2 + 2 * len(self.params) + 12 + 1, dtype=numpy.int64)
        self._checked: List[int] = []

    @staticmethod
    def usable(module: nn.Module) -> bool:
        if type(module) is not MimickBiLSTM or module.dropout.p:
            return False
        mlp = module.mlp
        if not (len(mlp) == 3 and isinstance(mlp[0], nn.Linear) and isinstance(mlp[1], nn.Tanh)
                and isinstance(mlp[2], nn.Linear)):
            return False
        return fast_bilstm.supports(module.lstm)

    @torch.no_grad()
    def __call__(self, chars: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
        """Sets ``.grad`` of every parameter of the module to the gradient of the batch's mean
        loss; returns the per-word losses."""
        if fast_bilstm.has_sgemm():
            return self._in_c(chars, gold)
        module = self.module
        lstm, embed, first, second = module.lstm, module.embed, module.mlp[0], module.mlp[2]
        n_words = chars.shape[0]
        w_ih, w_hh, bias = fast_bilstm.stacked_weights(lstm)
        states, saved = fast_bilstm.forward_states(fast_bilstm.input_table(embed.weight, w_ih, bias), w_hh, chars)
        states = states.permute(2, 0, 1).reshape(n_words, -1)  # (B, 2H)
        hidden_layer = torch.addmm(first.bias, states, first.weight.t()).tanh_()
        diff = torch.addmm(second.bias, hidden_layer, second.weight.t()).sub_(gold)
        losses = diff.square().sum(dim=1)
        d_pred = diff.mul_(2.0 / n_words)  # of the mean of the losses
        second.weight.grad = d_pred.t().mm(hidden_layer)
        second.bias.grad = d_pred.sum(dim=0)
        d_hidden = d_pred.mm(second.weight).mul_(hidden_layer.square().neg_().add_(1.0))
        first.weight.grad = d_hidden.t().mm(states)
        first.bias.grad = d_hidden.sum(dim=0)
        d_states = d_hidden.mm(first.weight)  # (B, 2H) -> (2, H, B)
        d_table, d_w_hh = fast_bilstm.backward_states(saved, d_states.view(n_words, 2, -1).permute(1, 2, 0))
        # table = W_ih E^T + b: its gradient (2, V, 4H) gives those of W_ih, E and both biases.
        d_w_ih = torch.bmm(d_table.transpose(1, 2), embed.weight.unsqueeze(0).expand(2, -1, -1))
        d_embed = torch.bmm(d_table, w_ih).sum(dim=0)
        if embed.padding_idx is not None:
            d_embed[embed.padding_idx] = 0.0
        embed.weight.grad = d_embed
        d_bias = d_table.sum(dim=1)
        lstm.weight_ih_l0.grad, lstm.weight_ih_l0_reverse.grad = d_w_ih[0], d_w_ih[1]
        lstm.weight_hh_l0.grad, lstm.weight_hh_l0_reverse.grad = d_w_hh[0], d_w_hh[1]
        lstm.bias_ih_l0.grad, lstm.bias_hh_l0.grad = d_bias[0], d_bias[0].clone()
        lstm.bias_ih_l0_reverse.grad, lstm.bias_hh_l0_reverse.grad = d_bias[1], d_bias[1].clone()
        return losses

    def _work_addresses(self, sizes: List[int]) -> List[int]:
        """The addresses of float32 arrays of these sizes, carved from one buffer kept between
        steps (it grows to the largest batch): a step allocates nothing large. 64-byte aligned."""
        rounded = [(size + 15) // 16 * 16 for size in sizes]
        if self._work is None or self._work.numel() < sum(rounded) + 16:
            self._work = torch.empty(sum(rounded) + 16)
        base = (self._work.data_ptr() + 63) // 64 * 64
        addresses, offset = [], 0
        for size in rounded:
            addresses.append(base + 4 * offset)
            offset += size
        return addresses

    def _in_c(self, chars: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
        module = self.module
        n_words, n_steps = chars.shape
        vocab, char_dim = module.embed.weight.shape
        hidden = module.lstm.hidden_size
        mlp_hidden, width = module.mlp[0].out_features, module.mlp[2].out_features
        gates = 4 * hidden
        # Kept in variables until the call returns: the C step reads their addresses.
        ids = fast_bilstm.character_ids(chars, vocab)
        gold = gold.contiguous()
        if gold.shape != (n_words, width) or gold.dtype != torch.float32:
            raise ValueError(f"gold vectors: expected float32 ({n_words}, {width}), got {gold.dtype} {tuple(gold.shape)}")
        param_addresses = [p.data_ptr() for p in self.params]
        if param_addresses != self._checked:  # new parameter tensors (e.g. Adam's flat buffer): check them once
            if not all(p.is_contiguous() and p.dtype == torch.float32 and on_cpu(p.device) for p in self.params):
                raise ValueError("the paper step needs contiguous float32 parameters on the CPU")
            self._checked = param_addresses
        ld = gate_rows_stride(n_steps, n_words)
        work = self._work_addresses([
            2 * gates * vocab,  # table (2, G, V)
            n_steps * 2 * gates * n_words,  # acts (T, 2, G, B)
            (n_steps + 1) * 2 * hidden * n_words,  # cs (T + 1, 2, H, B)
            n_steps * 2 * hidden * n_words,  # tcs (T, 2, H, B)
            2 * hidden * (n_steps + 1) * n_words,  # hs (2, H, T + 1, B)
            2 * hidden * n_words,  # dh (2, H, B)
            2 * hidden * n_words,  # dc (2, H, B)
            2 * gates * ld,  # dgates (2, G, ld)
            2 * vocab * gates,  # dtable (2, V, G)
            mlp_hidden * n_words,  # hidden layer, transposed (M, B)
            width * n_words,  # pred, transposed (D, B), then its gradient
            mlp_hidden * n_words,  # the hidden layer's gradient (M, B)
        ])
        losses = torch.empty(n_words)
        self._addresses[:] = [ids.data_ptr(), gold.data_ptr()] + param_addresses + self._grad_addresses + work + [
            losses.data_ptr()]
        padding = module.embed.padding_idx if module.embed.padding_idx is not None else -1
        fast_bilstm._cpu_kernels.paper_step(n_steps, hidden, n_words, vocab, char_dim, mlp_hidden, width, ld,
                                            padding, self._addresses.ctypes.data, len(self._addresses))
        for p, g in zip(self.params, self.grads):
            if p.grad is not g:  # set once (and again after a zero_grad); the C step rewrites them
                p.grad = g
        return losses
