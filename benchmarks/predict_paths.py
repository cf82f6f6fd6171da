"""The prediction paths of the tagger and of Mimick against the paths they replaced, in one process.

    python benchmarks/predict_paths.py PIPELINE CONLLU [--sentences 400] [--rounds 3] [--threads 1]

"before" puts back, in this process, what prediction did until these paths existed:

- thinc's ``PyTorchShim.predict``, which switches the torch module to eval mode and back to
  training mode on every call (each switch walks every submodule);
- every attribute head as its own two linear layers (two small products per attribute);
- Mimick's out-of-vocabulary words of one call in one batch per word length.

"after" is the package as it is: ``tagger_model.PredictShim`` (eval mode kept, inference mode),
the heads fused into two products (``MimickTaggerNet._fused_heads``) and a few words of one call
in one packed batch (``MimickModel._batches``). The rounds alternate before / after over the same
sentences (15-25 tokens, from the CONLLU file's ``# text`` lines), so both meet the same machine
load; the table gives ``nlp(text)`` median and p95 latency per round and ``nlp.pipe`` tokens/s.
Mimick's vector cache is emptied before each round and before its ``nlp.pipe`` pass, so every
round predicts the same words from the same state.
"""
import argparse
import statistics
import time

import spacy
from thinc.shims.pytorch import PyTorchShim

from pipeline_load import texts_of  # benchmarks/, on the path when run as a script
from spacy_mimick.tagger import pytorch_tagger_model as ptm
from spacy_mimick.tagger import tagger_model
from spacy_mimick.vectors import mimick_model

NEW_PREDICT = tagger_model.PredictShim.predict
NEW_SMALL_BATCH = mimick_model.SMALL_BATCH


def use(after: bool) -> None:
    tagger_model.PredictShim.predict = NEW_PREDICT if after else PyTorchShim.predict
    ptm.FUSE_HEADS = after
    mimick_model.SMALL_BATCH = NEW_SMALL_BATCH if after else 0


def clear_cache(nlp) -> None:
    clear = getattr(nlp.vocab.vectors, "clear_cache", None)
    if clear is not None:
        clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pipeline")
    parser.add_argument("conllu")
    parser.add_argument("--sentences", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch threads of the components (n_threads)")
    args = parser.parse_args()
    overrides = {name: {"n_threads": args.threads} for name in ("mimick_tagger", "mimick_vectors")}
    nlp = spacy.load(args.pipeline, config={"components": overrides})
    texts = [text for text in texts_of(args.conllu, limit=10**9) if 15 <= len(nlp.make_doc(text)) <= 25]
    texts = texts[: args.sentences]
    if not texts:
        raise SystemExit(f"error: {args.conllu}: no '# text =' sentence of 15-25 tokens")
    n_tokens = sum(len(nlp.make_doc(t)) for t in texts)
    for text in texts[:50]:  # warm-up
        nlp(text)
    rows = {False: [], True: []}
    for _ in range(args.rounds):
        for after in (False, True):
            use(after)
            clear_cache(nlp)
            latencies = []
            for text in texts:
                start = time.perf_counter()
                nlp(text)
                latencies.append(time.perf_counter() - start)
            clear_cache(nlp)
            start = time.perf_counter()
            for _doc in nlp.pipe(texts, batch_size=256):
                pass
            pipe_rate = n_tokens / (time.perf_counter() - start)
            rows[after].append((statistics.median(latencies) * 1e3,
                                statistics.quantiles(latencies, n=20)[18] * 1e3, pipe_rate))
    use(True)
    print(f"{args.pipeline}: {len(texts)} sentences of 15-25 tokens ({n_tokens:,} tokens), "
          f"n_threads {args.threads}, {args.rounds} alternating rounds\n")
    print("| paths | nlp(text) median ms, each round | nlp(text) p95 ms, each round | nlp.pipe tokens/s, each round |")
    print("|---|---|---|---|")
    for after in (False, True):
        r = rows[after]
        print(f"| {'after' if after else 'before'} | {' / '.join(f'{x[0]:.2f}' for x in r)} | "
              f"{' / '.join(f'{x[1]:.2f}' for x in r)} | {' / '.join(f'{x[2]:,.0f}' for x in r)} |")
    ratio = statistics.median(x[0] for x in rows[False]) / statistics.median(x[0] for x in rows[True])
    pipe = statistics.median(x[2] for x in rows[True]) / statistics.median(x[2] for x in rows[False])
    print(f"\nbefore / after, median latency: {ratio:.2f}x; nlp.pipe after / before: {pipe:.2f}x")


if __name__ == "__main__":
    main()
