"""The vectors pipeline with spaCy-side lowercase backoff, for the `spacy_lower` control.

    python scripts/project/vectors_lower.py VECTORS OUTPUT CORPUS.conllu [CORPUS.conllu ...]

spaCy's ``StaticVectors`` looks tokens up by their exact form (ORTH), so with a lowercase table
(GloVe) every capitalized word gets zeros, while ``mimick_vectors`` with ``lowercase_backoff``
gives it the row of its lowercase form. To separate that backoff from Mimick's predictions, this
writes a copy of VECTORS in which every word form of the given CoNLL-U files that has no row but
whose lowercase has one is an extra key pointing at the lowercase form's row (no row is added or
changed). spaCy's pipeline trained on it sees exactly the inputs of the Mimick twin except on the
tokens with no vector in any case, which Mimick predicts. (``spacy init vectors --attr LOWER``
would be the direct way, but spaCy 3.8 does not save ``attr`` for default-mode tables: the
loaded table keys by ORTH again.)
"""
import argparse
import sys
from pathlib import Path
from typing import List, Optional

import spacy

from spacy_mimick.ud.corpus import read_conllu


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vectors", type=Path, help="The vectors pipeline (init-vectors' output)")
    parser.add_argument("output", type=Path, help="Where to write the copy with the extra keys")
    parser.add_argument("conllu", type=Path, nargs="+", help="CoNLL-U files whose forms to cover")
    args = parser.parse_args(argv)
    nlp = spacy.load(args.vectors)
    vectors = nlp.vocab.vectors
    forms = {token.text for path in args.conllu for doc in read_conllu(path, nlp.vocab) for token in doc}
    added = 0
    for form in sorted(forms):
        if nlp.vocab.has_vector(form) or not nlp.vocab.has_vector(form.lower()):
            continue
        row = vectors.key2row[nlp.vocab.strings[form.lower()]]
        vectors.add(nlp.vocab.strings.add(form), row=row)
        added += 1
    nlp.to_disk(args.output)
    print(f"{args.vectors}: {added:,} of {len(forms):,} forms keyed to their lowercase row "
          f"({vectors.shape[0]:,} rows, {len(vectors.key2row):,} keys) -> {args.output}")


if __name__ == "__main__":
    main(sys.argv[1:])
