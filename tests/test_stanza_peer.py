"""scripts/stanza_peer.py: pairing Stanza's CoNLL-U predictions with the gold words, scoring them
with the project's scorer, and McNemar against the Both tagger's predictions (a .spacy DocBin),
on tiny hand-made files. Stanza itself is not needed (nor imported)."""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from scipy import stats
from spacy.tokens import DocBin

from spacy_mimick.ud.corpus import read_conllu

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "stanza_peer.py"


@pytest.fixture(scope="module")
def peer():
    spec = importlib.util.spec_from_file_location("stanza_peer", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def conllu(sentences):
    """CoNLL-U text from sentences of (form, upos, feats) triples."""
    blocks = []
    for n, words in enumerate(sentences, 1):
        lines = [f"# sent_id = s{n}"]
        for i, (form, upos, feats) in enumerate(words, 1):
            head = 0 if i == 1 else 1
            lines.append(f"{i}\t{form}\t_\t{upos}\t_\t{feats}\t{head}\t{'root' if head == 0 else 'dep'}\t_\t_")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n\n"


# Gold: 10 words in two sentences. Only "dogs", "barked", "cats" and "slept" are outside the sample.
GOLD = [
    [("The", "DET", "Definite=Def"), ("dogs", "NOUN", "Number=Plur"), ("barked", "VERB", "Tense=Past"),
     ("loudly", "ADV", "_"), (".", "PUNCT", "_")],
    [("A", "DET", "Definite=Ind"), ("cat", "NOUN", "Number=Sing"), ("slept", "VERB", "Tense=Past"),
     ("here", "ADV", "_"), (".", "PUNCT", "_")],
]
TRAIN = [[("The", "DET", "Definite=Def"), ("loudly", "ADV", "_"), ("A", "DET", "Definite=Ind"),
          ("cat", "NOUN", "Number=Sing"), ("here", "ADV", "_"), (".", "PUNCT", "_")]]


def with_pos(sentences, changes):
    """The gold sentences with the UPOS of some (sentence, word) positions replaced."""
    out = [list(s) for s in sentences]
    for (s, w), upos in changes.items():
        form, _, feats = out[s][w]
        out[s][w] = (form, upos, feats)
    return out


@pytest.fixture()
def files(tmp_path):
    """Gold, training sample, Stanza's predictions (.conllu) and Both's (.spacy).

    Both wrong on dogs, barked, loudly, cat (4 errors: 6/10); Stanza wrong on dogs only and on
    "here" (8/10). Only Both right: "here"; only Stanza right: barked, loudly, cat."""
    paths = {name: tmp_path / name for name in ("gold.conllu", "train.conllu", "stanza.conllu", "both.conllu")}
    paths["gold.conllu"].write_text(conllu(GOLD), encoding="utf8")
    paths["train.conllu"].write_text(conllu(TRAIN), encoding="utf8")
    stanza = with_pos(GOLD, {(0, 1): "VERB", (1, 3): "NOUN"})
    # Stanza also misses one attribute: "dogs" gets Number=Sing instead of Plur.
    stanza[0][1] = ("dogs", "VERB", "Number=Sing")
    paths["stanza.conllu"].write_text(conllu(stanza), encoding="utf8")
    both = with_pos(GOLD, {(0, 1): "ADJ", (0, 2): "NOUN", (0, 3): "ADJ", (1, 1): "VERB"})
    paths["both.conllu"].write_text(conllu(both), encoding="utf8")
    vocab = spacy.blank("xx").vocab
    paths["both.spacy"] = tmp_path / "both.spacy"
    DocBin(docs=list(read_conllu(paths["both.conllu"], vocab)), attrs=["ORTH", "SPACY", "TAG", "POS", "MORPH"]
           ).to_disk(paths["both.spacy"])
    return paths


def test_scores_and_mcnemar(peer, files):
    result = peer.score_systems(files["gold.conllu"], [("Stanza", files["stanza.conllu"])],
                                train_path=files["train.conllu"], baseline=("Both", files["both.spacy"]),
                                n_samples=50)
    both, stanza = result["systems"]
    assert (both["name"], stanza["name"]) == ("Both", "Stanza")
    assert both["pos_acc"] == pytest.approx(0.6)
    assert stanza["pos_acc"] == pytest.approx(0.8)
    # OOV of training: dogs, barked, slept (3 tokens; "cat" is in the sample).
    assert stanza["oov_train_n_tokens"] == both["oov_train_n_tokens"] == 3
    assert both["oov_train_pos_acc"] == pytest.approx(1 / 3)  # slept
    assert stanza["oov_train_pos_acc"] == pytest.approx(2 / 3)  # barked, slept
    # Attributes: Both's FEATS are gold (F1 1); Stanza: 6 gold values, 6 predicted, 5 right.
    assert both["attr_micro_f"] == pytest.approx(1.0)
    assert stanza["attr_micro_f"] == pytest.approx(2 * 5 / (6 + 6))
    (test,) = result["tests"]
    assert (test["a"], test["b"]) == ("Both", "Stanza")
    assert (test["pos_only_a"], test["pos_only_b"]) == (1, 3)
    assert test["pos_acc_delta"] == pytest.approx(0.2)
    # Four discordant tokens: McNemar's exact binomial test.
    assert test["pos_p_value"] == pytest.approx(stats.binomtest(1, 4, 0.5).pvalue)
    assert test["pos_p_value"] == pytest.approx(0.625)
    # On the OOV tokens: only Stanza right on "barked", no other discordant token.
    assert test["oov_train_n_tokens"] == 3
    assert test["oov_train_pos_acc_delta"] == pytest.approx(1 / 3)
    assert test["oov_train_pos_p_value"] == pytest.approx(1.0)
    assert test["attr_micro_f_delta"] == pytest.approx(5 / 6 - 1.0)
    assert "stanza" not in sys.modules


def test_identical_systems(peer, files):
    result = peer.score_systems(files["gold.conllu"], [("Stanza", files["stanza.conllu"])],
                                baseline=("Stanza-again", files["stanza.conllu"]), n_samples=20)
    (test,) = result["tests"]
    assert (test["pos_only_a"], test["pos_only_b"], test["pos_p_value"]) == (0, 0, 1.0)
    assert result["systems"][0]["oov_train_pos_acc"] is None  # no training sample given


def test_cli_writes_table_and_json(peer, files, tmp_path, capsys):
    out, md = tmp_path / "out.json", tmp_path / "table.md"
    peer.main(["score", "--gold", str(files["gold.conllu"]), "--train", str(files["train.conllu"]),
               "--stanza", f"Stanza (vectors)={files['stanza.conllu']}", "--both", str(files["both.spacy"]),
               "--n-samples", "20", "--output", str(out), "--markdown", str(md)])
    printed = capsys.readouterr().out
    assert "| Both | 60.00 | 100.00 | 33.33 | 3 |" in printed
    assert "| Stanza (vectors) | 80.00 | 83.33 | 66.67 | 3 |" in printed
    assert "| Stanza (vectors) vs Both | +20.00 | 0.62 | 1 / 3 |" in printed
    assert md.read_text(encoding="utf8") == printed
    assert json.loads(out.read_text(encoding="utf8"))["tests"][0]["pos_only_b"] == 3


def test_words_differing_from_gold(peer, files, tmp_path):
    wrong = [list(s) for s in GOLD]
    wrong[1][2] = ("sleeps", "VERB", "Tense=Pres")
    bad = tmp_path / "bad.conllu"
    bad.write_text(conllu(wrong), encoding="utf8")
    with pytest.raises(peer.PeerInputError, match=r"bad\.conllu: sentence 2 \(s2\) differs from the gold words "
                                                  r"of .*gold\.conllu at word 3: found 'sleeps', expected 'slept'"):
        peer.score_systems(files["gold.conllu"], [("Stanza", bad)])
    with pytest.raises(SystemExit, match=r"^error: .*bad\.conllu: sentence 2"):
        peer.main(["score", "--gold", str(files["gold.conllu"]), "--stanza", str(bad)])


def test_missing_word_and_sentence(peer, files, tmp_path):
    short = tmp_path / "short.conllu"
    short.write_text(conllu([GOLD[0], GOLD[1][:4]]), encoding="utf8")
    with pytest.raises(peer.PeerInputError, match=r"short\.conllu: sentence 2 .* at word 5: found the end of "
                                                  r"the sentence, expected '\.' \(4 words vs 5\)"):
        peer.score_systems(files["gold.conllu"], [("Stanza", short)])
    one = tmp_path / "one.conllu"
    one.write_text(conllu(GOLD[:1]), encoding="utf8")
    with pytest.raises(peer.PeerInputError, match=r"one\.conllu: 1 sentences, but the gold file .*gold\.conllu has 2"):
        peer.score_systems(files["gold.conllu"], [("Stanza", one)])


def test_bad_files_are_named(peer, files, tmp_path):
    with pytest.raises(peer.PeerInputError, match=r"nothere\.conllu: no such file"):
        peer.score_systems(files["gold.conllu"], [("Stanza", tmp_path / "nothere.conllu")])
    broken = tmp_path / "broken.conllu"
    broken.write_text("1\tThe\t_\tDET\n\n", encoding="utf8")
    with pytest.raises(SystemExit, match=r"^error: .*broken\.conllu:1: expected 10 tab-separated columns"):
        peer.main(["score", "--gold", str(files["gold.conllu"]), "--stanza", str(broken)])
    not_docbin = tmp_path / "both.spacy"
    not_docbin.write_text("not a DocBin", encoding="utf8")
    with pytest.raises(peer.PeerInputError, match=r"both\.spacy: not a spaCy DocBin"):
        peer.score_systems(files["gold.conllu"], [("Stanza", files["stanza.conllu"])],
                           baseline=("Both", not_docbin))


def test_train_refuses_missing_inputs(peer, files, tmp_path):
    with pytest.raises(SystemExit, match=r"^error: .*missing\.conllu: no such file \(the dev set\)"):
        peer.main(["train", "--train", str(files["train.conllu"]), "--dev", str(tmp_path / "missing.conllu"),
                   "--lang", "en", "--vectors", "none", "--model-dir", str(tmp_path / "m"),
                   "--stanza-python", sys.executable])
    with pytest.raises(SystemExit, match=r"^error: .*stanza_peer\.json: no such file"):
        peer.main(["predict", "--model-dir", str(tmp_path / "m"), "--input", str(files["gold.conllu"]),
                   "--output", str(tmp_path / "p.conllu"), "--stanza-python", sys.executable])


def test_words_lowercased_once(peer, files, tmp_path):
    out = tmp_path / "words.txt"
    peer.main(["words", str(files["gold.conllu"]), str(files["train.conllu"]), "--output", str(out)])
    assert out.read_text(encoding="utf8").split("\n") == [
        "the", "dogs", "barked", "loudly", ".", "a", "cat", "slept", "here", ""]


def test_words_with_spaces_left_out(peer, tmp_path, capsys):
    path = tmp_path / "fr.conllu"
    path.write_text(conllu([[("Il", "PRON", "_"), ("1 000", "NUM", "_"), ("euros", "NOUN", "_")]]), encoding="utf8")
    out = tmp_path / "words.txt"
    peer.main(["words", str(path), "--output", str(out)])
    assert out.read_text(encoding="utf8") == "il\neuros\n"
    assert "1 with white space left out ('1 000': add their rows with `spaced-rows`)" in capsys.readouterr().out


def test_table_means_over_subsamples_and_counts_tests(peer, files, tmp_path, capsys):
    """Two subsamples of one treebank (the same files twice, as different training samples): means,
    the mean difference and the significance counts at the chosen alpha; the paper's Both beside
    Both's row."""
    outs = []
    for n in (0, 1):
        train = tmp_path / f"train.n5000.s{n}.conllu"
        train.write_text(files["train.conllu"].read_text(encoding="utf8"), encoding="utf8")
        out = tmp_path / f"s{n}.json"
        peer.main(["score", "--gold", str(files["gold.conllu"]), "--train", str(train),
                   "--stanza", f"Stanza={files['stanza.conllu']}", "--both", str(files["both.spacy"]),
                   "--n-samples", "20", "--output", str(out), "--treebank", "UD_Toy", "--lang", "hu"])
        outs.append(out)
    capsys.readouterr()
    rows = peer.summarize([json.loads(o.read_text(encoding="utf8")) for o in outs], alpha=0.7)
    both, stanza = rows
    assert (both["system"], both["is_baseline"], both["n_tests"]) == ("Both", True, 0)
    assert stanza["pos_acc"] == [0.8, 0.8] and stanza["pos_delta"] == pytest.approx([0.2, 0.2])
    # McNemar p = 0.62 for 1 / 3 discordant tokens: ahead at alpha 0.7, not at 0.01
    assert (stanza["pos_ahead"], stanza["pos_behind"], stanza["n_tests"]) == (2, 0, 2)
    # on the OOV tokens Stanza is 33.33 points ahead, too few tokens for McNemar even at alpha 0.7
    assert stanza["oov_delta"] == pytest.approx([1 / 3, 1 / 3]) and stanza["oov_ahead"] == 0
    assert peer.summarize([json.loads(o.read_text(encoding="utf8")) for o in outs])[1]["pos_ahead"] == 0
    table = tmp_path / "table.md"
    peer.main(["table", *map(str, outs), "--output", str(table)])
    text = table.read_text(encoding="utf8")
    assert "| UD_Toy | Both | 2 | 60.00 ± 0.00 | 100.00 ± 0.00 | 33.33 ± 0.00 |  |  |  | 88.34 / 76.85 |" in text
    assert ("| UD_Toy | Stanza | 2 | 80.00 ± 0.00 | 83.33 ± 0.00 | 66.67 ± 0.00 | +20.00 (0 / 0 of 2) | -16.67 (0 / 0) "
            "| +33.33 (0 / 0) |  |") in text


def test_table_refuses_a_subsample_scored_twice_and_non_results(peer, files, tmp_path):
    out = tmp_path / "s0.json"
    peer.main(["score", "--gold", str(files["gold.conllu"]), "--train", str(files["train.conllu"]),
               "--stanza", f"Stanza={files['stanza.conllu']}", "--both", str(files["both.spacy"]),
               "--n-samples", "20", "--output", str(out)])
    with pytest.raises(SystemExit, match="scored twice"):
        peer.main(["table", str(out), str(out)])
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]", encoding="utf8")
    with pytest.raises(SystemExit, match="bad.json: not a result of `score`"):
        peer.main(["table", str(bad)])


