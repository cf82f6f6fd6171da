"""benchmarks/typo_tagging.py: the seeded misspelling of a test set, and scoring on it."""
import importlib.util
from pathlib import Path

import pytest
import spacy

from conftest import EWT
from spacy_mimick.ud.corpus import read_conllu

spec = importlib.util.spec_from_file_location(
    "typo_tagging", Path(__file__).resolve().parents[1] / "benchmarks" / "typo_tagging.py")
typo_tagging = importlib.util.module_from_spec(spec)
spec.loader.exec_module(typo_tagging)


def gold_docs(n=40):
    vocab = spacy.blank("en").vocab
    return list(read_conllu(EWT / "en_ewt-ud-dev.conllu", vocab, limit=n))


def test_rate_zero_changes_nothing_and_one_changes_every_eligible_word():
    gold = gold_docs()
    same, masks = typo_tagging.corrupt(gold, 0.0, seed=0)
    assert [t.text for d in same for t in d] == [t.text for d in gold for t in d]
    assert not any(m.any() for m in masks)
    every, masks = typo_tagging.corrupt(gold, 1.0, seed=0)
    for doc, new, mask in zip(gold, every, masks):
        for token, changed, hit in zip(doc, new, mask):
            eligible = len(token.text) >= 3 and token.text.isalpha()
            assert hit == eligible and (changed.text != token.text) == eligible
            assert changed.pos_ == token.pos_ and str(changed.morph) == str(token.morph)


def test_the_same_seed_gives_the_same_typos_and_another_seed_others():
    gold = gold_docs()
    a = [t.text for d in typo_tagging.corrupt(gold, 0.3, seed=1)[0] for t in d]
    b = [t.text for d in typo_tagging.corrupt(gold, 0.3, seed=1)[0] for t in d]
    c = [t.text for d in typo_tagging.corrupt(gold, 0.3, seed=2)[0] for t in d]
    assert a == b and a != c


def test_misspelled_only_scores_exactly_the_misspelled_tokens():
    from spacy.training import Example

    gold = gold_docs(10)
    corrupted, masks = typo_tagging.corrupt(gold, 0.5, seed=0)
    # A "system" that copies gold POS except on misspelled tokens, where it says X.
    examples = []
    for doc, mask in zip(corrupted, masks):
        pred = spacy.tokens.Doc(doc.vocab, words=[t.text for t in doc],
                                pos=["X" if hit else (t.pos_ or None) for t, hit in zip(doc, mask)])
        examples.append(Example(pred, doc))
    subset = typo_tagging.misspelled_only(examples, masks)
    assert len(subset) == sum(int(m.sum()) for m in masks) > 0
    scores = typo_tagging.score_attributes(subset)
    real_x = sum(1 for d, m in zip(corrupted, masks) for t, hit in zip(d, m) if hit and t.pos_ == "X")
    assert scores["pos_acc"] == real_x / len(subset)


seeds_spec = importlib.util.spec_from_file_location(
    "typo_tagging_seeds", Path(__file__).resolve().parents[1] / "benchmarks" / "typo_tagging_seeds.py")
typo_tagging_seeds = importlib.util.module_from_spec(seeds_spec)
seeds_spec.loader.exec_module(typo_tagging_seeds)


def _table(rows):
    """A table written the way typo_tagging.py writes its --output (rate in percent, POS x 100)."""
    lines = [typo_tagging.table_row(rate / 100, name, {"pos_acc": pos / 100, "attr_micro_f": 0.9}, {}, 0, p)
             for rate, name, pos, p in rows]
    return "\n".join(["Typos in test.conllu (seed 0): ...", "", *typo_tagging.TABLE_HEAD, *lines]) + "\n"


def test_seeds_summary_reads_each_table_and_tests_across_seeds(tmp_path, capsys, monkeypatch):
    from scipy import stats

    a0, b0, a30, b30 = [89.5, 89.7, 89.3], [89.4, 89.0, 89.5], [82.8, 83.1, 82.9], [86.9, 86.4, 86.2]
    specs = []
    for seed in range(3):
        path = tmp_path / f"seed{seed}.md"
        path.write_text(_table([(0, "default", a0[seed], ""), (0, "typos", b0[seed], "0.5"),
                                (30, "default", a30[seed], ""), (30, "**typos**", b30[seed], "1e-9")]))
        specs.append(f"{seed}={path}")
    monkeypatch.setattr("sys.argv", ["x", *specs, "--a", "default", "--b", "typos"])
    typo_tagging_seeds.main()
    out = capsys.readouterr().out
    assert "| 1 | 89.70 → 89.00, -0.70 (0.5) | 83.10 → 86.40, +3.30 (1e-9) |" in out
    p30 = stats.ttest_ind(b30, a30, equal_var=False).pvalue
    diff = sum(b30) / 3 - sum(a30) / 3
    assert f"{diff:+.2f} ({p30:.2g})" in out and diff > 3.5
    assert "0%: typos below default in 2 of 3 seeds; 30%: typos below default in 0 of 3 seeds" in out


@pytest.mark.parametrize("rows,message", [
    # a system without a row at one rate
    ([(0, "default", 89.5, ""), (30, "default", 82.8, ""), (30, "typos", 86.0, "1e-9")],
     "seed 0: no row for 'typos' at 0% typos"),
    # system A was not the run's McNemar reference: B's p would be against another system
    ([(0, "other", 89.0, ""), (0, "default", 89.5, "0.3"), (0, "typos", 89.4, "0.6")],
     "seed 0: 'default' has a McNemar p at 0% typos"),
])
def test_seeds_summary_refuses_a_table_it_cannot_summarize(tmp_path, monkeypatch, rows, message):
    path = tmp_path / "seed0.md"
    path.write_text(_table(rows))
    monkeypatch.setattr("sys.argv", ["x", f"0={path}", "--a", "default", "--b", "typos"])
    with pytest.raises(SystemExit) as error:
        typo_tagging_seeds.main()
    assert str(error.value).startswith(message)
