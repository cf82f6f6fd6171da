"""spacy_mimick.warmup_linear_epochs.v1: the lowres recipe's rate decays to 0 where training ends,
also when a run trains to max_epochs (max_steps = 0) instead of being given its step count."""
from itertools import islice
from pathlib import Path

import pytest
import spacy
from spacy.util import registry
from thinc.api import warmup_linear

from spacy_mimick.tagger.schedules import warmup_linear_epochs
from spacy_mimick.ud.corpus import create_conllu_corpus_reader
from spacy_mimick.cli.user_errors import UserError

REPO = Path(__file__).resolve().parents[1]
EWT_SLICE = REPO / "assets" / "UD_English-EWT" / "en_ewt-ud-train.conllu"


def _batcher(size=100):
    return registry.resolve({"b": {"@batchers": "spacy.batch_by_padded.v1", "size": size, "buffer": 256,
                                   "discard_oversize": False, "get_length": None}})["b"]


def _n_batches(corpus, batcher):
    return sum(1 for _ in batcher(corpus(spacy.blank("en"))))


def test_counts_the_batches_of_an_epoch_when_max_steps_is_0():
    corpus = create_conllu_corpus_reader(EWT_SLICE, limit=120)
    batcher = _batcher()
    per_epoch = _n_batches(corpus, batcher)
    assert per_epoch > 10  # 120 sentences in batches of 100 padded tokens
    rates = list(islice(warmup_linear_epochs(0.005, 5, 0, 3, corpus, batcher), 3 * per_epoch + 2))
    expected = list(islice(warmup_linear(0.005, 5, 3 * per_epoch), 3 * per_epoch + 2))
    assert rates == expected
    assert rates[3 * per_epoch - 1] > 0 and rates[3 * per_epoch] == 0  # ends with the 3rd epoch
    assert max(rates) == pytest.approx(0.005)


def test_max_steps_wins_over_epochs():
    corpus = create_conllu_corpus_reader(EWT_SLICE, limit=40)
    rates = list(islice(warmup_linear_epochs(0.01, 10, 50, 999, corpus, _batcher()), 60))
    assert rates == list(islice(warmup_linear(0.01, 10, 50), 60))
    assert rates[49] > 0 and rates[50] == 0


def test_no_end_and_empty_corpus_are_errors(tmp_path):
    corpus = create_conllu_corpus_reader(EWT_SLICE, limit=5)
    with pytest.raises(UserError, match="max_steps > 0 or max_epochs > 0"):
        warmup_linear_epochs(0.005, 300, 0, 0, corpus, _batcher())
    empty = tmp_path / "empty.conllu"
    empty.write_text("")
    with pytest.raises(UserError, match="no batches"):
        warmup_linear_epochs(0.005, 300, 0, 80, create_conllu_corpus_reader(empty), _batcher())


def test_a_run_shorter_than_the_warm_up_warns():
    corpus = create_conllu_corpus_reader(EWT_SLICE, limit=5)
    with pytest.warns(UserWarning, match="within the warm-up"):
        warmup_linear_epochs(0.005, 300, 0, 2, corpus, _batcher())


def test_lowres_config_decays_over_its_own_training_file(tmp_path):
    """The default (lowres) config as `spacy train` resolves it, max_steps 0 (its default): the decay ends
    after max_epochs x the file's batches (with thinc's warmup_linear and total_steps =
    ${training.max_steps}, the rate was 0 from the end of warm-up on)."""
    from spacy_mimick.tagger.recipes import config_text

    path = tmp_path / "tagger_both.cfg"
    path.write_text(config_text("both"), encoding="utf8")
    config = spacy.util.load_config(path, overrides={
        "paths.train": str(EWT_SLICE), "paths.dev": str(EWT_SLICE), "corpora.train.limit": 200,
        "training.max_epochs": 20})
    assert config["training"]["max_steps"] == 0
    training = registry.resolve(config.interpolate()["training"])
    per_epoch = _n_batches(create_conllu_corpus_reader(EWT_SLICE, limit=200), _batcher())
    optimizer, rates = training["optimizer"], []
    for _ in range(20 * per_epoch + 1):  # as spaCy's training loop: a rate, then the next step
        rates.append(optimizer.learn_rate)
        optimizer.step_schedules()
    assert rates[300] == pytest.approx(0.005)
    assert rates[20 * per_epoch - 1] > 0 and rates[20 * per_epoch] == 0


def test_registered_by_its_entry_point_without_an_import(tmp_path):
    """`spacy train` resolves [training] before anything imports spacy_mimick.tagger.schedules when a
    config has no mimick_tagger: the thinc_schedules entry point registers it."""
    import subprocess
    import sys

    code = ("import sys; from spacy.util import registry; "
            "f = registry.schedules.get('spacy_mimick.warmup_linear_epochs.v1'); "
            "assert f.__module__ == 'spacy_mimick.tagger.schedules', f.__module__")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
