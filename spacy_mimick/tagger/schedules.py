"""Learning-rate schedules for the tagger's training recipes.

``spacy_mimick.warmup_linear_epochs.v1``: thinc's ``warmup_linear.v1`` (the rate warms up over
``warmup_steps`` updates, then decays linearly to 0) whose end is known without counting steps
by hand. thinc's version needs ``total_steps`` written into the config; the low-resource recipe
(the default tagger configs, spacy_mimick/tagger/configs/) ends its decay where training ends, and that is ``[training]
max_epochs`` x the batches of an epoch, a number that depends on the training file. With
``total_steps = ${training.max_steps}`` a run with ``max_steps = 0`` (train to ``max_epochs``)
decays to 0 at the end of warm-up and trains the rest of its epochs with a rate of 0, silently.
This schedule counts the batches of an epoch itself, with the run's own corpus reader and
batcher, when ``max_steps`` is 0.
"""
import warnings
from typing import Callable, Iterable, Iterator

import spacy
from spacy.language import Language
from spacy.training import Example
from spacy.util import registry
from thinc.api import warmup_linear

from ..errors import UserError


def batches_per_epoch(corpus: Callable[[Language], Iterable[Example]],
                      batcher: Callable[[Iterable[Example]], Iterable[list]]) -> int:
    """Batches in one pass over ``corpus`` (in file order: spaCy shuffles the examples of every
    epoch first, which can change a length-sorting batcher's count by a few batches)."""
    return sum(1 for _ in batcher(corpus(spacy.blank("xx"))))


@registry.schedules("spacy_mimick.warmup_linear_epochs.v1")
def warmup_linear_epochs(
    initial_rate: float,
    warmup_steps: int,
    max_steps: int,
    max_epochs: int,
    corpus: Callable[[Language], Iterable[Example]],
    batcher: Callable[[Iterable[Example]], Iterable[list]],
) -> Iterator[float]:
    """Warm-up over ``warmup_steps`` updates, then a linear decay that reaches 0 at
    ``max_steps`` if it is > 0, else at ``max_epochs`` x the batches ``batcher`` makes of one
    pass over ``corpus`` (pass ``${training.max_steps}``, ``${training.max_epochs}``,
    ``${corpora.train}`` and ``${training.batcher}``, so that the decay ends where training
    does)."""
    if max_steps > 0:
        total = max_steps
    elif max_epochs > 0:
        n_batches = batches_per_epoch(corpus, batcher)
        if n_batches == 0:
            raise UserError("spacy_mimick.warmup_linear_epochs.v1: the training corpus gave no "
                            "batches (an empty training file?), so the decay has no end")
        total = max_epochs * n_batches
    else:
        raise UserError("spacy_mimick.warmup_linear_epochs.v1 needs max_steps > 0 or max_epochs > 0 "
                        f"(got max_steps={max_steps}, max_epochs={max_epochs}): with neither, training "
                        "has no end for the learning rate to decay to")
    if total <= warmup_steps:
        warnings.warn(f"spacy_mimick.warmup_linear_epochs.v1: training ends after {total} updates, "
                      f"within the warm-up ({warmup_steps} updates): the rate never reaches "
                      f"initial_rate and never decays; lower warmup_steps")
    return warmup_linear(initial_rate, warmup_steps, total)
