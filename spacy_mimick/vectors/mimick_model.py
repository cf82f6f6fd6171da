"""A trained Mimick model: architecture, spelling vocabularies and weights, saved as one directory.

The architectures are registered with spaCy through the package's entry points (setup.py:
``spacy_mimick.Mimick.v1`` is the paper's model; new models get new names, released ones never
change); this module does not import spaCy, so ``train`` starts without it. An architecture function returns a
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
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy
import srsly
import torch

from ..atomic import atomic_directory, folder_lock
from ..devices import batch_to, module_device, on_cpu
from ..errors import UserError
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


class MimickModelError(UserError):
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


def build_mimick_ngram_v1(
    n_min: int = 3, n_max: int = 6, min_ngram_count: int = 2, max_ngrams: int = 1_000_000,
    max_chars: int = 64,
) -> MimickSpec:
    """BoS-style baseline: a word is the mean of its character n-gram vectors (3-6 by default)."""
    settings = _ngram_settings(n_min, n_max, min_ngram_count, max_ngrams)
    return MimickSpec(False, True, {"max_chars": max_chars, **settings})


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


# Registered with spaCy by setup.py's "spacy_architectures" entry points.
ARCHITECTURES = {
    "spacy_mimick.Mimick.v1": build_mimick_v1,
    "spacy_mimick.MimickNgram.v1": build_mimick_ngram_v1,
    "spacy_mimick.MimickHybrid.v1": build_mimick_hybrid_v1,
}


def resolve_architecture(arch_config: Dict[str, Any]) -> MimickSpec:
    """Resolve ``{"@architectures": "spacy_mimick.Mimick.v1", ...}`` to its MimickSpec.

    One of this package's names with its defaults is built directly; anything else (settings,
    which spaCy's registry validates, or another package's architecture) goes through spaCy's
    registry."""
    name = arch_config.get("@architectures") if isinstance(arch_config, dict) else None
    if name in ARCHITECTURES and len(arch_config) == 1:
        return ARCHITECTURES[name]()
    from spacy.util import registry

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


# At most this many words per predict() call go in one padded batch (see MimickModel._batches).
SMALL_BATCH = 32


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

    @property
    def device(self) -> torch.device:
        """Where the weights are, and so where ``predict`` runs (a loaded model: the CPU)."""
        return module_device(self.module)

    def to(self, device: Union[str, torch.device]) -> "MimickModel":
        """Move the weights to ``device`` (in place); returns the model."""
        self.module.to(device)
        return self

    def featurize(self, words: Sequence[str]) -> Dict[str, torch.Tensor]:
        """The batch dict the torch module takes (on the CPU; ``devices.batch_to`` moves it)."""
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
        device = self.device
        if was_training:  # a mode switch walks every submodule: only when needed
            self.module.eval()
        try:
            with torch.inference_mode():
                for idx in self._batches(words, batch_size):
                    batch = batch_to(self.featurize([words[i] for i in idx]), device)
                    out[idx] = self.module(batch).cpu().numpy()
        finally:
            if was_training:
                self.module.train()
        scale = self.meta.get("output_scale")
        if scale is not None:
            out *= numpy.float32(scale)
        return out

    def _batches(self, words: Sequence[str], batch_size: int) -> List[List[int]]:
        """:func:`length_batches`, except that a few words on the CPU (``nlp(text)``'s out-of-vocabulary
        words) go in one batch sorted by (length, word): one packed BiLSTM call costs less than one
        call per length there (0.95 vs 1.49 ms for three words of three lengths, one thread), and a
        word's batch still does not depend on the order the words come in."""
        if len(words) <= SMALL_BATCH and "chars" in self.features and on_cpu(self.device):
            max_chars = self.spec.max_chars
            return [sorted(range(len(words)), key=lambda i: (min(len(words[i]), max_chars), words[i]))]
        return length_batches(words, batch_size, self.spec.max_chars)

    # -- serialization ---------------------------------------------------------------------
    def _config(self) -> Dict[str, Any]:
        return {
            "format_version": FORMAT_VERSION, "architecture": self.arch_config,
            "width": self.width, "meta": self.meta,
        }

    def _features_json(self) -> Dict[str, Any]:
        return {name: vocab.to_json() for name, vocab in self.features.items()}

    def _weights_bytes(self) -> bytes:
        buf = io.BytesIO()
        torch.save(self.module.state_dict(), buf)
        return buf.getvalue()

    @classmethod
    def _assemble(cls, config: Any, features: Any, weights: bytes, where: str,
                  config_where: Optional[str] = None, features_where: Optional[str] = None) -> "MimickModel":
        config_where = config_where or where
        features_where = features_where or where
        _check_config(config, config_where)
        try:
            spec = resolve_architecture(config["architecture"])
        except MimickModelError as err:
            raise MimickModelError(f"{config_where}: {err}") from None
        except Exception as err:  # spaCy's registry: unknown name, bad setting
            raise MimickModelError(
                f"{config_where}: the architecture {config['architecture']!r} cannot be built "
                f"(expected a registered Mimick architecture and its settings): {err}"
            ) from None
        model = cls(
            config["architecture"], config["width"], _features_from_json(features, spec, features_where),
            meta=config.get("meta"),
        )
        try:
            state = torch.load(io.BytesIO(weights), map_location="cpu", weights_only=True)
            model.module.load_state_dict(state)
        except Exception as err:  # torch raises several types for truncated / corrupt files
            raise MimickModelError(
                f"{where}: the weights could not be loaded (truncated or corrupt file?): {err}"
            ) from err
        bad = model.non_finite_weights()
        if bad:
            raise MimickModelError(
                f"{where}: the weights hold NaN or infinite values (in {', '.join(bad[:3])}): "
                f"the model was saved from a diverged training; train it again"
            )
        model.module.eval()  # loaded to predict (the trainer sets training mode itself)
        return model

    def non_finite_weights(self) -> List[str]:
        """Names of the parameters (and ``meta["output_scale"]``) holding NaN or inf."""
        bad = [name for name, value in self.module.state_dict().items()
               if value.is_floating_point() and not bool(torch.isfinite(value).all())]
        scale = self.meta.get("output_scale")
        if scale is not None and not numpy.isfinite(scale):
            bad.append("meta.output_scale")
        return bad

    def _check_finite(self) -> None:
        bad = self.non_finite_weights()
        if bad:
            raise MimickModelError(
                f"refusing to save a Mimick model whose weights hold NaN or infinite values "
                f"(in {', '.join(bad[:3])}): its training diverged"
            )

    def to_disk(self, path: Union[str, Path]) -> None:
        """Write the model to the directory ``path``, atomically: the files are written to a
        temporary directory beside it, which then replaces ``path``. A write that fails midway
        (disk full, a file size limit) leaves a previous model at ``path`` as it was.

        ``path`` may be missing, empty or hold a Mimick model (which is replaced); anything else
        is refused rather than deleted.
        """
        path = Path(path)
        self._check_finite()
        check_model_output(path)  # fail early, before any folder is made
        # Checked again under the folder's lock, where another save cannot change what is there.
        with atomic_directory(path, check=check_model_output) as tmp:
            srsly.write_json(tmp / "config.json", self._config())
            srsly.write_json(tmp / "features.json", self._features_json())
            (tmp / "model.pt").write_bytes(self._weights_bytes())

    @classmethod
    def from_disk(cls, path: Union[str, Path]) -> "MimickModel":
        """Load a model saved with :meth:`to_disk`. The files are read under a shared lock on
        the parent folder, so a save of the same path in another process (which moves the old
        model aside, then renames the new one in) is never seen halfway."""
        path = Path(path)
        if path.parent.is_dir():
            with folder_lock(path.parent, shared=True):
                return cls._read_dir(path)
        return cls._read_dir(path)

    @classmethod
    def _read_dir(cls, path: Path) -> "MimickModel":
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
        return cls._assemble(parts["config.json"], parts["features.json"], weights, str(path / "model.pt"),
                             str(path / "config.json"), str(path / "features.json"))

    def to_bytes(self) -> bytes:
        self._check_finite()
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
        if not isinstance(msg, dict) or not {"config", "features", "weights"} <= set(msg):
            raise MimickModelError("Mimick model bytes: expected config, features and weights")
        return cls._assemble(msg["config"], msg["features"], msg["weights"], "Mimick model bytes")