def test_spacy_baseline_beside_stanza_in_one_result_and_table(peer, files, tmp_path, capsys):
    """`--system` takes any tagger's predictions on the gold words: spaCy's baseline as evaluate.py
    writes it (a .spacy DocBin) is scored and tested against Both beside Stanza, and `table` gives
    it its own row."""
    spacy_pred = with_pos(GOLD, {(0, 1): "ADJ", (0, 2): "NOUN", (0, 3): "ADJ", (1, 1): "VERB", (1, 2): "NOUN"})
    (tmp_path / "spacy.conllu").write_text(conllu(spacy_pred), encoding="utf8")
    spacy_bin = tmp_path / "spacy.spacy"
    DocBin(docs=list(read_conllu(tmp_path / "spacy.conllu", spacy.blank("xx").vocab)),
           attrs=["ORTH", "SPACY", "TAG", "POS", "MORPH"]).to_disk(spacy_bin)
    out = tmp_path / "s0.json"
    peer.main(["score", "--gold", str(files["gold.conllu"]), "--train", str(files["train.conllu"]),
               "--system", f"Stanza={files['stanza.conllu']}", "--system", f"spaCy={spacy_bin}",
               "--both", str(files["both.spacy"]), "--n-samples", "20", "--output", str(out),
               "--treebank", "UD_Toy", "--lang", "hu"])
    result = json.loads(out.read_text(encoding="utf8"))
    assert [row["name"] for row in result["systems"]] == ["Both", "Stanza", "spaCy"]
    spacy_test = result["tests"][1]
    # spaCy repeats Both's four errors and adds "slept": one discordant token, Both's
    assert (spacy_test["b"], spacy_test["pos_only_a"], spacy_test["pos_only_b"]) == ("spaCy", 1, 0)
    assert spacy_test["pos_acc_delta"] == pytest.approx(-0.1)
    capsys.readouterr()
    peer.main(["table", str(out)])
    printed = capsys.readouterr().out
    assert "| UD_Toy | spaCy | 1 | 50.00 | 100.00 | 0.00 | -10.00 (0 / 0 of 1) | +0.00 (0 / 0) | -33.33 (0 / 0) |  |" in printed


