"""The training words' POS prior (``seen_word_prior``) on saved Both pipelines. No training.

For each trained pipeline, scores the dev and test sets (gold words) once and decodes UPOS:

- ``as saved``: the pipeline's own decoding (its ``unseen_penalty`` and ``seen_word_prior``; the
  prior is 0 in pipelines trained before it existed);
- ``prior W``: the saved ``unseen_penalty``, and on each word seen in training the POS scores
  raised by W x log((c_t + p_t) / (n + 1)) from the run's own training sample
  (``spacy_mimick.tagger.seen_words``; ``prior 0``: none);
- ``chosen on dev``: both weights as ``spacy_mimick.choose_word_priors.v1`` chooses them while
  training (the unseen-word penalty on unseen dev words, the prior on seen ones).

With ``--versus spacy`` the chosen decoding is also tested against the run's spaCy pipeline
(its predictions ``metrics/TREEBANK_lowres/RUN/spacy.spacy``, written by the project's
``evaluate``), as ``significance.py`` does.

    python benchmarks/seen_word_prior.py [--versus spacy] UD_Vietnamese-VTB:n5000.s0 [...]

A run is TREEBANK:RUN (the project's layout: training/TREEBANK_lowres/RUN/both/model-best,
corpus/TREEBANK/train.RUN.spacy, dev.spacy, test.spacy). Prints one row per run and decoding:
POS accuracy on dev and test, the difference to ``as saved``, the accuracy on the test words seen
in training, McNemar's p on test against ``as saved`` (the project's test,
``spacy_mimick.ud.significance.mcnemar``); then a summary, one row per run: the weights chosen on
dev, the prior alone (at its chosen weight against none, the saved penalty kept) and both choices
together against the saved decoding.
"""
import argparse
import sys
from pathlib import Path
from typing import List, Optional

import numpy
import spacy
from spacy.tokens import DocBin

from spacy_mimick.tagger.seen_words import PRIOR_WEIGHTS, choose_weights, pos_counts_by_form, seen_rows, seen_shift
from spacy_mimick.tagger.unseen_words import PENALTY_WEIGHTS, decode_pos, hapax_pos_log_prior, penalty_vector
from spacy_mimick.ud.significance import mcnemar

sys.path.insert(0, str(Path(__file__).resolve().parent))
from unseen_word_rules import pos_scores  # noqa: E402


def split_arrays(nlp, path: Path, labels: List[str], forms) -> dict:
    tagger = nlp.get_pipe("mimick_tagger")
    gold = list(DocBin().from_disk(path).get_docs(nlp.vocab))
    tokens = [t for d in gold for t in d]
    return {
        "scores": pos_scores(nlp, gold, labels),
        "gold": numpy.array([labels.index(t.pos_) if t.pos_ in labels else -1 for t in tokens]),
        "keep": numpy.array([bool(t.pos_) for t in tokens]),
        "unseen": tagger.unseen_tokens(gold),
        "rows": seen_rows(forms, [t.text for t in tokens]),
        "pos": [t.pos_ for t in tokens],
    }


def right(a: dict, unseen_shift: numpy.ndarray, log_prior: numpy.ndarray, weight: float) -> numpy.ndarray:
    # The seen shift is 0 on unseen rows (their forms have no counts), so it can go in first.
    decoded = decode_pos(a["scores"] + seen_shift(log_prior, a["rows"], weight), a["unseen"], unseen_shift)
    return (decoded == a["gold"])[a["keep"]]


def spacy_right(run_dir: Path, a: dict, nlp) -> Optional[numpy.ndarray]:
    path = run_dir / "spacy.spacy"
    if not path.exists():
        return None
    predicted = [t.pos_ for d in DocBin().from_disk(path).get_docs(nlp.vocab) for t in d]
    if len(predicted) != len(a["pos"]):
        raise SystemExit(f"error: {path}: {len(predicted)} tokens, the test set has {len(a['pos'])}")
    return (numpy.array(predicted) == numpy.array(a["pos"]))[a["keep"]]


