"""The paper's low-resource training set: a seeded subsample of sentences, by token budget.

    python scripts/project/subsample.py TRAIN.conllu OUT.conllu --docbin OUT.spacy --n-tokens 5000 --seed 0

Sentences are drawn with :func:`spacy_mimick.ud.corpus.subsample_by_tokens` (the same draw as
``python -m spacy_mimick convert --n-tokens N --seed S`` and as the ``spacy_mimick.ConllCorpus.v1``
reader's ``n_tokens``/``seed``) until at least N tokens; ``--n-tokens 0`` keeps every sentence.
The selected sentence blocks are written unchanged as CoNLL-U (what the tagger configs read),
and as a ``.spacy`` DocBin with ``--docbin``.
"""
import argparse
import json
import sys
from pathlib import Path
from typing import List, Optional, Tuple

import spacy
from spacy.tokens import DocBin

from spacy_mimick.ud.corpus import read_conllu, subsample_by_tokens


def sentence_blocks(path: Path) -> Tuple[List[str], List[int]]:
    """The file's sentence blocks that have words (as text, blank line included), in order,
    and their word counts (integer IDs: multiword ranges and empty nodes are not words)."""
    blocks, current = [], []
    with path.open(encoding="utf-8-sig") as f:
        for line in f:
            if line.strip():
                current.append(line.rstrip("\r\n"))
            elif current:
                blocks.append(current)
                current = []
    if current:
        blocks.append(current)

    def n_words(block: List[str]) -> int:
        return sum(1 for line in block if not line.startswith("#") and line.split("\t", 1)[0].isdigit())

    return ["\n".join(block) + "\n\n" for block in blocks if n_words(block)], [n_words(b) for b in blocks if n_words(b)]


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input", type=Path, help="Training CoNLL-U file")
    parser.add_argument("output", type=Path, help="Output CoNLL-U file")
    parser.add_argument("--docbin", type=Path, default=None, help="Also write the sample as a .spacy DocBin")
    parser.add_argument("--n-tokens", "-n", type=int, default=0, help="Token budget (0: all sentences)")
    parser.add_argument("--seed", "-s", type=int, default=0, help="Seed of the draw")
    parser.add_argument("--lang", "-l", default="xx", help="Language of the DocBin's vocab")
    args = parser.parse_args(argv)

    docs = list(read_conllu(args.input, spacy.blank(args.lang).vocab))
    blocks, lengths = sentence_blocks(args.input)
    if lengths != [len(doc) for doc in docs]:
        raise SystemExit(f"error: could not match the sentence blocks of {args.input} to its sentences")
    if args.n_tokens > 0:
        position = {id(doc): i for i, doc in enumerate(docs)}
        chosen = [position[id(doc)] for doc in subsample_by_tokens(docs, args.n_tokens, args.seed)]
    else:
        chosen = list(range(len(docs)))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("".join(blocks[i] for i in chosen), encoding="utf8")
    if args.docbin is not None:
        DocBin(docs=[docs[i] for i in chosen], store_user_data=True).to_disk(args.docbin)
    stats = {"sentences": len(chosen), "tokens": sum(lengths[i] for i in chosen),
             "n_tokens": args.n_tokens, "seed": args.seed}
    print(f"{args.input}: {json.dumps(stats)} -> {args.output}")


if __name__ == "__main__":
    main(sys.argv[1:])
