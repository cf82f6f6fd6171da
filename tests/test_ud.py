"""spacy_mimick.ud.corpus on real UD treebanks and on hand-written malformed CoNLL-U."""
import re
from pathlib import Path
from typing import List

import pytest
import spacy
from spacy.tokens import Doc, DocBin
from typer.testing import CliRunner

from spacy_mimick.ud.corpus import (
    MULTIWORD_KEY,
    SENT_ID_KEY,
    ConlluFormatError,
    ConlluStats,
    conllu_to_docbin,
    read_conllu,
    subsample_by_tokens,
)

from conftest import EWT, UD

EWT_DEV = EWT / "en_ewt-ud-dev.conllu"
SEQUOIA_DEV = UD / "UD_French-Sequoia" / "fr_sequoia-ud-dev.conllu"
TURKISH_DEV = UD / "UD_Turkish-IMST" / "tr_imst-ud-dev.conllu"
KAZAKH_TRAIN = UD / "UD_Kazakh-KTB" / "kk-ud-train.conllu"


def _raw_counts(path: Path) -> dict:
    """Count what the file holds, independently of conllu: a plain look at the ID column."""
    counts = {"sentences": 0, "words": 0, "ranges": 0, "empty": 0}
    in_sentence = False
    for line in path.open(encoding="utf8"):
        token_id = line.split("\t", 1)[0]
        if not line.strip():
            in_sentence = False
        elif re.fullmatch(r"\d+", token_id):
            counts["words"] += 1
            counts["sentences"] += not in_sentence
            in_sentence = True
        counts["ranges"] += bool(re.fullmatch(r"\d+-\d+", token_id))
        counts["empty"] += bool(re.fullmatch(r"\d+\.\d+", token_id))
    return counts


def _surface_text(doc: Doc) -> str:
    """The sentence's surface text, putting each multiword token's form back over its words."""
    ranges = {start: (end, form) for start, end, form in doc.user_data[MULTIWORD_KEY]}
    parts, i = [], 0
    while i < len(doc):
        if i in ranges:
            end, form = ranges[i]
            parts.append(form + doc[end - 1].whitespace_)
            i = end
        else:
            parts.append(doc[i].text_with_ws)
            i += 1
    return "".join(parts)


def _sentence_texts(path: Path) -> List[str]:
    prefix = "# text = "
    return [line[len(prefix):].rstrip("\n") for line in path.open(encoding="utf8") if line.startswith(prefix)]


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("xx")


@pytest.fixture(scope="module")
def ewt_dev(nlp):
    stats = ConlluStats()
    docs = list(read_conllu(EWT_DEV, nlp.vocab, stats=stats))
    return docs, stats


def test_ewt_dev_counts_match_the_file(ewt_dev):
    docs, stats = ewt_dev
    raw = _raw_counts(EWT_DEV)
    assert len(docs) == raw["sentences"] == stats.sentences == 2001
    assert sum(len(doc) for doc in docs) == raw["words"] == stats.tokens == 25147
    # EWT splits contractions as multiword tokens (didn't = did + n't) and has empty nodes.
    assert stats.multiword_ranges == raw["ranges"] > 0
    assert sum(len(doc.user_data[MULTIWORD_KEY]) for doc in docs) == raw["ranges"]
    assert stats.empty_nodes == raw["empty"] > 0


def test_ewt_dev_annotation(ewt_dev):
    docs, _ = ewt_dev
    doc = docs[0]
    assert doc.user_data[SENT_ID_KEY].startswith("weblog-")
    assert doc[0].is_sent_start and all(not token.is_sent_start for token in doc[1:])
    assert all(len(list(doc.sents)) == 1 for doc in docs)
    # 29-30 didn't (SpaceAfter=No on the range) = 29 did (AUX) + 30 n't; then "."
    doc = next(d for d in docs if [e - s for s, e, f in d.user_data[MULTIWORD_KEY] if f == "didn't"])
    start, end, _ = next(r for r in doc.user_data[MULTIWORD_KEY] if r[2] == "didn't")
    did, nt = doc[start], doc[start + 1]
    assert (did.text, nt.text, end) == ("did", "n't", start + 2)
    assert did.whitespace_ == "" and nt.whitespace_ == ""
    assert (did.pos_, did.tag_, did.lemma_) == ("AUX", "VBD", "do")
    assert str(did.morph) == "Mood=Ind|Number=Plur|Person=3|Tense=Past|VerbForm=Fin"
    assert nt.morph.to_dict() == {"Polarity": "Neg"} and nt.head == did and nt.dep_ == "advmod"
    assert sum(token.dep_ == "ROOT" and token.head == token for token in doc) == 1
    # FEATS "_" is an empty analysis, not a missing one
    assert any(str(token.morph) == "" and token.morph.key != 0 for token in doc)


