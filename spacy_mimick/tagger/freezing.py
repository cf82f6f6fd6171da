"""Training part of a trained tagger: ``spacy_mimick.freeze_tagger_modules.v1``.

spaCy freezes whole components (``[training] frozen_components``); this callback freezes parts
of the ``mimick_tagger``'s torch network, by the names of its modules: ``chars`` (the char->tag
BiLSTM), ``word_delta`` (the training words' fine-tuned rows), ``lstm`` (the sentence BiLSTM)
and ``heads`` (one per attribute, POS first). ``init-config --recipe typos --source PIPELINE``
sets it as ``[initialize.after_init]`` with ``modules = ["lstm", "heads"]``: the continuation on
misspelled text then teaches the word and character encoders to give a misspelled word what the
sentence BiLSTM and the heads already read well, and cannot move the rest. On full EWT, from the
release's tagger, three seeds: -0.07 to -0.08 POS on clean text (McNemar p 0.11 to 0.23) for
+3.07 to +3.14 at 30% typos, where continuing every module gave -0.12 to -0.16 (p 0.019 to
0.079) for +3.74 to +3.82 (docs/typo_tagging.md). From taggers trained on 5,000 tokens (English,
French, Russian) it was the other way round: freezing gained the least with typos.

A frozen parameter gets no gradient, so the optimizer keeps no average of it: the component's
``use_params`` gives it its current (unchanged) value beside the others' averages.
"""
from typing import Callable, List

import spacy
from spacy.language import Language

from .tagger_component import _shims


@spacy.registry.callbacks("spacy_mimick.freeze_tagger_modules.v1")
def make_freeze_tagger_modules(modules: List[str], component: str = "mimick_tagger") -> Callable[[Language], Language]:
    """An ``[initialize.after_init]`` callback: ``component``'s ``modules`` stop training.

    ``after_init`` runs once ``spacy train`` has built or sourced every component, so it
    reaches a sourced tagger too (spaCy resumes those instead of initializing them).
    """
    if isinstance(modules, str) or not modules:
        raise ValueError(f"freeze_tagger_modules: modules is a list of module names, got {modules!r}")

    def freeze(nlp: Language) -> Language:
        if component not in nlp.component_names:
            raise ValueError(f"freeze_tagger_modules: no {component!r} in the pipeline "
                             f"({', '.join(nlp.component_names)})")
        nets = [shim._model for shim in _shims(nlp.get_pipe(component).model)]
        present = {name for net in nets for name, child in net.named_children()
                   if next(child.parameters(), None) is not None}  # not dropout, which has none
        unknown = [name for name in modules if name not in present]
        if unknown:
            raise ValueError(f"freeze_tagger_modules: {', '.join(map(repr, unknown))} not in {component}'s "
                             f"network: expected some of {', '.join(sorted(present))}")
        for net in nets:
            for name, child in net.named_children():
                if name in modules:
                    child.requires_grad_(False)
        return nlp

    return freeze
