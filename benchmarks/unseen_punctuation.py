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
    python benchmarks/unseen_punctuation.py --rule symbols UD_Russian-Taiga:n5000.s0 [...]

``--rule symbols`` asks the next question instead: the tagger as it is against its rule with
symbols too (forms of Unicode S* characters alone: emoji, ``|``, ``^^``, ``$``) not counted as
new words.

A run is TREEBANK:RUN (the project's layout: training/TREEBANK_lowres/RUN/both/model-best,
corpus/TREEBANK/test.spacy) or PIPELINE,TEST.spacy.
"""
import argparse
import unicodedata
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


def _symbols_alone(form: str) -> bool:
    return bool(form) and all(unicodedata.category(char).startswith("S") for char in form)


TAGGER_UNSEEN_FORMS = MimickTagger.unseen_forms  # the tagger's own rule, before any patching


def symbols_not_unseen(tagger: MimickTagger, forms) -> numpy.ndarray:
    """The candidate of ``--rule symbols``: the tagger's own rule, and forms of symbol characters
    alone not new words either (mixed punctuation and symbols, such as ``:)``, are not tried)."""
    forms = list(forms)
    return TAGGER_UNSEEN_FORMS(tagger, forms) & ~numpy.array([_symbols_alone(f) for f in forms], dtype=bool)


# --rule: (baseline's unseen_forms, its label, its short name; the candidate's)
RULES = {
    "before": ((every_form_outside_the_vocabulary, "punctuation unseen (before)", "before"),
               (TAGGER_UNSEEN_FORMS, "now", "now")),
    "symbols": ((TAGGER_UNSEEN_FORMS, "now (punctuation only)", "now"),
                (symbols_not_unseen, "symbols not unseen either", "symbols")),
}


def main(argv: List[str] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", help="TREEBANK:RUN or PIPELINE,TEST.spacy")
    parser.add_argument("--top", type=int, default=8, help="changed tokens to list per run")
    parser.add_argument("--rule", choices=sorted(RULES), default="before",
                        help="before: the tagger now against every form outside the vocabulary unseen; "
                             "symbols: symbols (S*) not unseen either, against the tagger now")
    args = parser.parse_args(argv)
    (base_rule, base_label, base_short), (cand_rule, cand_label, cand_short) = RULES[args.rule]
    print(f"| pipeline | unseen_penalty | tokens changed | POS, {base_label} | POS {cand_label} | {cand_short} − {base_short} | "
          f"McNemar p | most frequent changes (gold: {base_short} -> {cand_short}) |")
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

        def decode(rule):
            with mock.patch.object(MimickTagger, "unseen_forms", rule):
                return tagger.decode(scores.copy(), docs)[:, 0]

        base, cand = decode(base_rule), decode(cand_rule)
        right_cand, right_base = (cand == gold_ids)[keep], (base == gold_ids)[keep]
        changed = Counter(f"`{tokens[i].text}` {tokens[i].pos_}: {values[base[i]]} -> {values[cand[i]]}"
                          for i in numpy.flatnonzero(cand != base))
        common = ", ".join(f"{change} ({n})" for change, n in changed.most_common(args.top)) or "-"
        print(f"| {pipeline} | {tagger.unseen_penalty:g} | {sum(changed.values())} | {100 * right_base.mean():.2f} | "
              f"{100 * right_cand.mean():.2f} | {100 * (right_cand.mean() - right_base.mean()):+.2f} | "
              f"{mcnemar(right_cand, right_base)[1]:.2g} | {common} |", flush=True)


if __name__ == "__main__":
    main()
