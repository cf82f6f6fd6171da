"""Training throughput in words per CPU-second: the trainer vs a one-word-at-a-time loop.

The original release updated the model after every word. In one run, on the same GloVe words
and the same architecture, this times (forward + backward + optimizer step, CPU time of this
process, so that other jobs on a shared machine matter less):

- "one word per update": batch size 1, model.featurize + torch.optim.Adam (the original's loop);
- "plain minibatches": length-bucketed batches through model.featurize + torch.optim (the
  trainer before the fast path);
- "trainer": what ``train_mimick`` runs now: words encoded once, batches gathered from the
  encoded arrays, foreach Adam/SparseAdam (``spacy_mimick.vectors.optimizers``).

``--startup`` also times, in fresh processes, what ``train`` does before its first step
(imports, reading the vectors with and without the cache, building the model). ``--full`` times
complete trainings (paper model, default model) on all rows.

``--roofline`` sets the steps' FLOP rate beside this core's matrix-multiply peak, measured in the
same process (with ``--whole``: the rate that 10x the original loop would need).

    python benchmarks/train_throughput.py [--words 20000] [--threads 1] [--startup] [--full [--rounds 2]]
    python benchmarks/train_throughput.py --no-steps --whole --whole-epochs 5 --dynet-python PY --roofline
"""
import argparse
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Dict, Optional, Tuple

import numpy
import torch

from spacy_mimick.vectors import fast_bilstm
from spacy_mimick.vectors.mimick_model import MimickModel
from spacy_mimick.vectors.mimick_trainer import (
    DEFAULT_ARCH, PAPER_ARCH, PAPER_CONFIG, TrainConfig, _Batcher, make_optimizer, train_mimick,
)
from spacy_mimick.vectors.paper_step import PaperModelStep
from spacy_mimick.vectors.pytorch_mimick_model import one_length
from spacy_mimick.vectors.vectors_io import read_vectors

GLOVE = Path(__file__).resolve().parents[2] / "shared/data/embeddings/glove.6B.50d.top100k.txt.gz"


def torch_optim(module, lr=0.003, sparse_lr=0.01):
    """torch.optim.Adam / SparseAdam, as the trainer used them before the fast path."""
    sparse = [m.weight for m in module.modules() if isinstance(m, torch.nn.EmbeddingBag)]
    dense = [p for p in module.parameters() if all(p is not q for q in sparse)]
    opts = ([torch.optim.Adam(dense, lr=lr)] if dense else []) + \
        ([torch.optim.SparseAdam(sparse, lr=sparse_lr)] if sparse else [])
    return opts, dense


def plain_rate(model, words, targets, batches, max_seconds) -> float:
    """Words per CPU-second of the plain loop (featurize per batch, torch.optim, clipping)."""
    opts, dense = torch_optim(model.module)
    start, seen = time.process_time(), 0
    for idx in batches:
        pred = model.module(model.featurize([words[i] for i in idx]))
        loss = ((pred - targets[idx]) ** 2).sum(dim=1).mean()
        for o in opts:
            o.zero_grad()
        loss.backward()
        if dense:
            torch.nn.utils.clip_grad_norm_([p for p in dense if p.grad is not None], 5.0)
        for o in opts:
            o.step()
        seen += len(idx)
        if time.process_time() - start > max_seconds:
            break
    return seen / (time.process_time() - start)


def trainer_rate(model, batcher, targets, batches, max_seconds) -> float:
    """Words per CPU-second of train_mimick's step (the same code path, l2 loss, no typos: for the
    paper model on the CPU, PaperModelStep)."""
    optimizer = make_optimizer(model.module, 0.003, 0.01)
    paper_step = PaperModelStep(model.module) if PaperModelStep.usable(model.module) else None
    rng = random.Random(0)
    start, seen = time.process_time(), 0
    for idx in batches:
        batch = batcher.featurize(idx, 0.0, rng)
        gold = targets.index_select(0, torch.from_numpy(idx))
        if paper_step is not None and one_length(batch):
            paper_step(batch["chars"], gold).sum().item()
        else:
            loss = ((model.module(batch) - gold) ** 2).sum(dim=1).mean()
            loss.item()
            optimizer.zero_grad()
            loss.backward()
        optimizer.step(5.0)
        seen += len(idx)
        if time.process_time() - start > max_seconds:
            break
    return seen / (time.process_time() - start)