def main(argv: List[str] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", help="TREEBANK:RUN")
    parser.add_argument("--versus", choices=["spacy"], default=None,
                        help="also test the chosen decoding against the run's spaCy pipeline")
    args = parser.parse_args(argv)
    summary = []
    print("| run | decoding | dev POS | − as saved | test POS | − as saved | seen test POS | McNemar p (test) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for run in args.runs:
        if run.count(":") != 1:
            raise SystemExit(f"error: {run!r}: expected TREEBANK:RUN")
        treebank, unit = run.split(":")
        corpus = Path("corpus") / treebank
        nlp = spacy.load(f"training/{treebank}_lowres/{unit}/both/model-best")
        tagger = nlp.get_pipe("mimick_tagger")
        labels = list(tagger.cfg["labels_pos"])
        # From the training file, as initialize keeps them: pipelines saved before the counts
        # (or the hapax estimate) existed have none in their cfg.
        train = [(t.text, t.pos_) for d in DocBin().from_disk(corpus / f"train.{unit}.spacy").get_docs(nlp.vocab) for t in d]
        tagger.cfg["seen_pos_counts"] = pos_counts_by_form(train)
        unseen_prior = tagger.cfg.get("unseen_pos_log_prior") or hapax_pos_log_prior(train)
        forms, log_prior = tagger.seen_log_prior()
        dev, test = (split_arrays(nlp, corpus / f"{name}.spacy", labels, forms) for name in ("dev", "test"))
        saved_shift = penalty_vector(unseen_prior, labels, tagger.unseen_penalty)
        chosen_unseen, chosen_seen = choose_weights(
            dev["scores"], numpy.where(dev["keep"], dev["gold"], -1), dev["unseen"], dev["rows"],
            unseen_prior, log_prior, labels, PENALTY_WEIGHTS, PRIOR_WEIGHTS)
        chosen_shift = penalty_vector(unseen_prior, labels, chosen_unseen)
        saved_seen = tagger.seen_word_prior  # 0 for pipelines trained before the prior existed
        decodings = {"as saved": (saved_shift, saved_seen)}
        decodings.update({f"prior {w:g}": (saved_shift, w) for w in PRIOR_WEIGHTS})
        name = f"chosen on dev: unseen_penalty {chosen_unseen:g}, seen_word_prior {chosen_seen:g}"
        decodings[name] = (chosen_shift, chosen_seen)
        results = {k: (right(dev, s, log_prior, w), right(test, s, log_prior, w)) for k, (s, w) in decodings.items()}
        base_dev, base_test = results["as saved"]
        seen_test = (test["rows"] >= 0)[test["keep"]]
        for key, (on_dev, on_test) in results.items():
            print(f"| {run} | {key} | {100 * on_dev.mean():.2f} | {100 * (on_dev.mean() - base_dev.mean()):+.2f} | "
                  f"{100 * on_test.mean():.2f} | {100 * (on_test.mean() - base_test.mean()):+.2f} | "
                  f"{100 * on_test[seen_test].mean():.2f} | {mcnemar(on_test, base_test)[1]:.2g} |", flush=True)
        chosen = results[name][1]
        alone, without = results[f"prior {chosen_seen:g}"][1], results["prior 0"][1]
        row = (f"| {run} | {tagger.unseen_penalty:g} / {saved_seen:g} | {100 * base_test.mean():.2f} | "
               f"{chosen_unseen:g} / {chosen_seen:g} | "
               f"{100 * (alone.mean() - without.mean()):+.2f} ({mcnemar(alone, without)[1]:.2g}) | "
               f"{100 * chosen.mean():.2f} | {100 * (chosen.mean() - base_test.mean()):+.2f} ({mcnemar(chosen, base_test)[1]:.2g}) |")
        if args.versus:
            other = spacy_right(Path("metrics") / f"{treebank}_lowres" / unit, test, nlp)
            if other is None:
                row += " — | — |"
            else:
                row += (f" {100 * other.mean():.2f} | {100 * (base_test.mean() - other.mean()):+.2f} "
                        f"({mcnemar(base_test, other)[1]:.2g}) / {100 * (chosen.mean() - other.mean()):+.2f} "
                        f"({mcnemar(chosen, other)[1]:.2g}) |")
        summary.append(row)
    print("\nSummary, test POS (McNemar p):\n")
    head = ("| run | saved weights (unseen / seen) | as saved | chosen on dev (unseen / seen) "
            "| the seen prior alone − prior 0 | chosen | chosen − as saved |")
    if args.versus:
        head += " spaCy | as saved − spaCy / chosen − spaCy |"
    print(head)
    print("|" + "|".join(["---"] + ["---:"] * (head.count("|") - 2)) + "|")
    print("\n".join(summary))


if __name__ == "__main__":
    main()
