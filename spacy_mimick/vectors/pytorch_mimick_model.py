"""The torch modules that map a word's spelling to a vector.

- ``MimickBiLSTM``: the paper's model (section 2): character embeddings -> one-layer BiLSTM ->
  final forward and backward states concatenated -> Linear -> tanh -> Linear to the embedding's
  dimension.
- ``NgramBag``: BoS (Zhao et al. 2018): the mean of the word's character n-gram vectors.
- ``MimickHybrid``: both, summed: the BiLSTM models word shape and typos, the n-gram bag gives a
  strong morpheme-level signal that a small LSTM learns slowly.

Each takes the batch dict made by ``mimick_model.MimickModel.featurize``.
"""
from typing import Dict

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from . import fast_bilstm


def one_length(batch: Dict[str, torch.Tensor]) -> bool:
    """Whether every word of a character batch fills its matrix (no padding): the batches the
    trainer and ``predict`` make, which run without packing and through the C steps."""
    return bool((batch["lengths"] == batch["chars"].shape[1]).all())


class MimickBiLSTM(nn.Module):
    def __init__(
        self, n_chars: int, width: int, char_embed: int = 20, hidden: int = 50,
        layers: int = 1, mlp_hidden: int = 0, dropout: float = 0.0,
    ):
        super().__init__()
        self.embed = nn.Embedding(n_chars, char_embed, padding_idx=0)
        self.lstm = nn.LSTM(
            char_embed, hidden, num_layers=layers, bidirectional=True, batch_first=True,
            dropout=dropout if layers > 1 else 0.0,
        )
        self.dropout = nn.Dropout(dropout)
        mlp_hidden = mlp_hidden or width
        self.mlp = nn.Sequential(
            nn.Linear(2 * hidden, mlp_hidden), nn.Tanh(), nn.Linear(mlp_hidden, width)
        )

    def forward(self, batch: Dict[str, torch.Tensor]) -> torch.Tensor:
        chars, lengths = batch["chars"], batch["lengths"]
        same_length = one_length(batch)
        if same_length and self.training and not self.dropout.p and fast_bilstm.usable(self.lstm, chars):
            # Training on the CPU: the same function and gradients as below, faster (fast_bilstm.py).
            return self.mlp(fast_bilstm.char_bilstm_states(self.embed, self.lstm, chars))
        emb = self.dropout(self.embed(chars))
        if same_length:
            # All words of the same length (the trainer and predict() batch them so): no padding,
            # and the plain LSTM call is much faster on CPU than a packed one.
            _, (h, _) = self.lstm(emb)
        else:
            packed = pack_padded_sequence(emb, lengths, batch_first=True, enforce_sorted=False)
            _, (h, _) = self.lstm(packed)
        # h: (layers * 2, batch, hidden); the last layer's forward and backward final states.
        states = torch.cat([h[-2], h[-1]], dim=1)
        return self.mlp(self.dropout(states))


class NgramBag(nn.Module):
    def __init__(self, n_ngrams: int, width: int):
        super().__init__()
        # Sparse gradients: a step touches only the n-grams of its batch, not the whole table.
        self.bag = nn.EmbeddingBag(n_ngrams, width, mode="mean", sparse=True)
        nn.init.normal_(self.bag.weight, std=0.01)

    def forward(self, batch: Dict[str, torch.Tensor]) -> torch.Tensor:
        return self.bag(batch["ngrams"], batch["offsets"])


class MimickHybrid(nn.Module):
    def __init__(self, lstm: MimickBiLSTM, ngrams: NgramBag):
        super().__init__()
        self.lstm = lstm
        self.ngrams = ngrams

    def forward(self, batch: Dict[str, torch.Tensor]) -> torch.Tensor:
        return self.lstm(batch) + self.ngrams(batch)
