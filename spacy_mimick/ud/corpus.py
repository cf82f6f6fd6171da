"""Universal Dependencies CoNLL-U -> spaCy Docs, and the paper's low-resource training subsets.

Tokenization is UD's gold *syntactic words* (integer IDs), one ``Doc`` per sentence:

* Multiword token ranges (``3-4  du`` over ``3 de`` / ``4 le``): the words are kept; the surface
  token is recorded in ``doc.user_data[MULTIWORD_KEY]`` as ``(start, end, form)`` tuples (word
  indices, ``end`` exclusive). The words of a range are joined without whitespace; the last one takes
  the range's ``SpaceAfter``. ``doc.text`` therefore reads "dele" for "du": spaCy cannot
  represent a surface token that is not the concatenation of its words.
* Empty nodes (``8.1``, enhanced dependencies only) are skipped: they are not tokens.
* ``SpaceAfter=No`` in MISC -> no whitespace after the word, otherwise one space (spaCy tokens
  carry a single optional space, so ``SpacesAfter=...`` just means "some whitespace").

Anything else malformed (bytes that are not UTF-8, a line of only whitespace, another kind of
ID, missing columns, ill-formed FEATS, HEAD out of range, pointing at its own word or forming a
cycle, unknown UPOS, ...) raises :class:`ConlluFormatError` naming the file and line. The
``conllu`` package's own exceptions are wrapped the same way.
"""
import os
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, TextIO, Tuple, Union

import conllu
import spacy
from conllu.exceptions import ParseException
from spacy.language import Language
from spacy.parts_of_speech import IDS as UPOS_IDS
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.vocab import Vocab

from ..atomic import atomic_file
from ..errors import UserError

SENT_ID_KEY = "spacy_mimick.sent_id"
MULTIWORD_KEY = "spacy_mimick.multiword_tokens"

N_COLUMNS = 10
# One FEATS item as the UD guidelines define it: Name[layer]=Value(,Value)*.
_FEATURE = re.compile(r"[A-Z0-9][A-Za-z0-9]*(\[[a-z0-9]+\])?=[A-Z0-9][A-Za-z0-9]*(,[A-Z0-9][A-Za-z0-9]*)*")
_ID_EXPECTED = "an integer word ID, a multiword range like 3-4 or an empty node like 8.1"


class ConlluFormatError(UserError):
    """A CoNLL-U file that is not well formed; ``path`` and ``line`` (1-based) say where."""

    def __init__(self, path: Union[str, Path], line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}")
        self.path = str(path)
        self.line = line


@dataclass
class ConlluStats:
    """What a read saw: sentences and words kept, multiword ranges kept, empty nodes skipped."""

    sentences: int = 0
    tokens: int = 0
    multiword_ranges: int = 0
    empty_nodes: int = 0


class _TrackedLines:
    """A text file for ``conllu.parse_incr`` that remembers the current sentence's lines.

    ``conllu`` reports no line numbers. ``parse_incr`` pulls lines until a blank line closes a
    sentence block, then parses that block and yields it (or raises) before reading on, so when
    a sentence (or an exception) comes out, ``block`` holds that sentence's ``(line_no, text)``.

    The file is read as bytes and decoded here, line by line, so that bytes that are not UTF-8
    and lines of only whitespace (which ``conllu`` would take for a sentence break, splitting
    the sentence) are reported at their own line.
    """

    def __init__(self, stream: BinaryIO, path: Path) -> None:
        self._stream = stream
        self._path = path
        self.read = stream.read  # parse_incr only checks that the attribute exists
        self.block: List[Tuple[int, str]] = []
        self._in_block = False

    def __iter__(self) -> Iterator[str]:
        for line_no, raw in enumerate(self._stream, start=1):
            line = _decode_line(raw, self._path, line_no)
            if line.strip():
                if not self._in_block:
                    self.block = []
                    self._in_block = True
                self.block.append((line_no, line.rstrip("\r\n")))
            else:
                if line.strip("\r\n"):
                    raise ConlluFormatError(
                        self._path, line_no, f"a line of only whitespace ({line.rstrip(chr(10))!r}): "
                        f"expected an empty line (between sentences) or a word line"
                    )
                self._in_block = False
            yield line

    def token_lines(self) -> List[Tuple[int, str]]:
        """The current block's non-comment lines, in the order conllu parses them."""
        return [(n, text) for n, text in self.block if not text.strip().startswith("#")]


