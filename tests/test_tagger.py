"""The joint UPOS + morphological attribute tagger (``mimick_tagger``) on real EWT data."""
import gzip
import random
import re
from itertools import islice
from pathlib import Path

import numpy

import pytest
import spacy
from typer.testing import CliRunner
from spacy.morphology import Morphology
from spacy.parts_of_speech import IDS as POS_IDS
from spacy.tokens import Doc
from spacy.training import Example
from spacy.training.initialize import convert_vectors
from thinc.api import Adam, fix_random_seed

from spacy_mimick.tagger.tagger_component import MimickTagger, _shims
from spacy_mimick.cli import app
from spacy_mimick.tagger.recipes import RECIPES, VARIANTS, config_text
from spacy_mimick.tagger.tagger_model import get_train_words
from spacy_mimick.vectors.mimick_vectors import MIMICK, MimickVectors
from spacy_mimick.ud.corpus import read_conllu

from conftest import EWT, GLOVE, REPO

EWT_TRAIN = EWT / "en_ewt-ud-train.conllu"
EWT_DEV = EWT / "en_ewt-ud-dev.conllu"
N_VECTORS = 5000


@pytest.fixture(scope="session")
def vectors_dir(tmp_path_factory, shared_data) -> Path:
    """A `spacy init vectors` pipeline with the first N_VECTORS GloVe rows."""
    tmp = tmp_path_factory.mktemp("vectors")
    text = tmp / "glove.txt"
    with gzip.open(GLOVE, "rt", encoding="utf8") as src:
        text.write_text("".join(islice(src, N_VECTORS)), encoding="utf8")
    nlp = spacy.blank("en")
    convert_vectors(nlp, text, truncate=0, prune=-1, mode="default")
    nlp.to_disk(tmp / "nlp")
    return tmp / "nlp"


def _examples(nlp, path, limit):
    return [
        Example(Doc(nlp.vocab, words=[t.text for t in ref], spaces=[bool(t.whitespace_) for t in ref]), ref)
        for ref in read_conllu(path, nlp.vocab, limit=limit)
    ]


V1_ARCH = "spacy_mimick.MimickTagger.v1"


def _pipeline(vectors_dir, **model_cfg):
    nlp = spacy.load(vectors_dir) if vectors_dir is not None else spacy.blank("en")
    # The paper's network unless the test names another (the factory's default is v3).
    nlp.add_pipe("mimick_tagger", config={"model": {"@architectures": V1_ARCH, **model_cfg}})
    return nlp


def _scores(nlp, docs):
    return nlp.get_pipe("mimick_tagger").model.predict([nlp.make_doc(d) if isinstance(d, str) else d for d in docs])


@pytest.fixture(scope="module")
def trained(vectors_dir):
    """A No-Char tagger trained briefly on 300 EWT sentences, and 300 dev examples."""
    fix_random_seed(0)
    nlp = _pipeline(vectors_dir, dropout=0.2)
    train = _examples(nlp, EWT_TRAIN, 300)
    dev = _examples(nlp, EWT_DEV, 300)
    optimizer = Adam(0.005)
    nlp.initialize(lambda: train, sgd=optimizer)
    rng = random.Random(0)
    for _ in range(5):
        rng.shuffle(train)
        for i in range(0, len(train), 8):
            nlp.update(train[i : i + 8], sgd=optimizer)
    return nlp, train, dev


def test_labels_from_training_data(vectors_dir):
    nlp = _pipeline(vectors_dir)
    train = _examples(nlp, EWT_TRAIN, 100)
    nlp.initialize(lambda: train)
    tagger = nlp.get_pipe("mimick_tagger")
    gold_pos = {t.pos_ for eg in train for t in eg.reference}
    assert set(tagger.cfg["labels_pos"]) == gold_pos
    gold_morph = {}
    for eg in train:
        for token in eg.reference:
            for attr, value in token.morph.to_dict().items():
                gold_morph.setdefault(attr, set()).add(value)
    assert tagger.cfg["labels_morph"] == {attr: sorted(values) for attr, values in sorted(gold_morph.items())}
    assert {"Plur", "Sing"} <= set(tagger.cfg["labels_morph"]["Number"])
    tokens = [t for eg in train for t in eg.reference]
    with_number = sum("Number" in t.morph.to_dict() for t in tokens)
    assert tagger.cfg["attr_weights"]["Number"] == pytest.approx(with_number / len(tokens))
    assert "POS=NOUN" in tagger.labels and "Number=Sing" in tagger.labels
    assert set(get_train_words(tagger.model)) == {t.text for eg in train for t in eg.predicted}
    # label_data is what initialize(labels=...) takes
    other = _pipeline(vectors_dir)
    other.get_pipe("mimick_tagger").initialize(lambda: train[:5], nlp=other, labels=tagger.label_data)
    assert other.get_pipe("mimick_tagger").label_data == tagger.label_data


def test_non_upos_label_is_refused(vectors_dir):
    nlp = _pipeline(vectors_dir)
    train = _examples(nlp, EWT_TRAIN, 5)
    with pytest.raises(ValueError, match="UPOS"):
        nlp.get_pipe("mimick_tagger").initialize(
            lambda: train, nlp=nlp, labels={"pos": ["NOUN", "NN"], "morph": {}}
        )


def test_bad_loss_is_refused(vectors_dir):
    with pytest.raises(ValueError, match="loss"):
        spacy.blank("en").add_pipe("mimick_tagger", config={"loss": "mean"})


def test_training_beats_majority_baseline(trained):
    nlp, train, dev = trained
    pos = [t.pos_ for eg in dev for t in eg.reference]
    majority = max(pos.count(p) for p in set(pos)) / len(pos)
    scores = nlp.evaluate(dev)
    assert majority < 0.25
    assert scores["pos_acc"] > 0.7
    assert scores["attr_micro_f"] > 0.5


def test_predicted_feats_are_valid(trained):
    nlp, _, dev = trained
    tagger = nlp.get_pipe("mimick_tagger")
    labels = tagger.cfg["labels_morph"]
    n_with_feats = 0
    for doc in nlp.pipe(eg.predicted for eg in dev[:100]):
        for token in doc:
            assert token.pos_ in tagger.cfg["labels_pos"]
            feats = str(token.morph)
            if not feats:
                continue
            n_with_feats += 1
            assert feats == nlp.vocab.morphology.normalize_features(feats)
            for attr, value in Morphology.feats_to_dict(feats).items():
                assert value in labels[attr], (attr, value)
    assert n_with_feats > 100


def test_score_reports_paper_metrics(trained):
    nlp, _, dev = trained
    scores = nlp.evaluate(dev)
    for key in ("pos_acc", "morph_acc", "attr_micro_f", "attr_micro_p", "attr_micro_r", "attr_macro_f"):
        assert 0 <= scores[key] <= 1, key
    assert "Number" in scores["attr_per_type"]
    assert scores["oov_train_n_tokens"] > 0
    assert 0 <= scores["oov_train_pos_acc"] < scores["pos_acc"]
    assert scores["oov_vec_n_tokens"] > 0


@pytest.mark.parametrize("use_vectors", [True, False])
@pytest.mark.parametrize("char_embed", [0, 20])
@pytest.mark.parametrize("fine_tune", [True, False])
def test_variants_build_and_run(vectors_dir, use_vectors, char_embed, fine_tune):
    nlp = _pipeline(vectors_dir if use_vectors else None, char_embed=char_embed, fine_tune=fine_tune)
    train = _examples(nlp, EWT_TRAIN, 20)
    optimizer = nlp.initialize(lambda: train)
    losses = nlp.update(train, sgd=optimizer)
    assert numpy.isfinite(losses["mimick_tagger"]) and losses["mimick_tagger"] > 0
    docs = list(nlp.pipe(["Zorblax quuxed the 3 frobnicators .", ""]))
    assert all(t.pos_ for t in docs[0]) and len(docs[1]) == 0
    net = nlp.get_pipe("mimick_tagger").model.get_ref("net").layers[0].shims[0]._model
    assert (net.chars is not None) == (char_embed > 0)
    assert (net.word_embed is not None) == (not use_vectors)
    assert (net.word_delta is not None) == (use_vectors and fine_tune)


