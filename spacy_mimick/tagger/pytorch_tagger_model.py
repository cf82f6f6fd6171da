"""The torch network of the joint POS + morphological attribute tagger (paper section 4).

word representation -> multi-layer BiLSTM -> one MLP head per attribute (POS first).
The thinc wrapper around it (featurization, batching, serialization) is in ``tagger_model.py``.
"""
import io
import pickle
from typing import List, Optional, Sequence, Tuple

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ..errors import UserError

# Range of the random rows given to words that have no pretrained vector, as in the
# original DyNet tagger; used for the trainable table when the pipeline has no vectors.
RANDOM_INIT_RANGE = 0.8
# Whether predicting runs the heads as one fused layer (MimickTaggerNet._fused_heads); the
# same scores either way (benchmarks/predict_paths.py turns it off to compare).
FUSE_HEADS = True


class CharBiLSTM(nn.Module):
    """Encode each word by its characters: the final states of a forward and a backward LSTM.

    Both directions' final states are taken after the whole (boundary-marked) word, so the
    backward state has read the first character last. The original release used the
    backward LSTM's last *output* after a pad symbol instead, which carried no information.
    """

    def __init__(self, n_chars: int, char_embed: int, hidden_width: int):
        super().__init__()
        if hidden_width % 2:
            raise ValueError(f"char_hidden must be even (two directions), got {hidden_width}")
        self.embed = nn.Embedding(n_chars, char_embed, padding_idx=0)
        self.lstm = nn.LSTM(char_embed, hidden_width // 2, batch_first=True, bidirectional=True)

    def forward(self, char_ids: torch.Tensor, char_lengths: torch.Tensor) -> torch.Tensor:
        """char_ids: (n_words, max_len) padded with 0; char_lengths: (n_words,) >= 1.
        Returns (n_words, hidden_width)."""
        # pack_padded_sequence wants the lengths on the CPU, wherever the data is.
        packed = pack_padded_sequence(
            self.embed(char_ids), char_lengths.cpu(), batch_first=True, enforce_sorted=False
        )
        _, (h_n, _) = self.lstm(packed)
        # h_n: (2, n_words, hidden/2), forward then backward final states, in input order.
        return torch.cat((h_n[0], h_n[1]), dim=-1)


class MimickTaggerNet(nn.Module):
    """BiLSTM tagger with one ``Linear -> tanh -> Linear`` head per attribute.

    Word input: the static vector (pretrained, Mimick or UNK, computed outside the network)
    plus, with ``fine_tune``, a trainable zero-initialised delta row per training word
    (row 0, for words not seen in training, stays zero). Adding a delta to a fixed input is
    equivalent to fine-tuning an embedding table initialised with the static vectors, but
    keeps the table to the training vocabulary. Without static vectors (``vector_width`` 0)
    a trainable random table over the training vocabulary is used instead (row 0 = UNK).
    """

    def __init__(
        self,
        *,
        vector_width: int,
        n_words: int,
        word_width: int,
        fine_tune: bool,
        n_chars: int,
        char_embed: int,
        char_hidden: int,
        hidden_width: int,
        depth: int,
        dropout: float,
        head_sizes: Sequence[int],
        head_priors: Optional[Sequence[Sequence[float]]] = None,
        n_shapes: int = 0,
        spelling_width: int = 0,
    ):
        super().__init__()
        if hidden_width % 2:
            raise ValueError(f"hidden_width must be even (two directions), got {hidden_width}")
        self.head_sizes = list(head_sizes)
        self.word_delta = None
        self.word_embed = None
        if vector_width:
            input_width = vector_width
            if fine_tune:
                self.word_delta = nn.Embedding(n_words, vector_width, padding_idx=0)
                nn.init.zeros_(self.word_delta.weight)
        else:
            input_width = word_width
            self.word_embed = nn.Embedding(n_words, word_width)
            nn.init.uniform_(self.word_embed.weight, -RANDOM_INIT_RANGE, RANDOM_INIT_RANGE)
        self.chars = None
        if char_embed:
            self.chars = CharBiLSTM(n_chars, char_embed, char_hidden)
            input_width += char_hidden
        # Case classes as a one-hot beside the word input (MimickTagger.v3); 0 turns it off.
        self.n_shapes = n_shapes
        input_width += n_shapes
        # Mimick's (frozen) prediction for every token beside its word vector (MimickTagger.v3).
        self.spelling_width = spelling_width
        input_width += spelling_width
        self.dropout = nn.Dropout(dropout)
        self.lstm = nn.LSTM(
            input_width,
            hidden_width // 2,
            num_layers=depth,
            batch_first=True,
            bidirectional=True,
            dropout=dropout if depth > 1 else 0.0,
        )
        self.heads = nn.ModuleList(
            nn.Sequential(nn.Linear(hidden_width, size), nn.Tanh(), nn.Linear(size, size))
            for size in self.head_sizes
        )
        if head_priors is not None:
            self._init_head_biases(head_priors)
        # Adversarial training (see _adversarial); not parameters, never saved.
        self.record_input = False
        self.recorded_input: Optional[torch.Tensor] = None
        self.input_perturbation: Optional[torch.Tensor] = None

    def _init_head_biases(self, head_priors: Sequence[Sequence[float]]) -> None:
        """Start each head's output bias at the log of its values' training frequencies.

        Most attributes are NONE on most tokens. From zero biases, the heads first learn
        that prior through the shared BiLSTM, pushing its states to saturation for every
        token, and POS learning stalls for many epochs (Adam moves a bias by about one
        learning rate per step). Starting from the prior avoids that.
        """
        with torch.no_grad():
            for head, prior in zip(self.heads, head_priors):
                head[-1].bias.copy_(torch.log(torch.tensor(prior, dtype=torch.float32)))

    def forward(
        self,
        lengths: torch.Tensor,
        vectors: torch.Tensor,
        word_ids: torch.Tensor,
        char_ids: torch.Tensor,
        char_lengths: torch.Tensor,
        token_words: torch.Tensor,
        shapes: Optional[torch.Tensor] = None,
        spelling: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        """Score every token of a batch of sequences.

        lengths: (n_seqs,) tokens per sequence (zeros allowed).
        vectors: (n_tokens, vector_width) static input of all tokens, concatenated.
        word_ids: (n_tokens,) training-vocabulary row of each token, 0 if unseen.
        char_ids, char_lengths: the unique words of the batch as padded character ids.
        token_words: (n_tokens,) row of each token in char_ids.
        shapes: (n_tokens,) case class of each token, used when ``n_shapes`` > 0.
        spelling: (n_tokens, spelling_width) Mimick predictions, used when ``spelling_width`` > 0.
        RETURNS: (n_tokens, sum(head_sizes)) unnormalised scores, heads side by side.
        """
        if self.word_embed is not None:
            words = self.word_embed(word_ids)
        elif self.word_delta is not None:
            words = vectors + self.word_delta(word_ids)
        else:
            words = vectors
        if self.chars is not None:
            words = torch.cat((words, self.chars(char_ids, char_lengths)[token_words]), dim=-1)
        if self.n_shapes:
            one_hot = nn.functional.one_hot(shapes, self.n_shapes).to(words.dtype)
            words = torch.cat((words, one_hot), dim=-1)
        if self.spelling_width:
            words = torch.cat((words, spelling), dim=-1)
        hidden = self._encode(self.dropout(self._adversarial(words)), lengths)
        if self.training or torch.is_grad_enabled() or not FUSE_HEADS:
            return torch.cat([head(hidden) for head in self.heads], dim=-1)
        # Predicting: all heads in two matrix products instead of two per head (one per
        # attribute: 2 x 22 small products for EWT's attributes, ~12% of `nlp(text)`).
        first, first_bias, second, second_bias = self._fused_heads()
        return nn.functional.linear(torch.tanh(nn.functional.linear(hidden, first, first_bias)), second, second_bias)

    def _fused_heads(self) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """The heads as one layer: their first layers stacked, their second layers as one
        block-diagonal matrix (the same scores, side by side as in ``forward``). Built on every
        call, never kept: thinc's optimizer and its parameter averages replace ``param.data``
        without bumping the parameters' versions, so a kept copy could not tell it was stale."""
        heads = self.heads
        return (torch.cat([head[0].weight for head in heads]), torch.cat([head[0].bias for head in heads]),
                torch.block_diag(*[head[2].weight for head in heads]), torch.cat([head[2].bias for head in heads]))

    def _adversarial(self, tokens: torch.Tensor) -> torch.Tensor:
        """The hooks of adversarial training (``MimickTagger.update``), in training only: keep
        the token inputs with their gradient (``record_input``), or add ``input_perturbation``.
        """
        if not self.training:
            return tokens
        if self.input_perturbation is not None:
            tokens = tokens + self.input_perturbation
        if self.record_input:
            tokens.retain_grad()
            self.recorded_input = tokens
        return tokens

    def _encode(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Run the BiLSTM over each sequence of the flat (n_tokens, width) input."""
        nonempty = lengths > 0
        seq_lengths = lengths[nonempty]
        if seq_lengths.numel() == 0:
            return tokens.new_zeros((0, self.lstm.hidden_size * 2))
        max_len = int(seq_lengths.max())
        if bool((seq_lengths == max_len).all()):
            # One sentence (``nlp(text)``), or sentences of one length: no padding to pack.
            output, _ = self.lstm(tokens.reshape(seq_lengths.numel(), max_len, tokens.shape[1]))
            return output.reshape(-1, output.shape[-1])
        # Scatter the flat tokens into a (n_seqs, max_len, width) batch.
        mask = torch.arange(max_len, device=tokens.device).unsqueeze(0) < seq_lengths.unsqueeze(1)
        padded = tokens.new_zeros((seq_lengths.numel(), max_len, tokens.shape[1]))
        padded[mask] = tokens
        packed = pack_padded_sequence(padded, seq_lengths.cpu(), batch_first=True, enforce_sorted=False)
        output, _ = self.lstm(packed)
        output, _ = pad_packed_sequence(output, batch_first=True, total_length=max_len)
        return output[mask]


def adversarial_perturbation(tokens: torch.Tensor, grad: torch.Tensor, epsilon: float) -> torch.Tensor:
    """The perturbation of adversarial training: each token's input moved by ``epsilon`` times
    its own norm in the direction of the loss's gradient (Miyato et al., 2017; for taggers,
    Yasunaga et al., 2018, who scale one perturbation per sentence).

    Scaled per token because the input is a concatenation of parts with very different norms
    from table to table (median row norm 25.8 in the project's French table, 4.75 in GloVe 6B
    50d; the char BiLSTM's tanh states at most sqrt(width)): a fixed radius would be a different
    amount of noise for every vectors table. Tokens with a zero gradient are not moved.
    """
    grad = grad.detach()
    norms = grad.norm(dim=-1, keepdim=True)
    direction = torch.where(norms > 0, grad / norms.clamp_min(1e-12), torch.zeros_like(grad))
    return epsilon * tokens.detach().norm(dim=-1, keepdim=True) * direction


def head_offsets(head_sizes: Sequence[int]) -> List[int]:
    """Start column of each head in the concatenated scores, plus the total width."""
    offsets = [0]
    for size in head_sizes:
        offsets.append(offsets[-1] + size)
    return offsets


def load_state_safely(module: nn.Module, state_bytes: bytes, device: "torch.device") -> nn.Module:
    """Fill ``module`` with a state written by thinc's PyTorchShim (``torch.save`` of its
    ``state_dict``), read with ``torch.load(weights_only=True)``: tensors and plain
    containers only, so no code can run from a saved pipeline, whatever the environment
    (``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` does not override an explicit ``weights_only``).
    thinc's own reader calls ``torch.load`` with torch's default, which before torch 2.6 was
    ``weights_only=False``. Pipelines saved by earlier versions hold only tensors and load.
    """
    try:
        state = torch.load(io.BytesIO(state_bytes), map_location=device, weights_only=True)
    except pickle.UnpicklingError as err:
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UserError(
            "mimick_tagger: the saved weights hold something other than tensors, refusing to "
            f"load them ({reason[:200]}). A pipeline saved by spacy-mimick holds only tensors: "
            "re-save it from a trusted copy with nlp.to_disk"
        ) from None
    module.load_state_dict(state)
    module.to(device)
    return module
