"""Raw-text scores: system tokens aligned to gold words as the CoNLL 2018 evaluation does."""
import pytest
import spacy
from spacy.tokens import Doc

from spacy_mimick.errors import UserError
from spacy_mimick.ud.aligned import align, read_gold, score_aligned, system_words

GOLD = """# sent_id = 1
# text = Il parle du chat.
1\tIl\til\tPRON\t_\tNumber=Sing|Person=3\t2\tnsubj\t_\t_
2\tparle\tparler\tVERB\t_\t_\t0\troot\t_\t_
3-4\tdu\t_\t_\t_\t_\t_\t_\t_\t_
3\tde\tde\tADP\t_\t_\t5\tcase\t_\t_
4\tle\tle\tDET\t_\tGender=Masc\t5\tdet\t_\t_
5\tchat\tchat\tNOUN\t_\tGender=Masc\t2\tobl\t_\tSpaceAfter=No
6\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_

"""


def doc(words, pos, morphs=None):
    return Doc(spacy.blank("fr").vocab, words=words, pos=pos, morphs=morphs)


def test_gold_words_share_the_span_of_their_multiword_token(tmp_path):
    path = tmp_path / "g.conllu"
    path.write_text(GOLD, encoding="utf8")
    [sentence] = read_gold(path)
    spans = [(w.form, w.start, w.end, w.multiword) for w in sentence.words]
    assert spans == [("Il", 0, 2, False), ("parle", 2, 7, False), ("de", 7, 9, True), ("le", 7, 9, True),
                     ("chat", 9, 13, False), (".", 13, 14, False)]


def test_a_system_that_keeps_du_whole_loses_its_two_words(tmp_path):
    path = tmp_path / "g.conllu"
    path.write_text(GOLD, encoding="utf8")
    [sentence] = read_gold(path)
    system = system_words(doc(["Il", "parle", "du", "chat", "."], ["PRON", "VERB", "ADP", "NOUN", "PUNCT"],
                              ["Number=Sing|Person=3", None, None, "Gender=Masc", None]))
    scores = score_aligned([(sentence.words, system)])
    # 4 of 5 system tokens and 4 of 6 gold words aligned, all 4 with the right UPOS and FEATS
    assert scores["words"]["p"] == pytest.approx(4 / 5) and scores["words"]["r"] == pytest.approx(4 / 6)
    assert scores["upos"]["f"] == scores["words"]["f"] == scores["ufeats"]["f"]
    # a system token inside the multiword token's span is matched to its words by form (LCS)
    inside = [w for w in sentence.words if w.multiword]
    system = system_words(doc(["Il", "parle", "du", "chat", "."], ["PRON", "VERB", "ADP", "NOUN", "PUNCT"]))
    system[2].form = "le"  # as a system that writes the token's words would
    pairs = align(sentence.words, system)
    assert [(g.form, s.form) for g, s in pairs if g.multiword] == [("le", "le")] and inside[1].form == "le"


def test_a_wrong_split_aligns_nothing_it_covers():
    gold = system_words(doc(["New", "York", "is"], ["PROPN", "PROPN", "AUX"]))
    system = system_words(doc(["NewYork", "is"], ["PROPN", "AUX"]))
    scores = score_aligned([(gold, system)])
    assert scores["words"]["p"] == 0.5 and scores["words"]["r"] == pytest.approx(1 / 3)


def test_a_sentence_whose_text_and_words_differ_is_refused(tmp_path):
    path = tmp_path / "g.conllu"
    path.write_text(GOLD.replace("# text = Il parle du chat.", "# text = Il parle du chien."), encoding="utf8")
    with pytest.raises(UserError, match=r"g.conllu: sentence 1 .*differ from its '# text'"):
        read_gold(path)
    path.write_text(GOLD.replace("# text = Il parle du chat.\n", ""), encoding="utf8")
    with pytest.raises(UserError, match="sentence 1 has no '# text =' line"):
        read_gold(path)


def test_a_sentence_without_text_is_its_own_error(tmp_path):
    """A test set without ``# text`` (older treebanks) is an error of its own kind, which the
    package card turns into "no raw text"; it is still a UserError that names the file."""
    from spacy_mimick.ud.aligned import MissingRawTextError

    path = tmp_path / "g.conllu"
    path.write_text(GOLD.replace("# text = Il parle du chat.\n", ""), encoding="utf8")
    with pytest.raises(MissingRawTextError, match=r"g\.conllu: sentence 1 has no '# text =' line") as err:
        read_gold(path)
    assert isinstance(err.value, UserError)
