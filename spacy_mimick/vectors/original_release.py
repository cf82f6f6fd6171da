"""Convert the original MIMICK release's trained models into ``MimickModel``s.

The paper's authors released character-BiLSTM Mimick models for 23 languages, trained on the
64-d Polyglot embeddings (github: yuvalpinter/Mimick, ``mimick/models/{lang}-lstm-est.tar.gz``,
GPL-3.0). Each tarball holds ``models/{lang}-lstm-est.bin`` (DyNet 2.x text format) and
``models/{lang}-lstm-est.c2i`` (a Python 2 pickle of ``{character: row}``). This module reads
them and returns a model of the registered ``spacy_mimick.Mimick.v1`` architecture, which is the
original network:

- DyNet's ``VanillaLSTMBuilder`` keeps its four gates in the order input, forget, output, cell
  (``i, f, o, g``) in the rows of ``_0`` (input weights ``{4H, E}``), ``_1`` (recurrent weights
  ``{4H, H}``) and ``_2`` (bias ``{4H}``), and adds a forget bias of 1.0 at run time; torch's
  ``nn.LSTM`` wants ``i, f, g, o`` and has no forget bias, so the gate blocks are reordered and
  1.0 is folded into the forget gate's bias (``bias_hh`` is zero).
- Values are stored column-major, as DyNet keeps them.
- The original wraps a word in the symbol ``<*>`` at both ends: its row becomes both the BOW
  and the EOW row of ``CharVocab``; the PAD row is zeros (padding never reaches the LSTM).
- ``O * tanh(H * rep + Hb) + Ob`` is v1's MLP with ``mlp_hidden`` = H's height.
- The original reads characters as they come. ``CharVocab(normalize=None)`` does the same:
  NFC would change characters that the Hindi and Hebrew alphabets hold (precomposed nukta
  letters, the ohm sign) and composed Greek/Hindi words, and those would then differ.
- The original has no length limit; the converted model keeps v1's clipping of huge words at
  ``MAX_CHARS`` = 1024 characters (first and last 512), far beyond any real word.

Characters the original never saw (it has no rule: DyNet would index past its table or use an
untrained row), in this order (``CharVocab``'s ``unseen`` rules ``swapcase``, ``nfkd_base``):

1. the same letter in the other case, if the alphabet has it ("Ä" -> "ä");
2. the character without accents or compatibility decoration (its NFKD form without combining
   marks, if that is a single character of the alphabet), then that base in the other case
   ("ǘ" -> "u", "ｅ" -> "e", "Ê" -> "e" if only "e" is known);
3. otherwise the UNK row: the mean of the trained character rows (all rows but ``<*>``), a
   neutral "some character" embedding.

Words made only of known characters get exactly the original's vectors (``tests/
test_original_release.py`` checks all 23 languages against vectors that the original code
predicted; docs/original_release.md lists the differences).

Reading the pickle runs no code: the unpickler refuses every global (a dict of str -> int needs
none), and anything but a dict of one-character strings (plus ``<*>``) to distinct rows of the
character table is rejected.
"""
import hashlib
import io
import json
import pickle
import re
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy
import torch

from .features import UNSEEN_RULES, CharVocab
from .mimick_model import MimickModel, MimickModelError

BOUNDARY = "<*>"
FORGET_BIAS = 1.0
MAX_CHARS = 1024
TARGETS = "Polyglot {width}d"
LICENSE_NOTE = (
    "GPL-3.0: converted from the original MIMICK release (github.com/yuvalpinter/Mimick, "
    "mimick/models); the weights stay under the GPL-3.0"
)
FWD, BWD = "/vanilla-lstm-builder", "/vanilla-lstm-builder_1"
PARAM_NAMES = (
    f"{FWD}/_0", f"{FWD}/_1", f"{FWD}/_2", f"{BWD}/_0", f"{BWD}/_1", f"{BWD}/_2",
    "/H", "/Hb", "/O", "/Ob", "/ce",
)
# DyNet's gate blocks are i, f, o, g; torch's are i, f, g, o: torch block k = DyNet block ORDER[k].
TORCH_FROM_DYNET_GATES = (0, 1, 3, 2)
FORGET_GATE = 1
_HEADER = re.compile(r"^#(Parameter|LookupParameter)# (\S+) \{(\d+(?:,\d+)*)\} (\d+) (\S+)$")
_LANG = re.compile(r"^([A-Za-z]{2,3})-lstm-est(?:\.tar\.gz|\.tgz|\.tar|\.bin|\.c2i)?$")