def test_peer_table_script_finds_both_spacy_and_stanza_of_each_sample(files, tmp_path):
    """scripts/peer_table.sh over a project laid out as the driver leaves it: Both chosen on dev is
    preferred to the recipe's run, spaCy's run and Stanza's predictions of the same sample join it,
    a sample without a peer is left out, and a full-data run stands for a treebank only where it
    has under 5,000 training tokens."""
    project = tmp_path / "project"
    tb = "UD_Toy-TB"
    (project / "corpus" / tb / "raw").mkdir(parents=True)
    shutil.copyfile(files["gold.conllu"], project / "corpus" / tb / "raw" / "test.conllu")
    (project / "corpus" / tb / "sources.json").write_text(json.dumps({"prefix": "hu_toy"}), encoding="utf8")
    for seed in (0, 1):
        shutil.copyfile(files["train.conllu"], project / "corpus" / tb / f"train.n5000.s{seed}.conllu")
        run = project / "metrics" / f"{tb}_lowres" / f"n5000.s{seed}"
        run.mkdir(parents=True)
        shutil.copyfile(files["both.spacy"], run / "both.spacy")
    # sample 0: a dev-chosen Both (Stanza's predictions, standing in), spaCy's run and Stanza's
    chosen = project / "metrics" / f"{tb}_lowres-dev" / "n5000.s0"
    chosen.mkdir(parents=True)
    DocBin(docs=list(read_conllu(files["stanza.conllu"], spacy.blank("xx").vocab)),
           attrs=["ORTH", "SPACY", "TAG", "POS", "MORPH"]).to_disk(chosen / "both.spacy")
    shutil.copyfile(files["both.spacy"], project / "metrics" / f"{tb}_lowres" / "n5000.s0" / "spacy.spacy")
    (project / "stanza" / "hu_s0_x").mkdir(parents=True)
    shutil.copyfile(files["stanza.conllu"], project / "stanza" / "hu_s0_x" / "test.pred.conllu")
    # Full-data runs: in the table for a treebank under 5,000 training tokens only.
    for small_tb, n_train in (("UD_Tiny-TB", 4949), ("UD_Big-TB", 20000)):
        (project / "corpus" / small_tb / "raw").mkdir(parents=True)
        shutil.copyfile(files["gold.conllu"], project / "corpus" / small_tb / "raw" / "test.conllu")
        (project / "corpus" / small_tb / "sources.json").write_text(json.dumps({"prefix": "kk"}), encoding="utf8")
        shutil.copyfile(files["train.conllu"], project / "corpus" / small_tb / "train.n0.s0.conllu")
        run = project / "metrics" / f"{small_tb}_lowres" / "n0.s0"
        run.mkdir(parents=True)
        (run / "both.json").write_text(json.dumps({"n_train_tokens": n_train}), encoding="utf8")
        for name in ("both.spacy", "spacy.spacy"):
            shutil.copyfile(files["both.spacy"], run / name)
    script = Path(__file__).resolve().parents[1] / "scripts" / "peer_table.sh"
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}  # our python
    done = subprocess.run(["bash", str(script), "table.md", "stanza"], cwd=project, capture_output=True, text=True,
                          env=env)
    assert done.returncode == 0, done.stderr
    assert f"metrics/{tb}_lowres-dev/n5000.s0/both.spacy" in done.stdout
    assert "n5000.s1" not in done.stdout  # no peer ran on sample 1
    table = (project / "table.md").read_text(encoding="utf8")
    # Both here is Stanza's predictions (80.00); spaCy's run is the old Both (60.00); Stanza ties Both
    assert f"| {tb} | Both | 1 | 80.00 |" in table
    assert f"| {tb} | spaCy | 1 | 60.00 |" in table and f"| {tb} | Stanza | 1 | 80.00 |" in table
    assert (project / "metrics" / "peers" / f"{tb}.n5000.s0.json").is_file()
    assert "| UD_Tiny-TB | Both | 1 |" in table and "| UD_Tiny-TB | spaCy | 1 |" in table
    assert "UD_Big-TB" not in table and "UD_Big-TB" not in done.stdout


