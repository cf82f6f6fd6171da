"""Training a Mimick model on a table of pretrained vectors (type level, no corpus needed).

The original release updated the model one word at a time. Here words are grouped into
minibatches of one length (length bucketing: no padding), every word's spelling features are
encoded once before the first epoch (a batch is a gather from those arrays), and the optimizers
are foreach versions of torch.optim's Adam/SparseAdam (``optimizers.py``). On one core this
trains the paper's BiLSTM at about 18k words per CPU-second at batch 64 and the n-gram model at
about 80k (``benchmarks/train_throughput.py``, docs/speed.md).

Objective options (``loss``):
- ``"l2"``: squared Euclidean distance, summed over dimensions (the paper's Equation 1);
- ``"cosine"``: 1 - cosine similarity (only the direction matters to similarity tasks);
- ``"l2+cosine"``: both, the cosine term scaled by the mean squared target norm so that the
  two are of the same size;
- ``"contrastive"``: InfoNCE over cosine similarities (temperature ``temperature``; LOVE's is
  0.07, 0.1 measured better here): each prediction must be nearer its own target than the
  other targets of the batch and ``negatives`` random targets of the table (LOVE, Chen et al.
  2022; its hard negatives are approximated by the batch, which holds words of the same length);
- ``"l2+contrastive"``: l2 plus ``contrastive_weight`` x the mean squared target norm x InfoNCE
  (the default: l2 keeps the predictions near the table's rows, the InfoNCE term makes them tell
  words apart; with the n-gram model, on GloVe's 100k rows, Rare Word 35.04 against l2's 34.48
  on the mean of three seeds, and a better typo probe: docs/oov_vectors.md).
Training signal options: ``freq_weight`` weights each word's loss by log(1 + f) with f its
count, or, for files without counts, a Zipf estimate from its rank (vector files are sorted by
frequency); ``typo_prob`` replaces a word's spelling by a random one-edit typo (swap, delete,
insert, substitute by a keyboard neighbour) with that probability, keeping the word's own
vector as the target.
"""
import math
import random
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy
import torch
from tqdm import tqdm

from ..devices import batch_to, on_cpu, pipeline_device
from ..errors import UserError
from ..malloc import pad_heap_top
from .features import encode_chars, encode_ngrams, normalize_word
from .mimick_model import MimickModel
from .optimizers import Adam, SparseAdam
from .paper_step import PaperModelStep
from .pytorch_mimick_model import one_length
from .vectors_io import WordVectors

LOSSES = ("l2", "cosine", "l2+cosine", "contrastive", "l2+contrastive")

# QWERTY and Russian ЙЦУКЕН layouts: typos substitute or insert a neighbouring key.
KEYBOARDS = (
    ["qwertyuiop", "asdfghjkl", "zxcvbnm"],
    ["йцукенгшщзхъ", "фывапролджэ", "ячсмитьбю"],
)
KEYBOARD_NEIGHBOURS: Dict[str, str] = {}
for rows in KEYBOARDS:
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            near = [row[j] for j in (c - 1, c + 1) if 0 <= j < len(row)]
            for rr in (r - 1, r + 1):
                if 0 <= rr < len(rows):
                    near += [rows[rr][j] for j in (c - 1, c, c + 1) if 0 <= j < len(rows[rr])]
            KEYBOARD_NEIGHBOURS[ch] = "".join(near)


DEFAULT_ARCH = {"@architectures": "spacy_mimick.MimickNgram.v1"}
PAPER_ARCH = {"@architectures": "spacy_mimick.Mimick.v1"}


def make_typo(word: str, rng: random.Random) -> str:
    """One random edit: swap two neighbours, delete, insert or substitute a neighbouring key.

    Characters of other scripts (no keyboard map) are replaced by another character of the word.
    """
    if len(word) < 3:
        return word
    i = rng.randrange(len(word) - 1)
    op = rng.randrange(4)
    if op == 0:
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if op == 1:
        return word[:i] + word[i + 1:]
    near = KEYBOARD_NEIGHBOURS.get(word[i].lower()) or word[:i] + word[i + 1:]
    ch = rng.choice(near)
    if op == 2:
        return word[:i] + ch + word[i:]
    return word[:i] + ch + word[i + 1:]