MODEL_FILES = ("config.json", "features.json", "model.pt")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def is_model_dir(path: Path) -> bool:
    """Whether ``path`` is a directory holding nothing but (some of) a Mimick model's files."""
    return path.is_dir() and all(child.name in MODEL_FILES for child in path.iterdir())


def check_model_output(path: Union[str, Path]) -> None:
    """Raise MimickModelError unless a model can be written to ``path`` without destroying
    anything else: it must be missing, an empty directory or a Mimick model directory."""
    path = Path(path)
    # One stat and one listing, each allowed to find the path gone: a concurrent save of the same
    # model moves it aside for a moment, which is neither "not a directory" nor an error.
    try:
        is_dir = stat.S_ISDIR(path.stat().st_mode)
    except FileNotFoundError:
        return
    if not is_dir:
        raise MimickModelError(f"{path}: exists and is not a directory (expected a directory for the "
                               f"Mimick model's config.json, features.json and model.pt)")
    try:
        names = [child.name for child in path.iterdir()]
    except FileNotFoundError:
        return
    others = sorted(name for name in names if name not in MODEL_FILES)
    if others:
        raise MimickModelError(
            f"{path}: not empty and not a Mimick model (it holds {', '.join(others[:3])}"
            f"{', ...' if len(others) > 3 else ''}); refusing to replace it: choose a new directory"
        )


