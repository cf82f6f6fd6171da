"""Add Mimick to an existing spaCy pipeline (``python -m spacy_mimick add``).

1. Load the pipeline (an installed package or a directory) and check it has a default-mode
   vectors table (floret tables already cover every word).
2. Use the given Mimick model (its width must be the table's) or train one on the pipeline's own
   vectors (one word per row, ``vectors_io.vectors_from_spacy``).
3. Add ``mimick_vectors`` first: it makes the vocab's vectors ``MimickVectors`` (the same table,
   plus Mimick's prediction for every word it lacks), so spaCy's own ``StaticVectors`` in the
   tok2vec, tagger, parser and NER, and ``token.vector``, read Mimick's vectors for OOV tokens.
   No weight and no line of the models' config changes: in-vocabulary inputs are exactly as
   before, OOV tokens, which gave the trained models zero vectors, now give them Mimick's.
4. Save into a temporary folder beside the output and move it into place, so an interrupted or
   failed run (a signal, a full disk) leaves no half-written pipeline; load the result to check it.
"""
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

import spacy
from spacy.language import Language
from spacy.ml.staticvectors import forward as static_vectors_forward
from spacy.vectors import Mode

from .. import __version__
from ..atomic import atomic_directory
from .mimick_model import MimickModel
from .mimick_trainer import DEFAULT_ARCH, STATIC_VECTORS_CONFIG, TrainConfig, train_mimick
from .mimick_vectors import MimickVectors
from ..errors import UserError
from .vectors_io import vectors_from_spacy

COMPONENT = "mimick_vectors"


@dataclass
class AddReport:
    readers: List[str]  # components whose models read the static vectors (now Mimick's too)
    trained_words: int = 0


def vector_readers(nlp: Language) -> List[str]:
    """Components whose model has spaCy's static vectors layer, in order."""
    return [name for name, pipe in nlp.pipeline
            if hasattr(getattr(pipe, "model", None), "walk")
            and any(node._func is static_vectors_forward for node in pipe.model.walk())]


def load_pipeline(pipeline: Union[str, Path]) -> Language:
    try:
        return spacy.load(pipeline)
    except OSError as err:
        raise UserError(f"{pipeline}: cannot load the spaCy pipeline ({err})") from None


def check_vectors(nlp: Language, pipeline: Union[str, Path]) -> None:
    vectors = nlp.vocab.vectors
    if COMPONENT in nlp.pipe_names or isinstance(vectors, MimickVectors):
        raise UserError(f"{pipeline} already has a {COMPONENT} component")
    if vectors.mode == Mode.floret:
        raise UserError(f"{pipeline} has floret vectors, which give every word a vector from its "
                        f"subwords: there are no OOV tokens for Mimick")
    if not vectors.shape[0]:
        raise UserError(f"{pipeline} has no static vectors: Mimick predicts vectors in the space of a "
                        f"pipeline's vectors table (for a pipeline without one, see mimick_only in "
                        f"docs/spacy_models.md)")


def train_on_pipeline(nlp: Language, config: TrainConfig, arch: Dict[str, Any], limit: int = 0,
                      progress: bool = False, device: Optional[Any] = None) -> Tuple[MimickModel, int]:
    table = vectors_from_spacy(nlp)
    if limit:
        table = table.subset(list(range(min(limit, len(table)))))
    result = train_mimick(table, arch, config, progress=progress, device=device)
    if result.interrupted:  # Ctrl-C or SIGTERM: stop, rather than add a half-trained model
        raise KeyboardInterrupt
    return result.model, len(table)


def add_mimick(
    pipeline: Union[str, Path], output_dir: Path, *, model: Optional[MimickModel] = None,
    train_config: Optional[TrainConfig] = None, arch: Optional[Dict[str, Any]] = None,
    limit: int = 0, name_suffix: str = "_mimick", progress: bool = False, device: Optional[Any] = None,
) -> Tuple[Language, AddReport]:
    """Add Mimick to ``pipeline`` and save the result to ``output_dir``; returns the reloaded
    pipeline and what was done. See the module docstring. ``device``: where a Mimick model is
    trained (``train_mimick``'s)."""
    nlp = load_pipeline(pipeline)
    check_vectors(nlp, pipeline)
    width = nlp.vocab.vectors.shape[1]
    trained_words = 0
    if model is None:
        model, trained_words = train_on_pipeline(
            nlp, train_config or STATIC_VECTORS_CONFIG, arch or DEFAULT_ARCH, limit=limit, progress=progress,
            device=device)
    elif model.width != width:
        raise UserError(f"the Mimick model predicts {model.width}-dimensional vectors but {pipeline}'s "
                        f"vectors are {width}-dimensional: train Mimick on this pipeline's vectors "
                        f"(leave out --model)")
    nlp.add_pipe(COMPONENT, first=True).set_model(model)
    nlp.meta["name"] = nlp.meta.get("name", "pipeline") + name_suffix
    requirement = f"spacy-mimick>={__version__}"
    requirements = [r for r in nlp.meta.get("requirements", []) if not r.startswith("spacy-mimick")]
    nlp.meta["requirements"] = requirements + [requirement]
    nlp.meta["description"] = (nlp.meta.get("description", "") + f" With Mimick vectors for OOV tokens "
                               f"(spacy-mimick {__version__}, added to {pipeline}).").strip()
    save_pipeline(nlp, Path(output_dir))
    loaded = spacy.load(output_dir)
    vectors = loaded.vocab.vectors
    if not isinstance(vectors, MimickVectors) or vectors.model is None or vectors.model.width != width:
        raise UserError(f"{output_dir}: the saved pipeline did not load back with {width}-d Mimick vectors")
    return loaded, AddReport(readers=vector_readers(loaded), trained_words=trained_words)


def _refuse_written(output_dir: Path) -> None:
    if output_dir.exists() and (not output_dir.is_dir() or any(output_dir.iterdir())):
        raise UserError(f"{output_dir}: something was written there while the pipeline was being "
                        f"made; refusing to replace it (expected a new or empty folder)")


def save_pipeline(nlp: Language, output_dir: Path) -> None:
    """``nlp.to_disk`` into a temporary folder beside ``output_dir``, renamed into place at the
    end (``atomic.atomic_directory``: a lock on the folder, debris of killed saves removed);
    ``output_dir`` must not exist or be empty, which is checked again under the lock. On any
    failure (a full disk, Ctrl-C, SIGTERM) nothing is left behind and ``output_dir`` is as it was."""
    output_dir.parent.mkdir(parents=True, exist_ok=True)
    try:
        with atomic_directory(output_dir, check=_refuse_written) as tmp:
            nlp.to_disk(tmp)
    except OSError as err:
        raise UserError(f"{output_dir}: could not write the pipeline ({err.strerror or err}); "
                        f"nothing was written there") from None


def package_pipeline(pipeline_dir: Path, package_dir: Path) -> List[Path]:
    """``spacy package`` the saved pipeline into ``package_dir``; returns the built archives."""
    from spacy.cli.package import has_build, has_wheel, package

    package_dir.mkdir(parents=True, exist_ok=True)
    package(pipeline_dir, package_dir, create_sdist=True,
            create_wheel=has_wheel() or has_build(), force=True, silent=True)
    return sorted(p for p in package_dir.rglob("dist/*") if p.is_file())