class OriginalReleaseError(MimickModelError):
    """A release file that is not what the original MIMICK code wrote."""


@dataclass
class ReleaseFiles:
    """The raw parts of one released model and where they came from."""

    bin_text: str
    c2i_bytes: bytes
    bin_where: str
    c2i_where: str
    source: str  # file name of the tarball (or of the .bin when unpacked)
    source_sha256: str
    c2i_sha256: Optional[str] = None  # only when the .c2i is a separate file
    lang: Optional[str] = None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def guess_lang(name: str) -> Optional[str]:
    """``tr`` for ``tr-lstm-est.tar.gz`` (or its .bin/.c2i), else None."""
    match = _LANG.match(name)
    return match.group(1).lower() if match else None


def read_release_files(path: Union[str, Path]) -> ReleaseFiles:
    """Read a released ``{lang}-lstm-est.tar.gz``, its unpacked ``.bin`` (the ``.c2i`` beside
    it, or the reverse) or a folder holding one ``.bin`` and one ``.c2i`` (directly or in
    ``models/``)."""
    path = Path(path)
    if not path.exists():
        raise OriginalReleaseError(f"{path}: no such file or folder (expected a released "
                                   f"{{lang}}-lstm-est.tar.gz, its .bin/.c2i or their folder)")
    if path.is_dir():
        bins = sorted(path.glob("*.bin")) or sorted(path.glob("models/*.bin"))
        if len(bins) != 1:
            raise OriginalReleaseError(
                f"{path}: expected exactly one DyNet .bin file (directly or in models/), "
                f"found {len(bins)}: {[b.name for b in bins]}")
        return _read_unpacked(bins[0])
    if path.suffix in (".bin", ".c2i"):
        return _read_unpacked(path.with_suffix(".bin"))
    if tarfile.is_tarfile(path):
        return _read_tarball(path)
    raise OriginalReleaseError(
        f"{path}: not a tar archive, .bin, .c2i or folder (expected a released "
        f"{{lang}}-lstm-est.tar.gz or its unpacked files)")


def _read_unpacked(bin_path: Path) -> ReleaseFiles:
    c2i_path = bin_path.with_suffix(".c2i")
    for p, what in ((bin_path, "the DyNet parameter file"), (c2i_path, "the character table (.c2i)")):
        if not p.is_file():
            raise OriginalReleaseError(f"{p}: missing {what}; the .bin and .c2i must lie side by side")
    bin_bytes = bin_path.read_bytes()
    c2i_bytes = c2i_path.read_bytes()
    return ReleaseFiles(
        bin_text=_decode(bin_bytes, str(bin_path)), c2i_bytes=c2i_bytes,
        bin_where=str(bin_path), c2i_where=str(c2i_path), source=bin_path.name,
        source_sha256=_sha256(bin_bytes), c2i_sha256=_sha256(c2i_bytes),
        lang=guess_lang(bin_path.name),
    )


# The most a member of a release tarball may unpack to (the released .bin files are a few MB).
MAX_MEMBER_BYTES = 64 * 1024 * 1024


def _read_tarball(path: Path) -> ReleaseFiles:
    data = path.read_bytes()
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            # Members are read, never extracted: no path in the archive touches the disk.
            members = [m for m in tar.getmembers() if m.isfile()]
            found = {}
            for suffix in (".bin", ".c2i"):
                matches = [m for m in members if m.name.endswith(suffix)]
                if len(matches) != 1:
                    raise OriginalReleaseError(
                        f"{path}: expected exactly one {suffix} file in the archive, found "
                        f"{[m.name for m in matches]} (a released {{lang}}-lstm-est.tar.gz "
                        f"holds models/{{lang}}-lstm-est.bin and .c2i)")
                member = matches[0]
                if member.size > MAX_MEMBER_BYTES:  # a bomb: refuse before reading (released ones are a few MB)
                    raise OriginalReleaseError(
                        f"{path}:{member.name}: {member.size:,} bytes unpacked, more than the "
                        f"{MAX_MEMBER_BYTES:,} a released model file can hold; refusing to read it")
                found[suffix] = (member.name, tar.extractfile(member).read(MAX_MEMBER_BYTES))
    except (tarfile.TarError, EOFError, OSError, zlib.error) as err:
        raise OriginalReleaseError(f"{path}: unreadable archive (truncated or corrupt?): {err}") from err
    (bin_name, bin_bytes), (c2i_name, c2i_bytes) = found[".bin"], found[".c2i"]
    return ReleaseFiles(
        bin_text=_decode(bin_bytes, f"{path}:{bin_name}"), c2i_bytes=c2i_bytes,
        bin_where=f"{path}:{bin_name}", c2i_where=f"{path}:{c2i_name}", source=path.name,
        source_sha256=_sha256(data), lang=guess_lang(path.name) or guess_lang(Path(bin_name).name),
    )


