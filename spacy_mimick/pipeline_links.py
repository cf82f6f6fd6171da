"""Links between the ``mimick_vectors`` component and the layers that read its vectors, and the
warning about spaCy dropping vector hooks.

``MimickStaticVectors`` (a thinc layer inside tok2vec) is built from a config and never sees the
``Language`` object, so it cannot ask the pipeline for its ``mimick_vectors`` component. The
component registers itself here under its vocab when it gets its Mimick model (``initialize``,
``from_disk``, ``from_bytes``) and whenever it annotates docs; the layer looks up the component of
its docs' vocab. A doc's vocab is the pipeline's, so this finds the component of the same
pipeline. Entries hold weak references: a dropped pipeline is not kept alive by this table.
"""
import multiprocessing
import warnings
import weakref
from typing import Any, Dict, Optional

# id(vocab) -> weak reference to the component
_COMPONENTS: Dict[int, "weakref.ReferenceType"] = {}


class MimickHooksWarning(UserWarning):
    """Mimick vectors stored in ``doc.user_data`` are there, but ``token.vector`` will not show
    them (spaCy dropped the doc's vector hooks)."""


class MimickLayerWarning(UserWarning):
    """``MimickStaticVectors`` got docs with OOV tokens and no Mimick vectors to give them."""


def register_component(component) -> None:
    """Make ``component`` (a ``MimickVectors``) the Mimick source of its vocab's layers."""
    current = _COMPONENTS.get(id(component.vocab))
    if current is None or current() is not component:
        _COMPONENTS[id(component.vocab)] = weakref.ref(component)


def component_for(vocab) -> Optional[Any]:
    """The ``mimick_vectors`` component (with a Mimick model) sharing ``vocab``, else None."""
    entry = _COMPONENTS.get(id(vocab))
    if entry is None:
        return None
    component = entry()
    # ``vocab`` may reuse the id of a collected one: the component must hold this very vocab.
    if component is None or component.vocab is not vocab or component.model is None:
        return None
    return component


_warned_worker = False


def warn_if_worker(name: str) -> None:
    """Warn once per process when the component runs in a child process.

    ``nlp.pipe(n_process=N)`` runs the pipeline in worker processes and sends each doc back with
    ``Doc.to_bytes``, which keeps ``user_data`` (the Mimick vectors) but drops ``user_hooks``
    (spaCy's warning W109): in the main process ``token.vector`` of an OOV token is then zeros
    again. The worker is the only place that knows this is about to happen.
    """
    global _warned_worker
    if _warned_worker or multiprocessing.parent_process() is None:
        return
    _warned_worker = True
    warnings.warn(
        f"[{name}] running in a worker process (nlp.pipe(n_process=...)): spaCy sends docs back "
        f"without their vector hooks (W109), so in the main process token.vector, has_vector "
        f"and similarity of OOV tokens fall back to the static table (zeros) until you call "
        f"spacy_mimick.restore_vector_hooks(doc). The Mimick vectors themselves are kept "
        f"(doc.user_data, token._.mimick_vector), and MimickStaticVectors / mimick_tagger read "
        f"them without hooks.",
        MimickHooksWarning,
        stacklevel=3,
    )