def test_whitespace_and_ranges_rebuild_the_sentence_text(ewt_dev, nlp):
    # Turkish has many multiword tokens with SpaceAfter=No on the range line.
    turkish = list(read_conllu(TURKISH_DEV, nlp.vocab, limit=400))
    for path, docs in [(EWT_DEV, ewt_dev[0]), (TURKISH_DEV, turkish)]:
        texts = _sentence_texts(path)[: len(docs)]
        assert [_surface_text(doc).rstrip() for doc in docs] == texts


def test_sequoia_contractions_keep_the_words(nlp):
    stats = ConlluStats()
    docs = list(read_conllu(SEQUOIA_DEV, nlp.vocab, stats=stats))
    assert stats.multiword_ranges == _raw_counts(SEQUOIA_DEV)["ranges"] > 200
    pairs = {
        (form, tuple(t.text.lower() for t in doc[start:end]))
        for doc in docs
        for start, end, form in doc.user_data[MULTIWORD_KEY]
    }
    assert ("du", ("de", "le")) in pairs and ("au", ("à", "le")) in pairs and ("des", ("de", "les")) in pairs


def test_limit(nlp):
    docs = list(read_conllu(KAZAKH_TRAIN, nlp.vocab, limit=7))
    assert len(docs) == 7


SNIPPET = """\
# sent_id = s1
# text = Il va au marché.
1\tIl\til\tPRON\t_\tNumber=Sing|Person=3\t2\tnsubj\t_\t_
2\tva\taller\tVERB\t_\tMood=Ind\t0\troot\t_\t_
3-4\tau\t_\t_\t_\t_\t_\t_\t_\t_
3\tà\tà\tADP\t_\t_\t5\tcase\t_\t_
4\tle\tle\tDET\t_\tDefinite=Def\t5\tdet\t_\t_
4.1\tva\taller\tVERB\t_\t_\t_\t_\t2:conj\t_
5\tmarché\tmarché\tNOUN\t_\tGender=Masc\t2\tobl\t_\tSpaceAfter=No
6\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_

# sent_id = s2
1-2\tdu\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No
1\tde\tde\tADP\t_\t_\t0\troot\t_\t_
2\tle\tle\tDET\t_\t_\t1\tdet\t_\t_
3\t!\t!\tPUNCT\t_\t_\t1\tpunct\t_\t_
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "snippet.conllu"
    path.write_text(text, encoding="utf8")
    return path


def test_snippet_ranges_empty_nodes_and_spaces(tmp_path, nlp):
    stats = ConlluStats()
    first, second = read_conllu(_write(tmp_path, SNIPPET), nlp.vocab, stats=stats)
    assert [t.text for t in first] == ["Il", "va", "à", "le", "marché", "."]
    assert [t.whitespace_ for t in first] == [" ", " ", "", " ", "", " "]
    assert first.user_data == {MULTIWORD_KEY: ((2, 4, "au"),), SENT_ID_KEY: "s1"}
    assert _surface_text(first) == "Il va au marché. "
    assert [t.head.i for t in first] == [1, 1, 4, 4, 1, 1]
    assert [t.text_with_ws for t in second] == ["de", "le", "! "]
    assert (stats.sentences, stats.tokens, stats.multiword_ranges, stats.empty_nodes) == (2, 9, 2, 1)


_GOOD = "1\tIl\til\tPRON\t_\t_\t2\tnsubj\t_\t_\n"


@pytest.mark.parametrize(
    "bad_line, expected",
    [
        ("x\tva\taller\tVERB\t_\t_\t0\troot\t_\t_", "not a valid ID"),
        ("_\tva\taller\tVERB\t_\t_\t0\troot\t_\t_", "expected an integer word ID"),
        ("2\tva\taller\tVERB\t_\t_\t0\troot\t_", "expected 10 tab-separated columns, found 9"),
        ("2\tva\taller\tVERB\t_\t_\t0\troot\t_\t_\t_", "expected 10 tab-separated columns, found 11"),
        ("2 va aller VERB _ _ 0 root _ _", "Invalid line format"),
        ("2\tva\taller\tVERB\t_\tMood\t0\troot\t_\t_", "expected FEATS"),
        ("2\tva\taller\tVERB\t_\tMood=Ind||Tense=Pres\t0\troot\t_\t_", "expected FEATS"),
        ("2\tva\taller\tVERB\t_\tmood=ind\t0\troot\t_\t_", "expected FEATS"),
        ("2\tva\taller\tVERBE\t_\t_\t0\troot\t_\t_", "expected a UPOS tag"),
        ("3\tva\taller\tVERB\t_\t_\t0\troot\t_\t_", "expected word ID 2, found 3"),
        ("2\tva\taller\tVERB\t_\t_\t7\troot\t_\t_", "expected HEAD in 0..2, found 7"),
        ("2\tva\taller\tVERB\t_\t_\tx\troot\t_\t_", "not a valid value"),
        ("3-4\tdu\t_\t_\t_\t_\t_\t_\t_\t_", "should start at word 2"),
        ("2-3\tdu\t_\t_\t_\t_\t_\t_\t_\t_\n2\tde\tde\tADP\t_\t_\t0\troot\t_\t_", "ends at word 3"),
        ("2\t\taller\tVERB\t_\t_\t0\troot\t_\t_", "expected a non-empty FORM"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path, nlp, bad_line, expected):
    # The bad line is line 7: a good sentence (lines 1-3), a blank line, a comment, a good word (6).
    good_sentence = "# sent_id = ok\n" + _GOOD + "2\tva\taller\tVERB\t_\t_\t0\troot\t_\t_\n"
    text = good_sentence + "\n# sent_id = bad\n" + _GOOD + bad_line + "\n"
    path = _write(tmp_path, text)
    with pytest.raises(ConlluFormatError) as info:
        list(read_conllu(path, nlp.vocab))
    err = info.value
    assert isinstance(err, ValueError)
    assert (err.path, err.line) == (str(path), 7)
    assert str(err).startswith(f"{path}:7: ") and expected in str(err)


def test_docbin_round_trip(tmp_path):
    docbin = conllu_to_docbin(KAZAKH_TRAIN, "xx", limit=20)
    assert len(docbin) == 20
    docbin.to_disk(tmp_path / "kk.spacy")
    docs = list(DocBin().from_disk(tmp_path / "kk.spacy").get_docs(spacy.blank("xx").vocab))
    original = list(read_conllu(KAZAKH_TRAIN, spacy.blank("xx").vocab, limit=20))
    assert [[(t.text, t.pos_, str(t.morph), t.whitespace_) for t in d] for d in docs] == [
        [(t.text, t.pos_, str(t.morph), t.whitespace_) for t in d] for d in original
    ]
    assert [d.user_data for d in docs] == [d.user_data for d in original]


def test_subsample_by_tokens(ewt_dev):
    docs, _ = ewt_dev
    sample = subsample_by_tokens(docs, 5000, seed=1)
    total = sum(len(doc) for doc in sample)
    assert total >= 5000 and total - len(sample[-1]) < 5000  # stops at the doc that crosses
    assert len({id(doc) for doc in sample}) == len(sample)  # without replacement
    assert [id(d) for d in subsample_by_tokens(docs, 5000, seed=1)] == [id(d) for d in sample]
    assert [id(d) for d in subsample_by_tokens(docs, 5000, seed=2)] != [id(d) for d in sample]
    positions = [docs.index(doc) for doc in sample[:20]]
    assert positions != sorted(positions)  # random order, not the file's
    assert subsample_by_tokens(docs, 10**9, seed=1) == docs  # everything, in the original order
    with pytest.raises(ValueError):
        subsample_by_tokens(docs, 0, seed=1)


def test_corpus_reader_from_the_registry(nlp):
    make_reader = spacy.registry.readers.get("spacy_mimick.ConllCorpus.v1")
    reader = make_reader(path=SEQUOIA_DEV, n_tokens=5000, seed=1)
    examples = list(reader(nlp))
    n_tokens = sum(len(eg.reference) for eg in examples)
    assert 5000 <= n_tokens < 5000 + max(len(eg.reference) for eg in examples)
    for eg in examples:
        assert [t.text for t in eg.predicted] == [t.text for t in eg.reference]
        assert eg.predicted.text == eg.reference.text
        assert not eg.predicted.has_annotation("POS") and not eg.predicted.has_annotation("MORPH")
    assert all(eg.reference.has_annotation("POS") for eg in examples)
    again = list(reader(nlp))  # a second epoch: same references, fresh predicted docs
    assert [eg.reference for eg in again] == [eg.reference for eg in examples]
    assert all(a.predicted is not b.predicted for a, b in zip(again, examples))


def test_corpus_reader_from_a_config(nlp):
    config = {"corpus": {"@readers": "spacy_mimick.ConllCorpus.v1", "path": str(KAZAKH_TRAIN), "limit": 10}}
    reader = spacy.registry.resolve(config)["corpus"]
    assert len(list(reader(nlp))) == 10


def test_convert_cli(tmp_path):
    import spacy_mimick.cli.ud  # noqa: F401  (registers the command)
    from spacy_mimick.cli.app import app

    args = [str(KAZAKH_TRAIN), "-o", str(tmp_path), "--lang", "xx", "--n-tokens", "1000", "--seed", "3"]
    if len(app.registered_commands) > 1:  # a lone command is run without its name
        args = ["convert"] + args
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    raw = _raw_counts(KAZAKH_TRAIN)
    counts = f"{raw['sentences']} sentences, {raw['words']} tokens, {raw['ranges']} multiword ranges, 0 empty"
    assert counts in result.output
    docs = list(DocBin().from_disk(tmp_path / "kk-ud-train.n1000.s3.spacy").get_docs(spacy.blank("xx").vocab))
    expected = subsample_by_tokens(list(read_conllu(KAZAKH_TRAIN, spacy.blank("xx").vocab)), 1000, 3)
    assert [d.text for d in docs] == [d.text for d in expected]