def _decode(data: bytes, where: str) -> str:
    try:
        return data.decode("ascii")
    except UnicodeDecodeError as err:
        raise OriginalReleaseError(
            f"{where}: not a DyNet text parameter file (non-ASCII byte at offset {err.start})") from None


# -- the DyNet text format --------------------------------------------------------------------
def parse_dynet_text(text: str, where: str) -> Dict[str, numpy.ndarray]:
    """``{name: float64 array}`` from a DyNet 2.x text model (``ParameterCollection.save``).

    Each parameter is a header line ``#Parameter# /NAME {D1,D2} N ZERO_GRAD`` (or
    ``#LookupParameter#``) and one line of D1*D2 values in column-major order; the arrays come
    back with shape (D1, D2). Raises OriginalReleaseError naming the file, line and parameter
    for a malformed header, a wrong number of values, a non-number or a NaN/inf.
    """
    lines = text.splitlines()
    params: Dict[str, numpy.ndarray] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        match = _HEADER.match(line)
        if not match:
            raise OriginalReleaseError(
                f"{where}:{i + 1}: expected a header '#Parameter# /NAME {{DIMS}} N ZERO_GRAD', "
                f"got {line[:80]!r}")
        _, name, dims_text, _, grad = match.groups()
        if grad != "ZERO_GRAD":
            raise OriginalReleaseError(
                f"{where}:{i + 1}: {name}: expected ZERO_GRAD (values without gradients), got {grad!r}")
        dims = tuple(int(d) for d in dims_text.split(","))
        if name in params:
            raise OriginalReleaseError(f"{where}:{i + 1}: parameter {name} appears twice")
        if i + 1 >= len(lines) or lines[i + 1].startswith("#"):
            raise OriginalReleaseError(
                f"{where}:{i + 2}: {name}: missing its line of {int(numpy.prod(dims))} values "
                f"(truncated file?)")
        try:
            values = numpy.array(lines[i + 1].split(), dtype=numpy.float64)
        except ValueError as err:
            raise OriginalReleaseError(f"{where}:{i + 2}: {name}: not a number: {err}") from None
        expected = int(numpy.prod(dims))
        if values.size != expected:
            raise OriginalReleaseError(
                f"{where}:{i + 2}: {name} {{{dims_text}}}: expected {expected} values, got "
                f"{values.size} (truncated or corrupt file?)")
        if not numpy.isfinite(values).all():
            bad = int(numpy.flatnonzero(~numpy.isfinite(values))[0])
            raise OriginalReleaseError(
                f"{where}:{i + 2}: {name}: value {bad} is {values[bad]} (a diverged model?)")
        # Column-major: reshape the reversed dims, then transpose back.
        params[name] = values.reshape(dims[::-1]).T if len(dims) > 1 else values
        i += 2
    return params


# -- the character table ----------------------------------------------------------------------
class _NoGlobalsUnpickler(pickle.Unpickler):
    """Unpickles plain data only: any reference to a class or function is refused, so a
    crafted file cannot run code (``os.system`` and the like arrive through find_class)."""

    def __init__(self, data: bytes, where: str):
        super().__init__(io.BytesIO(data), encoding="utf-8")
        self.where = where

    def find_class(self, module: str, name: str):
        raise OriginalReleaseError(
            f"{self.where}: the pickle refers to {module}.{name}; a character table "
            f"(dict of character -> row) needs no code, so this file is refused")

    def persistent_load(self, pid):
        raise OriginalReleaseError(f"{self.where}: the pickle uses persistent ids; refused")