def test_mimick_vectors_feed_the_tagger(trained, tiny_mimick):
    """An OOV token gets UNK input, unless the vocab's vectors are MimickVectors: then the
    tagger reads Mimick's prediction, the same vector as token.vector."""
    from spacy_mimick.vectors.mimick_model import MimickModel

    nlp, _, _ = trained
    featurizer = nlp.get_pipe("mimick_tagger").model.get_ref("featurizer")
    words = ["The", "zorblaxian", "sat", "."]
    plain = Doc(nlp.vocab, words=words)
    X_plain = featurizer.predict([plain])
    numpy.testing.assert_array_equal(X_plain.vectors[1], featurizer.get_param("unk"))
    # "The" has no row of its own in lowercase GloVe: lowercase backoff finds "the".
    numpy.testing.assert_array_equal(X_plain.vectors[0], nlp.vocab.get_vector("the"))
    table = nlp.vocab.vectors
    nlp.vocab.vectors = MimickVectors(strings=nlp.vocab.strings, table=table,
                                      model=MimickModel.from_disk(tiny_mimick))
    try:
        with_mimick = Doc(nlp.vocab, words=words)
        X_mimick = featurizer.predict([with_mimick])
        numpy.testing.assert_array_equal(X_mimick.vectors[1], with_mimick[1].vector)
        assert with_mimick[1].vector.any()
        numpy.testing.assert_array_equal(X_mimick.vectors[0], X_plain.vectors[0])
        scores_mimick = _scores(nlp, [with_mimick])[0]
    finally:
        nlp.vocab.vectors = table
    scores_plain = _scores(nlp, [plain])[0]
    assert not numpy.allclose(scores_plain[1], scores_mimick[1])


def test_unseen_gold_values_are_ignored(vectors_dir):
    nlp = _pipeline(vectors_dir)
    train = _examples(nlp, EWT_TRAIN, 10)
    labels = {"pos": ["DET", "NOUN", "PUNCT"], "morph": {"Number": ["Sing"]}}
    nlp.get_pipe("mimick_tagger").initialize(lambda: train, nlp=nlp, labels=labels)
    optimizer = nlp.create_optimizer()
    ref = Doc(
        nlp.vocab,
        words=["The", "dogs", "barked", "!"],
        pos=["DET", "NOUN", "VERB", "PUNCT"],
        morphs=["Definite=Def|PronType=Art", "Number=Plur", "Mood=Ind|Tense=Past", ""],
    )
    example = Example(Doc(nlp.vocab, words=[t.text for t in ref]), ref)
    tagger = nlp.get_pipe("mimick_tagger")
    gold = tagger._gold_ids(example, tagger._value_index())
    # POS: VERB unseen -> ignored. Number: Plur unseen -> ignored, absent -> NONE (0).
    assert gold[:, 0].tolist() == [0, 1, -1, 2]
    assert gold[:, 1].tolist() == [0, -1, 0, 0]
    losses = nlp.update([example], sgd=optimizer)
    assert numpy.isfinite(losses["mimick_tagger"])


def test_weighted_loss_runs(vectors_dir):
    nlp = spacy.load(vectors_dir)
    nlp.add_pipe("mimick_tagger", config={"loss": "weighted", "model": {"@architectures": V1_ARCH}})
    train = _examples(nlp, EWT_TRAIN, 20)
    optimizer = nlp.initialize(lambda: train)
    assert numpy.isfinite(nlp.update(train, sgd=optimizer)["mimick_tagger"])


def _loss_and_gradient(nlp, examples, scores):
    loss, d_scores = nlp.get_pipe("mimick_tagger").get_loss(examples, scores)
    return loss, numpy.concatenate(d_scores)


def test_label_smoothing_uses_spacys_targets(vectors_dir, tmp_path):
    """label_smoothing gives each head the targets of thinc's to_categorical, as spaCy's
    tagger does; 0.0 (the default) is the plain NLL, and a saved pipeline keeps the setting."""
    from thinc.api import to_categorical

    nlp = _pipeline(vectors_dir)
    train = _examples(nlp, EWT_TRAIN, 20)
    nlp.initialize(lambda: train)
    tagger = nlp.get_pipe("mimick_tagger")
    assert tagger.cfg["label_smoothing"] == 0.0
    scores = tagger.model.predict([eg.predicted for eg in train])
    plain_loss, plain_d = _loss_and_gradient(nlp, train, scores)
    tagger.cfg["label_smoothing"] = 0.1
    smooth_loss, smooth_d = _loss_and_gradient(nlp, train, scores)
    assert smooth_loss > plain_loss
    # The POS head by hand: softmax minus thinc's smoothed one-hot targets.
    n_pos = len(tagger.cfg["labels_pos"])
    gold = numpy.concatenate([tagger._gold_ids(eg, tagger._value_index()) for eg in train])
    flat = numpy.concatenate(scores)[:, :n_pos]
    probs = numpy.exp(flat - flat.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    rows = numpy.flatnonzero(gold[:, 0] >= 0)
    targets = to_categorical(gold[rows, 0], n_classes=n_pos, label_smoothing=0.1)
    numpy.testing.assert_allclose(smooth_d[rows, :n_pos], probs[rows] - targets, atol=1e-5)
    numpy.testing.assert_allclose(plain_d[rows, :n_pos], probs[rows] - to_categorical(gold[rows, 0], n_classes=n_pos), atol=1e-5)
    # Set through the config, it survives spacy.load.
    other = spacy.load(vectors_dir)
    other.add_pipe("mimick_tagger", config={"label_smoothing": 0.1, "model": {"@architectures": V1_ARCH}})
    other.initialize(lambda: train)
    other.to_disk(tmp_path / "smoothed")
    assert spacy.load(tmp_path / "smoothed").get_pipe("mimick_tagger").cfg["label_smoothing"] == 0.1


@pytest.mark.parametrize("value", [-0.1, 0.5, 1.0])
def test_bad_label_smoothing_is_refused(value):
    with pytest.raises(ValueError, match="label_smoothing must be in"):
        spacy.blank("en").add_pipe("mimick_tagger", config={"label_smoothing": value})


def test_adversarial_perturbation_moves_each_token_by_epsilon_of_its_norm():
    import torch

    from spacy_mimick.tagger.pytorch_tagger_model import adversarial_perturbation

    torch.manual_seed(0)
    tokens = torch.randn(5, 7) * torch.tensor([[1.0], [10.0], [0.5], [3.0], [2.0]])
    grad = torch.randn(5, 7)
    grad[3] = 0.0  # a token the loss does not depend on stays where it is
    r = adversarial_perturbation(tokens, grad, 0.1)
    moved = [0, 1, 2, 4]
    torch.testing.assert_close(r[moved].norm(dim=-1), 0.1 * tokens[moved].norm(dim=-1))
    cosine = torch.nn.functional.cosine_similarity(r[moved], grad[moved], dim=-1)
    torch.testing.assert_close(cosine, torch.ones(4))
    assert torch.equal(r[3], torch.zeros(7))


def _adversarial_run(vectors_dir, epsilon):
    """One update of a fresh tagger on 16 EWT sentences (same seed every call); the forward
    passes it made."""
    fix_random_seed(0)
    nlp = spacy.load(vectors_dir)
    train = _examples(nlp, EWT_TRAIN, 16)
    nlp.add_pipe("mimick_tagger", config={"adversarial": epsilon, "model": {"@architectures": V1_ARCH}})
    optimizer = Adam(0.01)
    nlp.initialize(lambda: train, sgd=optimizer)
    tagger = nlp.get_pipe("mimick_tagger")
    net = tagger._torch_net()
    passes, inputs = [], []
    net.register_forward_hook(lambda module, args, out: passes.append(
        None if module.input_perturbation is None else module.input_perturbation.clone()))
    net.dropout.register_forward_hook(lambda module, args, out: inputs.append(args[0].detach().clone()))
    losses = nlp.update(train, sgd=optimizer)
    return nlp, train, net, (passes, inputs), losses["mimick_tagger"]


def test_adversarial_training_adds_a_perturbed_pass(vectors_dir, tmp_path):
    """With ``adversarial`` each update runs the batch twice, the second time with every token's
    input moved by epsilon times its norm, and takes one step on both gradients; the loss it
    reports is the clean pass's. Prediction never sees a perturbation, and the setting is saved."""
    import torch

    plain_nlp, _, plain_net, (plain_passes, _), plain_loss = _adversarial_run(vectors_dir, 0.0)
    nlp, train, net, (passes, inputs), loss = _adversarial_run(vectors_dir, 0.1)
    assert plain_passes == [None]
    assert len(passes) == 2 and passes[0] is None and passes[1] is not None
    n_tokens = sum(len(eg.predicted) for eg in train)
    assert passes[1].shape[0] == n_tokens
    # The second pass reads the first pass's token inputs, each moved by 0.1 of its norm.
    torch.testing.assert_close(inputs[1], inputs[0] + passes[1])
    torch.testing.assert_close(passes[1].norm(dim=-1), 0.1 * inputs[0].norm(dim=-1))
    assert loss == pytest.approx(plain_loss, rel=1e-6)  # the same first pass
    # The hooks are cleared, and the perturbed pass changed the step.
    assert net.input_perturbation is None and net.recorded_input is None and not net.record_input
    assert any(not torch.equal(a, b) for a, b in zip(net.state_dict().values(), plain_net.state_dict().values()))
    # Prediction (eval mode) ignores a perturbation, even one left set.
    docs = [eg.predicted for eg in train[:3]]
    before = _scores(nlp, docs)
    net.input_perturbation = torch.full_like(passes[1], 100.0)
    after = _scores(nlp, docs)
    net.input_perturbation = None
    for a, b in zip(before, after):
        numpy.testing.assert_array_equal(a, b)
    nlp.to_disk(tmp_path / "adversarial")
    assert spacy.load(tmp_path / "adversarial").get_pipe("mimick_tagger").cfg["adversarial"] == 0.1
    assert plain_nlp.get_pipe("mimick_tagger").cfg["adversarial"] == 0.0


@pytest.mark.parametrize("value", [-0.1, 1.0])
def test_bad_adversarial_is_refused(value):
    with pytest.raises(ValueError, match="adversarial must be in"):
        spacy.blank("en").add_pipe("mimick_tagger", config={"adversarial": value})


def _bundle(token):
    return token.pos_, str(token.morph)


def test_serialization_round_trips(trained, vectors_dir, tmp_path):
    nlp, _, dev = trained
    docs = [eg.predicted for eg in dev[:50]]
    expected = _scores(nlp, docs)
    # to_bytes / from_bytes into a fresh, uninitialized component
    fresh = _pipeline(vectors_dir, dropout=0.2)
    fresh.get_pipe("mimick_tagger").from_bytes(nlp.get_pipe("mimick_tagger").to_bytes())
    for a, b in zip(expected, _scores(fresh, docs)):
        numpy.testing.assert_array_equal(a, b)
    # nlp.to_disk -> spacy.load
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    assert isinstance(loaded.get_pipe("mimick_tagger"), MimickTagger)
    for a, b in zip(expected, _scores(loaded, docs)):
        numpy.testing.assert_array_equal(a, b)
    texts = [doc.text for doc in docs]
    for doc_a, doc_b in zip(nlp.pipe(texts), loaded.pipe(texts)):
        assert [(t.pos_, str(t.morph)) for t in doc_a] == [(t.pos_, str(t.morph)) for t in doc_b]


@pytest.mark.parametrize(
    "variant, recipe", [(v, r) for r in RECIPES for v in VARIANTS]
)
def test_spacy_train_runs(vectors_dir, tiny_mimick, tmp_path, variant, recipe):
    """Every variant of both recipes, as init-config writes it, trains with spacy train."""
    from spacy.cli.train import train

    config = tmp_path / "config.cfg"
    config.write_text(config_text(variant, recipe), encoding="utf8")
    train(
        config,
        tmp_path / "out",
        overrides={
            "paths.train": str(EWT_TRAIN),
            "paths.dev": str(EWT_DEV),
            "paths.vectors": str(vectors_dir),
            "paths.mimick_model": str(tiny_mimick),
            "corpora.train.limit": 40,
            "corpora.dev.limit": 20,
            "training.max_steps": 6,
            "training.eval_frequency": 3,
        },
    )
    nlp = spacy.load(tmp_path / "out" / "model-last")
    expected = ["mimick_vectors", "mimick_tagger"] if variant.startswith(("mimick", "both")) else ["mimick_tagger"]
    assert nlp.pipe_names == expected
    doc = nlp("The zorblaxian cat sat on the mat.")
    assert all(token.pos in POS_IDS.values() for token in doc)
    if "mimick_vectors" in expected:
        assert nlp.vocab.vectors.sources([doc[1].orth]).tolist() == [MIMICK]


def test_ud_feats_sorts_case_insensitively():
    from spacy_mimick.ud.corpus import ud_feats

    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words=["two", "x"], morphs=["NumType=Card|Number=Plur", ""])
    assert str(doc[0].morph) == "NumType=Card|Number=Plur"  # spaCy's case-sensitive order
    assert list(ud_feats(doc[0])) == ["Number", "NumType"]  # UD's order
    assert ud_feats(doc[1]) is None