def test_spaced_rows_as_stanza_looks_them_up(peer, tiny_mimick, glove_small, tmp_path, capsys):
    """Forms with a space get Mimick's row under Stanza's key (spaces as U+00A0): the mean of their
    parts' predictions (``--whole-forms``: the whole form's); the table's rows are copied as they
    are; a form already in the table is not added twice."""
    import numpy

    from spacy_mimick.vectors.mimick_model import MimickModel
    from spacy_mimick.vectors.vectors_io import read_vectors, write_vectors_text

    table_path = tmp_path / "table.vec.gz"
    write_vectors_text(table_path, ["the", "cat", "new\xa0york"], glove_small.matrix[:3], precision=9)
    text = tmp_path / "vi.conllu"
    text.write_text(conllu([[("Hàng xóm", "NOUN", "_"), ("the", "DET", "_"), ("New York", "PROPN", "_")]]),
                    encoding="utf8")
    out = tmp_path / "stanza.vec.gz"
    peer.main(["spaced-rows", str(text), "--vectors", str(table_path), "--mimick-model", str(tiny_mimick),
               "--output", str(out)])
    assert "1 Mimick rows of forms with white space ('hàng xóm'; 1 already there)" in capsys.readouterr().out
    written = read_vectors(out)
    assert list(written.words) == ["the", "cat", "new\xa0york", "hàng\xa0xóm"]
    numpy.testing.assert_allclose(written.matrix[:3], glove_small.matrix[:3], rtol=1e-6)
    model = MimickModel.from_disk(tiny_mimick)
    parts = model.predict(["hàng", "xóm"]).mean(axis=0)  # as mimick_vectors' spaced_from_parts
    numpy.testing.assert_allclose(written.matrix[3], parts, rtol=1e-4, atol=1e-6)
    whole = tmp_path / "whole.vec.gz"
    peer.main(["spaced-rows", str(text), "--vectors", str(table_path), "--mimick-model", str(tiny_mimick),
               "--output", str(whole), "--whole-forms"])
    numpy.testing.assert_allclose(read_vectors(whole).matrix[3], model.predict(["hàng xóm"])[0], rtol=1e-4, atol=1e-6)
    assert not numpy.allclose(parts, model.predict(["hàng xóm"])[0], atol=1e-3)
    with pytest.raises(SystemExit, match="one of the inputs"):
        peer.main(["spaced-rows", str(text), "--vectors", str(table_path), "--mimick-model", str(tiny_mimick),
                   "--output", str(table_path)])
