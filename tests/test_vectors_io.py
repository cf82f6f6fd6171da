import gzip
import io
import pickle
import pickletools
import struct
import tarfile
import warnings

import numpy
import pytest
import spacy
from spacy.cli.init_pipeline import init_vectors_cli

from spacy_mimick.vectors import vectors_io
from spacy_mimick.vectors.vectors_io import (
    VectorsFormatError,
    WordVectors,
    read_vectors,
    vectors_from_spacy,
    write_vectors_text,
)

from conftest import GLOVE, NAVEC


def write(path, text, encoding="utf-8"):
    path.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    return path


def small_table(n=6, dim=4, seed=0):
    rng = numpy.random.default_rng(seed)
    words = [f"w{i}" for i in range(n)]
    return words, rng.normal(size=(n, dim)).astype(numpy.float32)


# --- real data -------------------------------------------------------------------------------

def test_glove_limit_matches_raw_lines(shared_data):
    vectors = read_vectors(GLOVE, limit=2000)
    assert len(vectors) == 2000 and vectors.dim == 50
    assert vectors.matrix.dtype == numpy.float32 and vectors.matrix.flags.c_contiguous
    assert vectors.unk is None and vectors.counts is None
    with gzip.open(GLOVE, "rt", encoding="utf-8") as f:
        raw = [next(f).split(" ") for _ in range(2000)]
    assert vectors.words == [fields[0] for fields in raw]
    expected = numpy.array([fields[1:] for fields in raw], dtype=numpy.float32)
    numpy.testing.assert_array_equal(vectors.matrix, expected)
    assert vectors.words[:3] == ["the", ",", "."]
    assert vectors.get("the")[0] == numpy.float32(0.418)
    assert vectors.get("not-a-word-at-all") is None


