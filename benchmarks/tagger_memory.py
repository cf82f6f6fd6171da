"""Memory of a CPU tagger training on UD_Russian-Taiga, with and without the glibc fix.

Runs ``spacy train`` with the paper's No-Char config (``init-config --variant nochar --recipe paper``) on the full Taiga training set (navec vectors,
300-d) for ``--steps`` updates, once per setting, one after the other, and samples each run's
resident memory (VmRSS) every half second:

- ``glibc default``: ``SPACY_MIMICK_MMAP_THRESHOLD=0``, the behaviour before the fix;
- ``mmap threshold fixed``: the default, ``spacy_mimick.malloc.fix_mmap_threshold``;
- ``no fine-tuning``: glibc default, but ``fine_tune = false`` (no per-word gradient table),
  which shows where the growth comes from.

    python benchmarks/tagger_memory.py [--steps 300] [--vectors-dir DIR] [--work-dir DIR]

``--vectors-dir`` is a ``spacy init vectors`` directory of navec's first 100,000 rows (the
project's ``corpus/UD_Russian-Taiga/vectors``, from ``spacy project run data`` and
``init-vectors`` with ``--vars.lang ru --vars.treebank UD_Russian-Taiga --vars.prefix ru_taiga
--vars.data_dir ../shared/data``); without it one is built in the work dir (about a minute).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from spacy_mimick.tagger.recipes import config_text

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared/data"
TAIGA = SHARED / "ud/UD_Russian-Taiga"
NAVEC = SHARED / "embeddings/navec_news_v1_1B_250K_300d_100q.tar"

SETTINGS: List[Tuple[str, Dict[str, str], List[str]]] = [
    ("glibc default", {"SPACY_MIMICK_MMAP_THRESHOLD": "0"}, []),
    ("mmap threshold fixed", {}, []),
    ("no fine-tuning", {"SPACY_MIMICK_MMAP_THRESHOLD": "0"},
     ["--components.mimick_tagger.model.fine_tune", "false"]),
]


def build_vectors(work_dir: Path) -> Path:
    text = work_dir / "ru_vectors.vec"
    out = work_dir / "vectors"
    if not out.exists():
        print("building navec vectors (100,000 rows) ...", flush=True)
        subprocess.run(
            [sys.executable, "-c",
             "import sys; from spacy_mimick.vectors.vectors_io import read_vectors, write_vectors_text; "
             "v = read_vectors(sys.argv[1], limit=100000); write_vectors_text(sys.argv[2], v.words, v.matrix)",
             str(NAVEC), str(text)], check=True)
        subprocess.run([sys.executable, "-m", "spacy", "init", "vectors", "ru", str(text), str(out)],
                       check=True, stdout=subprocess.DEVNULL)
    return out


def rss_mb(pid: int) -> Optional[float]:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def run_setting(env_extra: Dict[str, str], args: List[str], vectors: Path, steps: int,
                out_dir: Path) -> Dict[str, float]:
    env = dict(os.environ, OMP_NUM_THREADS="1", **env_extra)
    config = out_dir.parent / "tagger_nochar.paper.cfg"
    config.write_text(config_text("nochar", "paper"), encoding="utf8")
    cmd = [sys.executable, "-m", "spacy", "train", str(config),
           "--output", str(out_dir),
           "--paths.train", str(TAIGA / "ru_taiga-ud-train.conllu"),
           "--paths.dev", str(TAIGA / "ru_taiga-ud-dev.conllu"),
           "--paths.vectors", str(vectors), "--nlp.lang", "ru",
           "--training.max_steps", str(steps), "--training.eval_frequency", str(steps * 10), *args]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    samples: List[Tuple[float, float]] = []
    while proc.poll() is None:
        mb = rss_mb(proc.pid)
        if mb is not None:
            samples.append((time.perf_counter() - start, mb))
        time.sleep(0.5)
    stderr = proc.stderr.read()
    if proc.returncode:
        raise SystemExit(f"spacy train failed ({proc.returncode}):\n{stderr[-3000:]}")
    wall = time.perf_counter() - start
    peak = max(mb for _, mb in samples)
    # Growth over the second half of the run: past start-up, the training steps only.
    half = [s for s in samples if s[0] >= samples[-1][0] / 2]
    growth = (half[-1][1] - half[0][1]) / max(half[-1][0] - half[0][0], 1e-9)
    return {"wall_s": wall, "peak_mb": peak, "growth_mb_s": growth}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--vectors-dir", type=Path)
    parser.add_argument("--work-dir", type=Path)
    args = parser.parse_args()
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="tagger_memory_"))
    work.mkdir(parents=True, exist_ok=True)
    vectors = args.vectors_dir or build_vectors(work)
    rows = []
    for i, (name, env_extra, extra_args) in enumerate(SETTINGS):
        print(f"[{i + 1}/{len(SETTINGS)}] {name}: {args.steps} steps ...", flush=True)
        result = run_setting(env_extra, extra_args, vectors, args.steps, work / f"run{i}")
        rows.append((name, result))
        print(f"    {result['wall_s']:.0f} s, peak {result['peak_mb']:.0f} MB", flush=True)
    base = rows[0][1]
    print(f"\nUD_Russian-Taiga full training set, No-Char tagger, {args.steps} updates, 1 thread\n")
    print("| setting | peak RSS (MB) | x glibc default | growth, 2nd half (MB/s) | wall (s) | x glibc default |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, r in rows:
        print(f"| {name} | {r['peak_mb']:.0f} | {r['peak_mb'] / base['peak_mb']:.2f} | "
              f"{r['growth_mb_s']:.1f} | {r['wall_s']:.0f} | {r['wall_s'] / base['wall_s']:.2f} |")


if __name__ == "__main__":
    main()
