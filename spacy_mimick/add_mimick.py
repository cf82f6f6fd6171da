"""Add Mimick to an existing spaCy pipeline (``python -m spacy_mimick add``).

1. Load the pipeline (an installed package or a directory) and check it has a default-mode
   vectors table (floret tables already cover every word).
2. Use the given Mimick model (its width must be the table's) or train one on the pipeline's own
   vectors (one word per row, ``vectors_io.vectors_from_spacy``).
3. Add ``mimick_vectors`` before the first component whose model reads the static vectors (the
   tok2vec that listeners follow, or a component with its own embedding); at the end when none
   does (``token.vector`` is then its only reader).
4. Save, then rewrite the saved config so that the models embed with ``MimickStaticVectors``
   instead of spaCy's ``StaticVectors``: the architectures are spaCy's own with that one layer
   replaced, so the saved weights load unchanged and in-vocabulary inputs are exactly as before.
   OOV tokens, which gave the trained models zero vectors, now give them Mimick's vectors.
   ``mimick_vectors`` is listed in ``[training] annotating_components`` for later retraining.
5. Load the result to check it: the Mimick layers and component widths agree, and no model
   keeps spaCy's ``StaticVectors`` (an architecture this module does not know is reported).
"""
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

import spacy
from spacy.language import Language
from spacy.util import load_config
from spacy.vectors import Mode

from . import __version__
from .mimick_model import MimickModel
from .mimick_trainer import DEFAULT_ARCH, TrainConfig, train_mimick
from .static_vectors import is_mimick_static_vectors, is_spacy_static_vectors
from .user_errors import UserError
from .vectors_io import vectors_from_spacy

COMPONENT = "mimick_vectors"
# spaCy architecture -> (ours, the setting that turns its static vectors on)
SWAPS = {
    "spacy.MultiHashEmbed.v2": ("spacy_mimick.MultiHashEmbed.v1", "include_static_vectors"),
    "spacy.CharacterEmbed.v2": ("spacy_mimick.CharacterEmbed.v1", "include_static_vectors"),
    "spacy.HashEmbedCNN.v2": ("spacy_mimick.HashEmbedCNN.v1", "pretrained_vectors"),
}
STATIC_VECTORS_LAYER = "spacy.StaticVectors.v2"


@dataclass
class AddReport:
    before: Optional[str]  # the component mimick_vectors was put before (None: at the end)
    swapped: List[str] = field(default_factory=list)  # config paths now using Mimick's layer
    kept_static: List[str] = field(default_factory=list)  # components still with StaticVectors
    mimick_layers: int = 0
    trained_words: int = 0


def vector_readers(nlp: Language) -> List[str]:
    """Components whose model has a static vectors layer (spaCy's or Mimick's), in order."""
    names = []
    for name, pipe in nlp.pipeline:
        model = getattr(pipe, "model", None)
        if hasattr(model, "walk") and any(
                is_spacy_static_vectors(n) or is_mimick_static_vectors(n) for n in model.walk()):
            names.append(name)
    return names


def load_pipeline(pipeline: Union[str, Path]) -> Language:
    try:
        return spacy.load(pipeline)
    except OSError as err:
        raise UserError(f"{pipeline}: cannot load the spaCy pipeline ({err})") from None


def check_vectors(nlp: Language, pipeline: Union[str, Path]) -> None:
    vectors = nlp.vocab.vectors
    if COMPONENT in nlp.pipe_names:
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
    return result.model, len(table)


def rewrite_config(config: Dict[str, Any], path: Tuple[str, ...] = ()) -> List[str]:
    """Swap spaCy's static-vectors architectures in ``config`` (a dict, in place) for Mimick's;
    returns the dotted paths changed. Architectures with static vectors off are left alone."""
    changed = []
    arch = config.get("@architectures")
    if arch in SWAPS and config.get(SWAPS[arch][1]):
        config["@architectures"] = SWAPS[arch][0]
        changed.append(".".join(path))
    if config.get("@layers") == STATIC_VECTORS_LAYER:
        del config["@layers"]
        config["@architectures"] = "spacy_mimick.MimickStaticVectors.v1"
        changed.append(".".join(path))
    for key, value in config.items():
        if isinstance(value, dict):
            changed += rewrite_config(value, path + (key,))
    return changed


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
            nlp, train_config or TrainConfig(), arch or DEFAULT_ARCH, limit=limit, progress=progress,
            device=device)
    elif model.width != width:
        raise UserError(f"the Mimick model predicts {model.width}-dimensional vectors but {pipeline}'s "
                        f"vectors are {width}-dimensional: train Mimick on this pipeline's vectors "
                        f"(leave out --model)")
    readers = vector_readers(nlp)
    before = readers[0] if readers else None
    pipe = nlp.add_pipe(COMPONENT, before=before) if before else nlp.add_pipe(COMPONENT, last=True)
    pipe.set_model(model)
    nlp.meta["name"] = nlp.meta.get("name", "pipeline") + name_suffix
    requirement = f"spacy-mimick>={__version__}"
    requirements = [r for r in nlp.meta.get("requirements", []) if not r.startswith("spacy-mimick")]
    nlp.meta["requirements"] = requirements + [requirement]
    nlp.meta["description"] = (nlp.meta.get("description", "") + f" With Mimick vectors for OOV tokens "
                               f"(spacy-mimick {__version__}, added to {pipeline}).").strip()
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    nlp.to_disk(output_dir)
    config = load_config(output_dir / "config.cfg", interpolate=False)
    swapped = rewrite_config(config["components"], ("components",))
    annotating = list(config["training"].get("annotating_components", []))
    if COMPONENT not in annotating:
        config["training"]["annotating_components"] = [COMPONENT] + annotating
    config.to_disk(output_dir / "config.cfg")
    loaded = spacy.load(output_dir)
    report = AddReport(before=before, swapped=swapped, trained_words=trained_words)
    for name, pipe in loaded.pipeline:
        node_model = getattr(pipe, "model", None)
        if not hasattr(node_model, "walk"):
            continue
        for node in node_model.walk():
            if is_spacy_static_vectors(node):
                report.kept_static.append(name)
                break
            if is_mimick_static_vectors(node):
                report.mimick_layers += 1
                if node.get_dim("nM") != width:
                    raise UserError(f"{name}: its Mimick layer reads {node.get_dim('nM')}-d vectors, the "
                                    f"table is {width}-d")
    if loaded.get_pipe(COMPONENT).model.width != width:
        raise UserError(f"{COMPONENT} predicts {loaded.get_pipe(COMPONENT).model.width}-d vectors, "
                        f"the table is {width}-d")
    return loaded, report


def package_pipeline(pipeline_dir: Path, package_dir: Path) -> List[Path]:
    """``spacy package`` the saved pipeline into ``package_dir``; returns the built archives."""
    from spacy.cli.package import has_build, has_wheel, package

    package_dir.mkdir(parents=True, exist_ok=True)
    package(pipeline_dir, package_dir, create_sdist=True,
            create_wheel=has_wheel() or has_build(), force=True, silent=True)
    return sorted(p for p in package_dir.rglob("dist/*") if p.is_file())
