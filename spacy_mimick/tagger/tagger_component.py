"""The ``mimick_tagger`` pipeline component: joint UPOS + morphological attribute tagging.

One softmax head per attribute (POS first), every attribute predicted for every token with
a NONE value, as in Pinter et al. (2017), section 4. The labels (POS set, attribute ->
values), the training vocabulary and the character vocabulary come from the training data
in :meth:`MimickTagger.initialize`.
"""
import unicodedata
from collections import Counter
from functools import partial
from itertools import islice
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
import srsly
from spacy import util
from spacy.errors import Errors
from spacy.language import Language
from spacy.morphology import Morphology
from spacy.parts_of_speech import IDS as POS_IDS
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, torch2xp
from thinc.types import Floats2d, Ints2d

from ..malloc import fix_mmap_threshold
from ..threads import AUTO, torch_threads
from .pytorch_tagger_model import (
    MimickTaggerNet, adversarial_perturbation, head_offsets, load_state_safely,
)
from . import schedules  # noqa: F401  registers the lowres configs' schedule (also an entry point)
from ..ud.scorer import score_attributes
from .tagger_model import (
    corrected_texts, get_train_words, has_pretrained_vector, set_tagger_shapes, set_tagger_tables,
    through_components_before,
)
from .feature_sets import (
    SeenSetPrior, decode_feature_sets, feature_set_counts_by_form, feature_set_table, feature_sets_by_pos,
)
from .seen_words import part_pos_counts, pos_counts_by_form, seen_log_prior, seen_rows, seen_shift, spaced_parts_shift
from .unseen_words import hapax_pos_log_prior, penalty_vector

POS_HEAD = "POS"
NONE = 0  # index of the NONE value in every attribute head
IGNORE = -1  # gold id of a head that has no usable annotation on a token
LOSSES = ("sum", "weighted")

# The default network is the best measured one (docs: MimickTagger.v3, Both variant: Mimick's
# prediction for every token beside its word vector, and char->tag's character BiLSTM). It reads
# Mimick's predictions, so the pipeline's vectors must be ``MimickVectors`` with a model (a
# ``mimick_vectors`` component installs them; initialize says so otherwise). The paper's network
# stays reachable by config: ``@architectures = "spacy_mimick.MimickTagger.v1"``
# (``python -m spacy_mimick init-config OUT --recipe paper``).
default_model_config = """
[model]
@architectures = "spacy_mimick.MimickTagger.v3"
hidden_width = 256
depth = 2
dropout = 0.5
fine_tune = true
lowercase_backoff = true
unk_key = "<UNK>"
word_width = 64
char_embed = 20
char_hidden = 128
case_features = true
word_dropout = 0.1
mimick_features = true
"""
DEFAULT_MIMICK_TAGGER_MODEL = Config().from_str(default_model_config)["model"]


@Language.factory(
    "mimick_tagger",
    assigns=["token.pos", "token.morph"],
    default_config={
        "model": DEFAULT_MIMICK_TAGGER_MODEL,
        "loss": "sum",
        "label_smoothing": 0.0,
        "adversarial": 0.0,
        "n_threads": AUTO,
        "spelling_correction": True,
        "seen_feature_sets": True,
        "scorer": {"@scorers": "spacy_mimick.attribute_scorer.v1"},
    },
    default_score_weights={
        "pos_acc": 0.5,
        "attr_micro_f": 0.5,
        "morph_acc": None,
        "attr_micro_p": None,
        "attr_micro_r": None,
        "attr_macro_f": None,
        "attr_per_type": None,
        "oov_train_pos_acc": None,
    },
)
def make_mimick_tagger(
    nlp: Language, name: str, model: Model, loss: str, scorer: Optional[Callable],
    label_smoothing: float = 0.0,
    adversarial: float = 0.0,
    n_threads: int = AUTO,
    spelling_correction: bool = True,
    seen_feature_sets: bool = True,
    distillation: float = 0.0,
    decode: str = "heads",
) -> "MimickTagger":
    """Create a MimickTagger.

    loss (str): "sum" adds the heads' NLL; "weighted" weights each attribute by the
        share of training tokens on which it is not NONE (POS weight 1).
    label_smoothing (float): As spaCy's tagger's: each head's target puts
        ``1 - label_smoothing`` on the gold value and spreads ``label_smoothing`` evenly
        over the head's other values. 0.0 (the default) is the plain NLL.
    adversarial (float): Adversarial training (Yasunaga et al., 2018, for POS taggers): each
        update also learns from the same batch with every token's input (word vector, char->tag
        features, case classes, Mimick's spelling input) moved by ``adversarial`` times its own
        norm in the direction that raises the loss most, and takes both gradients in one
        step. Costs a second forward and backward pass per batch. 0.0 (the default) is off.
    n_threads (int): torch CPU threads for prediction, the caller's setting restored after each
        batch. -1 (the default): ``OMP_NUM_THREADS`` where set, else as many as the cores other
        processes leave free, measured at run time (``spacy_mimick/threads.py``), the best or level with the best of 1 thread and
        torch's own setting, idle and busy (docs/speed.md); N: N threads; 0: torch's own setting
        (one thread per core, many times slower when another process keeps a core busy).
        Training (``spacy train``) follows torch's setting (``OMP_NUM_THREADS``).
    spelling_correction (bool): Where the vectors' spelling backoff (``mimick_vectors``'
        ``spelling_backoff``) takes a token for a misspelling of a table word, read that word
        instead (in the token's case): its characters, training-vocabulary row, Mimick's
        features and table vector, where the backoff alone changes only the vector. True (the
        default); no effect while the backoff is off (the project's trained recipes turn it
        off). EWT, 5,000 tokens: +0.8 POS over the backoff alone at 30% typos, nothing lost on
        clean text (docs/typo_tagging.md).
    seen_feature_sets (bool): Decode a token's attributes as one feature set that the training
        data shows with its (decoded) POS, the one whose heads' log-probabilities sum highest,
        instead of each head on its own (``spacy_mimick/tagger/feature_sets.py``). True (the
        default): UFeats exact match +0.2 to +1.6 on nine pipelines, the paper's attribute
        micro-F1 -0.27 to +0.13, POS unchanged (docs/low_resource.md). Pipelines saved before
        have no sets and decode each head on its own.
    scorer (Optional[Callable]): Called as ``scorer(examples, train_words=..., in_vectors=...)``
        (see :meth:`MimickTagger.score`).
    distillation, decode: removed (distillation from trained teachers and decoding to the
        POS + features combinations seen in training measured as noise or a loss,
        docs/low_resource.md). Pipelines saved with them at their off values (0.0, "heads")
        still load; any other value is an error.
    """
    check_removed_settings(name, distillation=distillation, decode=decode)
    return MimickTagger(
        nlp.vocab, model, name, loss=loss, scorer=scorer, label_smoothing=label_smoothing,
        adversarial=adversarial, n_threads=n_threads, spelling_correction=spelling_correction,
        seen_feature_sets=seen_feature_sets,
    )


