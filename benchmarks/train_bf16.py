"""The paper's Mimick BiLSTM (`train --paper`) trained with its LSTM in bfloat16 autocast, beside
float32, in the same process: steps CPU-s, the ratio, and the dev loss of every epoch.

A question for CPUs whose oneDNN has native bfloat16 (AMX or AVX512-BF16: on such a CPU
``torch.ops.mkldnn._is_mkldnn_bf16_supported()`` is true), where the LSTM's small matrix
products may run faster in bfloat16; elsewhere bfloat16 is emulated (no faster on the AMD EPYC
of docs/speed.md's earlier try). The optimizer
keeps float32 weights (autocast casts them for each step); only the LSTM runs in bfloat16.
Not used by the trainer: docs/speed.md says what it measured and why.

    OMP_NUM_THREADS=1 python benchmarks/train_bf16.py --epochs 5 --rounds 2
"""
import argparse
import time
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from pathlib import Path

import torch

from spacy_mimick.vectors.mimick_trainer import PAPER_ARCH, PAPER_CONFIG, train_mimick
from spacy_mimick.vectors.vectors_io import read_vectors

SHARED = Path(__file__).resolve().parents[2] / "shared/data"
GLOVE = SHARED / "embeddings/glove.6B.50d.top100k.txt.gz"


@contextmanager
def bf16_lstm():
    """Every nn.LSTM forward in training mode runs under bfloat16 autocast; its outputs are
    returned as float32, so everything after the LSTM (MLP, loss) stays float32."""
    forward = torch.nn.LSTM.forward

    def autocast_forward(self, *args, **kwargs):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.training):
            out, (h, c) = forward(self, *args, **kwargs)
        return out, (h.float(), c.float())

    torch.nn.LSTM.forward = autocast_forward
    try:
        yield
    finally:
        torch.nn.LSTM.forward = forward


def run(vectors, epochs: int, bf16: bool):
    config = replace(PAPER_CONFIG, max_epochs=epochs, patience=epochs)
    start = time.process_time()
    with bf16_lstm() if bf16 else nullcontext():
        result = train_mimick(vectors, PAPER_ARCH, config, progress=False, log=lambda m: None)
    whole = time.process_time() - start
    steps = sum(h.cpu_seconds for h in result.history)
    return steps, whole, [h.dev_loss for h in result.history]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vectors", default=str(GLOVE))
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2, help="alternating float32 / bfloat16 rounds")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}, "
          f"oneDNN native bfloat16: {torch.ops.mkldnn._is_mkldnn_bf16_supported()}, threads {args.threads}")
    vectors = read_vectors(args.vectors)
    rows = []
    for r in range(1, args.rounds + 1):
        for bf16 in (False, True):
            steps, whole, dev = run(vectors, args.epochs, bf16)
            rows.append((r, "bfloat16 LSTM" if bf16 else "float32", steps, whole, dev))
            print(f"  round {r} {rows[-1][1]}: steps {steps:.1f} CPU-s", flush=True)
    print(f"\n{len(vectors):,} words, `train --paper` set-up, {args.epochs} epochs\n")
    print("| round | LSTM | steps CPU-s | train_mimick CPU-s | float32 / this, steps | dev loss by epoch |")
    print("|---:|---|---:|---:|---:|---|")
    for i, (r, name, steps, whole, dev) in enumerate(rows):
        base = rows[i - i % 2][2]
        print(f"| {r} | {name} | {steps:.1f} | {whole:.1f} | {base / steps:.2f}x | "
              f"{', '.join(f'{d:.4f}' for d in dev)} |")


if __name__ == "__main__":
    main()