@dataclass
class TrainConfig:
    """Settings of ``train_mimick``.

    The defaults are the winners of ``benchmarks/oov_eval.py`` and ``benchmarks/typo_probe.py``
    (docs/oov_vectors.md) with ``DEFAULT_ARCH``: squared L2 loss plus 0.1 x InfoNCE at temperature
    0.1, up to 30 epochs (the InfoNCE term's dev loss still falls after 15; early stopping on the
    dev split ends it), Adam at 0.003 for dense weights (the BiLSTM), SparseAdam at
    0.01 for n-gram tables, one-edit typo augmentation for half of the words (the typo'd spelling
    trained towards the clean word's vector: ``benchmarks/typo_probe.py``, where 0.5 beat the
    earlier 0.08 on typos and Rare Word). ``PAPER_CONFIG`` is the
    paper-faithful set-up (no augmentation) to use with ``PAPER_ARCH``.
    """

    max_epochs: int = 30
    batch_size: int = 64
    learning_rate: float = 0.003
    sparse_learning_rate: float = 0.01
    patience: int = 2
    dev_fraction: float = 0.01
    seed: int = 0
    loss: str = "l2+contrastive"
    normalize_targets: bool = False
    freq_weight: bool = False
    typo_prob: float = 0.5
    max_words: int = 0
    grad_clip: float = 5.0
    temperature: float = 0.1
    negatives: int = 256
    contrastive_weight: float = 0.1

    def validate(self) -> None:
        """Raise ValueError for settings that would fail or diverge later (checked before the
        vectors are read, so a bad option costs nothing)."""
        for name in ("max_epochs", "batch_size", "patience"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
        for name in ("learning_rate", "sparse_learning_rate"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
        for name in ("grad_clip", "contrastive_weight", "typo_prob", "dev_fraction", "temperature"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be a finite number, got {getattr(self, name)!r}")
        if self.grad_clip < 0 or self.contrastive_weight < 0 or self.max_words < 0:
            raise ValueError("grad_clip, contrastive_weight and max_words must be >= 0")
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}")
        if not 0 < self.dev_fraction < 0.5:
            raise ValueError(f"dev_fraction must be in (0, 0.5), got {self.dev_fraction}")
        if not 0 <= self.typo_prob < 1:
            raise ValueError(f"typo_prob must be in [0, 1), got {self.typo_prob}")
        if self.temperature <= 0:
            raise ValueError(f"temperature must be > 0, got {self.temperature}")
        if self.negatives < 0:
            raise ValueError(f"negatives must be >= 0, got {self.negatives}")


class TrainingError(UserError):
    """Training cannot go on (non-finite loss); the message names the likely cause."""


# Squared norms of float32 rows above this overflow (float32's max is 3.4e38): the loss of
# such a row is inf from the first step.
_MAX_SQUARED_NORM = 1e37


def _largest_rows(vectors: WordVectors, targets: numpy.ndarray, k: int = 3) -> str:
    """The ``k`` rows of largest norm, as "'word' (row N, max |value| X)" for error messages."""
    peak = numpy.abs(targets.astype("float64")).max(axis=1)
    order = numpy.argsort(-peak, kind="stable")[:k]
    return ", ".join(f"{vectors.words[i]!r} (row {i + 1}, max |value| {peak[i]:.3g})" for i in order)


def check_trainable(vectors: WordVectors, targets: numpy.ndarray) -> None:
    """Refuse rows whose squared norm overflows float32: training on them gives an inf loss,
    then NaN weights. Their values are finite, so the readers accept them."""
    if targets.size:
        # No row can reach the limit when dim x the largest |value|^2 stays well below it (the
        # usual case, decided without a float64 copy of the table).
        peak = max(float(targets.max()), -float(targets.min()))
        if peak * peak * targets.shape[1] < _MAX_SQUARED_NORM / 4:
            return
    squared = (targets.astype("float64") ** 2).sum(axis=1)
    bad = numpy.flatnonzero(~(squared < _MAX_SQUARED_NORM))
    if len(bad):
        raise TrainingError(
            f"{vectors.source}: {len(bad)} row(s) have values too large to train on (squared norm "
            f"above {_MAX_SQUARED_NORM:.0e}, which overflows float32), e.g. "
            + ", ".join(f"{vectors.words[i]!r} (row {i + 1})" for i in bad[:3])
            + ": expected ordinary word vectors (|values| well below 1e18); fix or drop these rows"
        )


@dataclass
class EpochResult:
    epoch: int
    train_loss: float
    dev_loss: float
    seconds: float
    words_per_second: float
    # CPU time of the epoch's training steps (all threads of this process): on a shared machine
    # words per CPU-second is the steadier measure of the trainer's speed.
    cpu_seconds: float = 0.0
    # CPU time of what follows the steps: the dev loss and, if it improved, the copy of the weights.
    dev_cpu_seconds: float = 0.0


@dataclass
class TrainResult:
    model: MimickModel
    history: List[EpochResult] = field(default_factory=list)
    best_epoch: int = 0
    n_train: int = 0
    n_dev: int = 0
    # Set when training was interrupted (Ctrl-C): the model is the best epoch so far.
    interrupted: bool = False


# Batches of 128 at lr 0.003 x sqrt(2): the dev-loss curve of batches of 64 at 0.003 (within
# 0.7% at every epoch on the 100k GloVe rows, best epoch 0.2% apart) at ~1.2x the words per
# CPU-second (`benchmarks/train_throughput.py --full`, docs/speed.md).
PAPER_CONFIG = TrainConfig(max_epochs=30, patience=3, typo_prob=0.0, batch_size=128, learning_rate=0.0042,
                           loss="l2")
# For Mimick vectors that feed layers trained on the table's own rows (spaCy's tagger, parser and
# NER through ``add``): the squared L2 loss and epochs these uses were measured with. The InfoNCE
# term of the default was chosen on word similarity and typos, not measured there.
STATIC_VECTORS_CONFIG = TrainConfig(loss="l2", max_epochs=15)


def word_weights(vectors: WordVectors) -> numpy.ndarray:
    """log(1 + count), from the file's counts or a Zipf estimate by rank; mean 1."""
    n = len(vectors)
    if vectors.counts is not None:
        counts = numpy.asarray(vectors.counts, dtype="float64")
    else:
        counts = 1e7 / numpy.arange(1, n + 1, dtype="float64")  # Zipf: f(rank) ~ C / rank
    weights = numpy.log1p(counts)
    return (weights / weights.mean()).astype("float32")


def info_nce(pred: torch.Tensor, gold: torch.Tensor, negatives: Optional[torch.Tensor],
             temperature: float) -> torch.Tensor:
    """Per-word InfoNCE: -log softmax of cos(pred_i, gold_i) among cos(pred_i, candidates).

    Candidates are the batch's targets and the extra ``negatives`` rows. A negative row equal to
    the word's own target (a random draw of the same word) is masked out.
    """
    cands = gold if negatives is None or len(negatives) == 0 else torch.cat((gold, negatives))
    p = torch.nn.functional.normalize(pred, dim=1, eps=1e-8)
    c = torch.nn.functional.normalize(cands, dim=1, eps=1e-8)
    logits = p @ c.T / temperature
    n = len(pred)
    if len(cands) > n:
        same = _same_rows(gold, cands[n:])
        if same is not None:
            logits[:, n:] = logits[:, n:].masked_fill(same, float("-inf"))
    return torch.nn.functional.cross_entropy(logits, torch.arange(n, device=logits.device), reduction="none")


def _same_rows(gold: torch.Tensor, negatives: torch.Tensor) -> Optional[torch.Tensor]:
    """``same[i, j]``: negative j equals gold row i; None when no pair does.

    Rows are compared in full only where their first coordinate matches: the same mask as
    comparing every pair, without the (batch x negatives x width) comparison that cost ~2.8 ms
    of a ~3.8 ms loss step at batch 64, 256 negatives, width 50.
    """
    first = negatives[:, 0].unsqueeze(0) == gold[:, 0].unsqueeze(1)
    rows, cols = first.nonzero(as_tuple=True)
    if len(rows) == 0:
        return None
    equal = (gold[rows] == negatives[cols]).all(dim=1)
    same = torch.zeros_like(first)
    same[rows[equal], cols[equal]] = True
    return same


def objective(pred: torch.Tensor, gold: torch.Tensor, loss: str, scale: float,
              config: Optional["TrainConfig"] = None, negatives: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Per-word loss values."""
    if loss == "l2":
        return ((pred - gold) ** 2).sum(dim=1)
    if loss in ("contrastive", "l2+contrastive"):
        config = config or TrainConfig()
        nce = info_nce(pred, gold, negatives, config.temperature)
        if loss == "contrastive":
            return nce
        return ((pred - gold) ** 2).sum(dim=1) + config.contrastive_weight * scale * nce
    cos = 1.0 - torch.nn.functional.cosine_similarity(pred, gold, dim=1, eps=1e-8)
    if loss == "cosine":
        return cos
    return ((pred - gold) ** 2).sum(dim=1) + scale * cos


class _Batcher:
    """Length-bucketed minibatches over words whose spelling features are computed once.

    Every word is encoded when the batcher is made (characters: one id matrix per clipped
    length, no padding needed; n-grams: one flat id array with per-word offsets). A batch is
    then a gather from those arrays instead of a Python loop over characters and n-grams; only
    the words given a typo are encoded again. ``featurize`` returns exactly what
    ``model.featurize`` returns for the same (typo'd) words.
    """

    def __init__(self, model: MimickModel, words: Sequence[str]):
        self.model = model
        self.words = list(words)
        max_chars = model.spec.max_chars
        # Lengths as the model sees them (huge words are clipped to max_chars).
        self.lengths = numpy.array([min(len(w), max_chars) for w in self.words], dtype="int64")
        self.char_ids: Dict[int, numpy.ndarray] = {}
        if "chars" in model.features:
            # Row of each word in the id matrix of its length.
            self.char_row = numpy.zeros(len(self.words), dtype="int64")
            for length in numpy.unique(self.lengths):
                rows = numpy.flatnonzero(self.lengths == length)
                ids, _ = encode_chars(model.features["chars"], [self.words[i] for i in rows], max_chars)
                self.char_ids[int(length)] = ids
                self.char_row[rows] = numpy.arange(len(rows))
        if "ngrams" in model.features:
            self.ngram_flat, self.ngram_start = encode_ngrams(model.features["ngrams"], self.words, max_chars)
            self.ngram_len = numpy.diff(numpy.append(self.ngram_start, len(self.ngram_flat)))

    def batches(self, indices: numpy.ndarray, batch_size: int, rng: numpy.random.Generator,
                shuffle: bool) -> List[numpy.ndarray]:
        if shuffle:
            indices = rng.permutation(indices)
        # Batches of words of one length (random order within a length): no padding at all.
        batches = []
        for length in numpy.unique(self.lengths[indices]):
            same = indices[self.lengths[indices] == length]
            batches.extend(same[i : i + batch_size] for i in range(0, len(same), batch_size))
        if shuffle:
            batches = [batches[i] for i in rng.permutation(len(batches))]
        return batches

    def featurize(self, idx: numpy.ndarray, typo_prob: float, rng: random.Random) -> Dict[str, torch.Tensor]:
        """The module's batch for the words ``idx`` (all of one clipped length, as ``batches``
        makes them), each replaced by a typo with probability ``typo_prob``."""
        typos: Dict[int, str] = {}
        if typo_prob > 0:
            # The same draws, in the same order, as encoding the typo'd word list directly.
            for j, i in enumerate(idx):
                if rng.random() < typo_prob:
                    typos[j] = make_typo(self.words[i], rng)
        lengths = self.lengths[idx]
        if typos or len(idx) == 0 or (lengths != lengths[0]).any():
            words = [typos.get(j, self.words[i]) for j, i in enumerate(idx)]
            if "ngrams" not in self.model.features:
                return self.model.featurize(words)
            batch = self.model.featurize(words) if "chars" in self.model.features else {}
            batch.update(self._ngrams(idx, typos))
            return batch
        batch = {}
        if "chars" in self.model.features:
            ids = self.char_ids[int(lengths[0])][self.char_row[idx]]
            batch["chars"] = torch.from_numpy(ids)
            batch["lengths"] = torch.full((len(idx),), ids.shape[1], dtype=torch.int64)
        if "ngrams" in self.model.features:
            batch.update(self._ngrams(idx, typos))
        return batch

    def _ngrams(self, idx: numpy.ndarray, typos: Dict[int, str]) -> Dict[str, torch.Tensor]:
        """EmbeddingBag input (flat ids, offsets) of the words, typo'd ones encoded anew."""
        lens = self.ngram_len[idx]
        if typos:
            vocab, max_chars = self.model.features["ngrams"], self.model.spec.max_chars
            pieces = [numpy.asarray(vocab.encode(typos[j], max_chars), dtype="int64") if j in typos
                      else self.ngram_flat[self.ngram_start[i] : self.ngram_start[i] + lens[j]]
                      for j, i in enumerate(idx)]
            lens = numpy.array([len(p) for p in pieces], dtype="int64")
            flat = numpy.concatenate(pieces)
        else:
            offsets = numpy.zeros(len(idx), dtype="int64")
            numpy.cumsum(lens[:-1], out=offsets[1:])
            flat = self.ngram_flat[numpy.repeat(self.ngram_start[idx] - offsets, lens)
                                   + numpy.arange(int(lens.sum()))]
        offsets = numpy.zeros(len(idx), dtype="int64")
        numpy.cumsum(lens[:-1], out=offsets[1:])
        return {"ngrams": torch.from_numpy(flat), "offsets": torch.from_numpy(offsets)}


class _Optimizers:
    """Adam for dense parameters, SparseAdam for sparse embedding tables (n-gram bags)."""

    def __init__(self, optimizers: List[Any]):
        self.optimizers = optimizers

    def zero_grad(self) -> None:
        for opt in self.optimizers:
            opt.zero_grad()

    def step(self, max_grad_norm: float = 0.0) -> None:
        """A step of each optimizer; ``max_grad_norm`` > 0 clips the dense gradients' norm first
        (``Adam`` does it on its flat gradient; sparse n-gram gradients are not clipped)."""
        for opt in self.optimizers:
            if isinstance(opt, Adam):
                opt.step(max_grad_norm)
            else:
                opt.step()


def make_optimizer(module: torch.nn.Module, lr: float, sparse_lr: Optional[float] = None) -> _Optimizers:
    """``optimizers.Adam`` (torch.optim.Adam's rule) for dense weights, ``optimizers.SparseAdam``
    for sparse embedding tables."""
    sparse_ids = {
        id(m.weight) for m in module.modules()
        if isinstance(m, (torch.nn.Embedding, torch.nn.EmbeddingBag)) and m.sparse
    }
    sparse = [p for p in module.parameters() if id(p) in sparse_ids]
    dense = [p for p in module.parameters() if id(p) not in sparse_ids]
    optimizers: List[Any] = []
    if dense:
        optimizers.append(Adam(dense, lr=lr))
    if sparse:
        optimizers.append(SparseAdam(sparse, lr=sparse_lr or lr))
    return _Optimizers(optimizers)


def split_dev(n: int, fraction: float, seed: int) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """A random held-out dev set of ``fraction`` of the rows (at least one row)."""
    rng = numpy.random.default_rng(seed)
    perm = rng.permutation(n)
    n_dev = max(1, int(round(n * fraction)))
    return numpy.sort(perm[n_dev:]), numpy.sort(perm[:n_dev])


def train_mimick(
    vectors: WordVectors,
    arch_config: Dict[str, Any],
    config: Optional[TrainConfig] = None,
    *,
    progress: bool = True,
    log: Callable[[str], None] = lambda msg: print(msg, file=sys.stderr),
    device: Optional[Union[str, torch.device]] = None,
) -> TrainResult:
    """Train a Mimick model to reproduce ``vectors`` from spelling; early stopping on dev loss.

    Returns the model of the best dev epoch. ``vectors`` must be free of NaN/inf (the readers in
    ``vectors_io`` guarantee it) and non-empty. Raises TrainingError, naming the rows of largest
    values, for rows too large to train on and as soon as a loss is not finite (the training has
    diverged: no model is returned). On KeyboardInterrupt (Ctrl-C) after at least one epoch,
    training stops and the best epoch so far is returned with ``interrupted=True``; before that,
    the KeyboardInterrupt propagates.

    ``device``: where to train (``devices.torch_device(gpu_id)`` maps spaCy's ``--gpu-id``);
    default the pipeline's device, i.e. the CPU unless ``spacy.require_gpu()`` ran. Spelling
    features are built on the CPU and each batch is moved there; the returned model stays on
    ``device`` (``model.to(...)`` moves it; saved models load on the CPU).
    """
    config = config or TrainConfig()
    device = torch.device(device) if device is not None else pipeline_device()
    config.validate()
    if len(vectors) < 2:
        raise ValueError(f"{vectors.source}: need at least 2 words to train Mimick, got {len(vectors)}")
    torch.manual_seed(config.seed)
    py_rng = random.Random(config.seed)
    np_rng = numpy.random.default_rng(config.seed)

    if config.max_words and len(vectors) > config.max_words:
        vectors = vectors.subset(numpy.arange(config.max_words))
    words = [normalize_word(w) for w in vectors.words]
    targets = numpy.ascontiguousarray(vectors.matrix, dtype="float32")
    if config.normalize_targets:
        norms = numpy.linalg.norm(targets, axis=1, keepdims=True)
        targets = targets / numpy.maximum(norms, 1e-8)
    check_trainable(vectors, targets)
    weights = word_weights(vectors) if config.freq_weight else numpy.ones(len(words), "float32")
    train_idx, dev_idx = split_dev(len(words), config.dev_fraction, config.seed)

    # Spelling vocabularies come from the training split only, so dev loss is honest.
    model = MimickModel.create(arch_config, [words[i] for i in train_idx], targets.shape[1])
    model.meta.update({
        "source": vectors.source, "n_train": int(len(train_idx)), "n_dev": int(len(dev_idx)),
        "train_config": asdict(config),
        # A table with no uppercase word (GloVe 6B, navec) was lowercased by its makers: the
        # model then lowercases its input too, so "McNeally" is read as the table would spell it.
        "lowercase": all(w == w.lower() for w in words),
    })
    model.to(device)
    if on_cpu(device):
        pad_heap_top()  # the batches' large blocks stay in the heap: see spacy_mimick/malloc.py
    batcher = _Batcher(model, words)
    target_t = torch.from_numpy(targets).to(device)
    weight_t = torch.from_numpy(weights).to(device)
    # The mean squared target norm, which weighs the second term of the mixed losses.
    scale = float((targets ** 2).sum(axis=1).mean()) if config.loss in ("l2+cosine", "l2+contrastive") else 0.0
    optimizer = make_optimizer(model.module, config.learning_rate, config.sparse_learning_rate)

    contrastive = config.loss in ("contrastive", "l2+contrastive")
    # The paper's model and loss: loss and gradients without autograd (paper_step.PaperModelStep).
    paper_step = PaperModelStep(model.module) if (
        config.loss == "l2" and not config.freq_weight and PaperModelStep.usable(model.module)) else None

    def draw_negatives() -> Optional[torch.Tensor]:
        """Random training targets as extra InfoNCE negatives (contrastive losses only)."""
        if not (contrastive and config.negatives):
            return None
        return target_t[torch.from_numpy(np_rng.choice(train_idx, config.negatives)).to(device)]

    dev_negatives = draw_negatives()  # fixed: epochs are compared on the same task

    def dev_loss() -> float:
        model.module.eval()
        total = 0.0
        with torch.no_grad():
            for idx in batcher.batches(dev_idx, 1024, np_rng, shuffle=False):
                # The pre-encoded spellings (no typos: nothing is drawn from py_rng).
                pred = model.module(batch_to(batcher.featurize(idx, 0.0, py_rng), device))
                gold = target_t[torch.from_numpy(idx).to(device)]
                total += objective(pred, gold, config.loss, scale, config, dev_negatives).sum().item()
        model.module.train()
        return total / len(dev_idx)

    result = TrainResult(model=model, n_train=len(train_idx), n_dev=len(dev_idx))
    best = math.inf
    best_state = None
    bad_epochs = 0

    def diverged(what: str, epoch: int) -> TrainingError:
        return TrainingError(
            f"{vectors.source}: the {what} is not finite in epoch {epoch} (training diverged; "
            f"nothing was saved). Likely causes: rows with huge values, the largest being "
            f"{_largest_rows(vectors, targets)}; or a learning rate too high "
            f"(--lr {config.learning_rate:g}, --sparse-lr {config.sparse_learning_rate:g})"
        )

    for epoch in range(1, config.max_epochs + 1):
        try:
            start, cpu_start = time.perf_counter(), time.process_time()
            model.module.train()
            total, seen = 0.0, 0
            batches = batcher.batches(train_idx, config.batch_size, np_rng, shuffle=True)
            bar = tqdm(batches, desc=f"epoch {epoch}", disable=not progress, leave=False, unit="batch")
            for idx in bar:
                batch = batch_to(batcher.featurize(idx, config.typo_prob, py_rng), device)
                idx_t = torch.from_numpy(idx).to(device)
                gold = target_t.index_select(0, idx_t)
                if paper_step is not None and one_length(batch):
                    batch_total = paper_step(batch["chars"], gold).sum().item()  # sets the gradients
                    if not math.isfinite(batch_total):
                        raise diverged("training loss", epoch)
                else:
                    pred = model.module(batch)
                    losses = objective(pred, gold, config.loss, scale, config, draw_negatives())
                    if config.freq_weight:
                        losses = losses * weight_t[idx_t]
                    loss = losses.mean()
                    batch_total = losses.sum().item()
                    if not math.isfinite(batch_total):
                        raise diverged("training loss", epoch)
                    optimizer.zero_grad()
                    loss.backward()
                optimizer.step(config.grad_clip)
                total += batch_total
                seen += len(idx)
            seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
            dev = dev_loss()
            if not math.isfinite(dev):
                raise diverged("dev loss", epoch)
            improved = dev < best - 1e-6
            if improved:  # the copy first: an interrupt in between keeps the previous best whole
                state = {k: v.detach().clone() for k, v in model.module.state_dict().items()}
                best_state, best, bad_epochs, result.best_epoch = state, dev, 0, epoch
            row = EpochResult(epoch, total / seen, dev, seconds, seen / seconds, cpu_seconds,
                              time.process_time() - cpu_start - cpu_seconds)
            result.history.append(row)
            log(f"epoch {epoch:3d}  train loss {row.train_loss:.4f}  dev loss {dev:.4f}  "
                f"{row.words_per_second:,.0f} words/s ({cpu_seconds:.2f} CPU-s){'  *' if improved else ''}")
        except KeyboardInterrupt:  # Ctrl-C, or SIGTERM in the CLI; covers the epoch's bookkeeping too
            if best_state is None:
                raise
            log(f"interrupted in epoch {epoch}: keeping the best epoch so far, {result.best_epoch} "
                f"(dev loss {best:.4f})")
            result.interrupted = True
            break
        if not improved:
            bad_epochs += 1
            if bad_epochs >= config.patience:
                log(f"early stop: no dev improvement for {config.patience} epochs; "
                    f"best epoch {result.best_epoch} (dev loss {best:.4f})")
                break
    if best_state is not None:
        model.module.load_state_dict(best_state)
    model.module.eval()
    model.meta.update({"best_epoch": result.best_epoch, "dev_loss": best,
                       "normalize_targets": config.normalize_targets})
    if config.loss in ("cosine", "contrastive"):
        # These losses fix only the direction: scale outputs to the table's mean norm.
        sample = train_idx[:10000]
        norms = numpy.linalg.norm(model.predict([words[i] for i in sample]), axis=1)
        model.meta["output_scale"] = float(numpy.linalg.norm(targets[sample], axis=1).mean()
                                           / max(float(norms.mean()), 1e-8))
    return result