def check_removed_settings(name: str, *, distillation: float = 0.0, decode: str = "heads") -> None:
    """Refuse the removed settings at any value but their off one (which saved configs hold)."""
    if distillation:
        raise ValueError(
            f"{name}: distillation was removed (it measured as noise: +0.01 / -0.01 POS, "
            f"docs/low_resource.md); delete the setting, or set it to 0.0")
    if decode != "heads":
        raise ValueError(
            f"{name}: decode = {decode!r} was removed (bundles measured no gain, a loss at 1,000 "
            f"tokens, docs/low_resource.md); each head's most probable value is the only decoding: "
            f"delete the setting")


def _all_punctuation(form: str) -> bool:
    """Every character of ``form`` (non-empty) is Unicode punctuation (categories P*)."""
    return bool(form) and all(unicodedata.category(char).startswith("P") for char in form)


class MimickTagger(TrainablePipe):
    """Joint tagger of UPOS (``token.pos``) and morphological features (``token.morph``).

    Gold annotation at update time: a token with neither POS nor features is unannotated
    and ignored; an attribute missing from a token's features is NONE. A POS value or an
    attribute value that was not seen in initialize is ignored for that head (it has no
    output unit to learn; teaching NONE instead would be wrong), and so is an attribute
    that was not seen at all.
    """

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "mimick_tagger",
        *,
        loss: str = "sum",
        scorer: Optional[Callable] = score_attributes,
        label_smoothing: float = 0.0,
        adversarial: float = 0.0,
        n_threads: int = AUTO,
        spelling_correction: bool = True,
        seen_feature_sets: bool = True,
    ):
        self.n_threads = n_threads
        self.spelling_correction = bool(spelling_correction)
        self.seen_feature_sets = bool(seen_feature_sets)
        if loss not in LOSSES:
            raise ValueError(f"mimick_tagger: loss must be one of {LOSSES}, got {loss!r}")
        # Below 0.5 the gold value keeps the largest target share in every head (an
        # attribute head has at least 2 values, NONE and one more); thinc's bound is (K-1)/K.
        if not 0.0 <= label_smoothing < 0.5:
            raise ValueError(f"mimick_tagger: label_smoothing must be in [0, 0.5), got {label_smoothing!r}")
        if not 0.0 <= adversarial < 1.0:
            raise ValueError(f"mimick_tagger: adversarial must be in [0, 1), got {adversarial!r}")
        self.vocab = vocab
        self.model = model
        self.name = name
        self._rehearsal_model = None
        self._seen_log_prior: Optional[Tuple[Dict[str, Dict[str, int]], List[str], Tuple[Dict[str, int], numpy.ndarray]]] = None
        self._feature_set_table: Optional[Tuple[Any, Any, Dict[int, numpy.ndarray]]] = None
        self._seen_set_prior: Optional[Tuple[Any, Any, SeenSetPrior]] = None
        self._parts_log_prior: Optional[Tuple[Any, List[str], Tuple[Dict[str, int], numpy.ndarray]]] = None
        cfg: Dict[str, Any] = {
            "labels_pos": [],
            "labels_morph": {},
            "attr_weights": {},
            "loss": loss,
            "label_smoothing": float(label_smoothing),
            "adversarial": float(adversarial),
            "shapes": {},
            "unseen_pos_log_prior": {},
            "unseen_penalty": 0.0,
            "seen_pos_counts": {},
            "seen_word_prior": 0.0,
            "feature_sets_by_pos": {},
            "seen_feature_set_counts": {},
            "seen_feature_set_prior": 0.0,
            "spaced_parts_prior": 0.0,
        }
        self.cfg = dict(sorted(cfg.items()))
        self.scorer = scorer

    @property
    def labels(self) -> Tuple[str, ...]:
        """Every output value as a ``FIELD=VALUE`` string, POS first (NONE not included)."""
        pos = [f"{POS_HEAD}={value}" for value in self.cfg["labels_pos"]]
        morph = [
            f"{attr}{Morphology.FIELD_SEP}{value}"
            for attr, values in self.cfg["labels_morph"].items()
            for value in values
        ]
        return tuple(pos + morph)

    @property
    def label_data(self) -> Dict[str, Any]:
        """The label sets, as ``initialize(labels=...)`` takes them (``spacy init labels``)."""
        return {"pos": list(self.cfg["labels_pos"]), "morph": dict(self.cfg["labels_morph"])}

    @property
    def train_words(self) -> List[str]:
        """Word forms seen in training (the paper's OOV = not among these)."""
        return get_train_words(self.model)

    @property
    def unseen_penalty(self) -> float:
        """On a word outside the training vocabulary, each POS that falls on new words less
        often than the average tag is lowered by this weight times log(P(new | tag) / P(new)),
        estimated in initialize from the training data's hapax legomena
        (``spacy_mimick/tagger/unseen_words.py``): a language's closed classes, as its own
        sample shows them. Saved with the component (its cfg); 0.0 is off. The default recipe
        chooses it on dev as it trains (``spacy_mimick.choose_unseen_penalty.v1``)."""
        return float(self.cfg.get("unseen_penalty", 0.0))

    @unseen_penalty.setter
    def unseen_penalty(self, weight: float) -> None:
        self._set_weight("unseen_penalty", weight)

    @property
    def seen_word_prior(self) -> float:
        """On a word seen in training, each POS score is raised by this weight times
        log((c_t + p_t) / (n + 1)): c_t of the word's n annotated training tokens had the tag,
        p_t is the tag's share of the training data (``spacy_mimick/tagger/seen_words.py``; the
        counts are kept in the cfg by initialize). Saved with the component; 0.0 is off. The
        default recipe chooses it on dev as it trains (``spacy_mimick.choose_word_priors.v1``)."""
        return float(self.cfg.get("seen_word_prior", 0.0))

    @seen_word_prior.setter
    def seen_word_prior(self, weight: float) -> None:
        self._set_weight("seen_word_prior", weight)

    @property
    def seen_feature_set_prior(self) -> float:
        """On a word seen in training, with ``seen_feature_sets``, each candidate feature set is
        raised by this weight times log((c_s + q_s) / (n + 1)): c_s of the word's n annotated
        training tokens had the set, q_s is the set's share of the training data
        (``feature_sets.SeenSetPrior``; the counts are kept in the cfg by initialize). Saved with
        the component; 0.0 is off. The default recipe chooses it on dev as it trains
        (``spacy_mimick.choose_word_priors.v2``)."""
        return float(self.cfg.get("seen_feature_set_prior", 0.0))

    @seen_feature_set_prior.setter
    def seen_feature_set_prior(self, weight: float) -> None:
        self._set_weight("seen_feature_set_prior", weight)

    @property
    def spaced_parts_prior(self) -> float:
        """On a word outside the training vocabulary written with spaces (``hàng xóm``), each POS
        score is raised by this weight times the mean over its parts of log((c_t + p_t) / (n + 1)),
        c_t of the n training tokens of the words that contain the part having the tag
        (``seen_words.part_pos_counts``, from the counts ``seen_word_prior`` keeps). Saved with
        the component; 0.0 is off. The default recipe chooses it on dev as it trains
        (``spacy_mimick.choose_word_priors.v3``)."""
        return float(self.cfg.get("spaced_parts_prior", 0.0))

    @spaced_parts_prior.setter
    def spaced_parts_prior(self, weight: float) -> None:
        self._set_weight("spaced_parts_prior", weight)

    def _set_weight(self, key: str, weight: float) -> None:
        """A decoding weight of the cfg (``unseen_penalty``, ``seen_word_prior``,
        ``seen_feature_set_prior``, ``spaced_parts_prior``): >= 0."""
        if not weight >= 0:
            raise ValueError(f"{self.name}: {key} must be >= 0, got {weight!r}")
        self.cfg[key] = float(weight)

    def seen_log_prior(self) -> Tuple[Dict[str, int], numpy.ndarray]:
        """(form -> row, matrix) of the training words' log POS prior, columns in the order of
        the POS labels (:func:`~spacy_mimick.tagger.seen_words.seen_log_prior`), built from the
        cfg's counts once (empty for a pipeline saved before the counts existed)."""
        counts = self.cfg.get("seen_pos_counts") or {}
        labels = list(self.cfg["labels_pos"])
        cached = self._seen_log_prior
        # The cache keeps the counts object itself: a cfg loaded or initialized again brings new ones.
        if cached is None or cached[0] is not counts or cached[1] != labels:
            cached = self._seen_log_prior = (counts, labels, seen_log_prior(counts, labels))
        return cached[2]

    def parts_log_prior(self) -> Tuple[Dict[str, int], numpy.ndarray]:
        """(part -> row, matrix): :meth:`seen_log_prior`'s matrix over the parts of the training
        words (``seen_words.part_pos_counts``), for ``spaced_parts_prior``; built once per cfg."""
        counts = self.cfg.get("seen_pos_counts") or {}
        labels = list(self.cfg["labels_pos"])
        cached = self._parts_log_prior
        if cached is None or cached[0] is not counts or cached[1] != labels:
            cached = self._parts_log_prior = (counts, labels, seen_log_prior(part_pos_counts(counts), labels))
        return cached[2]

    @property
    def _heads(self) -> List[Tuple[str, List[str]]]:
        """(name, values) of each head in output order; attribute values start with NONE."""
        heads = [(POS_HEAD, list(self.cfg["labels_pos"]))]
        for attr, values in self.cfg["labels_morph"].items():
            heads.append((attr, ["NONE"] + list(values)))
        return heads

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Dict[str, Any]] = None,
        teachers: Optional[List[str]] = None,
    ) -> None:
        """Collect labels and vocabularies from the training data and build the model.

        labels (Optional[Dict]): ``{"pos": [...], "morph": {attr: [values]}}`` as written
            by ``spacy init labels``; collected from the data when None.
        teachers: removed with ``distillation``; configs written before hold ``teachers = []``,
            which is accepted.
        """
        validate_get_examples(get_examples, "MimickTagger.initialize")
        if teachers:
            raise ValueError(f"{self.name}: teachers were removed with distillation; delete "
                             f"[initialize.components.{self.name}] teachers")
        self._check_mimick_features(nlp)
        words = set()
        pos_counts: Counter = Counter()
        feat_counts: Counter = Counter()  # (attr, value) -> tokens
        attr_counts: Counter = Counter()  # attr -> tokens with any value of it
        n_annotated = 0
        tagged_forms: List[Tuple[str, str]] = []
        tagged_feats: List[Tuple[str, Dict[str, str]]] = []
        for example in get_examples():
            words.update(token.text for token in example.predicted)
            tagged_forms.extend((token.text, token.pos_) for token in example.reference)
            for token in example.reference:
                feats = token.morph.to_dict()
                tagged_feats.append((token.pos_, feats))
                if not token.pos_ and not feats:
                    continue  # unannotated, as in _gold_ids
                n_annotated += 1
                pos_counts[token.pos_] += 1
                feat_counts.update(feats.items())
                attr_counts.update(feats.keys())
        if labels is None:
            labels = {"pos": [pos for pos in pos_counts if pos], "morph": {}}
            for attr, value in feat_counts:
                labels["morph"].setdefault(attr, []).append(value)
        unknown_pos = sorted(pos for pos in labels["pos"] if pos not in POS_IDS)
        if unknown_pos:
            raise ValueError(
                f"mimick_tagger: POS values {unknown_pos} are not in spaCy's UPOS set "
                f"(spacy.parts_of_speech.IDS); map them to UPOS before training"
            )
        if not labels["pos"]:
            raise ValueError(Errors.E143.format(name=self.name))
        self.cfg["labels_pos"] = sorted(set(labels["pos"]))
        self.cfg["labels_morph"] = {
            attr: sorted(set(values)) for attr, values in sorted(labels["morph"].items())
        }
        # Weighted loss: the share of annotated tokens on which the attribute is not NONE.
        self.cfg["attr_weights"] = {
            attr: attr_counts[attr] / max(n_annotated, 1) for attr in self.cfg["labels_morph"]
        }
        self.cfg["unseen_pos_log_prior"] = hapax_pos_log_prior(tagged_forms)
        self.cfg["seen_pos_counts"] = pos_counts_by_form(tagged_forms)
        self.cfg["feature_sets_by_pos"] = feature_sets_by_pos(tagged_feats)
        self.cfg["seen_feature_set_counts"] = feature_set_counts_by_form(
            (form, pos, feats) for (form, _), (pos, feats) in zip(tagged_forms, tagged_feats))
        # Add-one smoothed frequencies of each head's values: its initial output biases.
        value_counts = [[pos_counts[pos] for pos in self.cfg["labels_pos"]]]
        for attr, values in self.cfg["labels_morph"].items():
            n_none = n_annotated - attr_counts[attr]
            value_counts.append([n_none] + [feat_counts[(attr, value)] for value in values])
        priors = [(numpy.asarray(c) + 1.0) / (numpy.sum(c) + len(c)) for c in value_counts]
        chars = set()
        for word in words:
            chars.update(word)
        mimick_width = self._mimick_static_width(nlp)
        self.cfg["shapes"] = set_tagger_tables(
            self.model, vectors=self.vocab.vectors, words=words, chars=chars,
            mimick_width=mimick_width,
        )
        self._set_shapes(head_priors=priors)
        doc_sample = [eg.predicted for eg in islice(get_examples(), 10)]
        if not doc_sample:
            raise ValueError(Errors.E923.format(name=self.name))
        uses_mimick = self.model.get_ref("featurizer").attrs["mimick_features"] or mimick_width
        if uses_mimick and nlp is not None:
            # The sample goes through the featurizer, which needs the Mimick predictions
            # that the components before this one (mimick_vectors) add.
            doc_sample = through_components_before(nlp, self.name, doc_sample)
        self._set_featurizer()
        self.model.initialize(X=doc_sample)

    def _check_mimick_features(self, nlp: Optional[Language]) -> None:
        """Refuse to initialize a model that reads Mimick's prediction for every token
        (``mimick_features``, the default network's) when the pipeline's vectors have no
        Mimick model: training would fail on the first batch with a less helpful message."""
        if nlp is None or not self.model.get_ref("featurizer").attrs["mimick_features"]:
            return
        from ..vectors.mimick_vectors import MimickVectors

        if isinstance(self.vocab.vectors, MimickVectors) and self.vocab.vectors.model is not None:
            return
        raise ValueError(
            f"{self.name}: its model reads Mimick's prediction for every token "
            f"(mimick_features = true, the default MimickTagger.v3 network), but the pipeline's "
            f"vectors have no Mimick model. Add mimick_vectors, e.g. "
            f'nlp.add_pipe("mimick_vectors", before="{self.name}", config={{"predict_all": True}}) '
            f"initialized with a Mimick model of this pipeline's vectors (and list it in "
            f"[training] annotating_components), or set mimick_features = false in "
            f"[components.{self.name}.model]"
        )

    def _mimick_static_width(self, nlp: Optional[Language]) -> Optional[int]:
        """Mimick's width when its vectors are this tagger's static vectors: a
        ``mimick_vectors`` component runs before the tagger and the pipeline has no vectors
        table, or it is in ``mimick_only`` mode. None otherwise (the table's vectors, or none:
        No-Char and char->tag without a table keep the trainable word table)."""
        if nlp is None:
            return None
        from ..vectors.mimick_vectors import MimickVectors

        vectors = self.vocab.vectors
        if isinstance(vectors, MimickVectors) and vectors.model is not None and not vectors.reads_table:
            return vectors.model.width
        return None

    def use_params(self, params: Dict):
        """Use ``params`` (the optimizer's parameter averages, in ``spacy train`` with
        ``[training.optimizer] use_averages = true``) while in the context.

        thinc's optimizer keys the averages of a torch module's parameters by
        ``(shim id, parameter name)``, but thinc's PyTorchShim.use_params looks for
        ``"pytorch_<shim id>_<name>"`` keys, so without this translation the averages never
        reach the torch module: spaCy evaluates and saves the raw weights. A generator, like
        spaCy's ``TrainablePipe.use_params``: ``Language.use_params`` drives it with ``next``.
        A parameter without an average (frozen by ``spacy_mimick.freeze_tagger_modules.v1``,
        so never updated) keeps its value: thinc loads a module's state whole or not at all.
        """
        translated = dict(params)
        for shim in _shims(self.model):
            prefix = f"pytorch_{shim.id}_"
            averaged = False
            for key, value in params.items():
                if isinstance(key, tuple) and len(key) == 2 and key[0] == shim.id:
                    translated[prefix + key[1]] = value
                    averaged = True
            if averaged:
                for name, value in shim._model.state_dict().items():
                    translated.setdefault(prefix + name, torch2xp(value))
        with self.model.use_params(translated):
            yield

    def _torch_net(self) -> MimickTaggerNet:
        """The torch module of the tagger's network (the adversarial hooks are on it)."""
        nets = [shim._model for shim in _shims(self.model) if isinstance(shim._model, MimickTaggerNet)]
        if len(nets) != 1:
            raise ValueError(f"mimick_tagger: adversarial training needs one MimickTaggerNet "
                             f"in the model, found {len(nets)}")
        return nets[0]

    def _value_index(self) -> List[Dict[str, int]]:
        """Per head, value -> output index."""
        return [{value: i for i, value in enumerate(values)} for _, values in self._heads]

    def _set_shapes(self, head_priors: Optional[List[numpy.ndarray]] = None) -> None:
        set_tagger_shapes(
            self.model,
            head_sizes=[len(values) for _, values in self._heads],
            head_priors=None if head_priors is None else [p.tolist() for p in head_priors],
            **self.cfg["shapes"],
        )

    def _set_featurizer(self) -> None:
        """The component's reading settings, on the featurizer before each use (a model loaded
        from disk brings back the attributes it was saved with)."""
        self.model.get_ref("featurizer").attrs["spelling_correction"] = self.spelling_correction

    def scores(self, docs: Iterable[Doc]) -> List[Floats2d]:
        """Return, per Doc, the network's (n_tokens, n_outputs) scores: every head's logits
        side by side in the order of ``labels`` (POS first, then each attribute's NONE and
        values), before any decoding. The Docs must have been through the components before
        this one (``mimick_vectors``)."""
        docs = list(docs)
        if not any(len(doc) for doc in docs):
            n_outputs = sum(len(values) for _, values in self._heads)
            return [numpy.zeros((len(doc), n_outputs), dtype="float32") for doc in docs]
        self._set_featurizer()
        with torch_threads(self.n_threads):
            return [numpy.asarray(s) for s in self.model.predict(docs)]

    def predict(self, docs: Iterable[Doc]) -> List[Ints2d]:
        """Return, per Doc, an (n_tokens, n_heads) array of value indices (POS first)."""
        docs = list(docs)
        n_heads = len(self._heads)
        if not any(len(doc) for doc in docs):
            return [numpy.zeros((len(doc), n_heads), dtype="int64") for doc in docs]
        flat = numpy.concatenate(self.scores(docs))
        ids = self.decode(flat, docs)
        return numpy.split(ids, numpy.cumsum([len(doc) for doc in docs])[:-1])

    def decode(self, flat: numpy.ndarray, docs: Sequence[Doc], read: Optional[List[str]] = None) -> numpy.ndarray:
        """(n_tokens, n_heads) value indices of the tokens of ``docs`` (in order) from their
        scores (``flat``: :meth:`scores` of the Docs, concatenated; changed in place) with the
        decoding rules and their weights now. ``read``: the forms as ``read_forms`` gives them,
        when the caller has them."""
        n_heads = len(self._heads)
        offsets = head_offsets([len(values) for _, values in self._heads])
        penalty = self._unseen_penalty()
        decode_sets = self.seen_feature_sets and n_heads > 1
        # The feature sets' prior applies only where the sets are decoded and the counts exist.
        has_counts = bool(self.cfg.get("seen_feature_set_counts"))
        set_weight = self.seen_feature_set_prior if decode_sets and has_counts else 0.0
        if read is None:
            needed = penalty is not None or self.seen_word_prior or set_weight or self.spaced_parts_prior
            read = self.read_forms(docs) if needed else []
        unseen = self.unseen_forms(read) if penalty is not None or self.spaced_parts_prior else None
        if penalty is not None:
            flat[unseen, offsets[0]:offsets[1]] += penalty
        if self.spaced_parts_prior:
            parts, log_prior = self.parts_log_prior()
            flat[:, offsets[0]:offsets[1]] += spaced_parts_shift(parts, log_prior, read, unseen, self.spaced_parts_prior)
        if self.seen_word_prior:
            forms, log_prior = self.seen_log_prior()
            if len(forms):
                rows = seen_rows(forms, read)
                flat[:, offsets[0]:offsets[1]] += seen_shift(log_prior, rows, self.seen_word_prior)
        ids = numpy.stack(
            [flat[:, offsets[h] : offsets[h + 1]].argmax(axis=1) for h in range(n_heads)], axis=1
        )
        table = self.feature_set_table() if decode_sets else {}
        if table:
            ids[:, 1:] = decode_feature_sets(
                [flat[:, offsets[h] : offsets[h + 1]] for h in range(1, n_heads)], ids[:, 0], table,
                prior=self.seen_set_prior() if set_weight else None, forms=read, weight=set_weight)
        return ids

    def feature_set_table(self) -> Dict[int, numpy.ndarray]:
        """The training data's feature sets per POS as the heads' value indices
        (``feature_sets.feature_set_table``), cached while the cfg holds the same sets; empty for
        a pipeline saved before they were kept."""
        sets = self.cfg.get("feature_sets_by_pos") or {}
        heads = self._heads
        cached = self._feature_set_table
        if cached is None or cached[0] is not sets or cached[1] != heads:
            table = feature_set_table(sets, heads[0][1], heads[1:]) if sets else {}
            cached = self._feature_set_table = (sets, heads, table)
        return cached[2]

    def seen_set_prior(self) -> SeenSetPrior:
        """The training words' feature sets as a prior (``feature_sets.SeenSetPrior``), built
        from the cfg's counts once (empty for a pipeline saved before the counts existed)."""
        counts = self.cfg.get("seen_feature_set_counts") or {}
        heads = self._heads[1:]
        cached = self._seen_set_prior
        if cached is None or cached[0] is not counts or cached[1] != heads:
            cached = self._seen_set_prior = (counts, heads, SeenSetPrior(counts, heads))
        return cached[2]

    def read_forms(self, docs: Iterable[Doc]) -> List[str]:
        """Each token's form as the network reads it (in order): its text, or, with
        ``spelling_correction`` and the vectors' spelling backoff on, the table word that the
        backoff takes a typo for, in the token's case. The decoding rules key on it too, so that
        a corrected typo of a training word counts as that word, seen, as the network reads it."""
        docs = list(docs)
        texts = [token.text for doc in docs for token in doc]
        if not self.spelling_correction:
            return texts
        return corrected_texts(docs, texts)[0]

    def unseen_tokens(self, docs: Iterable[Doc]) -> numpy.ndarray:
        """One bool per token of ``docs`` (in order): its form, as the network reads it
        (``read_forms``), is not in the training vocabulary and not punctuation alone
        (:meth:`unseen_forms`: the tokens ``unseen_penalty`` applies to; the paper's OOV, less
        new punctuation marks)."""
        return self.unseen_forms(self.read_forms(docs))

    def unseen_forms(self, forms: Iterable[str]) -> numpy.ndarray:
        """One bool per form: not in the training vocabulary, and not made of punctuation
        characters alone. A punctuation mark the training data never wrote is not a new word:
        UD Chinese GSD writes "." and ",", so spaCy's "。" from raw text is unseen there, and the
        penalty on the tags that almost never fall on new words (PUNCT first) turned it into NUM."""
        words = self.model.get_ref("featurizer").attrs["words"]
        return numpy.array([form not in words and not _all_punctuation(form) for form in forms], dtype=bool)

    def _unseen_penalty(self) -> Optional[numpy.ndarray]:
        """What ``unseen_penalty`` adds to an unseen word's POS scores, or None when off (or
        for a pipeline saved before the estimate existed)."""
        prior = self.cfg.get("unseen_pos_log_prior") or {}
        if not self.unseen_penalty or not prior:
            return None
        return penalty_vector(prior, self.cfg["labels_pos"], self.unseen_penalty)

    def set_annotations(self, docs: Iterable[Doc], batch_ids: List[Ints2d]) -> None:
        """Set ``token.pos`` and ``token.morph`` (non-NONE attributes, normalized by spaCy)."""
        heads = self._heads
        pos_ids = [POS_IDS[value] for value in heads[0][1]]
        morph_cache: Dict[Tuple[int, ...], int] = {}
        for doc, ids in zip(docs, batch_ids):
            for token, row in zip(doc, ids.tolist()):
                token.pos = pos_ids[row[0]]
                key = tuple(row[1:])
                if key not in morph_cache:
                    feats = {
                        heads[h][0]: heads[h][1][value]
                        for h, value in enumerate(row[1:], 1)
                        if value != NONE
                    }
                    morph_cache[key] = self.vocab.morphology.add(feats)
                token.set_morph(morph_cache[key])

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd=None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """Learn from a batch of Examples (and, with ``adversarial``, from its adversarial copy).

        ``drop`` is not used: the torch module applies the architecture's ``dropout``.
        """
        fix_mmap_threshold()  # bounded memory in long CPU trainings: see spacy_mimick/malloc.py
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "MimickTagger.update")
        if not any(len(eg.predicted) for eg in examples):
            return losses
        docs = [eg.predicted for eg in examples]
        self._set_featurizer()
        loss_fn = self.get_loss
        # Pipelines saved before the setting existed load with the constructor's 0.0.
        epsilon = self.cfg.get("adversarial", 0.0)
        net = self._torch_net() if epsilon else None
        if net is not None:
            net.record_input = True
        try:
            scores, backprop = self.model.begin_update(docs)
        finally:
            if net is not None:
                net.record_input = False
        loss, d_scores = loss_fn(examples, scores)
        backprop(d_scores)
        tokens = None
        if net is not None:
            tokens, net.recorded_input = net.recorded_input, None
        if tokens is not None and tokens.grad is not None:
            # The gradients of both passes add up in the torch parameters; one optimizer step.
            net.input_perturbation = adversarial_perturbation(tokens, tokens.grad, epsilon)
            try:
                scores, backprop = self.model.begin_update(docs)
                backprop(loss_fn(examples, scores)[1])
            finally:
                net.input_perturbation = None
        if sgd not in (None, False):
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def get_loss(
        self, examples: Iterable[Example], scores: List[Floats2d],
    ) -> Tuple[float, List[Floats2d]]:
        """Sum (or weighted sum) over heads of the tokens' negative log-likelihood, against
        targets smoothed by ``label_smoothing`` (pipelines saved before it had the setting
        load with the constructor's 0.0: from_disk/from_bytes update cfg, they do not replace it):
        the cross-entropy against those targets."""
        validate_examples(examples, "MimickTagger.get_loss")
        heads = self._heads
        offsets = head_offsets([len(values) for _, values in heads])
        weights = [1.0] + [
            self.cfg["attr_weights"][attr] if self.cfg["loss"] == "weighted" else 1.0
            for attr, _ in heads[1:]
        ]
        value_index = self._value_index()
        gold = numpy.concatenate([self._gold_ids(eg, value_index) for eg in examples])
        flat = numpy.concatenate(scores)
        d_flat = numpy.zeros_like(flat)
        loss = 0.0
        smoothing = self.cfg["label_smoothing"]
        for h, weight in enumerate(weights):
            rows = numpy.flatnonzero(gold[:, h] != IGNORE)
            if not len(rows) or not weight:
                continue
            log_probs = _log_softmax(flat[rows, offsets[h] : offsets[h + 1]])
            targets = gold[rows, h]
            n_values = log_probs.shape[1]
            if smoothing and n_values > 1:
                # The targets of thinc's to_categorical(label_smoothing=...), as spaCy's tagger.
                target = numpy.full(log_probs.shape, smoothing / max(n_values - 1, 1), dtype=log_probs.dtype)
                target[numpy.arange(len(rows)), targets] = 1.0 - smoothing
                loss -= weight * float((target * log_probs).sum())
                d_head = numpy.exp(log_probs) - target
            else:
                loss -= weight * float(log_probs[numpy.arange(len(rows)), targets].sum())
                d_head = numpy.exp(log_probs)
                d_head[numpy.arange(len(rows)), targets] -= 1.0
            d_flat[rows, offsets[h] : offsets[h + 1]] = weight * d_head
        if numpy.isnan(loss):
            raise ValueError(Errors.E910.format(name=self.name))
        splits = numpy.cumsum([len(s) for s in scores])[:-1]
        return loss, numpy.split(d_flat, splits)

    def _gold_ids(self, example: Example, value_index: List[Dict[str, int]]) -> Ints2d:
        """(n_tokens, n_heads) gold value ids of ``example.predicted``'s tokens, or IGNORE.

        value_index: per head, value -> output index.
        """
        heads = self._heads
        pos_tags = example.get_aligned("POS", as_string=True)
        morphs = example.get_aligned("MORPH", as_string=True)
        gold = numpy.full((len(pos_tags), len(heads)), IGNORE, dtype="int64")
        for i, (pos, morph) in enumerate(zip(pos_tags, morphs)):
            # Misaligned (None) or unannotated (neither POS nor features): ignore the token.
            if pos is None or morph is None or (not pos and morph in ("", Morphology.EMPTY_MORPH)):
                continue
            gold[i, 0] = value_index[0].get(pos, IGNORE)
            feats = Morphology.feats_to_dict(morph)
            for h in range(1, len(heads)):
                value = feats.get(heads[h][0])
                gold[i, h] = NONE if value is None else value_index[h].get(value, IGNORE)
        return gold

    def score(self, examples: Iterable[Example], **kwargs) -> Dict[str, Any]:
        """Paper metrics (POS accuracy, attribute micro/macro F1, OOV accuracies).

        The scorer gets ``train_words`` (OOV = not in the tagger's training vocabulary, as
        in the original evaluation) and ``in_vectors`` (the token has a pretrained vector,
        see :func:`~spacy_mimick.tagger.tagger_model.has_pretrained_vector`).
        """
        validate_examples(examples, "MimickTagger.score")
        if self.scorer is None:
            return {}
        return self.scorer(
            examples,
            train_words=set(self.train_words),
            in_vectors=partial(has_pretrained_vector, self.model),
            **kwargs,
        )

    def from_bytes(self, bytes_data: bytes, *, exclude=tuple()) -> "MimickTagger":
        """Load cfg first: its label sets and shapes rebuild the torch module, then the
        model bytes fill in its weights and the featurizer's tables."""
        self._validate_serialization_attrs()
        util.from_bytes(
            bytes_data,
            {
                "cfg": lambda b: self.cfg.update(srsly.json_loads(b)),
                "vocab": lambda b: self.vocab.from_bytes(b, exclude=exclude),
            },
            exclude,
        )
        self._rebuild_model()
        util.from_bytes(bytes_data, {"model": self._load_model_bytes}, exclude)
        return self

    def from_disk(self, path, *, exclude=tuple()) -> "MimickTagger":
        """Like :meth:`from_bytes`, from a directory written by ``to_disk``."""
        self._validate_serialization_attrs()
        util.from_disk(
            path,
            {
                "cfg": lambda p: self.cfg.update(srsly.read_json(p)),
                "vocab": lambda p: self.vocab.from_disk(p, exclude=exclude),
            },
            exclude,
        )
        self._rebuild_model()
        util.from_disk(
            path, {"model": lambda p: self._load_model_bytes(p.read_bytes())}, exclude
        )
        return self

    def _rebuild_model(self) -> None:
        if not self.cfg["shapes"]:
            raise ValueError(f"mimick_tagger {self.name!r}: no shapes in cfg (was it initialized?)")
        self._set_shapes()
        self.model.initialize()

    def _load_model_bytes(self, data: bytes) -> None:
        for shim in _shims(self.model):  # read the torch state without running any code in it
            shim._deserialize_model = load_state_safely
        try:
            self.model.from_bytes(data)
        except AttributeError:
            raise ValueError(Errors.E149) from None


def _log_softmax(logits: Floats2d) -> Floats2d:
    """Row-wise log-softmax of one head's logits (shifted by each row's max, for stability)."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    return shifted - numpy.log(numpy.exp(shifted).sum(axis=1, keepdims=True))


def heads_log_softmax(flat: Floats2d, offsets: List[int]) -> Floats2d:
    """Each head's log-softmax over its own columns of ``flat`` (the heads' logits side by
    side, head h in ``offsets[h]:offsets[h + 1]``), of the same shape."""
    log_probs = numpy.empty_like(flat)
    for start, end in zip(offsets[:-1], offsets[1:]):
        log_probs[:, start:end] = _log_softmax(flat[:, start:end])
    return log_probs


def _shims(model: Model) -> List[Any]:
    """Every shim (wrapped torch module) of ``model`` and its sublayers."""
    return [shim for node in model.walk() for shim in node.shims]