STARTUP = r"""
import sys, time
c0 = time.process_time()
import spacy_mimick.cli, torch
from spacy_mimick.vectors.vectors_io import read_vectors
from spacy_mimick.vectors import mimick_trainer as mt
torch.set_num_threads(1)
c1 = time.process_time()
v = read_vectors(sys.argv[1], cache=sys.argv[2] if sys.argv[2] != "-" else False)
c2 = time.process_time()
class Ready(Exception):
    pass
def first_step(*args, **kwargs):
    raise Ready
mt._Batcher.batches = first_step
try:
    mt.train_mimick(v, mt.PAPER_ARCH if sys.argv[3] == "paper" else mt.DEFAULT_ARCH, progress=False)
except Ready:
    pass
c3 = time.process_time()
print(c1 - c0, c2 - c1, c3 - c2)
"""


def startup(vectors: str) -> None:
    print("\nStart-up of `train` before its first step, CPU seconds (fresh processes, 1 thread):")
    print("| model | vectors read | imports | read vectors | build model + encode words | total |")
    print("|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as cache:
        for arch in ("paper", "default"):
            for label, cache_arg in (("parsed (--no-cache)", "-"), ("from the cache", cache)):
                if cache_arg != "-":  # fill the cache first
                    subprocess.run([sys.executable, "-c", STARTUP, vectors, cache_arg, arch], check=True,
                                   capture_output=True)
                out = subprocess.run([sys.executable, "-c", STARTUP, vectors, cache_arg, arch], check=True,
                                     capture_output=True, text=True, env={"OMP_NUM_THREADS": "1",
                                                                          **__import__("os").environ})
                imports, read, build = (float(x) for x in out.stdout.split())
                print(f"| {arch} | {label} | {imports:.2f} | {read:.2f} | {build:.2f} | "
                      f"{imports + read + build:.2f} |")


# The original release's training loop, in DyNet: what `mimick/model.py` of the original does for
# the LSTM model (paper/NOTES.md), written here from those facts for Python 3 (the original is
# Python 2 and reads a pickle made by a separate script; this reads the vectors file itself, as
# that script did). Every word of the file, shuffled, the last 1% held out; characters with a pad
# symbol at both ends; forward and backward VanillaLSTMs (20 -> 50) over the characters and their
# reverse; final states concatenated -> H (d x 100) -> tanh -> O (d x d); squared L2 distance; one
# update per word with MomentumSGD (lr 0.01, momentum 0.9); after each epoch the dev loss over
# the held-out words, and the model saved when it improved. Prints one RESULT line of JSON.
DYNET_TRAINER = r"""
import gzip, json, math, random, sys, time
T = time.process_time
import dynet_config
dynet_config.set(random_seed=int(sys.argv[4]) + 1)
import dynet as dy
import numpy as np
path, epochs, out, seed = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
c0 = T()
words, rows = [], []
with (gzip.open(path, "rt", encoding="utf-8") if path.endswith(".gz") else open(path, encoding="utf-8")) as f:
    for line in f:
        parts = line.rstrip().split(" ")
        if len(parts) == 2 and not rows:  # word2vec text header
            continue
        words.append(parts[0])
        rows.append(np.array(parts[1:], dtype="float64"))
c1 = T()
dim = len(rows[0])
c2i = {"<*>": 0}
for word in words:
    for ch in word:
        c2i.setdefault(ch, len(c2i))
pad = c2i["<*>"]
data = [([pad] + [c2i[ch] for ch in w] + [pad], r) for w, r in zip(words, rows)]
random.seed(seed)
random.shuffle(data)
cut = int(0.99 * len(data))
train, dev = data[:cut], data[cut:]
pc = dy.ParameterCollection()
chars = pc.add_lookup_parameters((len(c2i), 20))
fwd, bwd = dy.VanillaLSTMBuilder(1, 20, 50, pc), dy.VanillaLSTMBuilder(1, 20, 50, pc)
H, Hb = pc.add_parameters((dim, 100)), pc.add_parameters(dim)
O, Ob = pc.add_parameters((dim, dim)), pc.add_parameters(dim)
trainer = dy.MomentumSGDTrainer(pc, 0.01, 0.9)

def loss_of(ids, target):
    dy.renew_cg()
    emb = [chars[i] for i in ids]
    f = fwd.initial_state().transduce(emb)[-1]
    b = bwd.initial_state().transduce(emb[::-1])[-1]
    pred = O * dy.tanh(H * dy.concatenate([f, b]) + Hb) + Ob
    return dy.squared_distance(pred, dy.inputVector(target))

c2 = T()
steps = dev_cpu = 0.0
dev_losses = []
for epoch in range(epochs):
    c = T()
    for ids, target in train:
        loss = loss_of(ids, target)
        value = loss.scalar_value()
        if math.isnan(value):
            raise SystemExit("NaN loss")
        loss.backward()
        trainer.update()
    steps += T() - c
    c = T()
    dev_losses.append(sum(loss_of(ids, t).scalar_value() for ids, t in dev) / len(dev))
    if dev_losses[-1] == min(dev_losses):
        pc.save(out)
    dev_cpu += T() - c
print("RESULT " + json.dumps({"n_train": len(train), "read": c1 - c0, "setup": c2 - c1, "steps": steps,
                              "dev": dev_cpu, "dev_losses": dev_losses}), flush=True)
"""


def run_cpu(cmd, env=None, cwd=None):
    """Run ``cmd`` to the end; its CPU seconds (user + system, its children included) and output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} ... exited with {proc.returncode}:\n{proc.stdout[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, proc.stdout


def dynet_available(python: str) -> bool:
    return subprocess.run([python, "-c", "import dynet_config, dynet"], capture_output=True).returncode == 0


EPOCH_LINE = re.compile(r"epoch +(\d+) +train loss [\d.]+ +dev loss ([\d.]+) .*\(([\d.]+) CPU-s\)")


# `python -m spacy_mimick` with the C steps of the BiLSTM switched off: nn.LSTM, as before them.
WITHOUT_C_STEPS = (
    "import sys; from spacy_mimick.vectors import fast_bilstm; fast_bilstm._cpu_kernels = None; "
    "from spacy_mimick import cli; sys.argv = ['spacy_mimick'] + sys.argv[1:]; cli.main()"
)


def ours(vectors: str, epochs: int, work: Path, cache: Path, c_steps: bool = True):
    """`python -m spacy_mimick train VECTORS OUT --paper --max-epochs N`, a fresh process
    (``c_steps=False``: with nn.LSTM instead of fast_bilstm's C steps)."""
    out = work / f"ours{epochs}{'' if c_steps else '-nn-lstm'}"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "SPACY_MIMICK_CACHE": str(cache)}
    start = ["-m", "spacy_mimick"] if c_steps else ["-c", WITHOUT_C_STEPS]
    cpu, log = run_cpu([sys.executable, *start, "train", vectors, str(out), "--paper",
                        "--max-epochs", str(epochs), "--quiet"], env=env, cwd=str(work))
    rows = EPOCH_LINE.findall(log)
    if len(rows) != epochs:
        raise RuntimeError(f"expected {epochs} epoch lines in the train log, got:\n{log[-3000:]}")
    return cpu, sum(float(r[2]) for r in rows), [float(r[1]) for r in rows]


def original(python: str, vectors: str, epochs: int, work: Path):
    cpu, log = run_cpu([python, "-c", DYNET_TRAINER, vectors, str(epochs), str(work / "dynet.model"), "0"],
                       env={**os.environ, "OMP_NUM_THREADS": "1"}, cwd=str(work))
    result = json.loads(log.split("RESULT ", 1)[1])
    return cpu, result["steps"], result["dev_losses"], result["n_train"]


def whole(vectors: str, epoch_counts, rounds: int, dynet_python: str) -> Dict[Tuple[str, int], Tuple[float, float]]:
    """Whole-process CPU seconds of `train --paper` beside the original's loop in DyNet, each in
    fresh processes, alternating (rounds x epoch counts), with the steps' own CPU seconds."""
    has_dynet = dynet_available(dynet_python)
    print(f"\nWhole process, CPU seconds (user + system of the child process; fresh processes, "
          f"OMP_NUM_THREADS=1, {rounds} round(s) alternating)")
    if not has_dynet:
        print(f"(dynet cannot be imported by {dynet_python}: the original's loop is not run; "
              f"pass --dynet-python with an interpreter that has `pip install dynet38`)")
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        work, cache = Path(tmp), Path(tmp) / "cache"
        n_rows = len(read_vectors(vectors, cache=cache))  # the cache `train` keeps by default, filled once
        n_train = n_rows - max(1, int(round(n_rows * 0.01)))  # train_mimick's dev split
        for _ in range(rounds):
            for epochs in epoch_counts:
                runs.setdefault(("ours", epochs), []).append(ours(vectors, epochs, work, cache))
                if fast_bilstm.available():
                    runs.setdefault(("nn.LSTM", epochs), []).append(
                        ours(vectors, epochs, work, cache, c_steps=False))
                if has_dynet:
                    runs.setdefault(("dynet", epochs), []).append(original(dynet_python, vectors, epochs, work))
    names = {"ours": "`train --paper` (spacy-mimick)",
             "nn.LSTM": "`train --paper` with nn.LSTM (before the C steps)",
             "dynet": "original loop (DyNet, one word per update)"}
    order = {"ours": 0, "nn.LSTM": 1, "dynet": 2}
    print("| trainer | epochs | whole process, CPU-s (each round) | mean | steps, CPU-s (mean) | "
          "steps, words per CPU-s | outside the steps, CPU-s | last dev loss |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    means = {}
    for (who, epochs), results in sorted(runs.items(), key=lambda kv: (kv[0][1], order[kv[0][0]])):
        whole_cpu = [r[0] for r in results]
        steps = sum(r[1] for r in results) / len(results)
        mean = sum(whole_cpu) / len(whole_cpu)
        words = (results[0][3] if who == "dynet" else n_train) * epochs
        means[who, epochs] = (mean, steps)
        print(f"| {names[who]} | {epochs} | {', '.join(f'{c:.1f}' for c in whole_cpu)} | {mean:.1f} | "
              f"{steps:.1f} | {words / steps:,.0f} | {mean - steps:.1f} | {results[-1][2][-1]:.4f} |", flush=True)
    if has_dynet or ("nn.LSTM", epoch_counts[0]) in means:
        print("\n| epochs | vs | whole process: that / ours | steps only: that / ours |")
        print("|---:|---|---:|---:|")
        for epochs in epoch_counts:
            ow, os_ = means["ours", epochs]
            for who in ("nn.LSTM", "dynet"):
                if (who, epochs) in means:
                    tw, ts = means[who, epochs]
                    print(f"| {epochs} | {names[who]} | {tw / ow:.2f}x | {ts / os_:.2f}x |")
    return means


# Where a `train` process spends its CPU time: the real CLI in a fresh process, with CPU timers
# around its phases (wrappers on a handful of calls, so nothing else is slowed down).
PHASES = r"""
import json, sys, time
T = time.process_time
c0 = T()
from spacy_mimick import cli
c1 = T()
from spacy_mimick.cli import mimick as cli_mimick
from spacy_mimick.vectors import mimick_model, mimick_trainer
cpu = {}
def timed(name, fn):
    def wrapper(*args, **kwargs):
        c = T()
        try:
            return fn(*args, **kwargs)
        finally:
            cpu[name] = cpu.get(name, 0.0) + T() - c
    return wrapper
cli_mimick.read_vectors = timed("read", cli_mimick.read_vectors)
create = mimick_model.MimickModel.create
mimick_model.MimickModel.create = classmethod(lambda cls, *a, **k: timed("vocab", create)(*a, **k))
mimick_trainer._Batcher.__init__ = timed("encode", mimick_trainer._Batcher.__init__)
mimick_trainer.check_trainable = timed("check", mimick_trainer.check_trainable)
mimick_model.MimickModel.to_disk = timed("save", mimick_model.MimickModel.to_disk)
history = []
def train(*args, **kwargs):
    result = timed("train_mimick", train_mimick)(*args, **kwargs)
    history.extend(result.history)
    return result
train_mimick, cli_mimick.train_mimick = cli_mimick.train_mimick, train
sys.argv = ["spacy_mimick"] + sys.argv[1:]
try:
    cli.main()
except SystemExit as stop:
    if stop.code:
        raise
c2 = T()
cpu.update(start=c0, imports=c1 - c0, main=c2 - c1, end=c2,
           steps=sum(h.cpu_seconds for h in history), dev=sum(getattr(h, "dev_cpu_seconds", 0.0) for h in history))
print("PHASES " + json.dumps(cpu), flush=True)
"""

PHASE_ROWS = (
    ("interpreter start-up", lambda p: p["start"]),
    ("imports (torch, typer, the package; `train` imports no spaCy)", lambda p: p["imports"]),
    ("reading the vectors", lambda p: p["read"]),
    ("rest of train_mimick (NFC words, targets, split, epoch loop)",
     lambda p: p["train_mimick"] - p["vocab"] - p["encode"] - p["check"] - p["steps"] - p["dev"]),
    ("check_trainable (row norms)", lambda p: p["check"]),
    ("spelling vocabulary (MimickModel.create)", lambda p: p["vocab"]),
    ("encoding every spelling (_Batcher)", lambda p: p["encode"]),
    ("training steps (all epochs)", lambda p: p["steps"]),
    ("dev loss + best-weights copy (all epochs)", lambda p: p["dev"]),
    ("saving the model", lambda p: p["save"]),
    ("CLI: options, messages, the rest", lambda p: p["main"] - p["read"] - p["train_mimick"] - p["save"]),
    ("interpreter exit", lambda p: p["total"] - p["end"]),
)


def profile(vectors: str, epochs: int) -> None:
    """The CPU seconds of one `train --paper` process, phase by phase, with the vectors cache
    (filled first) and without it (--no-cache)."""
    print(f"\nOne `train --paper --max-epochs {epochs}` process, CPU seconds by phase (OMP_NUM_THREADS=1):")
    columns = []
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        read_vectors(vectors, cache=cache)
        env = {**os.environ, "OMP_NUM_THREADS": "1", "SPACY_MIMICK_CACHE": str(cache)}
        for label, extra in (("cached vectors", []), ("--no-cache (parsing the .gz)", ["--no-cache"])):
            cmd = [sys.executable, "-c", PHASES, "train", vectors, str(Path(tmp) / "model"), "--paper",
                   "--max-epochs", str(epochs), "--quiet", *extra]
            total, log = run_cpu(cmd, env=env, cwd=tmp)
            phases = json.loads(log.split("PHASES ", 1)[1])
            phases["total"] = total
            columns.append((label, phases))
    print("| phase | " + " | ".join(label for label, _ in columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for name, value in PHASE_ROWS:
        print(f"| {name} | " + " | ".join(f"{value(p):.2f}" for _, p in columns) + " |")
    print("| **whole process** | " + " | ".join(f"**{p['total']:.2f}**" for _, p in columns) + " |")
    print("| outside the steps | " + " | ".join(f"{p['total'] - p['steps']:.2f} "
                                                f"({(p['total'] - p['steps']) / p['total']:.0%})" for _, p in columns) + " |")


def step_flops(lengths: numpy.ndarray, embed: int = 20, hidden: int = 50, width: int = 50, head: bool = True) -> float:
    """Multiply-add FLOPs (2 per multiply-add) of forward + backward for words of ``lengths``
    characters through the paper's BiLSTM + MLP: per character and direction the LSTM's
    (embed + hidden) x 4*hidden matrix products; the backward pass does twice the forward's
    (gradients of the inputs and of the weights), less the gradient of the zero initial state.
    Element-wise work, the embedding gather and the optimizer are left out, so this is a floor of
    what a step must compute. The MLP's hidden layer is ``width`` wide, as in the original
    release; ``head=False`` counts the LSTM alone."""
    lstm = 2 * 4 * hidden * (embed + hidden) * 2 * float(lengths.sum())  # two directions
    initial_state = 2 * 4 * hidden * hidden * 2 * len(lengths)
    mlp = 2 * (2 * hidden * width + width * width) * len(lengths) if head else 0.0
    return 3 * (lstm + mlp) - initial_state


def gflops_of(fn, flops: float, seconds: float) -> float:
    """GFLOP/s of ``fn`` (``flops`` each call), CPU time of this process, after one warm-up call."""
    fn()
    start, calls = time.process_time(), 0
    while True:
        fn()
        calls += 1
        spent = time.process_time() - start
        if spent > seconds:
            return flops * calls / spent / 1e9


def roofline(table, seconds: float, whole_means: Optional[Dict] = None) -> None:
    """How far the paper model's training steps are from this core's matrix-multiply peak.

    The steps' FLOPs are counted (``step_flops``) and timed (``trainer_rate``, batches of
    ``PAPER_CONFIG.batch_size``); beside them, in the same process and thread, the rate of one
    large float32 matrix product (the core's practical peak), of the LSTM's own products at
    their small shapes, and of ``nn.LSTM`` forward + backward alone. With ``--whole`` in the
    same run, it says what the steps of 5 epochs would need to reach 10x the original loop."""
    torch.manual_seed(0)
    model = MimickModel.create({"@architectures": PAPER_ARCH["@architectures"]}, table.words, table.dim)
    lengths = numpy.array([min(len(w), model.spec.max_chars) for w in table.words])  # as the model clips them
    batch, hidden, embed, length = PAPER_CONFIG.batch_size, 50, 20, int(round(lengths.mean()))
    big = torch.randn(1024, 1024)
    x_in, w_in = torch.randn(batch * length, embed), torch.randn(embed, 4 * hidden)
    h, w_h = torch.randn(batch, hidden), torch.randn(hidden, 4 * hidden)
    lstm = torch.nn.LSTM(embed, hidden, bidirectional=True, batch_first=True)
    chars = torch.randn(batch, length, embed, requires_grad=True)

    def lstm_step():
        _, (state, _) = lstm(chars)
        state.sum().backward()

    rng = numpy.random.default_rng(0)
    rows = numpy.sort(rng.choice(len(table), size=min(20000, len(table)), replace=False))
    sample = table.subset(rows)
    batcher = _Batcher(model, sample.words)
    batches = batcher.batches(numpy.arange(len(sample)), batch, rng, shuffle=True)
    words_per_s = trainer_rate(model, batcher, torch.from_numpy(sample.matrix), batches, seconds)
    per_word = step_flops(batcher.lengths) / len(sample)
    rows_out = [
        ("one 1024 x 1024 x 1024 matrix product (the core's practical peak)",
         gflops_of(lambda: torch.mm(big, big), 2 * 1024 ** 3, seconds)),
        (f"the LSTM's input product, ({batch * length} x {embed}) x ({embed} x {4 * hidden})",
         gflops_of(lambda: torch.mm(x_in, w_in), 2 * batch * length * embed * 4 * hidden, seconds)),
        (f"the LSTM's recurrent product, ({batch} x {hidden}) x ({hidden} x {4 * hidden})",
         gflops_of(lambda: torch.mm(h, w_h), 2 * batch * hidden * 4 * hidden, seconds)),
        (f"nn.LSTM forward + backward, {batch} words x {length} characters",
         gflops_of(lstm_step, step_flops(numpy.full(batch, length), head=False), seconds)),
        (f"`train --paper`'s steps (trainer, batches of {batch}; {words_per_s:,.0f} words per CPU-s)",
         words_per_s * per_word / 1e9),
    ]
    peak = rows_out[0][1]
    print(f"\nThe paper model's steps against this core's matrix-multiply peak (one thread, CPU time; "
          f"{len(table):,} words of mean length {lengths.mean():.2f}, counted FLOPs per word "
          f"{per_word / 1e6:.2f}M forward + backward):")
    print("| work | GFLOP/s | share of the peak |")
    print("|---|---:|---:|")
    for name, rate in rows_out:
        print(f"| {name} | {rate:.1f} | {rate / peak:.0%} |")
    n_train = len(table) - max(1, int(round(len(table) * 0.01)))  # train_mimick's dev split
    epoch_flops = step_flops(lengths) * n_train / len(table)
    steps_now = 5 * epoch_flops / (rows_out[-1][1] * 1e9)
    steps_peak = 5 * epoch_flops / (peak * 1e9)
    print(f"\n5 epochs of steps: {5 * epoch_flops / 1e12:.2f} TFLOP; at the steps' rate {steps_now:.1f} CPU-s, "
          f"at the peak above {steps_peak:.1f} CPU-s")
    if whole_means and ("dynet", 5) in whole_means and ("ours", 5) in whole_means:
        (ours_whole, ours_steps), (orig_whole, _) = whole_means["ours", 5], whole_means["dynet", 5]
        outside = ours_whole - ours_steps
        budget = orig_whole / 10 - outside
        needed = 5 * epoch_flops / budget / 1e9 if budget > 0 else float("inf")
        print(f"10x the original's {orig_whole:.1f} CPU-s allows {orig_whole / 10:.1f} CPU-s for the whole process; "
              f"outside the steps ours takes {outside:.1f}, leaving {budget:.1f} CPU-s for the steps: "
              + (f"{needed:.1f} GFLOP/s, {needed / peak:.0%} of the peak. " if budget > 0 else "nothing. ")
              + f"At the peak the whole process would be {orig_whole / (outside + steps_peak):.1f}x the original.")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vectors", default=str(GLOVE))
    parser.add_argument("--words", type=int, default=20000, help="GloVe rows sampled for the timing")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=6.0, help="CPU seconds per measurement (at most)")
    parser.add_argument("--startup", action="store_true", help="also time train's start-up")
    parser.add_argument("--full", action="store_true", help="also time full trainings on all rows")
    parser.add_argument("--rounds", type=int, default=2, help="--full: rounds of the 15-epoch comparison")
    parser.add_argument("--no-steps", action="store_true", help="skip the words-per-CPU-second table of the steps")
    parser.add_argument("--whole", action="store_true",
                        help="whole-process CPU seconds of `train --paper` beside the original's loop in DyNet")
    parser.add_argument("--whole-epochs", type=int, nargs="+", default=[1, 5])
    parser.add_argument("--whole-rounds", type=int, default=1)
    parser.add_argument("--dynet-python", default=sys.executable,
                        help="an interpreter with dynet (`pip install dynet38`) for the original's loop")
    parser.add_argument("--profile", action="store_true", help="CPU seconds of one `train --paper` by phase")
    parser.add_argument("--profile-epochs", type=int, default=5)
    parser.add_argument("--roofline", action="store_true",
                        help="the steps' FLOP rate against this core's matrix-multiply peak "
                             "(with --whole: what 10x needs)")
    args = parser.parse_args()
    if args.profile:
        profile(args.vectors, args.profile_epochs)
    means = whole(args.vectors, args.whole_epochs, args.whole_rounds, args.dynet_python) if args.whole else None
    torch.set_num_threads(args.threads)
    if args.roofline:
        roofline(read_vectors(args.vectors), args.seconds, means)
    if args.no_steps:
        return
    table = read_vectors(args.vectors)
    rng = numpy.random.default_rng(0)
    rows = numpy.sort(rng.choice(len(table), size=args.words, replace=False))
    sample = table.subset(rows)
    targets = torch.from_numpy(sample.matrix)
    print(f"{args.words} GloVe words (random rows), torch threads {args.threads}, "
          f"at most {args.seconds:g} CPU-s per row")
    print("| architecture | loop | batch | words per CPU-second | vs one word per update |")
    print("|---|---|---:|---:|---:|")
    for arch in ("spacy_mimick.Mimick.v1", "spacy_mimick.MimickNgram.v1"):
        torch.manual_seed(0)
        model = MimickModel.create({"@architectures": arch}, table.words, table.dim)
        batcher = _Batcher(model, sample.words)
        idx = numpy.arange(len(sample))
        single = [idx[i : i + 1] for i in rng.permutation(len(sample))]
        base = plain_rate(model, sample.words, targets, single, args.seconds)
        print(f"| {arch} | one word per update (original) | 1 | {base:,.0f} | 1.0x |", flush=True)
        for size in (64, 128, 256):
            batches = batcher.batches(idx, size, rng, shuffle=True)
            for name, rate in (("plain minibatches (before)", plain_rate(model, sample.words, targets, batches, args.seconds)),
                               ("trainer (now)", trainer_rate(model, batcher, targets, batches, args.seconds))):
                print(f"| {arch} | {name} | {size} | {rate:,.0f} | {rate / base:.1f}x |", flush=True)
    if args.startup:
        startup(args.vectors)
    if args.full:
        full(table, args.rounds)


def full(table, rounds: int) -> None:
    """Complete trainings on all rows. The paper model for the same 15 epochs (no early stop):
    batches of 64 at lr 0.003 (``--paper`` before the batch-size change) and ``PAPER_CONFIG`` (now),
    alternating, ``rounds`` times each (a shared machine's speed drifts by 10% and more within
    minutes), with the dev loss of every epoch (the same in every round: training is
    deterministic) and its ratio to before; then ``--paper`` and the default model as ``train``
    runs them (early stopping)."""
    runs = (("batch 64, lr 0.003 (--paper before)", replace(PAPER_CONFIG, batch_size=64, learning_rate=0.003)),
            (f"batch {PAPER_CONFIG.batch_size}, lr {PAPER_CONFIG.learning_rate:g} (--paper now)", PAPER_CONFIG))
    curves, rates = {}, {name: [] for name, _ in runs}
    for _ in range(rounds):
        for name, config in runs:
            result = train_mimick(table, PAPER_ARCH, replace(config, max_epochs=15, patience=15),
                                  progress=False, log=lambda msg: None)
            words = sum(h.words_per_second * h.seconds for h in result.history)
            rates[name].append(words / sum(h.cpu_seconds for h in result.history))
            curves[name] = [h.dev_loss for h in result.history]
    print(f"\nPaper model, 15 epochs on all rows (no early stopping), {rounds} alternating rounds: "
          f"training-step words per CPU-second")
    print("| set-up | words per CPU-second, each round | mean | vs before | best dev loss (epoch) |")
    print("|---|---|---:|---:|---:|")
    first = None
    for name, losses in curves.items():
        mean = sum(rates[name]) / len(rates[name])
        first = first or mean
        best = min(range(len(losses)), key=losses.__getitem__)
        print(f"| {name} | {', '.join(f'{r:,.0f}' for r in rates[name])} | {mean:,.0f} | {mean / first:.2f}x | "
              f"{losses[best]:.4f} ({best + 1}) |", flush=True)
    (before, now) = curves.values()
    print("\n| epoch | " + " | ".join(str(e + 1) for e in range(len(before))) + " |")
    print("|---|" + "---:|" * len(before))
    for name, losses in curves.items():
        print(f"| {name} | " + " | ".join(f"{x:.4f}" for x in losses) + " |")
    print("| now / before - 1 | " + " | ".join(f"{(b / a - 1) * 100:+.2f}%" for a, b in zip(before, now)) + " |")
    print(f"(largest gap {max(abs(b / a - 1) for a, b in zip(before, now)) * 100:.2f}%; "
          f"best epochs {(min(now) / min(before) - 1) * 100:+.2f}%)")
    print("\nFull trainings on all rows (early stopping), CPU seconds:")
    for name, arch, config in (("--paper", PAPER_ARCH, PAPER_CONFIG), ("default", DEFAULT_ARCH, TrainConfig())):
        start = time.process_time()
        result = train_mimick(table, arch, config, progress=False, log=lambda msg: None)
        print(f"{name}: {len(table):,} words, {len(result.history)} epochs (best {result.best_epoch}, "
              f"dev loss {result.model.meta['dev_loss']:.4f}): {time.process_time() - start:,.1f} CPU-s; "
              f"dev loss by epoch {[round(h.dev_loss, 4) for h in result.history]}")


if __name__ == "__main__":
    main()