def _decode_line(raw: bytes, path: Path, line_no: int) -> str:
    """One line of a CoNLL-U file as text (UTF-8; a BOM on the first line is dropped)."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConlluFormatError(
            path, line_no, f"byte(s) {raw[err.start:err.end]!r} at column {err.start + 1} are not "
            f"UTF-8 (expected a UTF-8 file, as CoNLL-U requires; convert it with iconv)"
        ) from None
    return line[1:] if line_no == 1 and line.startswith("\ufeff") else line


def read_conllu(
    path: Union[str, Path],
    vocab: Vocab,
    *,
    limit: Optional[int] = None,
    stats: Optional[ConlluStats] = None,
) -> Iterator[Doc]:
    """Yield one annotated ``Doc`` per sentence of a CoNLL-U file (the first ``limit`` if given).

    Per word: ORTH = FORM, ``pos_`` = UPOS, ``tag_`` = XPOS, ``morph`` = FEATS, ``lemma_`` =
    LEMMA, heads and deps from HEAD/DEPREL (UD's ``root`` becomes spaCy's ``ROOT``, heading
    itself); ``_`` leaves a value empty. ``doc.user_data`` holds the ``sent_id``
    (:data:`SENT_ID_KEY`) and the multiword tokens (:data:`MULTIWORD_KEY`). Blocks with no
    words (only comments) are skipped. ``stats``, if given, is updated as sentences are read.
    """
    path = Path(path)
    with path.open("rb") as stream:
        lines = _TrackedLines(stream, path)
        sentences = conllu.parse_incr(lines)
        n_read = 0
        while not limit or n_read < limit:
            try:
                sentence = next(sentences)
            except StopIteration:
                return
            except ParseException as err:
                line_no, message = _locate_parse_error(lines.token_lines(), err)
                raise ConlluFormatError(path, line_no, message) from err
            doc = _sentence_to_doc(path, vocab, sentence, lines.token_lines(), stats)
            if doc is not None:
                n_read += 1
                yield doc


def _locate_parse_error(token_lines: List[Tuple[int, str]], err: ParseException) -> Tuple[int, str]:
    """Find the line of the sentence that ``conllu`` refused, by parsing its lines one by one."""
    for line_no, text in token_lines:
        try:
            conllu.parse_token_and_metadata(text.strip())
        except ParseException as line_err:
            return line_no, f"{line_err} (expected {_ID_EXPECTED} and {N_COLUMNS} tab-separated columns)"
    first = token_lines[0][0] if token_lines else 0
    return first, f"in the sentence starting here: {err}"


def _sentence_to_doc(
    path: Path,
    vocab: Vocab,
    sentence: conllu.TokenList,
    token_lines: List[Tuple[int, str]],
    stats: Optional[ConlluStats],
) -> Optional[Doc]:
    """Build the Doc of one parsed sentence, validating each line; None for a word-less block."""
    if len(sentence) != len(token_lines):  # defensive: the line tracking must match conllu
        first = token_lines[0][0] if token_lines else 0
        raise ConlluFormatError(path, first, "could not match the parsed tokens to the lines")
    words: List[str] = []
    spaces: List[bool] = []
    pos: List[str] = []
    tags: List[str] = []
    morphs: List[str] = []
    lemmas: List[str] = []
    heads: List[Optional[int]] = []
    deps: List[str] = []
    word_lines: List[int] = []
    ranges: List[Tuple[int, int, str]] = []  # (start, end, form): word indices, end exclusive
    range_lines: List[int] = []
    range_space: Dict[int, bool] = {}  # last word index of a range -> the range's SpaceAfter
    n_empty = 0
    for token, (line_no, text) in zip(sentence, token_lines):

        def fail(message: str) -> ConlluFormatError:
            return ConlluFormatError(path, line_no, message)

        columns = text.split("\t")
        if len(columns) != N_COLUMNS:
            raise fail(f"expected {N_COLUMNS} tab-separated columns, found {len(columns)}")
        if "  " in text:  # conllu would split the field there and shift the columns
            raise fail("expected no run of two spaces inside a field")
        token_id = token["id"]
        if isinstance(token_id, tuple) and token_id[1] == ".":
            n_empty += 1
            continue
        if isinstance(token_id, tuple):  # a multiword range (start, "-", end)
            start, _, end = token_id
            if start != len(words) + 1:
                raise fail(f"multiword range {start}-{end} should start at word {len(words) + 1}")
            ranges.append((start - 1, end, token["form"]))
            range_lines.append(line_no)
            range_space[end - 1] = _space_after(token["misc"])
            continue
        if not isinstance(token_id, int):
            raise fail(f"expected {_ID_EXPECTED}, found {columns[0]!r}")
        if token_id != len(words) + 1:
            raise fail(f"expected word ID {len(words) + 1}, found {token_id}")
        if not token["form"]:
            raise fail("expected a non-empty FORM")
        if token["upos"] not in UPOS_IDS and token["upos"] != "_":
            raise fail(f"expected a UPOS tag or _, found {token['upos']!r}")
        feats = columns[5]
        bad = [item for item in feats.split("|") if not _FEATURE.fullmatch(item)] if feats != "_" else []
        if bad:
            raise fail(f"expected FEATS as Name=Value pairs joined by | (or _), found {bad[0]!r} in {feats!r}")
        names = [item.split("=", 1)[0] for item in feats.split("|")] if feats != "_" else []
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:  # one of the values would silently win
            raise fail(f"FEATS names {twice[0]} twice in {feats!r}: expected each feature once, its "
                       f"values joined by commas (e.g. {twice[0]}=A,B)")
        in_range = bool(ranges) and token_id <= ranges[-1][1]
        words.append(token["form"])
        spaces.append(range_space.get(token_id - 1, False) if in_range else _space_after(token["misc"]))
        pos.append("" if token["upos"] == "_" else token["upos"])
        tags.append(token["xpos"] or "")
        morphs.append("|".join(f"{k}={v}" for k, v in (token["feats"] or {}).items()))
        lemmas.append("" if token["lemma"] == "_" and token["form"] != "_" else token["lemma"])
        heads.append(token["head"])
        deps.append(token["deprel"])
        word_lines.append(line_no)
    if not words:
        return None
    for (_, end, form), line_no in zip(ranges, range_lines):
        if end > len(words):
            raise ConlluFormatError(
                path, line_no, f"multiword range {form!r} ends at word {end}, past the last word {len(words)}"
            )
    has_tree = all(head is not None for head in heads)
    for i, head in enumerate(heads):
        if head is not None and not 0 <= head <= len(words):
            raise ConlluFormatError(path, word_lines[i], f"expected HEAD in 0..{len(words)}, found {head}")
        if head == i + 1:
            raise ConlluFormatError(path, word_lines[i], f"HEAD of word {i + 1} is the word itself "
                                    f"(expected another word's ID, or 0 for the root)")
    if has_tree:
        _check_acyclic(path, heads, word_lines)
    user_data = {MULTIWORD_KEY: tuple(ranges)}  # a tuple, as DocBin gives it back
    if "sent_id" in sentence.metadata:
        user_data[SENT_ID_KEY] = sentence.metadata["sent_id"]
    try:
        doc = Doc(
            vocab,
            words=words,
            spaces=spaces,
            user_data=user_data,
            pos=pos,
            tags=tags,
            morphs=morphs,
            lemmas=lemmas,
            heads=[i if h == 0 else h - 1 for i, h in enumerate(heads)] if has_tree else None,
            deps=["ROOT" if d == "root" else d for d in deps] if has_tree else None,
            sent_starts=None if has_tree else [True] + [False] * (len(words) - 1),
        )
    except ValueError as err:  # e.g. a cycle in HEAD
        raise ConlluFormatError(path, word_lines[0], f"spaCy refused the sentence here: {err}") from err
    if stats is not None:
        stats.sentences += 1
        stats.tokens += len(words)
        stats.multiword_ranges += len(ranges)
        stats.empty_nodes += n_empty
    return doc


def _check_acyclic(path: Path, heads: List[Optional[int]], word_lines: List[int]) -> None:
    """Refuse HEADs that form a cycle (every word must reach the root, HEAD 0)."""
    reaches_root = [False] * len(heads)
    for start in range(len(heads)):
        seen: List[int] = []
        word = start
        while not reaches_root[word]:
            if word in seen:
                cycle = seen[seen.index(word):]
                raise ConlluFormatError(
                    path, word_lines[min(cycle)], "HEAD cycle through words "
                    + " -> ".join(str(w + 1) for w in cycle + [word])
                    + " (expected every word to lead to the root, HEAD 0)"
                )
            seen.append(word)
            head = heads[word]
            if head == 0:
                break
            word = head - 1  # type: ignore[operator]
        for w in seen:
            reaches_root[w] = True


def _space_after(misc: Optional[Dict[str, Optional[str]]]) -> bool:
    return not misc or misc.get("SpaceAfter") != "No"


def _vocab(vocab_or_lang: Union[Vocab, Language, str]) -> Vocab:
    if isinstance(vocab_or_lang, Vocab):
        return vocab_or_lang
    if isinstance(vocab_or_lang, Language):
        return vocab_or_lang.vocab
    return spacy.blank(vocab_or_lang).vocab


def conllu_to_docbin(
    path: Union[str, Path],
    vocab_or_lang: Union[Vocab, Language, str],
    *,
    limit: Optional[int] = None,
) -> DocBin:
    """All sentences of a CoNLL-U file (or the first ``limit``) as a ``DocBin`` with user data.

    ``vocab_or_lang``: a ``Vocab``, a ``Language``, or a language code for ``spacy.blank``.
    """
    return DocBin(docs=read_conllu(path, _vocab(vocab_or_lang), limit=limit), store_user_data=True)


def subsample_by_tokens(docs: Sequence[Doc], n_tokens: int, seed: int) -> List[Doc]:
    """The paper's low-resource training set: sentences drawn without replacement until a
    token budget is reached.

    The sentences are visited in a random order fixed by ``seed`` (``random.Random(seed)``,
    reproducible across platforms and Python versions) and taken until the running token count
    is ``>= n_tokens``: the sentence that crosses the budget IS included, so the result holds
    at least ``n_tokens`` tokens and fewer than ``n_tokens`` + the longest sentence. The result
    is in the sampled order. If ``n_tokens`` >= the total token count, all docs are returned
    in their original order.
    """
    if n_tokens <= 0:
        raise ValueError(f"n_tokens must be positive, got {n_tokens}")
    if n_tokens >= sum(len(doc) for doc in docs):
        return list(docs)
    order = list(range(len(docs)))
    random.Random(seed).shuffle(order)
    sample: List[Doc] = []
    total = 0
    for i in order:
        sample.append(docs[i])
        total += len(docs[i])
        if total >= n_tokens:
            break
    return sample


@spacy.registry.readers("spacy_mimick.ConllCorpus.v1")
def create_conllu_corpus_reader(
    path: Path, limit: int = 0, n_tokens: int = 0, seed: int = 0
) -> Callable[[Language], Iterator[Example]]:
    """A spaCy corpus reader for a CoNLL-U file, with gold tokenization.

    Yields ``Example(predicted, reference)`` where ``predicted`` has the reference's words and
    spaces and no annotation. ``limit`` > 0 keeps the first ``limit`` sentences; then
    ``n_tokens`` > 0 keeps a seeded subsample (:func:`subsample_by_tokens`). The file is parsed
    once per vocab and the reference docs reused across epochs; predicted docs are made fresh on
    every call since training writes annotations onto them.
    """
    return create_conllu_corpus_reader_v2(path, limit=limit, n_tokens=n_tokens, seed=seed)


@spacy.registry.readers("spacy_mimick.ConllCorpus.v2")
def create_conllu_corpus_reader_v2(
    path: Path,
    limit: int = 0,
    n_tokens: int = 0,
    seed: int = 0,
    augmenter: Optional[Callable[[Language, Example], Iterable[Example]]] = None,
) -> Callable[[Language], Iterator[Example]]:
    """``spacy_mimick.ConllCorpus.v1`` with spaCy's ``augmenter`` setting (as ``spacy.Corpus.v1``
    has it): every example is passed through ``augmenter(nlp, example)`` and what it yields is
    read instead (``spacy.lower_case.v1``, ``spacy.orth_variants.v1``, ...). Set it on the
    training corpus only; ``None`` reads the file as v1 does.
    """
    cached_vocab: Optional[Vocab] = None
    cached_docs: List[Doc] = []

    def read(nlp: Language) -> Iterator[Example]:
        nonlocal cached_vocab, cached_docs
        if cached_vocab is not nlp.vocab:
            docs = list(read_conllu(path, nlp.vocab, limit=limit or None))
            cached_docs = subsample_by_tokens(docs, n_tokens, seed) if n_tokens > 0 else docs
            cached_vocab = nlp.vocab
        for ref in cached_docs:
            words = [token.text for token in ref]
            spaces = [bool(token.whitespace_) for token in ref]
            example = Example(Doc(nlp.vocab, words=words, spaces=spaces), ref)
            if augmenter is None:
                yield example
            else:
                yield from augmenter(nlp, example)

    return read


def ud_feats(doc_token) -> Optional[Dict[str, str]]:
    """A token's ``morph`` as CoNLL-U FEATS: features sorted case-insensitively, as UD requires
    (spaCy's own string sorts case-sensitively: ``NumType`` before ``Number`` only by luck);
    ``None`` (written ``_``) when it has none."""
    features = doc_token.morph.to_dict()
    if not features:
        return None
    return dict(sorted(features.items(), key=lambda item: item[0].lower()))


def _atomic_text_output(path: Path):
    """The output of ``tag``: written through a temporary file beside it, renamed at the end
    (atomic.py), so a failure, Ctrl-C or SIGTERM leaves no partial file and no debris."""
    return atomic_file(path, "w", encoding="utf8", newline="")


def tag_conllu(nlp: Language, input_path: Union[str, Path], output_path: Union[str, Path],
               batch_size: int = 256) -> ConlluStats:
    """Tag the gold words of a CoNLL-U file with ``nlp`` and write it back with the predicted
    UPOS and FEATS; every other column and line (comments, multiword ranges, empty nodes) is
    copied unchanged, so the output can be scored with UD's official evaluation script.

    The file is validated first (:func:`read_conllu`); its words are tagged without their gold
    annotation. The rewrite works line by line: the ``conllu`` package's serializer would drop
    free-form comments. The output is written to a temporary file renamed at the end, so an
    interrupted run leaves no partial file; writing over the input is refused."""
    input_path, output_path = Path(input_path), Path(output_path)
    if output_path.exists() and os.path.samefile(input_path, output_path):
        raise UserError(f"{output_path}: is the input file; refusing to write over it "
                        f"(expected another output path)")
    stats = ConlluStats()
    gold = list(read_conllu(input_path, nlp.vocab, stats=stats))
    if not gold:
        raise UserError(f"{input_path}: no sentences (the file is empty or holds only comments, "
                        f"blank lines, multiword-token ranges or empty nodes; expected word lines with whole-number IDs)")
    bare = (Doc(nlp.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc])
            for doc in gold)
    predicted = iter(nlp.pipe(bare, batch_size=batch_size))
    doc: Optional[Doc] = None
    i = 0
    # newline="": each line keeps its own ending (CRLF files stay CRLF).
    with input_path.open(encoding="utf-8-sig", newline="") as stream, _atomic_text_output(output_path) as out:
        for line_no, line in enumerate(stream, start=1):
            text = line.rstrip("\r\n")
            if not text.strip():
                doc = None
            elif not text.startswith("#") and text.split("\t", 1)[0].isdigit():
                if doc is None:  # the first word of a sentence
                    doc, i = next(predicted), 0
                if i >= len(doc):  # read_conllu and this loop disagree: a bug, not bad input
                    raise RuntimeError(f"{input_path}:{line_no}: more words than the tagged sentence has")
                columns = text.split("\t")
                feats = ud_feats(doc[i])
                columns[3] = doc[i].pos_ or "_"
                columns[5] = "|".join(f"{k}={v}" for k, v in feats.items()) if feats else "_"
                line = "\t".join(columns) + (line[len(text):] or "\n")
                i += 1
            out.write(line if line.endswith("\n") else line + "\n")
    return stats