def test_tag_conllu_keeps_the_file_and_replaces_upos_feats(trained, tmp_path):
    import conllu

    from spacy_mimick.ud.corpus import tag_conllu

    nlp, _, _ = trained
    source = tmp_path / "in.conllu"
    source.write_text(
        "# sent_id = s1\n# text = I can't go.\n"
        "1\tI\tI\tPRON\tPRP\tCase=Nom|Number=Sing|Person=1|PronType=Prs\t4\tnsubj\t_\t_\n"
        "2-3\tcan't\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "2\tca\tcan\tAUX\tMD\tVerbForm=Fin\t4\taux\t_\t_\n"
        "3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t_\t_\n"
        "4\tgo\tgo\tVERB\tVB\tVerbForm=Inf\t0\troot\t_\tSpaceAfter=No\n"
        "4.1\tgo\tgo\tVERB\t_\t_\t_\t_\t0:root\t_\n"
        "5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_\n\n"
        "# a comment-only block\n\n"
        "1\tThree\tthree\tNUM\tCD\tNumForm=Word|NumType=Card\t0\troot\t_\t_\n\n",
        encoding="utf8")
    out = tmp_path / "out.conllu"
    stats = tag_conllu(nlp, source, out)
    assert (stats.sentences, stats.tokens, stats.multiword_ranges, stats.empty_nodes) == (2, 6, 1, 1)
    before = conllu.parse(source.read_text(encoding="utf8"))
    after = conllu.parse(out.read_text(encoding="utf8"))
    assert len(after) == len(before)
    expected = nlp(Doc(nlp.vocab, words=["I", "ca", "n't", "go", "."], spaces=[True, False, True, False, True]))
    for old, new in zip(before, after):
        assert new.metadata == old.metadata
        assert [t["id"] for t in new] == [t["id"] for t in old]
        for o, n in zip(old, new):
            assert (n["form"], n["lemma"], n["xpos"], n["head"], n["deprel"]) == \
                   (o["form"], o["lemma"], o["xpos"], o["head"], o["deprel"])
            if not isinstance(o["id"], int):  # ranges and empty nodes untouched
                assert (n["upos"], n["feats"]) == (o["upos"], o["feats"])
    words = [t for t in after[0] if isinstance(t["id"], int)]
    assert [t["upos"] for t in words] == [t.pos_ for t in expected]
    for token, word in zip(words, expected):
        assert (token["feats"] or {}) == word.morph.to_dict()
        assert list(token["feats"] or {}) == sorted(token["feats"] or {}, key=str.lower)


# MimickTagger.v3 without Mimick's spelling input: the case classes and word dropout alone.
V2 = {"@architectures": "spacy_mimick.MimickTagger.v3", "hidden_width": 32, "word_dropout": 0.5,
      "mimick_features": False}


def test_word_shape_classes():
    from spacy_mimick.tagger.tagger_model import WORD_SHAPES, word_shape

    shapes = {w: WORD_SHAPES[word_shape(w)] for w in
              ["apple", "Apple", "A", "US", "U.S.", "iPhone", "McDonald", "1990", "3rd", ".", "Ёлка", "ЁЛКА"]}
    assert shapes == {"apple": "lower", "Apple": "Title", "A": "Title", "US": "UPPER", "U.S.": "UPPER",
                      "iPhone": "miXed", "McDonald": "miXed", "1990": "digits", "3rd": "lower", ".": "other",
                      "Ёлка": "Title", "ЁЛКА": "UPPER"}


FLOAT_TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}


def _jittered_scores(jitter: bool):
    """``_scores`` as another CPU gives it: with ``jitter``, every other call, 3 values per doc
    differ in their last bit (AVX-512 kernels: 3 of 64 values by 1.5e-8)."""
    calls = [0]

    def scores(nlp, docs):
        calls[0] += 1
        out = [numpy.array(a, copy=True) for a in _scores(nlp, docs)]
        if jitter and calls[0] % 2 == 0:
            for a in out:
                a.flat[:3] = numpy.nextafter(a.flat[:3], numpy.inf)
        return out

    return scores


@pytest.mark.parametrize("jitter", [False, True], ids=["this-cpu", "avx512-like"])
def test_v3_sees_case_and_drops_words_only_in_training(vectors_dir, tmp_path, jitter):
    _scores = _jittered_scores(jitter)
    fix_random_seed(0)
    nlp = _pipeline(vectors_dir, **V2)
    train = _examples(nlp, EWT_TRAIN, 20)
    optimizer = nlp.initialize(lambda: train)
    for _ in range(3):
        assert numpy.isfinite(nlp.update(train, sgd=optimizer)["mimick_tagger"])
    model = nlp.get_pipe("mimick_tagger").model
    featurizer = model.get_ref("featurizer")
    docs = [eg.predicted for eg in train]
    X_train, _ = featurizer.begin_update(docs)
    X_pred = featurizer.predict(docs)
    seen = X_pred.word_ids > 0
    assert seen.all()  # the training sentences' own words
    assert 0.3 < (X_train.word_ids == 0).mean() < 0.7  # word_dropout 0.5, only when training
    # "Zorblax" and "zorblax": same (UNK) vector, neither seen in training, different case class.
    upper, lower = _scores(nlp, ["Zorblax", "zorblax"])
    assert not numpy.allclose(upper, lower)
    v1 = _pipeline(vectors_dir, hidden_width=32)
    v1.initialize(lambda: train)
    upper, lower = _scores(v1, ["Zorblax", "zorblax"])
    # Tolerances, not exact equality: the same computation in other batch shapes or SIMD paths
    # (AVX-512) differs in the last bits (3 of 64 values by 1.5e-8).
    numpy.testing.assert_allclose(upper, lower, **FLOAT_TOLERANCE)
    # Round trip through disk and bytes.
    expected = _scores(nlp, docs)
    nlp.to_disk(tmp_path / "v2")
    loaded = spacy.load(tmp_path / "v2")
    assert loaded.get_pipe("mimick_tagger").model.get_ref("featurizer").attrs["case_features"]
    for a, b in zip(expected, _scores(loaded, docs)):
        numpy.testing.assert_allclose(a, b, **FLOAT_TOLERANCE)
    fresh = _pipeline(vectors_dir, **V2)
    fresh.get_pipe("mimick_tagger").from_bytes(nlp.get_pipe("mimick_tagger").to_bytes())
    for a, b in zip(expected, _scores(fresh, docs)):
        numpy.testing.assert_allclose(a, b, **FLOAT_TOLERANCE)