def _check_config(config: Any, where: str) -> None:
    """Refuse a config.json that is valid JSON but not a Mimick model's config."""
    if not isinstance(config, dict):
        raise MimickModelError(f"{where}: expected a JSON object, found {type(config).__name__}")
    if config.get("format_version") != FORMAT_VERSION:
        raise MimickModelError(
            f"{where}: unsupported Mimick model format {config.get('format_version')!r} "
            f"(this version of spacy-mimick reads format {FORMAT_VERSION})"
        )
    arch = config.get("architecture")
    if not isinstance(arch, dict) or not isinstance(arch.get("@architectures"), str):
        raise MimickModelError(f"{where}: missing 'architecture' (expected an object with "
                               f"'@architectures', e.g. {{\"@architectures\": \"spacy_mimick.Mimick.v1\"}})")
    width = config.get("width")
    if not isinstance(width, int) or isinstance(width, bool) or width < 1:
        raise MimickModelError(f"{where}: 'width' is {width!r}, expected a positive integer")
    if not isinstance(config.get("meta", {}), dict):
        raise MimickModelError(f"{where}: 'meta' must be a JSON object")


_VOCAB_KEYS = {"chars": ("chars",), "ngrams": ("ngrams", "n_min", "n_max")}


def _features_from_json(data: Any, spec: MimickSpec, where: str) -> Dict[str, Any]:
    """The spelling vocabularies of features.json, checked against what ``spec`` needs."""
    if not isinstance(data, dict):
        raise MimickModelError(f"{where}: expected a JSON object, found {type(data).__name__}")
    needed = [name for name, used in (("chars", spec.uses_chars), ("ngrams", spec.uses_ngrams)) if used]
    for name in needed:
        value = data.get(name)
        if not isinstance(value, dict):
            raise MimickModelError(f"{where}: missing {name!r} (the architecture needs the "
                                   f"{', '.join(repr(n) for n in needed)} vocabularies)")
        missing = [key for key in _VOCAB_KEYS[name] if key not in value]
        if missing or not isinstance(value.get(name), list):
            raise MimickModelError(f"{where}: {name!r} lacks {missing or [name]} (expected "
                                   f"{', '.join(_VOCAB_KEYS[name])})")
    loaders = {"chars": CharVocab.from_json, "ngrams": NgramVocab.from_json}
    return {name: loaders[name](data[name]) for name in needed}
