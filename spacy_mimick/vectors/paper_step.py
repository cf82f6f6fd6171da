"""The paper model's whole training step on the CPU without autograd (``train --paper``).

``PaperModelStep`` computes the loss and every gradient of ``MimickBiLSTM`` on one batch of words
of one length, with the squared-L2 loss averaged over the batch: the BiLSTM through
``fast_bilstm``'s C recurrences, the MLP's and the input table's products written out. Autograd's
bookkeeping (a graph of ~40 nodes and their buffers per step) was a third of a step of this small
model; the numbers are autograd's to float rounding (``tests/test_fast_bilstm.py``).
"""
import torch
from torch import nn

from . import fast_bilstm
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

    def __init__(self, module: nn.Module):
        self.module = module

    @staticmethod
    def usable(module: nn.Module) -> bool:
        if type(module) is not MimickBiLSTM or module.dropout.p:
            return False
        mlp = module.mlp
        if not (len(mlp) == 3 and isinstance(mlp[0], nn.Linear) and isinstance(mlp[1], nn.Tanh)
                and isinstance(mlp[2], nn.Linear)):
            return False
        probe = torch.zeros(1, 1, dtype=torch.int64, device=module.embed.weight.device)
        with torch.enable_grad():
            return fast_bilstm.usable(module.lstm, probe)

    @torch.no_grad()
    def __call__(self, chars: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
        """Sets ``.grad`` of every parameter of the module to the gradient of the batch's mean
        loss; returns the per-word losses."""
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