def test_v3_refuses_bad_word_dropout(vectors_dir):
    with pytest.raises(ValueError, match="word_dropout must be in"):
        _pipeline(vectors_dir, **{**V2, "word_dropout": 1.0})


V3 = {"@architectures": "spacy_mimick.MimickTagger.v3", "hidden_width": 32}


def _v3_pipeline(vectors_dir, tiny_mimick, **model_cfg):
    nlp = spacy.load(vectors_dir)
    nlp.add_pipe("mimick_vectors", config={"predict_all": True})
    nlp.add_pipe("mimick_tagger", config={"model": {**V3, **model_cfg}})
    nlp.get_pipe("mimick_vectors").initialize(model_path=tiny_mimick)
    return nlp


def test_v3_feeds_mimick_predictions_of_every_token(vectors_dir, tiny_mimick, tmp_path):
    from spacy_mimick.vectors.mimick_model import MimickModel

    fix_random_seed(0)
    nlp = _v3_pipeline(vectors_dir, tiny_mimick)
    train = _examples(nlp, EWT_TRAIN, 20)
    optimizer = nlp.initialize(lambda: train)  # the tagger's sample passes mimick_vectors first
    for _ in range(3):
        losses = nlp.update(train, sgd=optimizer, annotates=["mimick_vectors"])
        assert numpy.isfinite(losses["mimick_tagger"])
    tagger = nlp.get_pipe("mimick_tagger")
    net = tagger.model.get_ref("net").layers[0].shims[0]._model
    width = nlp.vocab.vectors.shape[1]
    assert net.spelling_width == width
    doc = nlp("the cat sat .")
    X = tagger.model.get_ref("featurizer").predict([doc])
    expected = MimickModel.from_disk(tiny_mimick).predict(["the", "cat", "sat", "."])
    numpy.testing.assert_allclose(X.spelling, expected, atol=1e-6)
    numpy.testing.assert_array_equal(X.vectors[0], nlp.vocab.vectors.table[doc[0].orth])  # unchanged
    # The spelling input changes the scores of an in-vocabulary word.
    cache = nlp.vocab.vectors._cache
    (a,) = tagger.model.predict([doc])
    cat = cache["cat"]
    cache["cat"] = expected[0]
    (b,) = tagger.model.predict([doc])
    cache["cat"] = cat
    assert not numpy.allclose(a[1], b[1])
    # Without Mimick's vectors: a clear error, not zeros.
    vectors = nlp.vocab.vectors
    nlp.vocab.vectors = vectors.table
    try:
        with pytest.raises(ValueError, match="no Mimick model"):
            tagger(nlp.make_doc("the cat sat ."))
    finally:
        nlp.vocab.vectors = vectors
    # Round trips.
    texts = ["The zorblaxian cat sat on the mat .", "Dogs bark ."]
    expected_tags = [[(t.pos_, str(t.morph)) for t in d] for d in nlp.pipe(texts)]
    nlp.to_disk(tmp_path / "v3")
    loaded = spacy.load(tmp_path / "v3")
    assert loaded.get_pipe("mimick_vectors").cfg["predict_all"]
    assert [[(t.pos_, str(t.morph)) for t in d] for d in loaded.pipe(texts)] == expected_tags
    docs = [nlp(t) for t in texts]
    fresh = _v3_pipeline(vectors_dir, tiny_mimick)
    fresh.get_pipe("mimick_tagger").from_bytes(tagger.to_bytes())
    for x, y in zip(tagger.model.predict(docs), fresh.get_pipe("mimick_tagger").model.predict(docs)):
        numpy.testing.assert_array_equal(x, y)


def test_v3_needs_mimick_vectors():
    # A blank pipeline: no table, no mimick_vectors (which would give Mimick's vectors as the
    # static ones): initialize says what to add.
    nlp = spacy.blank("en")
    nlp.add_pipe("mimick_tagger", config={"model": V3})
    ref = Doc(nlp.vocab, words=["a", "b"], pos=["DET", "NOUN"])
    with pytest.raises(ValueError, match="the pipeline's vectors have no Mimick model"):
        nlp.initialize(lambda: [Example(nlp.make_doc("a b"), ref)])


def test_v3_initializes_behind_a_function_component(vectors_dir, tiny_mimick):
    from spacy.language import Language

    @Language.component("spacy_mimick_test_identity")
    def identity(doc):
        return doc

    nlp = spacy.load(vectors_dir)
    nlp.add_pipe("spacy_mimick_test_identity")
    nlp.add_pipe("mimick_vectors", config={"predict_all": True})
    nlp.add_pipe("mimick_tagger", config={"model": V3})
    nlp.get_pipe("mimick_vectors").initialize(model_path=tiny_mimick)
    train = _examples(nlp, EWT_TRAIN, 10)
    nlp.initialize(lambda: train)
    assert nlp("the cat sat .").has_annotation("POS")


def test_optimizer_averages_reach_the_torch_module(vectors_dir):
    """With ``use_averages`` (spaCy's default optimizer setting) the tagger evaluates and saves
    the averaged weights: ``use_params`` swaps them into the torch module and back."""
    fix_random_seed(0)
    nlp = _pipeline(vectors_dir, dropout=0.2)
    train = _examples(nlp, EWT_TRAIN, 40)
    optimizer = Adam(0.01, use_averages=True)
    nlp.initialize(lambda: train, sgd=optimizer)
    for i in range(0, len(train), 4):
        nlp.update(train[i : i + 4], sgd=optimizer)
    tagger = nlp.get_pipe("mimick_tagger")
    module = tagger.model.get_ref("net").layers[0].shims[0]._model
    raw = {k: v.clone() for k, v in module.state_dict().items()}
    docs = [eg.predicted for eg in train[:5]]
    before = _scores(nlp, docs)
    with nlp.use_params(optimizer.averages):
        averaged = {k: v.clone() for k, v in module.state_dict().items()}
        inside = _scores(nlp, docs)
    # The averages differ from the last weights, are what the module used, and go away after.
    assert any(not numpy.allclose(raw[k].numpy(), averaged[k].numpy()) for k in raw)
    shim_id = tagger.model.get_ref("net").layers[0].shims[0].id
    for (sid, name), value in optimizer.averages.items():
        if sid == shim_id:
            numpy.testing.assert_allclose(averaged[name].numpy(), value, rtol=1e-6)
    assert any(not numpy.allclose(a, b) for a, b in zip(before, inside))
    for k, v in module.state_dict().items():
        numpy.testing.assert_array_equal(v.numpy(), raw[k].numpy())


def test_to_numpy_takes_gpu_arrays_explicitly():
    """Under ``spacy train --gpu-id N`` spaCy keeps the vectors table in cupy arrays, which
    refuse implicit conversion; the featurizer and the component convert with ``.get()``."""
    from spacy_mimick.vectors.mimick_vectors import to_numpy

    class FakeCupy:
        def __init__(self, data):
            self.data = numpy.asarray(data)

        def get(self):
            return self.data

        def __array__(self, *args, **kwargs):
            raise TypeError("Implicit conversion to a NumPy array is not allowed")

    with pytest.raises(TypeError):
        numpy.asarray(FakeCupy([1, 2]))
    numpy.testing.assert_array_equal(to_numpy(FakeCupy([1, -1])), [1, -1])
    numpy.testing.assert_array_equal(to_numpy([3, 4]), [3, 4])


