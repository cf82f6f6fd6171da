"""A trained Mimick model: architecture, spelling vocabularies and weights, saved as one directory.

The architectures are registered with spaCy (``spacy_mimick.Mimick.v1`` is the paper's model;
new models get new names, released ones never change). An architecture function returns a
``MimickSpec``: how to build the spelling features and the torch module for a given set of
training words and output width. ``MimickModel`` ties a spec to its learned vocabularies and
weights and predicts vectors for batches of words; it loads without the training vectors.

Directory layout (``MimickModel.to_disk``)::

    config.json    architecture config (resolvable by spaCy's registry), width, training meta
    features.json  the character and/or n-gram vocabulary
    model.pt       the torch state dict
"""
import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy
import srsly
import torch
from spacy.util import registry

from .features import (
    CharVocab, NgramVocab, encode_chars, encode_ngrams, normalize_word,
)
from .pytorch_mimick_model import MimickBiLSTM, MimickHybrid, NgramBag

FORMAT_VERSION = 1

# spaCy's nlp.pipe(n_process=...) forks on Linux. A forked child that enters torch's OpenMP
# thread pool, initialised in the parent, can hang forever; one thread per child avoids it
# (this is what torch's own DataLoader workers do).
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: torch.set_num_threads(1))


class MimickModelError(ValueError):
    """A Mimick model directory or byte string that cannot be loaded."""


@dataclass
class MimickSpec:
    """How to build one kind of Mimick model (returned by the registered architectures)."""

    uses_chars: bool
    uses_ngrams: bool
    settings: Dict[str, Any] = field(default_factory=dict)

    @property
    def max_chars(self) -> int:
        return self.settings["max_chars"]

    def build_features(self, words: Sequence[str]) -> Dict[str, Any]:
        s = self.settings
        features: Dict[str, Any] = {}
        if self.uses_chars:
            features["chars"] = CharVocab.build(words, min_count=s["min_char_count"])
        if self.uses_ngrams:
            features["ngrams"] = NgramVocab.build(
                words, s["n_min"], s["n_max"], s["max_chars"],
                min_count=s["min_ngram_count"], max_size=s["max_ngrams"],
            )
        return features

    def build_module(self, features: Dict[str, Any], width: int) -> torch.nn.Module:
        s = self.settings
        lstm = ngrams = None
        if self.uses_chars:
            lstm = MimickBiLSTM(
                len(features["chars"]), width, char_embed=s["char_embed"], hidden=s["hidden"],
                layers=s["layers"], mlp_hidden=s["mlp_hidden"], dropout=s["dropout"],
            )
        if self.uses_ngrams:
            ngrams = NgramBag(len(features["ngrams"]), width)
        if lstm is not None and ngrams is not None:
            return MimickHybrid(lstm, ngrams)
        return lstm if lstm is not None else ngrams


def _char_settings(char_embed, hidden, layers, mlp_hidden, dropout, min_char_count) -> Dict:
    return dict(
        char_embed=char_embed, hidden=hidden, layers=layers, mlp_hidden=mlp_hidden,
        dropout=dropout, min_char_count=min_char_count,
    )


def _ngram_settings(n_min, n_max, min_ngram_count, max_ngrams) -> Dict:
    if not 1 <= n_min <= n_max:
        raise ValueError(f"n-gram range must satisfy 1 <= n_min <= n_max, got {n_min}..{n_max}")
    return dict(n_min=n_min, n_max=n_max, min_ngram_count=min_ngram_count, max_ngrams=max_ngrams)


@registry.architectures("spacy_mimick.Mimick.v1")
def build_mimick_v1(
    char_embed: int = 20, hidden: int = 50, layers: int = 1, mlp_hidden: int = 0,
    dropout: float = 0.0, max_chars: int = 64, min_char_count: int = 2,
) -> MimickSpec:
    """The paper's model: char embeddings (20) -> BiLSTM (50 per direction) -> MLP with tanh.

    mlp_hidden=0 means the embedding's width, as in the original release. Characters seen in
    fewer than ``min_char_count`` training words map to the UNK character, which is thereby
    trained. Words longer than ``max_chars`` keep their first and last max_chars/2 characters.
    """
    settings = _char_settings(char_embed, hidden, layers, mlp_hidden, dropout, min_char_count)
    return MimickSpec(True, False, {"max_chars": max_chars, **settings})