def parse_c2i(data: bytes, where: str) -> Dict[str, int]:
    """The ``{character: row}`` dict of a released ``.c2i`` file, validated."""
    try:
        obj = _NoGlobalsUnpickler(data, where).load()
    except OriginalReleaseError:
        raise
    except Exception as err:  # pickle raises many types for broken input
        raise OriginalReleaseError(
            f"{where}: not a readable pickle of a character table (truncated or corrupt?): "
            f"{type(err).__name__}: {err}") from None
    if not isinstance(obj, dict):
        raise OriginalReleaseError(
            f"{where}: expected a dict of character -> row, got {type(obj).__name__}")
    for key, value in obj.items():
        if not isinstance(key, str) or not (len(key) == 1 or key == BOUNDARY):
            raise OriginalReleaseError(
                f"{where}: key {key!r}: expected a one-character string or {BOUNDARY!r}")
        if type(value) is not int or value < 0:
            raise OriginalReleaseError(
                f"{where}: {key!r} -> {value!r}: expected a non-negative int row")
    if BOUNDARY not in obj:
        raise OriginalReleaseError(f"{where}: no boundary symbol {BOUNDARY!r} in the character table")
    if len(obj) < 2:
        raise OriginalReleaseError(f"{where}: the character table holds no character besides {BOUNDARY!r}")
    if len(set(obj.values())) != len(obj):
        raise OriginalReleaseError(f"{where}: two characters share a row")
    return obj


# -- conversion -------------------------------------------------------------------------------
def _require(params: Dict[str, numpy.ndarray], name: str, shape: Tuple[int, ...], where: str) -> numpy.ndarray:
    if name not in params:
        raise OriginalReleaseError(
            f"{where}: missing parameter {name} (expected {', '.join(PARAM_NAMES)}; found "
            f"{', '.join(params) or 'none'})")
    value = params[name]
    if value.shape != shape:
        raise OriginalReleaseError(
            f"{where}: {name} has dims {{{','.join(map(str, value.shape))}}}, expected "
            f"{{{','.join(map(str, shape))}}}")
    return value


def _shape(params: Dict[str, numpy.ndarray], name: str, ndim: int, where: str) -> Tuple[int, ...]:
    """The dims of a parameter whose size defines the others (missing or wrong rank: error)."""
    if name not in params:
        _require(params, name, (), where)
    if params[name].ndim != ndim:
        raise OriginalReleaseError(
            f"{where}: {name} has {params[name].ndim} dims {{{','.join(map(str, params[name].shape))}}}, "
            f"expected {ndim}")
    return params[name].shape


def _lstm_state(params: Dict[str, numpy.ndarray], prefix: str, embed: int, hidden: int,
                where: str) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """torch's (weight_ih, weight_hh, bias_ih) for one DyNet VanillaLSTMBuilder."""
    w_x = _require(params, f"{prefix}/_0", (4 * hidden, embed), where)
    w_h = _require(params, f"{prefix}/_1", (4 * hidden, hidden), where)
    bias = _require(params, f"{prefix}/_2", (4 * hidden,), where).copy()
    bias[FORGET_GATE * hidden : (FORGET_GATE + 1) * hidden] += FORGET_BIAS

    def reorder(a: numpy.ndarray) -> numpy.ndarray:
        return numpy.concatenate([a[k * hidden : (k + 1) * hidden] for k in TORCH_FROM_DYNET_GATES])

    return reorder(w_x), reorder(w_h), reorder(bias)


