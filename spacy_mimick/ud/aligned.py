"""Scores on raw text: a pipeline's own tokens aligned to the gold words, as the CoNLL 2018
shared task's evaluation (``conll18_ud_eval.py``) aligns them.

Gold words and system tokens are both placed on the text's characters without whitespace. A
gold word outside a multiword token is aligned to the system token with exactly its span; the
words of a multiword token (French ``du`` = ``de le``) share the token's span, and are aligned to
the system tokens inside that span by the longest common subsequence of their lowercased forms.
Precision divides by the system's tokens, recall by the gold words, F1 is their harmonic mean:

* ``words``: aligned words (tokenization alone);
* ``upos``: aligned words with the gold UPOS;
* ``ufeats``: aligned words with the gold FEATS, all attributes (``Case=Nom|Number=Sing``);
* ``alltags``: both.

Whitespace tokens of the system are not words (spaCy's ``SPACE`` tokens).
"""
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

import conllu

from ..errors import UserError


@dataclass
class Word:
    form: str
    start: int  # offsets in the text without whitespace; a multiword token's words share its span
    end: int
    upos: str
    feats: str  # "" for none; attributes sorted as in CoNLL-U
    multiword: bool = False


class MissingRawTextError(UserError):
    """A sentence of the gold file has no ``# text``: its raw text cannot be rebuilt (older
    treebanks have neither ``# text`` nor ``SpaceAfter``)."""


@dataclass
class GoldSentence:
    text: str
    words: List[Word]


def _feats(value: Optional[Dict[str, str]]) -> str:
    if not value:
        return ""
    return "|".join(f"{k}={v}" for k, v in sorted(value.items(), key=lambda kv: kv[0].lower()))


def read_gold(path: Union[str, Path]) -> List[GoldSentence]:
    """The sentences of a CoNLL-U file with their ``# text`` and words on its characters."""
    path = Path(path)
    with path.open(encoding="utf8") as f:
        sentences = conllu.parse(f.read())
    out = []
    for number, sentence in enumerate(sentences, 1):
        text = sentence.metadata.get("text")
        if text is None:
            raise MissingRawTextError(f"{path}: sentence {number} has no '# text =' line: raw text is needed")
        words: List[Word] = []
        offset = 0
        covered_until = 0  # ids inside a multiword token range already placed
        span: Dict[int, Tuple[int, int]] = {}
        for token in sentence:
            tid = token["id"]
            if isinstance(tid, tuple) and len(tid) == 3 and tid[1] == "-":  # multiword token
                length = len("".join(token["form"].split()))
                for i in range(tid[0], tid[2] + 1):
                    span[i] = (offset, offset + length)
                offset += length
                covered_until = tid[2]
            elif isinstance(tid, int):
                if tid <= covered_until:
                    start, end = span[tid]
                    words.append(Word(token["form"], start, end, token["upos"] or "", _feats(token["feats"]), True))
                else:
                    length = len("".join(token["form"].split()))
                    words.append(Word(token["form"], offset, offset + length, token["upos"] or "",
                                      _feats(token["feats"])))
                    offset += length
            # empty nodes (decimal ids) are not words
        if offset != len("".join(text.split())):
            raise UserError(f"{path}: sentence {number} (# sent_id = {sentence.metadata.get('sent_id')}): its "
                            f"tokens' characters ({offset}) differ from its '# text' ({len(''.join(text.split()))})")
        out.append(GoldSentence(text, words))
    return out


def system_words(doc) -> List[Word]:
    """A tagged spaCy Doc's tokens as words on its text's characters (whitespace tokens left out)."""
    words, offset = [], 0
    for token in doc:
        form = "".join(token.text.split())
        if not form:
            continue
        words.append(Word(token.text, offset, offset + len(form), token.pos_, _feats(token.morph.to_dict())))
        offset += len(form)
    return words


def _lcs_pairs(gold: Sequence[Word], system: Sequence[Word]) -> List[Tuple[int, int]]:
    """Index pairs of a longest common subsequence of lowercased forms."""
    g, s = [w.form.lower() for w in gold], [w.form.lower() for w in system]
    table = [[0] * (len(s) + 1) for _ in range(len(g) + 1)]
    for i in range(len(g) - 1, -1, -1):
        for j in range(len(s) - 1, -1, -1):
            table[i][j] = table[i + 1][j + 1] + 1 if g[i] == s[j] else max(table[i + 1][j], table[i][j + 1])
    pairs, i, j = [], 0, 0
    while i < len(g) and j < len(s):
        if g[i] == s[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def align(gold: Sequence[Word], system: Sequence[Word]) -> List[Tuple[Word, Word]]:
    """Aligned (gold word, system word) pairs of one sentence."""
    by_span = {(w.start, w.end): w for w in system}
    pairs: List[Tuple[Word, Word]] = []
    i = 0
    while i < len(gold):
        word = gold[i]
        if not word.multiword:
            if (word.start, word.end) in by_span:
                pairs.append((word, by_span[(word.start, word.end)]))
            i += 1
            continue
        j = i
        while j < len(gold) and gold[j].multiword and (gold[j].start, gold[j].end) == (word.start, word.end):
            j += 1
        inside = [w for w in system if w.start >= word.start and w.end <= word.end]
        pairs += [(gold[i + a], inside[b]) for a, b in _lcs_pairs(gold[i:j], inside)]
        i = j
    return pairs


def _prf(correct: int, n_system: int, n_gold: int) -> Dict[str, float]:
    p = correct / n_system if n_system else 0.0
    r = correct / n_gold if n_gold else 0.0
    return {"p": p, "r": r, "f": 2 * p * r / (p + r) if p + r else 0.0}


def score_aligned(pairs_per_sentence: Iterable[Tuple[Sequence[Word], Sequence[Word]]]) -> Dict[str, Dict[str, float]]:
    """``{"words"|"upos"|"ufeats"|"alltags": {"p", "r", "f"}}`` over (gold, system) sentences."""
    n_gold = n_system = 0
    counts = {"words": 0, "upos": 0, "ufeats": 0, "alltags": 0}
    for gold, system in pairs_per_sentence:
        n_gold += len(gold)
        n_system += len(system)
        for g, s in align(gold, system):
            counts["words"] += 1
            counts["upos"] += g.upos == s.upos
            counts["ufeats"] += g.feats == s.feats
            counts["alltags"] += g.upos == s.upos and g.feats == s.feats
    return {name: _prf(c, n_system, n_gold) for name, c in counts.items()}


def evaluate_raw_text(nlp, path: Union[str, Path], batch_size: int = 64) -> Dict[str, Dict[str, float]]:
    """Tag each sentence's ``# text`` of ``path`` with ``nlp`` (its own tokenizer) and score it
    against the gold words."""
    gold = read_gold(path)
    docs = nlp.pipe((s.text for s in gold), batch_size=batch_size)
    return score_aligned((s.words, system_words(doc)) for s, doc in zip(gold, docs))