def test_default_network_is_v3_both_and_says_what_it_needs(vectors_dir, tiny_mimick):
    """add_pipe("mimick_tagger") builds the best measured network (MimickTagger.v3, Both);
    without Mimick's vectors, initialize names the fix instead of failing on the first batch."""
    nlp = spacy.load(vectors_dir)
    nlp.add_pipe("mimick_tagger")
    model_cfg = nlp.config["components"]["mimick_tagger"]["model"]
    assert model_cfg["@architectures"] == "spacy_mimick.MimickTagger.v3"
    assert model_cfg["char_embed"] > 0 and model_cfg["mimick_features"] is True
    train = _examples(nlp, EWT_TRAIN, 10)
    with pytest.raises(ValueError, match=r'add_pipe\("mimick_vectors", before="mimick_tagger", config=\{"predict_all": True\}\)'):
        nlp.initialize(lambda: train)
    # mimick_vectors without predict_all is enough: the vectors predict in-table words when asked
    nlp = spacy.load(vectors_dir)
    nlp.add_pipe("mimick_vectors")
    nlp.add_pipe("mimick_tagger")
    nlp.get_pipe("mimick_vectors").initialize(model_path=tiny_mimick)
    nlp.initialize(lambda: _examples(nlp, EWT_TRAIN, 10))
    assert nlp("the cat sat .").has_annotation("POS")
    # as the message says: it trains
    nlp = spacy.load(vectors_dir)
    nlp.add_pipe("mimick_vectors", config={"predict_all": True})
    nlp.add_pipe("mimick_tagger")
    nlp.get_pipe("mimick_vectors").initialize(model_path=tiny_mimick)
    train = _examples(nlp, EWT_TRAIN, 10)
    optimizer = nlp.initialize(lambda: train)
    docs = [nlp.get_pipe("mimick_vectors")(eg.predicted) for eg in train]
    train = [Example(doc, eg.reference) for doc, eg in zip(docs, train)]
    assert numpy.isfinite(nlp.update(train, sgd=optimizer)["mimick_tagger"])
    assert [t.pos_ for t in nlp("The cat sat.")]


V5 = {"@architectures": "spacy_mimick.MimickTagger.v5", "hidden_width": 32, "char_hidden": 16}


def test_v5_without_its_settings_is_v3(vectors_dir, tiny_mimick):
    """The same seed gives the same scores as v3 with vector_scale at its default, 1."""
    results = []
    for arch in ({**V5},  # every setting at its default: off
                 {**V3, "char_hidden": 16, "dropout": 0.2, "char_embed": 20}):
        fix_random_seed(0)
        nlp = _v3_pipeline(vectors_dir, tiny_mimick, **arch)
        train = _examples(nlp, EWT_TRAIN, 10)
        optimizer = nlp.initialize(lambda: train)
        nlp.update(train, sgd=optimizer, annotates=["mimick_vectors"])
        results.append(nlp.get_pipe("mimick_tagger").model.predict([nlp("the cat sat .")])[0])
    numpy.testing.assert_array_equal(results[0], results[1])


def test_v5_vector_scale_multiplies_every_static_input(vectors_dir, tiny_mimick):
    """vector_scale: the table rows, Mimick's vectors and the spelling input, times the factor;
    the other inputs as they were."""
    docs = []
    inputs = {}
    for scale in (1.0, 0.25):
        fix_random_seed(0)
        nlp = _v3_pipeline(vectors_dir, tiny_mimick, **V5, vector_scale=scale)
        train = _examples(nlp, EWT_TRAIN, 10)
        nlp.initialize(lambda: train)
        docs = [nlp("The zorblaxian man said .")]
        inputs[scale] = nlp.get_pipe("mimick_tagger").model.get_ref("featurizer").predict(docs)
    plain, scaled = inputs[1.0], inputs[0.25]
    numpy.testing.assert_allclose(scaled.vectors, 0.25 * plain.vectors, rtol=1e-6)
    numpy.testing.assert_allclose(scaled.spelling, 0.25 * plain.spelling, rtol=1e-6)
    numpy.testing.assert_array_equal(scaled.char_ids, plain.char_ids)
    numpy.testing.assert_array_equal(scaled.shapes, plain.shapes)
    assert not numpy.allclose(plain.vectors, 0)
    for bad in (0.0, -1.0):
        with pytest.raises(ValueError, match="vector_scale must be a positive number"):
            spacy.blank("en").add_pipe("mimick_tagger", config={"model": {**V5, "vector_scale": bad}})



@pytest.mark.parametrize("arch, replacement", [
    ("spacy_mimick.MimickTagger.v2", 'MimickTagger.v3 with "mimick_features = false"'),
    ("spacy_mimick.MimickTagger.v4", "use MimickTagger.v3"),
])
def test_removed_architectures_say_what_replaced_them(arch, replacement):
    with pytest.raises(ValueError, match=f"{arch} was removed: .*{re.escape(replacement)}"):
        spacy.blank("en").add_pipe("mimick_tagger", config={"model": {"@architectures": arch, "hidden_width": 32}})