@registry.architectures("spacy_mimick.MimickNgram.v1")
def build_mimick_ngram_v1(
    n_min: int = 3, n_max: int = 6, min_ngram_count: int = 2, max_ngrams: int = 1_000_000,
    max_chars: int = 64,
) -> MimickSpec:
    """BoS-style baseline: a word is the mean of its character n-gram vectors (3-6 by default)."""
    settings = _ngram_settings(n_min, n_max, min_ngram_count, max_ngrams)
    return MimickSpec(False, True, {"max_chars": max_chars, **settings})


@registry.architectures("spacy_mimick.MimickHybrid.v1")
def build_mimick_hybrid_v1(
    char_embed: int = 20, hidden: int = 50, layers: int = 1, mlp_hidden: int = 0,
    dropout: float = 0.0, n_min: int = 3, n_max: int = 6, min_ngram_count: int = 2,
    max_ngrams: int = 1_000_000, max_chars: int = 64, min_char_count: int = 2,
) -> MimickSpec:
    """The Mimick BiLSTM and the n-gram bag, summed."""
    settings = {
        **_char_settings(char_embed, hidden, layers, mlp_hidden, dropout, min_char_count),
        **_ngram_settings(n_min, n_max, min_ngram_count, max_ngrams),
    }
    return MimickSpec(True, True, {"max_chars": max_chars, **settings})


def resolve_architecture(arch_config: Dict[str, Any]) -> MimickSpec:
    """Resolve ``{"@architectures": "spacy_mimick.Mimick.v1", ...}`` to its MimickSpec."""
    resolved = registry.resolve({"arch": arch_config})["arch"]
    if not isinstance(resolved, MimickSpec):
        raise MimickModelError(
            f"{arch_config.get('@architectures')!r} is not a Mimick architecture "
            f"(expected one that returns a MimickSpec, e.g. spacy_mimick.Mimick.v1)"
        )
    return resolved


def length_batches(words: Sequence[str], batch_size: int, max_chars: int) -> List[List[int]]:
    """Indices of ``words`` grouped by (clipped) length, sorted within a group, in batches.

    Equal-length batches need no padding, which makes the BiLSTM much faster on CPU, and a
    word's batch does not depend on the order words come in.
    """
    groups: Dict[int, List[int]] = {}
    for i, word in enumerate(words):
        groups.setdefault(min(len(word), max_chars), []).append(i)
    batches = []
    for length in sorted(groups):
        idx = sorted(groups[length], key=words.__getitem__)
        batches.extend(idx[i : i + batch_size] for i in range(0, len(idx), batch_size))
    return batches


