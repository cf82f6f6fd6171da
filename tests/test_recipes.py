"""The tagger's configs: the package's templates, the paper's recipe, ``init-config``."""
import json
from pathlib import Path

import pytest
import spacy
from confection import Config
from typer.testing import CliRunner

from spacy_mimick.cli import app
from spacy.tokens import Doc
from spacy.training import Example

from spacy_mimick.tagger.recipes import (FINETUNE, PAPER_RECIPE, RECIPES, TYPOS_RECIPE, VARIANTS, config_text,
                                         tagger_config)

FIXTURE = Path(__file__).parent / "fixtures" / "tagger_configs_pinned.json"


def flat(section, prefix=""):
    out = {}
    for key, value in section.items():
        if isinstance(value, dict):
            out.update(flat(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = value
    return out


@pytest.mark.parametrize("recipe", ["default", "paper"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_run_gets_the_config_it_got_before(variant, recipe):
    """The fixture holds, flattened and uninterpolated, the configs the project trained with
    before they became one template per variant: configs/tagger_<variant>_lowres.cfg (the
    default recipe) and configs/tagger_<variant>.cfg (the paper's), without the initialize
    setting of the removed distillation (``teachers = []``), and with the default recipe's one
    later additions: ``[training.before_to_disk]``, the choice of ``unseen_penalty`` and
    ``seen_word_prior`` on dev, and then (``choose_word_priors.v2``) of
    ``seen_feature_set_prior``, and (``.v3``) of ``spaced_parts_prior``. Any
    change of a value, a key more or a key less fails here."""
    pinned = json.loads(FIXTURE.read_text())[f"{variant}/{recipe}"]
    assert flat(tagger_config(variant, recipe)) == pinned


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_written_config_is_the_recipe(variant, tmp_path):
    for recipe in RECIPES:
        text = config_text(variant, recipe)
        assert flat(Config().from_str(text, interpolate=False)) == flat(tagger_config(variant, recipe))
    assert config_text(variant, "default").startswith("# The joint UPOS + attribute tagger")


def test_paper_recipe_names_only_keys_of_the_template():
    """An override of a key the template lacks would silently add a setting."""
    template = flat(tagger_config("both"))
    sections = {k.rsplit(".", 1)[0] for k in template}
    for dotted in PAPER_RECIPE:
        assert dotted in template or dotted in sections, dotted


@pytest.mark.parametrize("variant", VARIANTS)
def test_typos_recipe_is_the_default_with_misspelled_copies(variant):
    """The typos recipe changes the default recipe in exactly its keys: the training corpus gets
    the augmenter (a new subsection), and the pipelines with ``mimick_vectors`` its spelling
    backoff; the variants without that component get no section of it."""
    default, typos = flat(tagger_config(variant)), flat(tagger_config(variant, "typos"))
    changed = {k for k in default.keys() | typos.keys() if default.get(k, "absent") != typos.get(k, "absent")}
    expected = {"corpora.train.@readers", "corpora.train.augmenter.@augmenters", "corpora.train.augmenter.rate",
                "corpora.train.augmenter.keep_original", "corpora.train.augmenter.seed"}
    if "components.mimick_vectors.factory" in default:
        expected.add("components.mimick_vectors.spelling_backoff")
        assert default["components.mimick_vectors.spelling_backoff"] is False
        assert typos["components.mimick_vectors.spelling_backoff"] is True
    assert changed == expected
    assert typos["corpora.train.augmenter.seed"] == "${system.seed}"
    assert typos["corpora.train.augmenter.rate"] == TYPOS_RECIPE["corpora.train.augmenter"]["rate"]


def test_typos_recipe_reads_each_sentence_clean_then_misspelled(tmp_path):
    """Resolved as ``spacy train`` resolves it, the typos recipe's training corpus yields each
    sentence as it is and then a copy with misspelled words and the same tags (rate 1 here, so
    every eligible word is misspelled); the dev corpus stays clean."""
    data = tmp_path / "train.conllu"
    data.write_text("1\tDogs\tdog\tNOUN\t_\tNumber=Plur\t2\tnsubj\t_\t_\n"
                    "2\tbark\tbark\tVERB\t_\t_\t0\troot\t_\t_\n"
                    "3\tloudly\tloudly\tADV\t_\t_\t2\tadvmod\t_\t_\n\n", encoding="utf8")
    config = tagger_config("both", "typos")
    config["paths"]["train"] = config["paths"]["dev"] = str(data)
    config["corpora"]["train"]["augmenter"]["rate"] = 1.0
    config = config.interpolate()
    assert config["corpora"]["train"]["augmenter"]["seed"] == config["system"]["seed"]
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    train_corpus, dev_corpus = spacy.util.resolve_dot_names(nlp.config, ["corpora.train", "corpora.dev"])
    clean, misspelled = list(train_corpus(nlp))
    assert [t.text for t in clean.reference] == ["Dogs", "bark", "loudly"]
    words = [t.text for t in misspelled.predicted]
    assert len(words) == 3 and all(w != o for w, o in zip(words, ["Dogs", "bark", "loudly"])), words
    assert [t.pos_ for t in misspelled.reference] == ["NOUN", "VERB", "ADV"]
    assert [[t.text for t in eg.reference] for eg in dev_corpus(nlp)] == [["Dogs", "bark", "loudly"]]


def test_init_config_cli_writes_a_config_spacy_can_resolve(tmp_path):
    out = tmp_path / "both.cfg"
    result = CliRunner().invoke(app, ["init-config", str(out), "--variant", "both", "--recipe", "paper"])
    assert result.exit_code == 0, result.output
    data = tmp_path / "data.conllu"
    data.write_text("1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_\n\n", encoding="utf8")
    config = spacy.util.load_config(out, overrides={"paths.train": str(data), "paths.dev": str(data)})
    assert config["components"]["mimick_tagger"]["model"]["@architectures"] == "spacy_mimick.MimickTagger.v1"
    assert config["training"]["optimizer"]["learn_rate"] == 0.005
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    assert nlp.pipe_names == ["mimick_vectors", "mimick_tagger"]


@pytest.mark.parametrize("args, message", [
    (["--variant", "bogus"], "--variant 'bogus': expected one of nochar, mimick, chartag, both"),
    (["--recipe", "v3"], "--recipe 'v3': expected one of default, paper, typos"),
])
def test_init_config_cli_names_what_it_expected(tmp_path, args, message):
    out = tmp_path / "x.cfg"
    result = CliRunner().invoke(app, ["init-config", str(out), *args])
    assert result.exit_code == 1 and message in result.output
    assert not out.exists()


def test_init_config_to_stdout():
    result = CliRunner().invoke(app, ["init-config", "-", "--variant", "nochar"])
    assert result.exit_code == 0
    assert result.output == config_text("nochar")


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_language_brings_its_own_tokenizer(variant):
    """The templates name no tokenizer, so a pipeline trained with ``--nlp.lang zh`` has
    spaCy's Chinese one (and a packaged pipeline splits Chinese text into words or characters,
    not only at spaces and punctuation, as the rule-based tokenizer pinned before did)."""
    from spacy import util
    from spacy.lang.zh import ChineseTokenizer

    for lang, expected in (("zh", ChineseTokenizer), ("en", None)):
        config = tagger_config(variant, "default")
        config["nlp"]["lang"] = lang
        config["paths"]["train"] = config["paths"]["dev"] = "unused.conllu"
        nlp = util.load_model_from_config(config, auto_fill=True, validate=True)
        if expected is not None:
            assert isinstance(nlp.tokenizer, expected)
            assert [t.text for t in nlp.make_doc("猫在窗台上睡觉。")][:2] == ["猫", "在"]
        else:
            assert [t.text for t in nlp.make_doc("Don't stop.")] == ["Do", "n't", "stop", "."]


def test_fixed_typos_misspell_a_sentence_the_same_way_at_every_read():
    """The dev corpus of a fine-tuning run: the same typos at each evaluation and in any order,
    the clean sentence first with ``keep_original``; the training augmenter draws anew."""
    nlp = spacy.blank("en")
    words = ["Several", "thousand", "people", "crossed", "the", "border", "yesterday"]
    other = ["Nobody", "answered", "their", "letters"]
    examples = [Example(Doc(nlp.vocab, words=w), Doc(nlp.vocab, words=w)) for w in (words, other)]
    fixed = spacy.registry.augmenters.get("spacy_mimick.fixed_typos.v1")(rate=0.5, seed=3)
    first = [[t.text for t in eg.predicted] for eg in examples for eg in fixed(nlp, eg)]
    again = [[t.text for t in eg.predicted] for eg in reversed(examples) for eg in fixed(nlp, eg)]
    assert first[0] == words and first[1] != words and len(first[1]) == len(words)
    assert sorted(map(tuple, first)) == sorted(map(tuple, again))
    other_seed = spacy.registry.augmenters.get("spacy_mimick.fixed_typos.v1")(rate=0.5, seed=4)
    assert [[t.text for t in eg.predicted] for eg in other_seed(nlp, examples[0])] != first[:2]
    drawn = spacy.registry.augmenters.get("spacy_mimick.typo_augmenter.v2")(rate=0.5, seed=3)
    reads = {tuple(t.text for t in list(drawn(nlp, examples[0]))[-1].predicted) for _ in range(5)}
    assert len(reads) > 1
    with pytest.raises(ValueError, match="fixed_typos: rate is a share"):
        spacy.registry.augmenters.get("spacy_mimick.fixed_typos.v1")(rate=1.5)


def test_a_source_pipeline_turns_the_typos_recipe_into_its_continuation(tmp_path):
    """The typos recipe with a source: that pipeline's tagger, vectors and Mimick model, a short
    run at a fifth of the rate, dev read clean and with fixed typos; nothing else changes."""
    typos = flat(tagger_config("both", "typos"))
    cont = flat(tagger_config("both", "typos", source="trained/model-best"))
    assert cont["components.mimick_tagger.source"] == "trained/model-best"
    assert not any(k.startswith("components.mimick_tagger.") and k != "components.mimick_tagger.source"
                   for k in cont)
    assert cont["paths.vectors"] == "trained/model-best"
    assert cont["paths.mimick_model"] == str(Path("trained/model-best") / "vocab" / "mimick")
    assert cont["training.max_steps"] == FINETUNE["training.max_steps"]
    assert cont["training.optimizer.learn_rate.initial_rate"] == 0.001
    assert cont["corpora.dev.augmenter.@augmenters"] == "spacy_mimick.fixed_typos.v1"
    changed = {k for k in typos.keys() | cont.keys() if typos.get(k, "absent") != cont.get(k, "absent")}
    expected = {k for k in changed if k.startswith("components.mimick_tagger.")} | {
        "components.mimick_tagger.source", "paths.vectors", "paths.mimick_model",
        "corpora.dev.@readers"} | {k for k in cont if k.startswith("corpora.dev.augmenter.")} | set(
        k for k in FINETUNE if not k.startswith("corpora.dev")) | {
        "initialize.after_init", "initialize.after_init.@callbacks", "initialize.after_init.modules"}
    assert changed == expected
    assert cont["initialize.after_init.modules"] == ["lstm", "heads"]
    with pytest.raises(ValueError, match="continued with the typos recipe, not 'default'"):
        tagger_config("both", "default", source="trained/model-best")


@pytest.mark.parametrize("variant, frozen", [("both", True), ("chartag", True), ("mimick", False), ("nochar", False)])
def test_a_continuation_trains_the_encoders_of_variants_with_characters(variant, frozen):
    """With a char->tag BiLSTM, only the word and character encoders continue; No-Char and
    Mimick, whose misspelled words have no encoder of their own, continue every module."""
    after_init = tagger_config(variant, "typos", source="trained/model-best")["initialize"]["after_init"]
    if frozen:
        assert after_init == {"@callbacks": "spacy_mimick.freeze_tagger_modules.v1", "modules": ["lstm", "heads"]}
    else:
        assert after_init is None


@pytest.mark.parametrize("make, args, message", [
    (None, ["--recipe", "typos"], "expected a trained pipeline's folder with a config.cfg"),
    (["config.cfg"], ["--recipe", "typos"], "the pipeline has no mimick_tagger component to continue"),
    (["config.cfg", "mimick_tagger/"], ["--recipe", "typos"], "no Mimick model in vocab/mimick"),
    (["config.cfg", "mimick_tagger/"], ["--recipe", "paper"], "got --recipe 'paper'"),
    (["config.cfg", "mimick_tagger/", "vocab/mimick/"], ["--recipe", "typos", "--variant", "nochar"],
     "its pipeline is ['mimick_vectors', 'mimick_tagger'], the nochar variant's ['mimick_tagger']; "
     "give --variant mimick or both"),
    (["bad.cfg", "mimick_tagger/"], ["--recipe", "typos"], "cannot read [nlp] pipeline from its config.cfg"),
])
def test_init_config_source_says_what_it_lacks(tmp_path, make, args, message):
    source = tmp_path / "pipeline"
    source.mkdir()
    for name in make or []:
        (source / name.rstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        if name.endswith("/"):
            (source / name).mkdir()
        elif name == "bad.cfg":
            (source / "config.cfg").write_text("[nlp]\nlang = \"en\"\n", encoding="utf8")
        else:  # a Both pipeline's config
            tagger_config("both").to_disk(source / name)
    out = tmp_path / "x.cfg"
    result = CliRunner().invoke(app, ["init-config", str(out), *args, "--source", str(source)])
    assert result.exit_code == 1 and message in " ".join(result.output.split()), result.output
    assert not out.exists()


def test_a_continued_pipeline_keeps_its_language(tmp_path):
    source = tmp_path / "ru_pipeline"
    source.mkdir()
    config = tagger_config("both")
    config["nlp"]["lang"] = "ru"
    config.to_disk(source / "config.cfg")
    assert tagger_config("both", "typos", source=str(source))["nlp"]["lang"] == "ru"
    assert tagger_config("both", "typos", source=str(tmp_path / "absent"))["nlp"]["lang"] == "en"


def test_init_config_source_takes_an_installed_packages_name(tmp_path, monkeypatch):
    """``--source en_mimick_ud_ewt`` reads the package's data folder, the one spacy.load reads."""
    package = tmp_path / "site-packages" / "xx_demo_pkg"
    data = package / "en_demo_pkg-0.1.0"
    for folder in ("mimick_tagger", "vocab/mimick"):
        (data / folder).mkdir(parents=True)
    tagger_config("both").to_disk(data / "config.cfg")
    (package / "meta.json").write_text(json.dumps({"lang": "en", "name": "demo_pkg", "version": "0.1.0"}))
    monkeypatch.setattr(spacy.util, "is_package", lambda name: name == "xx_demo_pkg")
    monkeypatch.setattr(spacy.util, "get_package_path", lambda name: package)
    out = tmp_path / "continue.cfg"
    result = CliRunner().invoke(app, ["init-config", str(out), "--recipe", "typos", "--source", "xx_demo_pkg"])
    assert result.exit_code == 0, result.output
    config = Config().from_disk(out, interpolate=False)
    assert config["components"]["mimick_tagger"]["source"] == str(data)
    assert config["paths"]["mimick_model"] == str(data / "vocab" / "mimick")
    result = CliRunner().invoke(app, ["init-config", str(out), "--recipe", "typos", "--source", "not_installed"])
    assert result.exit_code == 1 and "or the name of an installed pipeline package" in result.output