@pytest.mark.parametrize("config, message", [
    ({"distillation": 0.5}, "distillation was removed"),
    ({"decode": "bundles"}, "decode = 'bundles' was removed"),
    ({"model": {**V5, "mimick_dropout": 0.1}}, "vector_sources and mimick_dropout were removed"),
    ({"model": {**V5, "vector_sources": True}}, "vector_sources and mimick_dropout were removed"),
])
def test_removed_settings_are_refused_with_a_reason(config, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        spacy.blank("en").add_pipe("mimick_tagger", config=config)


def test_configs_saved_with_the_removed_settings_off_still_load(trained, tmp_path):
    """Pipelines saved before the removal hold distillation = 0.0, decode = "heads", v5's
    vector_sources = false and mimick_dropout = 0.0, and [initialize] teachers = []."""
    nlp, train, _ = trained
    nlp.to_disk(tmp_path / "p")
    config = spacy.util.load_config(tmp_path / "p" / "config.cfg")
    config["components"]["mimick_tagger"].update({"distillation": 0.0, "decode": "heads"})
    config.to_disk(tmp_path / "p" / "config.cfg")
    loaded = spacy.load(tmp_path / "p")
    texts = ["The cat sat on the mat ."]
    assert [t.pos_ for t in loaded(texts[0])] == [t.pos_ for t in nlp(texts[0])]
    tagger = loaded.get_pipe("mimick_tagger")
    tagger.initialize(lambda: train, nlp=loaded, teachers=[])
    with pytest.raises(ValueError, match="teachers were removed with distillation"):
        tagger.initialize(lambda: train, nlp=loaded, teachers=["some/path"])
    blank = spacy.blank("en").add_pipe("mimick_tagger", config={"model": {**V5, "vector_sources": False,
                                                                          "mimick_dropout": 0.0}})
    assert blank.model.get_ref("featurizer").attrs["vector_scale"] == 1.0


def test_prediction_paths_give_the_training_paths_scores():
    """Predicting fuses the heads into two products, and runs one sentence (or sentences of one
    length) without packing: the same scores as the per-head, packed path of training, and the
    fused weights follow every change of a head's parameters."""
    import torch

    from spacy_mimick.tagger.pytorch_tagger_model import MimickTaggerNet

    torch.manual_seed(0)
    net = MimickTaggerNet(vector_width=6, n_words=10, word_width=8, fine_tune=True, n_chars=12, char_embed=4,
                          char_hidden=6, hidden_width=8, depth=2, dropout=0.3, head_sizes=[5, 2, 3])
    for head in net.heads:  # away from the zero/prior init, so a wrong block would show
        torch.nn.init.normal_(head[2].weight)

    def inputs(lengths):
        n = sum(lengths)
        chars = torch.randint(1, 12, (n, 5))
        return (torch.tensor(lengths), torch.randn(n, 6), torch.randint(0, 10, (n,)), chars,
                torch.full((n,), 5), torch.arange(n), torch.zeros(0, dtype=torch.int64), torch.zeros(n, 0))

    net.eval()
    for lengths in ([7], [4, 4], [3, 0, 6]):
        args = inputs(lengths)
        with torch.inference_mode():
            fast = net(*args)
        with torch.enable_grad():
            slow = net(*args).detach()  # grad enabled: the per-head path
        assert fast.shape == (sum(lengths), 10)
        assert torch.allclose(fast, slow, atol=1e-5)
    # One sentence unpacked gives the states it has inside a packed batch of two lengths.
    tokens = torch.randn(7, net.lstm.input_size)
    with torch.no_grad():
        packed = net._encode(tokens, torch.tensor([4, 3]))
        alone = net._encode(tokens[:4], torch.tensor([4]))
    assert torch.allclose(packed[:4], alone, atol=1e-6)
    # A head's data replaced as thinc's optimizer does (param.data = ..., no version bump):
    # the fused weights follow.
    with torch.no_grad():
        net.heads[1][2].bias.data = net.heads[1][2].bias.data + 3.0
        net.heads[0][0].weight.data.copy_(net.heads[0][0].weight.data * 2)
    args = inputs([5])
    with torch.inference_mode():
        fast = net(*args)
    with torch.enable_grad():
        slow = net(*args).detach()
    assert torch.allclose(fast, slow, atol=1e-5)


def test_spelling_correction_reads_the_table_word_of_a_typo(vectors_dir, tiny_mimick, tmp_path):
    """With the vectors' spelling backoff on, a form it takes for a typo is read as its table word
    (in the form's case): the same inputs as the correct spelling; off, or with the backoff off,
    the form itself."""
    fix_random_seed(0)
    nlp = spacy.load(vectors_dir)
    nlp.add_pipe("mimick_vectors", config={"predict_all": True, "spelling_backoff": True})
    nlp.add_pipe("mimick_tagger", config={"model": V3})
    nlp.get_pipe("mimick_vectors").initialize(model_path=tiny_mimick)
    nlp.initialize(lambda: _examples(nlp, EWT_TRAIN, 20))
    tagger = nlp.get_pipe("mimick_tagger")
    featurizer = tagger.model.get_ref("featurizer")
    vectors = nlp.vocab.vectors
    assert vectors.spelled_from("goverment") == "government" and vectors.spelled_from("zorblaxian") is None

    def inputs(text):
        tagger._set_featurizer()
        return featurizer.predict([nlp.get_pipe("mimick_vectors")(nlp.make_doc(text))])

    def same(a, b):
        return all(numpy.array_equal(getattr(a, f), getattr(b, f)) for f in
                   ("vectors", "word_ids", "char_ids", "char_lengths", "shapes", "spelling"))

    for typo, word in (("The goverment fell .", "The government fell ."),
                       ("The Goverment fell .", "The Government fell ."),
                       ("THE GOVERMENT FELL .", "THE GOVERNMENT FELL .")):
        assert same(inputs(typo), inputs(word)), typo
    assert not same(inputs("The zorblaxian fell ."), inputs("The government fell ."))
    typo_tags = [t.pos_ for t in nlp("The goverment fell .")]
    assert typo_tags == [t.pos_ for t in nlp("The government fell .")]
    tagger.spelling_correction = False
    assert not same(inputs("The goverment fell ."), inputs("The government fell ."))
    tagger.spelling_correction = True
    nlp.get_pipe("mimick_vectors").cfg["spelling_backoff"] = False
    assert not same(inputs("The goverment fell ."), inputs("The government fell ."))
    nlp.get_pipe("mimick_vectors").cfg["spelling_backoff"] = True
    # The decoding rules key on the word the network reads: a corrected typo of a training word
    # is that seen word, for unseen_penalty and seen_word_prior alike.
    doc = nlp.get_pipe("mimick_vectors")(nlp.make_doc("Guerrillas kiled them ."))
    assert vectors.spelled_from("kiled") == "killed" and "killed" in tagger.cfg["seen_pos_counts"]
    assert tagger.read_forms([doc]) == ["Guerrillas", "killed", "them", "."]
    assert not tagger.unseen_tokens([doc])[1]
    tagger.unseen_penalty, tagger.seen_word_prior = 100.0, 100.0
    assert [t.pos_ for t in nlp("Guerrillas kiled them .")] == [t.pos_ for t in nlp("Guerrillas killed them .")]
    tagger.spelling_correction = False
    assert tagger.read_forms([doc])[1] == "kiled" and tagger.unseen_tokens([doc])[1]
    tagger.spelling_correction = True
    tagger.unseen_penalty, tagger.seen_word_prior = 0.0, 0.0
    # The setting is the component's, also over a saved model's attributes.
    nlp.to_disk(tmp_path / "nlp")
    loaded = spacy.load(tmp_path / "nlp", config={"components.mimick_tagger.spelling_correction": False})
    assert loaded.get_pipe("mimick_tagger").spelling_correction is False
    loaded.get_pipe("mimick_tagger")(loaded.get_pipe("mimick_vectors")(loaded.make_doc("The goverment fell .")))
    assert loaded.get_pipe("mimick_tagger").model.get_ref("featurizer").attrs["spelling_correction"] is False
    assert spacy.load(tmp_path / "nlp").get_pipe("mimick_tagger").spelling_correction is True



def _cfg_after_bytes(tagger, vectors_dir, key):
    """The tagger's cfg[key] as a fresh pipeline's tagger has it after from_bytes."""
    fresh = _pipeline(vectors_dir, dropout=0.2)
    fresh.get_pipe("mimick_tagger").from_bytes(tagger.to_bytes())
    return fresh.get_pipe("mimick_tagger").cfg[key]


def _tag_with(nlp, texts, **weights):
    """The Docs of ``texts`` tagged with the tagger's decoding weights set (then put back)."""
    tagger = nlp.get_pipe("mimick_tagger")
    before = {name: getattr(tagger, name) for name in weights}
    for name, weight in weights.items():
        setattr(tagger, name, weight)
    try:
        return list(nlp.pipe(texts))
    finally:
        for name, weight in before.items():
            setattr(tagger, name, weight)

def test_unseen_penalty_changes_only_unseen_words_away_from_closed_classes(trained, vectors_dir):
    """The hapax estimate comes from initialize and survives serialization; with the penalty
    on, the tags of training words stay as they were, and unseen words stop getting the tags
    that the sample shows almost never fall on new words."""
    nlp, _, dev = trained
    tagger = nlp.get_pipe("mimick_tagger")
    prior = tagger.cfg["unseen_pos_log_prior"]
    assert prior["ADP"] < -1 and prior["DET"] < -1 and prior["NOUN"] > 0
    assert _cfg_after_bytes(tagger, vectors_dir, "unseen_pos_log_prior") == pytest.approx(prior)
    texts = [eg.predicted.text for eg in dev]
    train_words = set(tagger.train_words)
    plain = [t.pos_ for doc in nlp.pipe(texts) for t in doc]
    tokens = [t for doc in _tag_with(nlp, texts, unseen_penalty=100.0) for t in doc]
    seen = [t.text in train_words for t in tokens]
    assert [p for p, s in zip(plain, seen) if s] == [t.pos_ for t, s in zip(tokens, seen) if s]
    strong = {pos for pos, value in prior.items() if value < -1}
    assert any(p in strong for p, s in zip(plain, seen) if not s)  # the rule has something to change
    assert not any(t.pos_ in strong for t, s in zip(tokens, seen) if not s)
    with pytest.raises(ValueError, match="unseen_penalty"):
        tagger.unseen_penalty = -1.0


def test_unseen_penalty_leaves_punctuation_the_training_data_never_wrote(trained):
    """A punctuation mark outside the training vocabulary (UD Chinese GSD writes "." where
    spaCy's tokenizer gives "。") is not a new word: the penalty, which lowers PUNCT first on
    new words, must not move it; a new word made of letters still counts as unseen."""
    nlp, _, _ = trained
    tagger = nlp.get_pipe("mimick_tagger")
    train_words = set(tagger.train_words)
    marks = ["。", "¿", "…!", "«"]
    assert not any(mark in train_words for mark in marks)
    assert tagger.unseen_forms(marks + ["zorblaxed", ""]).tolist() == [False] * 4 + [True, True]
    texts = [f"The cat sat {mark} the dog" for mark in marks]
    plain = [[t.pos_ for t in doc] for doc in _tag_with(nlp, texts, unseen_penalty=0.0)]
    penalized = [[t.pos_ for t in doc] for doc in _tag_with(nlp, texts, unseen_penalty=100.0)]
    for doc_plain, doc_penalized in zip(plain, penalized):
        assert doc_plain[3] == doc_penalized[3]  # the mark's tag does not move


def test_choose_unseen_penalty_keeps_the_weight_best_on_dev(trained):
    """The before_to_disk callback picks, of its weights, the one whose POS accuracy on the
    corpus is highest (as nlp.evaluate measures it through the tagger's own decoding), the
    first on a tie, and leaves it on the tagger."""
    from spacy_mimick.tagger.unseen_words import make_choose_unseen_penalty

    nlp, _, dev = trained
    tagger = nlp.get_pipe("mimick_tagger")
    weights = [0.0, 1.0, 3.0, 100.0]
    accuracy = {}
    try:
        for weight in weights:
            tagger.unseen_penalty = weight
            accuracy[weight] = nlp.evaluate(dev)["pos_acc"]
        assert len(set(accuracy.values())) > 1  # the weights decode differently here
        tagger.unseen_penalty = 0.5
        assert make_choose_unseen_penalty(lambda _: iter(dev), weights=weights)(nlp) is nlp
        best = max(accuracy.values())
        assert tagger.unseen_penalty == next(w for w in weights if accuracy[w] == best)
    finally:
        tagger.unseen_penalty = 0.0
    with pytest.raises(ValueError, match="weights"):
        make_choose_unseen_penalty(lambda _: iter(dev), weights=[-1.0])


def test_seen_feature_sets_give_each_token_a_feature_set_of_its_pos(trained, vectors_dir, tmp_path):
    """initialize keeps the training data's feature sets per POS (they survive serialization);
    with seen_feature_sets on (the default) every token gets one of its POS's sets and the same
    POS as with the heads decoded one by one, and the sets' log-probability is never below the
    heads' own choice when that choice is a seen set."""
    nlp, train, dev = trained
    tagger = nlp.get_pipe("mimick_tagger")
    sets = tagger.cfg["feature_sets_by_pos"]
    gold = {}
    for eg in train:
        for t in eg.reference:
            gold.setdefault(t.pos_, set()).add(str(t.morph) if str(t.morph) else "")
    assert {pos: set(v) for pos, v in sets.items()} == {pos: v for pos, v in gold.items() if pos}
    assert tagger.seen_feature_sets is True
    texts = [eg.predicted.text for eg in dev]
    bundled = [(t.pos_, str(t.morph)) for doc in nlp.pipe(texts) for t in doc]
    tagger.seen_feature_sets = False
    try:
        heads = [(t.pos_, str(t.morph)) for doc in nlp.pipe(texts) for t in doc]
    finally:
        tagger.seen_feature_sets = True
    assert [p for p, _ in bundled] == [p for p, _ in heads]
    assert all(f in sets[p] for p, f in bundled)
    assert any(f not in sets.get(p, []) for p, f in heads)  # the heads alone leave the sets
    assert sum(a != b for a, b in zip(bundled, heads)) < len(heads) // 5
    nlp.to_disk(tmp_path / "nlp")
    loaded = spacy.load(tmp_path / "nlp")
    assert loaded.get_pipe("mimick_tagger").cfg["feature_sets_by_pos"] == sets
    assert [(t.pos_, str(t.morph)) for doc in loaded.pipe(texts) for t in doc] == bundled
    off = spacy.load(tmp_path / "nlp", config={"components.mimick_tagger.seen_feature_sets": False})
    assert [(t.pos_, str(t.morph)) for doc in off.pipe(texts) for t in doc] == heads


def test_seen_word_prior_changes_only_training_words_towards_their_training_tags(trained, vectors_dir):
    """initialize keeps each training word's POS counts (they survive serialization); with the
    prior on, unseen words keep their tags, and a training word whose counts hold one tag only
    gets that tag."""
    nlp, train, dev = trained
    tagger = nlp.get_pipe("mimick_tagger")
    counts = tagger.cfg["seen_pos_counts"]
    assert counts["the"]["DET"] > 100 and sum(counts["that"].values()) > 10 and len(counts["that"]) > 1
    assert _cfg_after_bytes(tagger, vectors_dir, "seen_pos_counts") == counts
    texts = [eg.predicted.text for eg in dev]
    plain = [t.pos_ for doc in nlp.pipe(texts) for t in doc]
    tokens = [t for doc in _tag_with(nlp, texts, seen_word_prior=100.0) for t in doc]
    seen = [t.text in counts for t in tokens]
    assert [p for p, s in zip(plain, seen) if not s] == [t.pos_ for t, s in zip(tokens, seen) if not s]
    one_tag = [(t, next(iter(counts[t.text]))) for t in tokens if t.text in counts and len(counts[t.text]) == 1]
    assert any(plain[i] != t.pos_ for i, t in enumerate(tokens) if t.text in counts)  # something changed
    assert all(t.pos_ == tag for t, tag in one_tag)
    with pytest.raises(ValueError, match="seen_word_prior"):
        tagger.seen_word_prior = -1.0


def test_seen_feature_set_prior_changes_only_training_words_towards_their_sets(trained, vectors_dir):
    """initialize keeps each training word's feature-set counts (they survive serialization);
    with the prior on, POS and the unseen words' features stay as they were, and a training
    word whose counts hold one set, a set of the POS it is given, gets that set."""
    nlp, train, dev = trained
    tagger = nlp.get_pipe("mimick_tagger")
    counts = tagger.cfg["seen_feature_set_counts"]
    assert counts["the"] and sum(counts["was"].values()) > 10
    assert _cfg_after_bytes(tagger, vectors_dir, "seen_feature_set_counts") == counts
    texts = [eg.predicted.text for eg in dev]
    plain = [(t.pos_, str(t.morph)) for doc in nlp.pipe(texts) for t in doc]
    tokens = [t for doc in _tag_with(nlp, texts, seen_feature_set_prior=100.0) for t in doc]
    assert [p for p, _ in plain] == [t.pos_ for t in tokens]
    seen = [t.text in counts for t in tokens]
    assert [m for (_, m), s in zip(plain, seen) if not s] == [str(t.morph) for t, s in zip(tokens, seen) if not s]
    assert any(m != str(t.morph) for (_, m), t in zip(plain, tokens))  # something changed
    sets = tagger.cfg["feature_sets_by_pos"]
    one_set = [(t, next(iter(counts[t.text]))) for t in tokens
               if t.text in counts and len(counts[t.text]) == 1 and next(iter(counts[t.text])) in sets.get(t.pos_, [])]
    assert one_set and all(str(t.morph) == feats for t, feats in one_set)
    with pytest.raises(ValueError, match="seen_feature_set_prior"):
        tagger.seen_feature_set_prior = -1.0


def test_choose_word_priors_v2_also_keeps_the_feature_set_weight_best_on_dev(trained):
    """v2 chooses the POS weights as v1 does, then the feature sets' weight whose UFeats exact
    match (morph_acc, as nlp.evaluate measures it) is highest on the corpus, the first listed on
    a tie."""
    from spacy_mimick.tagger.seen_words import make_choose_word_priors, make_choose_word_priors_v2

    nlp, _, dev = trained
    tagger = nlp.get_pipe("mimick_tagger")
    weights = [0.0, 0.5, 2.0, 100.0]
    try:
        make_choose_word_priors(lambda _: iter(dev))(nlp)
        pos_weights = tagger.unseen_penalty, tagger.seen_word_prior
        accuracy = {}
        for w in weights:
            tagger.seen_feature_set_prior = w
            accuracy[w] = nlp.evaluate(dev)["morph_acc"]
        assert len(set(accuracy.values())) > 1
        tagger.unseen_penalty, tagger.seen_word_prior, tagger.seen_feature_set_prior = 0.5, 0.5, 0.5
        callback = make_choose_word_priors_v2(lambda _: iter(dev), feature_set_weights=weights)
        assert callback(nlp) is nlp
        assert (tagger.unseen_penalty, tagger.seen_word_prior) == pos_weights
        best = max(accuracy.values())
        assert tagger.seen_feature_set_prior == next(w for w in weights if accuracy[w] == pytest.approx(best))
    finally:
        tagger.unseen_penalty, tagger.seen_word_prior, tagger.seen_feature_set_prior = 0.0, 0.0, 0.0
    with pytest.raises(ValueError, match="feature_set_weights"):
        make_choose_word_priors_v2(lambda _: iter(dev), feature_set_weights=[])


def _spaced_examples(nlp, pos):
    """Dev examples whose words are new forms written with spaces, made of training words
    ("very very": ADV's parts; "the the": DET's), gold POS ``pos`` for each."""
    from spacy.tokens import Doc
    from spacy.training import Example

    words = ["very very", "the the", "."]
    return [Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words, pos=[*pos, "PUNCT"]))
            for _ in range(3)]