class MimickModel:
    """Predicts vectors for words from their spelling. Self-contained: saves to a directory."""

    def __init__(
        self, arch_config: Dict[str, Any], width: int, features: Dict[str, Any],
        module: Optional[torch.nn.Module] = None, meta: Optional[Dict[str, Any]] = None,
    ):
        self.arch_config = dict(arch_config)
        self.spec = resolve_architecture(self.arch_config)
        self.width = int(width)
        self.features = features
        self.module = module if module is not None else self.spec.build_module(features, width)
        self.meta: Dict[str, Any] = dict(meta or {})

    @classmethod
    def create(cls, arch_config: Dict[str, Any], words: Sequence[str], width: int) -> "MimickModel":
        """A fresh, untrained model whose spelling vocabularies are built from ``words``."""
        spec = resolve_architecture(arch_config)
        return cls(arch_config, width, spec.build_features(words))

    def featurize(self, words: Sequence[str]) -> Dict[str, torch.Tensor]:
        """The batch dict the torch module takes."""
        batch: Dict[str, torch.Tensor] = {}
        max_chars = self.spec.max_chars
        if "chars" in self.features:
            ids, lengths = encode_chars(self.features["chars"], words, max_chars)
            batch["chars"] = torch.from_numpy(ids)
            batch["lengths"] = torch.from_numpy(lengths)
        if "ngrams" in self.features:
            flat, offsets = encode_ngrams(self.features["ngrams"], words, max_chars)
            batch["ngrams"] = torch.from_numpy(flat)
            batch["offsets"] = torch.from_numpy(offsets)
        return batch

    def predict(self, words: Sequence[str], batch_size: int = 2048) -> numpy.ndarray:
        """Vectors (float32, ``(len(words), width)``) for ``words``, in order.

        Raises ValueError naming the word for an empty string or a non-string; any Unicode is
        accepted (unknown characters use the trained UNK row). Models trained on a lowercase
        table (``meta["lowercase"]``) lowercase their input. Words are processed in
        length-sorted batches, so the result does not depend on the order they come in.
        Models trained with a direction-only loss (cosine, contrastive) carry an
        ``meta["output_scale"]`` that brings their vectors to the table's mean norm, so that
        they mix with table vectors in averages (span and doc vectors).
        """
        words = list(words)
        for word in words:
            normalize_word(word)  # validates: str, non-empty
        if self.meta.get("lowercase"):
            words = [w.lower() for w in words]
        out = numpy.zeros((len(words), self.width), dtype="float32")
        if not words:
            return out
        was_training = self.module.training
        self.module.eval()
        try:
            with torch.no_grad():
                for idx in length_batches(words, batch_size, self.spec.max_chars):
                    batch = self.featurize([words[i] for i in idx])
                    out[idx] = self.module(batch).numpy()
        finally:
            self.module.train(was_training)
        scale = self.meta.get("output_scale")
        if scale is not None:
            out *= numpy.float32(scale)
        return out

    # -- serialization ---------------------------------------------------------------------
    def _config(self) -> Dict[str, Any]:
        return {
            "format_version": FORMAT_VERSION, "architecture": self.arch_config,
            "width": self.width, "meta": self.meta,
        }

    def _features_json(self) -> Dict[str, Any]:
        return {name: vocab.to_json() for name, vocab in self.features.items()}

    @staticmethod
    def _features_from_json(data: Dict[str, Any]) -> Dict[str, Any]:
        loaders = {"chars": CharVocab.from_json, "ngrams": NgramVocab.from_json}
        return {name: loaders[name](value) for name, value in data.items()}

    def _weights_bytes(self) -> bytes:
        buf = io.BytesIO()
        torch.save(self.module.state_dict(), buf)
        return buf.getvalue()

    @classmethod
    def _assemble(cls, config: Dict, features: Dict, weights: bytes, where: str) -> "MimickModel":
        if config.get("format_version") != FORMAT_VERSION:
            raise MimickModelError(
                f"{where}: unsupported Mimick model format {config.get('format_version')!r} "
                f"(this version of spacy-mimick reads format {FORMAT_VERSION})"
            )
        model = cls(
            config["architecture"], config["width"], cls._features_from_json(features),
            meta=config.get("meta"),
        )
        try:
            state = torch.load(io.BytesIO(weights), map_location="cpu", weights_only=True)
            model.module.load_state_dict(state)
        except Exception as err:  # torch raises several types for truncated / corrupt files
            raise MimickModelError(
                f"{where}: the weights could not be loaded (truncated or corrupt file?): {err}"
            ) from err
        return model

    def to_disk(self, path: Union[str, Path]) -> None:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        srsly.write_json(path / "config.json", self._config())
        srsly.write_json(path / "features.json", self._features_json())
        (path / "model.pt").write_bytes(self._weights_bytes())

    @classmethod
    def from_disk(cls, path: Union[str, Path]) -> "MimickModel":
        path = Path(path)
        if not path.is_dir():
            raise MimickModelError(f"{path}: not a Mimick model directory (train one with "
                                   f"`python -m spacy_mimick train`)")
        parts = {}
        for name in ("config.json", "features.json", "model.pt"):
            if not (path / name).exists():
                raise MimickModelError(f"{path}: missing {name} (expected config.json, "
                                       f"features.json and model.pt)")
        for name in ("config.json", "features.json"):
            try:
                parts[name] = srsly.read_json(path / name)
            except ValueError as err:
                raise MimickModelError(f"{path / name}: not valid JSON (truncated?): {err}") from err
        weights = (path / "model.pt").read_bytes()
        return cls._assemble(parts["config.json"], parts["features.json"], weights, str(path / "model.pt"))

    def to_bytes(self) -> bytes:
        return srsly.msgpack_dumps({
            "config": self._config(), "features": self._features_json(),
            "weights": self._weights_bytes(),
        })

    @classmethod
    def from_bytes(cls, data: bytes) -> "MimickModel":
        try:
            msg = srsly.msgpack_loads(data)
        except Exception as err:
            raise MimickModelError(f"Mimick model bytes could not be decoded (truncated?): {err}") from err
        return cls._assemble(msg["config"], msg["features"], msg["weights"], "Mimick model bytes")
