"""Punctuation marks outside the training vocabulary: counted as new words or not? No training.

``unseen_penalty`` lowers, on a word the tagger has not seen, the tags that its training sample
shows almost never falling on new words; PUNCT is the first of them. A punctuation mark that the
training data never wrote (Russian ``!!!`` or ``((``, the ``。`` of spaCy's Chinese tokenizer
where UD Chinese GSD writes ``.``) is not a new word, and ``MimickTagger.unseen_forms`` no longer
counts a form of punctuation characters alone (Unicode P*) as one. This decodes each pipeline's
test scores twice, the same scores: as the tagger does now, and with every form outside the
training vocabulary counted unseen (the rule before), and prints the POS accuracy of each,
McNemar's p (the project's test), and the tokens that changed.

    python benchmarks/unseen_punctuation.py UD_Russian-Taiga:n5000.s0 [...]

A run is TREEBANK:RUN (the project's layout: training/TREEBANK_lowres/RUN/both/model-best,
corpus/TREEBANK/test.spacy) or PIPELINE,TEST.spacy.
"""
import argparse
from collections import Counter
from typing import List
from unittest import mock

import numpy
import spacy
from spacy.tokens import DocBin

from spacy_mimick.tagger.tagger_component import MimickTagger
from spacy_mimick.ud.significance import mcnemar
from unseen_word_rules import run_paths, tagger_scores  # the benchmarks' folder is on sys.path when run as a script


def every_form_outside_the_vocabulary(tagger: MimickTagger, forms) -> numpy.ndarray:
    """The rule before: one bool per form, not in the training vocabulary."""
    words = tagger.model.get_ref("featurizer").attrs["words"]
    return numpy.array([form not in words for form in forms], dtype=bool)


def main(argv: List[str] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", help="TREEBANK:RUN or PIPELINE,TEST.spacy")
    parser.add_argument("--top", type=int, default=8, help="changed tokens to list per run")
    args = parser.parse_args(argv)
    print("| pipeline | unseen_penalty | tokens changed | POS, punctuation unseen (before) | POS now | now − before | McNemar p | most frequent changes (gold: before -> now) |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for run in args.runs:
        pipeline, test = run_paths(run, ("test",))
        nlp = spacy.load(pipeline)
        tagger = nlp.get_pipe("mimick_tagger")
        gold = list(DocBin().from_disk(test).get_docs(nlp.vocab))
        docs, scores = tagger_scores(nlp, gold)
        values = list(tagger.cfg["labels_pos"])
        tokens = [t for d in gold for t in d]
        gold_ids = numpy.array([values.index(t.pos_) if t.pos_ in values else -1 for t in tokens])
        keep = gold_ids >= 0
        now = tagger.decode(scores.copy(), docs)[:, 0]
        with mock.patch.object(MimickTagger, "unseen_forms", every_form_outside_the_vocabulary):
            before = tagger.decode(scores.copy(), docs)[:, 0]
        right_now, right_before = (now == gold_ids)[keep], (before == gold_ids)[keep]
        changed = Counter(f"`{tokens[i].text}` {tokens[i].pos_}: {values[before[i]]} -> {values[now[i]]}"
                          for i in numpy.flatnonzero(now != before))
        common = ", ".join(f"{change} ({n})" for change, n in changed.most_common(args.top)) or "-"
        print(f"| {pipeline} | {tagger.unseen_penalty:g} | {sum(changed.values())} | {100 * right_before.mean():.2f} | "
              f"{100 * right_now.mean():.2f} | {100 * (right_now.mean() - right_before.mean()):+.2f} | "
              f"{mcnemar(right_now, right_before)[1]:.2g} | {common} |", flush=True)


if __name__ == "__main__":
    main()