def test_navec_limit_frequency_order_counts_and_unk(shared_data):
    vectors = read_vectors(NAVEC, limit=500)
    assert len(vectors) == 500 and vectors.dim == 300
    assert vectors.words[:4] == ["в", "и", "на", "с"]
    assert vectors.counts[0] == 56893538
    assert all(a >= b for a, b in zip(vectors.counts, vectors.counts[1:]))
    assert vectors.unk is not None and vectors.unk.shape == (300,)
    assert "<unk>" not in vectors.index and "<pad>" not in vectors.index
    # Decode the row of "и" independently from the archive.
    with tarfile.open(NAVEC) as tar:
        vocab = gzip.decompress(tar.extractfile("vocab.bin").read())
        pq = tar.extractfile("pq.bin").read()
    size = struct.unpack("<I", vocab[:4])[0]
    row = vocab[4 + 4 * size :].decode("utf-8").split("\n").index("и")
    n, dim, qdim, centroids = struct.unpack("<4I", pq[:16])
    index = numpy.frombuffer(pq[16 + row * qdim : 16 + (row + 1) * qdim], numpy.uint8)
    codes = numpy.frombuffer(pq[16 + n * qdim :], numpy.float32).reshape(qdim, centroids, dim // qdim)
    numpy.testing.assert_array_equal(vectors.get("и"), codes[numpy.arange(qdim), index].ravel())


# --- text format -----------------------------------------------------------------------------

@pytest.mark.parametrize("name,header", [("v.txt", False), ("v.vec", True), ("v.txt.gz", True), ("v.vec.gz", False)])
def test_text_round_trip(tmp_path, name, header):
    words, matrix = small_table()
    path = tmp_path / name
    write_vectors_text(path, words, matrix, header=header, precision=9)
    with (gzip.open(path, "rt") if name.endswith(".gz") else open(path)) as f:
        first = f.readline()
    assert (first == "6 4\n") == header
    vectors = read_vectors(path)
    assert vectors.words == words and vectors.source == str(path)
    numpy.testing.assert_array_equal(vectors.matrix, matrix)
    numpy.testing.assert_allclose(read_vectors(path, "text").matrix, matrix)


def test_write_default_precision_is_six_significant_digits(tmp_path):
    write_vectors_text(tmp_path / "v.txt", ["a"], numpy.array([[0.123456789, -1234.56789]]))
    assert (tmp_path / "v.txt").read_text() == "1 2\na 0.123457 -1234.57\n"


@pytest.mark.parametrize("word", ["two words", "new\nline", "tab\tbed", ""])
def test_write_rejects_words_the_format_cannot_hold(tmp_path, word):
    with pytest.raises(ValueError, match=r"\(index 1\) is empty or contains whitespace"):
        write_vectors_text(tmp_path / "v.txt", ["ok", word], numpy.zeros((2, 3)))


def test_write_rejects_shape_mismatch(tmp_path):
    with pytest.raises(ValueError, match="2 words need a"):
        write_vectors_text(tmp_path / "v.txt", ["a", "b"], numpy.zeros((3, 2)))


def test_text_words_with_spaces_trailing_blanks_and_crlf(tmp_path):
    path = write(tmp_path / "v.txt", "a 1 2 3 \r\n. . . 4 5 6\r\nx\u00a0y 7 8 9\n\u00a0 1 1 1\n\n")
    with pytest.warns(UserWarning, match=r"skipped 1 row\(s\) whose word has no visible character.*line 4"):
        vectors = read_vectors(path)
    assert vectors.words == ["a", ". . .", "x\u00a0y"]  # a lone U+00A0 is not a word
    numpy.testing.assert_array_equal(vectors.get(". . ."), [4, 5, 6])


def test_text_special_tokens_and_limit(tmp_path):
    path = write(tmp_path / "v.txt", "3 2\n<UNK> 9 9\n<S> 8 8\nb 1 2\n")
    vectors = read_vectors(write(tmp_path / "w.txt", "<UNK> 9 9\n<S> 8 8\nb 1 2\nc 3 4\nd 5 6\n"), limit=2)
    assert vectors.words == ["b", "c"]
    numpy.testing.assert_array_equal(vectors.unk, [9, 9])
    assert read_vectors(path).words == ["b"]
    kept = read_vectors(path, special_tokens=())
    assert kept.words == ["<UNK>", "<S>", "b"] and kept.unk is None


def test_text_chunk_boundaries(tmp_path, monkeypatch):
    monkeypatch.setattr(vectors_io, "_CHUNK_ROWS", 3)
    words, matrix = small_table(n=10, dim=3)
    path = tmp_path / "v.txt"
    write_vectors_text(path, words, matrix, precision=9)
    numpy.testing.assert_array_equal(read_vectors(path).matrix, matrix)
    assert read_vectors(path, limit=7).words == words[:7]
    lines = path.read_text().splitlines()
    lines[8] = "w7 1 2"
    write(path, "\n".join(lines) + "\n")
    with pytest.raises(VectorsFormatError, match=r"v\.txt: line 9: word 'w7': found 2 values, expected 3"):
        read_vectors(path)


@pytest.mark.parametrize(
    "text,message",
    [
        ("a 1 2 3\nb 1 2\n", r"line 2: word 'b': found 2 values, expected 3 \(as on line 1\)"),
        ("a 1 2 3\nb 1 2 3 4\n", r"line 2: word 'b': found 4 values, expected 3"),
        ("2 3\na 1 2 3\nb 1 2\n", r"line 3: word 'b': found 2 values, expected 3 \(as the header says\)"),
        ("1 4\na 1 2 3\n", r"line 2: word 'a': found 3 values, expected 4 \(as the header says\)"),
        ("a 1 2 3\nb 1 x 3\n", r"line 2: word 'b': value 2 is 'x', expected a number"),
        ("a 1 2 3\nb 1 nan 3\n", r"line 2: word 'b': value nan is not finite"),
        ("a 1 2 3\nb 1 2 -inf\n", r"line 2: word 'b': value -inf is not finite"),
        ("a 1 2\n 3 4\n", r"line 2: empty word"),
        ("", r"line 1: empty file"),
        ("3 2\na 1 2\nb 3 4\n", r"the header says 3 rows but the file has 2"),
        ("2 2\na 1 2\nb 3 4\nc 5 6\n", r"the header says 2 rows but the file has 3"),
        ("2 2\n", r"the header says 2 rows but the file has 0"),
        ("a\n", r"line 1: found 'a', expected a 'rows dim' header or a word"),
        ("\na 1 2\n", r"line 1: found '', expected a 'rows dim' header or a word"),
    ],
)
def test_text_errors(tmp_path, text, message):
    path = write(tmp_path / "bad.txt", text)
    with pytest.raises(VectorsFormatError, match=f"bad.txt: {message}"):
        read_vectors(path)


def test_text_bad_encoding_names_line_and_encoding(tmp_path):
    path = write(tmp_path / "bad.txt", b"a 1 2\nb 3 4\ncaf\xe9 5 6\n")
    with pytest.raises(VectorsFormatError, match=r"line 3: cannot decode byte\(s\) b'\\xe9' at byte 3 as utf-8"):
        read_vectors(path)
    assert read_vectors(path, encoding="latin-1").words == ["a", "b", "café"]


def test_duplicates_error_or_keep_first_with_warning(tmp_path):
    path = write(tmp_path / "dup.txt", "a 1 2\nb 3 4\na 5 6\nb 7 8\nc 9 9\n")
    with pytest.raises(VectorsFormatError, match=r"dup.txt: line 3: word 'a': duplicate word, first read at line 1"):
        read_vectors(path)
    with pytest.warns(UserWarning, match=r"skipped 2 duplicate word\(s\).*'a' at line 3"):
        vectors = read_vectors(path, on_duplicate="first")
    assert vectors.words == ["a", "b", "c"]
    numpy.testing.assert_array_equal(vectors.get("a"), [1, 2])
    with pytest.raises(ValueError, match="on_duplicate"):
        read_vectors(path, on_duplicate="last")


# --- word2vec binary -------------------------------------------------------------------------

def word2vec_binary(words, matrix, newline=True, rows=None):
    out = [f"{len(words) if rows is None else rows} {matrix.shape[1]}\n".encode()]
    for word, row in zip(words, matrix):
        out.append(word.encode("utf-8") + b" " + row.astype("<f4").tobytes() + (b"\n" if newline else b""))
    return b"".join(out)


@pytest.mark.parametrize("newline", [True, False])
@pytest.mark.parametrize("name", ["v.bin", "v.bin.gz"])
def test_word2vec_binary(tmp_path, newline, name):
    words, matrix = small_table(n=7, dim=5)
    words[3] = "naïve"
    data = word2vec_binary(words, matrix, newline)
    path = write(tmp_path / name, gzip.compress(data) if name.endswith(".gz") else data)
    vectors = read_vectors(path)
    assert vectors.words == words
    numpy.testing.assert_array_equal(vectors.matrix, matrix)
    assert read_vectors(path, "word2vec-binary", limit=3).words == words[:3]


def test_word2vec_binary_errors(tmp_path):
    words, matrix = small_table(n=3, dim=4)
    data = word2vec_binary(words, matrix)
    with pytest.raises(VectorsFormatError, match=r"t.bin: row 3: file ends early \(the header says 3 rows of 4"):
        read_vectors(write(tmp_path / "t.bin", data[:-7]))
    with pytest.raises(VectorsFormatError, match=r"row 4: file ends early"):
        read_vectors(write(tmp_path / "n.bin", word2vec_binary(words, matrix, rows=4)))
    with pytest.raises(VectorsFormatError, match=r"row 3: more data after the 2 rows"):
        read_vectors(write(tmp_path / "m.bin", word2vec_binary(words, matrix, rows=2)))
    with pytest.raises(VectorsFormatError, match=r"h.bin: line 1: found .*expected a 'rows dim' header"):
        read_vectors(write(tmp_path / "h.bin", b"hello 1 2\n"))
    bad = data.replace(b"w1 ", b"w\xff ")
    with pytest.raises(VectorsFormatError, match=r"e.bin: row 2: cannot decode .* as utf-8"):
        read_vectors(write(tmp_path / "e.bin", bad))
    nan = matrix.copy()
    nan[1, 2] = numpy.nan
    with pytest.raises(VectorsFormatError, match=r"row 2: word 'w1': value nan is not finite"):
        read_vectors(write(tmp_path / "nan.bin", word2vec_binary(words, nan)))


# --- Polyglot (a Python 2 pickle) --------------------------------------------------------------

def py2_pickle(words, matrix):
    """What Python 2's cPickle (protocol 2) writes for a (words, numpy array) tuple: py2 ``str``
    as SHORT_BINSTRING/BINSTRING (``bytes`` here), ``unicode`` as BINUNICODE (``str`` here), and
    the array through numpy.core.multiarray._reconstruct with its data as a py2 ``str``."""

    def string(b):
        return b"U" + bytes([len(b)]) + b if len(b) < 256 else b"T" + struct.pack("<i", len(b)) + b

    def unicode(t):
        return b"X" + struct.pack("<I", len(t.encode("utf-8"))) + t.encode("utf-8")

    def int_(i):
        return b"J" + struct.pack("<i", i)

    rows, dim = matrix.shape
    return b"".join(
        [
            b"\x80\x02(]("  # PROTO 2, MARK, EMPTY_LIST, MARK
            + b"".join(string(w) if isinstance(w, bytes) else unicode(w) for w in words)
            + b"e",  # APPENDS
            b"cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\n" + int_(0) + b"\x85" + string(b"b") + b"\x87R",
            b"(" + int_(1) + int_(rows) + int_(dim) + b"\x86",  # state: version, shape
            b"cnumpy\ndtype\n" + string(b"f4") + int_(0) + int_(1) + b"\x87R",
            b"(" + int_(3) + string(b"<") + b"NNN" + int_(-1) + int_(-1) + int_(0) + b"tb",
            b"\x89" + string(matrix.astype("<f4").tobytes()) + b"tb",  # NEWFALSE, data; BUILD
            b"t.",
        ]
    )


POLYGLOT_WORDS = [b"<UNK>", b"<S>", b"</S>", b"<PAD>", b"the", "caf\u00e9", "na\u00efve".encode("utf-8"), "日本"]


def test_polyglot_py2_pickle(tmp_path):
    matrix = numpy.arange(len(POLYGLOT_WORDS) * 70, dtype=numpy.float32).reshape(-1, 70)
    data = py2_pickle(POLYGLOT_WORDS, matrix)
    opcodes = {op.name for op, _, _ in pickletools.genops(data)}
    assert {"SHORT_BINSTRING", "BINSTRING", "BINUNICODE"} <= opcodes
    path = write(tmp_path / "words_embeddings_32.pkl", data)
    vectors = read_vectors(path)
    assert vectors.words == ["the", "café", "naïve", "日本"]
    numpy.testing.assert_array_equal(vectors.matrix, matrix[4:])
    numpy.testing.assert_array_equal(vectors.unk, matrix[0])
    assert read_vectors(path, limit=2).words == ["the", "café"]


def test_polyglot_tar_bz2_archive(tmp_path):
    data = py2_pickle(POLYGLOT_WORDS, numpy.ones((len(POLYGLOT_WORDS), 3), dtype=numpy.float32))
    archive = tmp_path / "embeddings_pkl.tar.bz2"
    with tarfile.open(archive, "w:bz2") as tar:
        info = tarfile.TarInfo("words_embeddings_32.pkl")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    vectors = read_vectors(archive)
    assert vectors.words[0] == "the" and vectors.source.endswith("embeddings_pkl.tar.bz2:words_embeddings_32.pkl")


def test_polyglot_errors(tmp_path):
    with pytest.raises(VectorsFormatError, match=r"a.pkl: found a dict, expected a \(words, embeddings\) tuple"):
        read_vectors(write(tmp_path / "a.pkl", pickle.dumps({"a": 1})))
    with pytest.raises(VectorsFormatError, match=r"b.pkl: 3 words and embeddings of shape \(2, 2\)"):
        read_vectors(write(tmp_path / "b.pkl", pickle.dumps((["a", "b", "c"], numpy.zeros((2, 2))))))
    with pytest.raises(VectorsFormatError, match=r"c.pkl: row 2: found a int, expected a word"):
        read_vectors(write(tmp_path / "c.pkl", pickle.dumps((["a", 5], numpy.zeros((2, 2))))))
    with pytest.raises(VectorsFormatError, match=r"d.pkl: row 1: cannot decode .* as utf-8"):
        read_vectors(write(tmp_path / "d.pkl", py2_pickle([b"\xff"], numpy.zeros((1, 2), numpy.float32))))
    # Any class other than numpy's array machinery is refused, so loading runs no foreign code.
    evil = b"\x80\x02cos\nsystem\nX\x04\x00\x00\x00trueq\x85R."
    with pytest.raises(VectorsFormatError, match=r"e.pkl: cannot unpickle \(refusing to load os.system"):
        read_vectors(write(tmp_path / "e.pkl", evil))


# --- spaCy -----------------------------------------------------------------------------------

def spacy_init_vectors(source, out, prune=-1, mode="default"):
    """``python -m spacy init vectors en SOURCE OUT --prune PRUNE --mode MODE``, in process."""
    init_vectors_cli(
        "en", source, out, prune=prune, truncate=0, mode=mode, name=None, verbose=False, jsonl_loc=None, attr="ORTH"
    )


def init_vectors(tmp_path, words, matrix, prune=-1):
    source = tmp_path / "vectors.txt"
    write_vectors_text(source, words, matrix, precision=9)
    out = tmp_path / f"pipeline-{prune}"
    spacy_init_vectors(source, out, prune=prune)
    return out


def test_spacy_init_vectors_directory(tmp_path):
    words, matrix = small_table(n=8, dim=4)
    out = init_vectors(tmp_path, words, matrix)
    vectors = read_vectors(out)
    assert vectors.words == words and vectors.unk is None and vectors.source == str(out)
    numpy.testing.assert_allclose(vectors.matrix, matrix)
    assert read_vectors(out, "spacy", limit=3).words == words[:3]
    nlp = spacy.load(out)
    assert vectors_from_spacy(nlp).words == words
    assert vectors_from_spacy(nlp.vocab).words == words


def test_spacy_pruned_vectors_one_word_per_row_owned_by_frequent_words(tmp_path):
    words, matrix = small_table(n=20, dim=6, seed=1)
    out = init_vectors(tmp_path, words, matrix, prune=5)
    nlp = spacy.load(out)
    assert nlp.vocab.vectors.shape == (5, 6) and len(nlp.vocab.vectors.key2row) == 20
    vectors = read_vectors(out)
    assert vectors.words == words[:5]  # the most frequent words, in file order
    numpy.testing.assert_allclose(vectors.matrix, matrix[:5])


def test_spacy_deduplicated_rows_keep_file_order(tmp_path):
    words, matrix = small_table(n=6, dim=3, seed=2)
    matrix[4] = matrix[1]  # spaCy merges identical rows and sorts the table by value
    out = init_vectors(tmp_path, words, matrix)
    table = spacy.load(out).vocab.vectors.data
    assert table.shape == (5, 3) and not numpy.allclose(table, matrix[[0, 1, 2, 3, 5]])
    vectors = read_vectors(out)
    assert vectors.words == ["w0", "w1", "w2", "w3", "w5"]
    numpy.testing.assert_allclose(vectors.matrix, matrix[[0, 1, 2, 3, 5]])


def test_spacy_floret_vectors_are_refused(tmp_path):
    rows = "\n".join(f"{i} {i} 0.5 1" for i in range(10))
    source = write(tmp_path / "floret.txt", f"10 3 3 4 2 2166136261 < >\n{rows}\n")
    out = tmp_path / "floret"
    spacy_init_vectors(source, out, mode="floret")
    with pytest.raises(VectorsFormatError, match="floret vectors cover every word"):
        read_vectors(out)
    with pytest.raises(VectorsFormatError, match="nothing for Mimick to predict"):
        vectors_from_spacy(spacy.load(out))


def test_spacy_missing_vectors(tmp_path):
    spacy.blank("en").to_disk(tmp_path / "blank")
    with pytest.raises(VectorsFormatError, match="the table holds no word vectors"):
        read_vectors(tmp_path / "blank")
    with pytest.raises(VectorsFormatError, match="no vocab/vectors in it"):
        read_vectors(tmp_path, "spacy")
    with pytest.raises(FileNotFoundError, match="no_such_pipeline_xyz"):
        read_vectors("no_such_pipeline_xyz")


# --- API ---------------------------------------------------------------------------------------

def test_auto_detection(tmp_path):
    words, matrix = small_table(n=3, dim=2)
    write_vectors_text(tmp_path / "v.data", words, matrix)
    write(tmp_path / "v.bin", word2vec_binary(words, matrix))
    write(tmp_path / "p.dat", py2_pickle([w.encode() for w in words], matrix))
    for name in ("v.data", "v.bin", "p.dat"):
        assert read_vectors(tmp_path / name).words == words
    with pytest.raises(ValueError, match="unknown vectors format 'glove'"):
        read_vectors(tmp_path / "v.data", "glove")


def test_word_vectors_helpers():
    vectors = WordVectors(["a", "b", "c"], numpy.arange(6, dtype=numpy.float64).reshape(3, 2), "mem", counts=[5, 3, 1])
    assert vectors.matrix.dtype == numpy.float32 and vectors.dim == 2 and len(vectors) == 3
    assert vectors.index == {"a": 0, "b": 1, "c": 2}
    numpy.testing.assert_array_equal(vectors.get("b"), [2, 3])
    sub = vectors.subset([2, 0])
    assert sub.words == ["c", "a"] and sub.counts == [1, 5] and sub.source == "mem"
    numpy.testing.assert_array_equal(sub.matrix, [[4, 5], [0, 1]])
    assert vectors.subset(numpy.array([False, True, True])).words == ["b", "c"]
    with pytest.raises(ValueError, match="3 words need a"):
        WordVectors(["a", "b", "c"], numpy.zeros((2, 2)), "mem")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert vectors.subset([]).words == []