def test_spaced_parts_prior_tags_a_new_spaced_form_as_its_parts(trained, vectors_dir):
    """On a new form with a space, a large weight gives the tag of the training words that
    contain its parts; training words and new forms without a space keep their tags; the
    weight survives serialization and is refused below 0."""
    from spacy.tokens import Doc

    nlp, _, dev = trained
    tagger = nlp.get_pipe("mimick_tagger")
    counts = tagger.cfg["seen_pos_counts"]
    assert set(counts["very"]) == {"ADV"} and set(counts["the"]) == {"DET"}
    words = ["very very", "the the", "the", "zorblax", "very"]
    docs = lambda: [Doc(nlp.vocab, words=words)]  # noqa: E731
    plain = [t.pos_ for doc in nlp.pipe(docs()) for t in doc]
    tagged = [t.pos_ for doc in _tag_with(nlp, docs(), spaced_parts_prior=100.0) for t in doc]
    assert tagged[:2] == ["ADV", "DET"] and tagged[2:] == plain[2:]
    texts = [eg.predicted.text for eg in dev]  # EWT writes no form with a space: nothing moves
    assert [t.pos_ for d in _tag_with(nlp, texts, spaced_parts_prior=100.0) for t in d] == \
        [t.pos_ for d in nlp.pipe(texts) for t in d]
    try:
        tagger.spaced_parts_prior = 2.0
        assert _cfg_after_bytes(tagger, vectors_dir, "spaced_parts_prior") == 2.0
    finally:
        tagger.spaced_parts_prior = 0.0
    with pytest.raises(ValueError, match="spaced_parts_prior"):
        tagger.spaced_parts_prior = -1.0