def convert(
    params: Dict[str, numpy.ndarray], c2i: Dict[str, int], *, meta: Optional[Dict[str, Any]] = None,
    unseen: Sequence[str] = UNSEEN_RULES, where: str = "original model",
) -> MimickModel:
    """A ``spacy_mimick.Mimick.v1`` model computing exactly what the original computes."""
    embed, n_rows = _shape(params, "/ce", 2, where)
    hidden = _shape(params, f"{FWD}/_1", 2, where)[1]
    mlp_hidden = _shape(params, "/H", 2, where)[0]
    width = _shape(params, "/O", 2, where)[0]
    ce = params["/ce"]
    H = _require(params, "/H", (mlp_hidden, 2 * hidden), where)
    Hb = _require(params, "/Hb", (mlp_hidden,), where)
    O = _require(params, "/O", (width, mlp_hidden), where)
    Ob = _require(params, "/Ob", (width,), where)
    fwd = _lstm_state(params, FWD, embed, hidden, where)
    bwd = _lstm_state(params, BWD, embed, hidden, where)
    extra = sorted(set(params) - set(PARAM_NAMES))
    if extra:
        raise OriginalReleaseError(f"{where}: unexpected parameters {extra} (not a char-BiLSTM Mimick model?)")
    if len(c2i) != n_rows or max(c2i.values()) >= n_rows:
        raise OriginalReleaseError(
            f"{where}: the character table maps {len(c2i)} characters to rows up to "
            f"{max(c2i.values())}, but /ce has {n_rows} rows (a .c2i of another model?)")
    chars = sorted((c for c in c2i if c != BOUNDARY), key=c2i.__getitem__)
    char_rows = ce[:, [c2i[c] for c in chars]].T  # (n_chars, embed)
    boundary = ce[:, c2i[BOUNDARY]]
    # CharVocab ids: PAD 0, UNK 1, BOW 2, EOW 3, then the characters in c2i row order.
    embedding = numpy.concatenate([
        numpy.zeros((1, embed)), char_rows.mean(axis=0, keepdims=True),
        boundary[None, :], boundary[None, :], char_rows,
    ])
    arch = {
        "@architectures": "spacy_mimick.Mimick.v1", "char_embed": int(embed),
        "hidden": int(hidden), "layers": 1, "mlp_hidden": int(mlp_hidden), "dropout": 0.0,
        "max_chars": MAX_CHARS, "min_char_count": 1,
    }
    vocab = CharVocab(chars, normalize=None, unseen=unseen)
    model = MimickModel(arch, int(width), {"chars": vocab}, meta=meta)

    def t(a: numpy.ndarray) -> torch.Tensor:
        return torch.tensor(numpy.ascontiguousarray(a), dtype=torch.float32)

    zeros = numpy.zeros(4 * hidden)
    state = {
        "embed.weight": t(embedding),
        "lstm.weight_ih_l0": t(fwd[0]), "lstm.weight_hh_l0": t(fwd[1]),
        "lstm.bias_ih_l0": t(fwd[2]), "lstm.bias_hh_l0": t(zeros),
        "lstm.weight_ih_l0_reverse": t(bwd[0]), "lstm.weight_hh_l0_reverse": t(bwd[1]),
        "lstm.bias_ih_l0_reverse": t(bwd[2]), "lstm.bias_hh_l0_reverse": t(zeros),
        "mlp.0.weight": t(H), "mlp.0.bias": t(Hb), "mlp.2.weight": t(O), "mlp.2.bias": t(Ob),
    }
    model.module.load_state_dict(state, strict=True)
    return model


def load_original_release(
    path: Union[str, Path], *, lang: Optional[str] = None, unseen: Sequence[str] = UNSEEN_RULES,
) -> MimickModel:
    """Read and convert a released model (tarball, unpacked .bin/.c2i, or their folder).

    The model's ``meta`` records the source file and its sha256, the language (from the file
    name unless ``lang`` is given), the vectors it mimics ("Polyglot 64d") and the licence.
    """
    files = read_release_files(path)
    params = parse_dynet_text(files.bin_text, files.bin_where)
    c2i = parse_c2i(files.c2i_bytes, files.c2i_where)
    width = _shape(params, "/O", 2, files.bin_where)[0]
    meta: Dict[str, Any] = {
        "source": files.source, "source_sha256": files.source_sha256,
        "lang": lang or files.lang, "targets": TARGETS.format(width=width),
        "license": LICENSE_NOTE, "converted_from": "original MIMICK release (DyNet)",
        "unseen_chars": list(unseen) + ["mean of the character rows"],
    }
    if files.c2i_sha256 is not None:
        meta["c2i_sha256"] = files.c2i_sha256
    return convert(params, c2i, meta=meta, unseen=unseen, where=files.bin_where)


def read_reference(path: Union[str, Path]) -> Tuple[Optional[str], List[str], numpy.ndarray]:
    """(lang, words, vectors) of a ``reference/{lang}.json`` written with the original code."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf8"))
        words = list(data["words"])
        vectors = numpy.array([data["words"][w] for w in words], dtype="float64")
    except (ValueError, KeyError, TypeError) as err:
        raise OriginalReleaseError(
            f"{path}: expected JSON {{\"lang\", \"words\": {{word: vector}}}}: {err}") from None
    return data.get("lang"), words, vectors


def max_reference_diff(model: MimickModel, path: Union[str, Path]) -> Tuple[int, float]:
    """(number of words, max absolute difference) between ``model`` and a reference file."""
    _, words, expected = read_reference(path)
    if expected.ndim != 2 or expected.shape[1] != model.width:
        raise OriginalReleaseError(
            f"{path}: reference vectors have shape {expected.shape}, expected (n, {model.width})")
    got = model.predict(words).astype("float64")
    return len(words), float(numpy.abs(got - expected).max()) if words else 0.0
