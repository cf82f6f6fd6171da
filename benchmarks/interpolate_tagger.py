"""A continued tagger's weights interpolated with its source's (WiSE-FT, Wortsman et al., CVPR 2022).

Tried on the taggers that ``init-config --recipe typos --source`` continues (docs/typo_tagging.md):
every weight of the tagger (torch parameters and buffers, and thinc's own parameters) becomes
``(1 - weight) * source + weight * continued``; everything else (the decoding priors chosen on
dev, the vectors, the spelling backoff) is the continued pipeline's. Writes a new pipeline folder,
to be scored like any other, e.g. by ``benchmarks/typo_tagging.py``:

    python benchmarks/interpolate_tagger.py SOURCE CONTINUED OUTPUT --weight 0.5
"""
import argparse
from pathlib import Path

import spacy

from spacy_mimick.tagger.tagger_component import _shims


def interpolate(source: Path, continued: Path, weight: float, output: Path) -> None:
    if not 0 <= weight <= 1:
        raise SystemExit(f"--weight {weight}: expected a share in [0, 1]")
    if output.exists():
        raise SystemExit(f"{output} exists: give a new folder")
    a, b = spacy.load(source), spacy.load(continued)
    model_a, model_b = a.get_pipe("mimick_tagger").model, b.get_pipe("mimick_tagger").model
    shims_a, shims_b = _shims(model_a), _shims(model_b)
    if len(shims_a) != len(shims_b):
        raise SystemExit(f"{source} and {continued}: taggers of different architectures")
    for shim_a, shim_b in zip(shims_a, shims_b):
        state_a, state_b = shim_a._model.state_dict(), shim_b._model.state_dict()
        if state_a.keys() != state_b.keys() or any(state_a[k].shape != state_b[k].shape for k in state_a):
            raise SystemExit(f"{source} and {continued}: taggers of different shapes")
        shim_b._model.load_state_dict({
            k: (1 - weight) * state_a[k] + weight * v if v.is_floating_point() else v
            for k, v in state_b.items()})
    for node_a, node_b in zip(model_a.walk(), model_b.walk()):
        for name in node_b.param_names:
            if node_b.has_param(name):
                node_b.set_param(name, (1 - weight) * node_a.get_param(name) + weight * node_b.get_param(name))
    b.to_disk(output)
    print(f"{output}: the tagger of {continued} at weight {weight}, {source} at {1 - weight:g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="The pipeline the continued one started from")
    parser.add_argument("continued", type=Path, help="The continued pipeline (its model-best)")
    parser.add_argument("output", type=Path, help="A new folder for the interpolated pipeline")
    parser.add_argument("--weight", type=float, default=0.5, help="The continued weights' share")
    args = parser.parse_args()
    interpolate(args.source, args.continued, args.weight, args.output)


if __name__ == "__main__":
    main()
