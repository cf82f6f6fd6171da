"""The FLOP count behind benchmarks/train_throughput.py's --roofline, against torch's own counter."""
import sys
from pathlib import Path

import numpy
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from train_throughput import step_flops  # noqa: E402


@pytest.mark.parametrize("n_words,length", [(1, 1), (3, 6), (5, 11)])
def test_step_flops_counts_what_torch_counts(n_words, length):
    """The paper's BiLSTM (20 -> 50 per direction) + MLP (100 -> 50 -> 50), unrolled into cells
    so that torch's FlopCounterMode sees every matrix product of forward and backward."""
    torch.manual_seed(0)
    fwd, bwd = torch.nn.LSTMCell(20, 50), torch.nn.LSTMCell(20, 50)
    mlp = torch.nn.Sequential(torch.nn.Linear(100, 50), torch.nn.Tanh(), torch.nn.Linear(50, 50))
    chars = torch.randn(n_words, length, 20, requires_grad=True)  # embeddings are trained
    with FlopCounterMode(display=False) as counter:
        state_f = fwd(chars[:, 0])
        for t in range(1, length):
            state_f = fwd(chars[:, t], state_f)
        state_b = bwd(chars[:, -1])
        for t in range(length - 2, -1, -1):
            state_b = bwd(chars[:, t], state_b)
        mlp(torch.cat([state_f[0], state_b[0]], dim=1)).sum().backward()
    assert step_flops(numpy.full(n_words, length)) == counter.get_total_flops()