def test_choose_word_priors_v3_keeps_the_parts_weight_best_on_dev(trained):
    """v3 chooses the POS weights as v1 and the feature sets' weight as v2 do, and between them
    the parts' weight that gets most POS right on dev's new spaced forms (the first listed on a
    tie, and where dev has none)."""
    from spacy_mimick.tagger.seen_words import (
        make_choose_word_priors, make_choose_word_priors_v2, make_choose_word_priors_v3,
    )

    nlp, _, dev = trained
    tagger = nlp.get_pipe("mimick_tagger")
    weights = [0.0, 0.5, 100.0]
    try:
        make_choose_word_priors_v2(lambda _: iter(dev))(nlp)
        chosen = tagger.unseen_penalty, tagger.seen_word_prior, tagger.seen_feature_set_prior
        tagger.spaced_parts_prior = 0.5
        make_choose_word_priors_v3(lambda _: iter(dev), parts_weights=weights)(nlp)
        assert (tagger.unseen_penalty, tagger.seen_word_prior, tagger.seen_feature_set_prior) == chosen
        assert tagger.spaced_parts_prior == 0.0  # no spaced form in EWT's dev: the first weight
        right = _spaced_examples(nlp, ["ADV", "DET"])
        accuracy = {}
        for w in weights:
            tagger.spaced_parts_prior = w
            accuracy[w] = nlp.evaluate(right)["pos_acc"]
        best = next(w for w in weights if accuracy[w] == max(accuracy.values()))
        assert best > 0.0
        make_choose_word_priors_v3(lambda _: iter(right), parts_weights=weights)(nlp)
        assert tagger.spaced_parts_prior == best
        wrong = _spaced_examples(nlp, ["SYM", "SYM"])  # the parts' tags are wrong here
        make_choose_word_priors_v3(lambda _: iter(wrong), parts_weights=weights)(nlp)
        assert tagger.spaced_parts_prior == 0.0
    finally:
        tagger.unseen_penalty = tagger.seen_word_prior = tagger.seen_feature_set_prior = tagger.spaced_parts_prior = 0.0
    with pytest.raises(ValueError, match="parts_weights"):
        make_choose_word_priors_v3(lambda _: iter(dev), parts_weights=[-1.0])


def test_choose_word_priors_keeps_the_weights_best_on_dev(trained):
    """The default recipe's before_to_disk callback sets both weights to the pair whose POS
    accuracy on the corpus is highest, as nlp.evaluate measures it through the tagger's own
    decoding (the first listed on a tie)."""
    from spacy_mimick.tagger.seen_words import make_choose_word_priors

    nlp, _, dev = trained
    tagger = nlp.get_pipe("mimick_tagger")
    unseen_weights, seen_weights = [0.0, 1.0, 100.0], [0.0, 0.5, 2.0, 100.0]
    accuracy = {}
    try:
        for u in unseen_weights:
            for s in seen_weights:
                tagger.unseen_penalty, tagger.seen_word_prior = u, s
                accuracy[u, s] = nlp.evaluate(dev)["pos_acc"]
        assert len({a for (u, s), a in accuracy.items() if u == 0.0}) > 1  # the seen weights differ here
        tagger.unseen_penalty, tagger.seen_word_prior = 0.5, 0.5
        callback = make_choose_word_priors(lambda _: iter(dev), unseen_weights=unseen_weights, seen_weights=seen_weights)
        assert callback(nlp) is nlp
        best = max(accuracy.values())
        assert accuracy[tagger.unseen_penalty, tagger.seen_word_prior] == pytest.approx(best)
        assert tagger.unseen_penalty == next(u for u in unseen_weights if any(
            accuracy[u, s] == pytest.approx(best) for s in seen_weights))
    finally:
        tagger.unseen_penalty, tagger.seen_word_prior = 0.0, 0.0
    with pytest.raises(ValueError, match="seen_weights"):
        make_choose_word_priors(lambda _: iter(dev), seen_weights=[])


def _torch_params(nlp):
    shims = _shims(nlp.get_pipe("mimick_tagger").model)
    return {f"{i}.{k}": v.detach().clone() for i, shim in enumerate(shims) for k, v in shim._model.state_dict().items()}


def test_typos_recipe_continues_a_trained_pipelines_tagger(vectors_dir, tiny_mimick, tmp_path):
    """``init-config --recipe typos --source PIPELINE``: spacy train starts from that pipeline's
    tagger (its weights, labels, vectors table and Mimick model), not from a fresh one, and
    trains its word and character encoders only."""
    from spacy.cli.train import train

    overrides = {"paths.train": str(EWT_TRAIN), "paths.dev": str(EWT_DEV), "corpora.train.limit": 40,
                 "corpora.dev.limit": 20, "training.eval_frequency": 3}
    first = tmp_path / "first.cfg"
    first.write_text(config_text("both"), encoding="utf8")
    train(first, tmp_path / "first", overrides={**overrides, "paths.vectors": str(vectors_dir),
                                                "paths.mimick_model": str(tiny_mimick),
                                                "training.max_steps": 6})
    source = tmp_path / "first" / "model-last"
    config = tmp_path / "continue.cfg"
    result = CliRunner().invoke(app, ["init-config", str(config), "--recipe", "typos", "--source", str(source)])
    assert result.exit_code == 0, result.output
    # Without parameter averages (whose first values thinc draws toward 0), two updates at the
    # start of the warm-up leave the weights within a few 1e-5 of the source's.
    train(config, tmp_path / "continued", overrides={**overrides, "training.max_steps": 2,
                                                     "training.optimizer.use_averages": False})
    before, after = spacy.load(source), spacy.load(tmp_path / "continued" / "model-last")
    assert after.pipe_names == ["mimick_vectors", "mimick_tagger"]
    assert after.get_pipe("mimick_tagger").labels == before.get_pipe("mimick_tagger").labels
    assert after.config["components"]["mimick_vectors"]["spelling_backoff"] is True
    assert after.vocab.vectors.shape == before.vocab.vectors.shape
    old, new = _torch_params(before), _torch_params(after)
    assert old.keys() == new.keys()
    moved = {k: float((new[k] - old[k]).abs().max()) for k in old}
    assert 0 < max(moved.values()) < 1e-3
    # Only the word and character encoders train: the sentence BiLSTM and the heads are the source's.
    frozen = [k for k in old if k.split(".")[1] in ("lstm", "heads")]
    assert frozen and all(moved[k] == 0 for k in frozen)
    assert all(moved[k] > 0 for k in old if k.split(".")[1] == "chars" and k.endswith("weight_ih_l0"))
    doc = after("The zorblaxian cat sat on the mat.")
    assert after.vocab.vectors.sources([doc[1].orth]).tolist() == [MIMICK]


def _same(a, b, modules):
    """Whether ``_torch_params`` snapshots ``a`` and ``b`` agree on every tensor of ``modules``."""
    return all(bool((a[k] == b[k]).all()) for k in a if k.split(".")[1] in modules)


def test_frozen_modules_keep_their_weights_and_the_rest_their_averages(vectors_dir):
    """``spacy_mimick.freeze_tagger_modules.v1``: the named modules stop training; the others
    train, and ``use_params`` swaps in their averages while the frozen ones, which have none,
    keep their values (thinc loads a module's whole state or fails)."""
    freeze = spacy.registry.callbacks.get("spacy_mimick.freeze_tagger_modules.v1")
    fix_random_seed(0)
    nlp = _pipeline(vectors_dir, char_embed=20, char_hidden=32)
    train = _examples(nlp, EWT_TRAIN, 40)
    optimizer = Adam(0.01, use_averages=True)
    nlp.initialize(lambda: train, sgd=optimizer)
    assert freeze(["lstm", "heads"])(nlp) is nlp
    start = _torch_params(nlp)
    for i in range(0, len(train), 4):
        nlp.update(train[i: i + 4], sgd=optimizer)
    trained = _torch_params(nlp)
    assert _same(start, trained, {"lstm", "heads"})
    assert not _same(start, trained, {"chars"}) and not _same(start, trained, {"word_delta"})
    with nlp.use_params(optimizer.averages):
        averaged = _torch_params(nlp)
        nlp("the cat sat .")
    assert _same(start, averaged, {"lstm", "heads"})
    assert not _same(trained, averaged, {"chars"})
    assert _same(trained, _torch_params(nlp), {"lstm", "heads", "chars", "word_delta"})


def test_freezing_names_the_modules_it_can_freeze(vectors_dir):
    freeze = spacy.registry.callbacks.get("spacy_mimick.freeze_tagger_modules.v1")
    nlp = _pipeline(vectors_dir)  # no char->tag BiLSTM
    nlp.initialize(lambda: _examples(nlp, EWT_TRAIN, 5))
    with pytest.raises(ValueError, match=r"'chars' not in mimick_tagger's network: expected some of heads, lstm, word_delta"):
        freeze(["chars", "lstm"])(nlp)
    with pytest.raises(ValueError, match="no 'tagger' in the pipeline"):
        freeze(["lstm"], component="tagger")(nlp)
    with pytest.raises(ValueError, match="a list of module names, got 'lstm'"):
        freeze("lstm")
