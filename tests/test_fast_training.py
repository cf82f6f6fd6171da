"""The fast training path: pre-encoded batches and the foreach optimizers give what the plain
path (model.featurize, torch.optim) gives."""
import random

import numpy
import pytest
import torch

from conftest import can_build_extensions
from spacy_mimick.vectors.mimick_model import MimickModel
from spacy_mimick.vectors.mimick_trainer import _Batcher, make_optimizer, objective
from spacy_mimick.vectors.optimizers import Adam, SparseAdam

ARCHS = ("spacy_mimick.Mimick.v1", "spacy_mimick.MimickNgram.v1", "spacy_mimick.MimickHybrid.v1")


def _same_batch(a, b):
    assert sorted(a) == sorted(b)
    for key in a:
        assert a[key].dtype == b[key].dtype, key
        assert torch.equal(a[key], b[key]), key


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("typo_prob", [0.0, 0.5])
def test_batcher_gives_what_featurize_gives(glove_small, arch, typo_prob):
    words = glove_small.words[:800] + ["x" * 100, "y" * 90]  # clipped huge words share a bucket
    model = MimickModel.create({"@architectures": arch}, words, glove_small.dim)
    batcher = _Batcher(model, words)
    batches = batcher.batches(numpy.arange(len(words)), 16, numpy.random.default_rng(0), shuffle=True)
    assert sorted(int(i) for b in batches for i in b) == list(range(len(words)))
    fast_rng, plain_rng = random.Random(3), random.Random(3)
    n_typo = 0
    for idx in batches:
        fast = batcher.featurize(idx, typo_prob, fast_rng)
        # The plain path: the typo'd word list, drawn the same way, through model.featurize.
        plain_words = []
        for i in idx:
            word = words[i]
            if typo_prob and plain_rng.random() < typo_prob:
                from spacy_mimick.vectors.mimick_trainer import make_typo
                word = make_typo(word, plain_rng)
            plain_words.append(word)
        n_typo += sum(w != words[i] for w, i in zip(plain_words, idx))
        _same_batch(fast, model.featurize(plain_words))
    assert (n_typo > 50) == (typo_prob > 0)


@pytest.mark.parametrize("arch", ARCHS)
def test_fast_batch_gives_same_loss_and_gradients(glove_small, arch):
    words = glove_small.words[:300]
    targets = torch.from_numpy(glove_small.matrix[:300])
    torch.manual_seed(0)
    model = MimickModel.create({"@architectures": arch}, words, glove_small.dim)
    batcher = _Batcher(model, words)
    idx = batcher.batches(numpy.arange(300), 32, numpy.random.default_rng(1), shuffle=True)[0]
    grads = []
    for batch in (batcher.featurize(idx, 0.0, random.Random(0)), model.featurize([words[i] for i in idx])):
        model.module.zero_grad()
        loss = objective(model.module(batch), targets[torch.from_numpy(idx)], "l2", 1.0).mean()
        loss.backward()
        grads.append((loss.item(), [p.grad.to_dense().clone() for p in model.module.parameters()]))
    (loss_fast, g_fast), (loss_plain, g_plain) = grads
    assert loss_fast == loss_plain
    assert all(torch.equal(a, b) for a, b in zip(g_fast, g_plain))


def _train_steps(module, make_opt, batches, steps=6, clip=0.0):
    opt = make_opt(module)
    for step in range(steps):
        batch, gold = batches[step % len(batches)]
        opt.zero_grad()
        ((module(batch) - gold) ** 2).sum(dim=1).mean().backward()
        opt.step(clip)
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("clip", [0.0, 0.5])
@pytest.mark.parametrize("kernel", ["C", "foreach"])
def test_optimizers_follow_torch_optim(glove_small, arch, clip, kernel, monkeypatch):
    """optimizers.Adam / SparseAdam take the steps torch.optim.Adam / SparseAdam take, and
    Adam's own clipping (on its flat gradient) is torch's clip_grad_norm_ over the dense
    weights (0.5 is below these batches' gradient norms: every step is clipped). Adam's update
    both ways: the C kernel (built by `pip install`) and torch's foreach ops (without it)."""
    from spacy_mimick.vectors import optimizers
    if kernel == "C":
        assert optimizers._cpu_kernels is not None or not can_build_extensions()
    else:
        monkeypatch.setattr(optimizers, "_cpu_kernels", None)
    words = glove_small.words[:200]
    model = MimickModel.create({"@architectures": arch}, words, glove_small.dim)
    batcher = _Batcher(model, words)
    gold = torch.from_numpy(glove_small.matrix[:200])
    batches = [(batcher.featurize(idx, 0.0, random.Random(0)), gold[torch.from_numpy(idx)])
               for idx in batcher.batches(numpy.arange(200), 16, numpy.random.default_rng(0), True)[:3]]
    start = {k: v.clone() for k, v in model.module.state_dict().items()}

    def torch_optim(module):
        sparse = [p for m in module.modules() if isinstance(m, torch.nn.EmbeddingBag) for p in m.parameters()]
        dense = [p for p in module.parameters() if all(p is not q for q in sparse)]
        opts = (([torch.optim.Adam(dense, lr=0.01)] if dense else [])
                + ([torch.optim.SparseAdam(sparse, lr=0.02)] if sparse else []))

        class Both:
            def zero_grad(self):
                for o in opts:
                    o.zero_grad()

            def step(self, clip):
                if clip and dense:  # (the n-gram model has no dense weights)
                    norm = torch.nn.utils.clip_grad_norm_(dense, clip)
                    assert norm > clip  # the test clips for real
                for o in opts:
                    o.step()
        return Both()

    ours = _train_steps(model.module, lambda m: make_optimizer(m, 0.01, 0.02), batches, clip=clip)
    model.module.load_state_dict(start)
    reference = _train_steps(model.module, torch_optim, batches, clip=clip)
    for name in ours:
        assert not torch.equal(ours[name], start[name]), f"{name} was not trained"
        torch.testing.assert_close(ours[name], reference[name], rtol=1e-5, atol=1e-6)


def test_sparse_adam_refuses_dense_gradients():
    weight = torch.nn.Parameter(torch.zeros(3, 2))
    weight.grad = torch.ones(3, 2)
    with pytest.raises(RuntimeError, match="sparse gradients"):
        SparseAdam([weight], lr=0.1).step()


def test_adam_keeps_the_modules_parameters_in_one_buffer(glove_small, tmp_path):
    """The paper model's parameters become views of Adam's flat buffer: the same Parameter
    objects, trained in place, and the model still saves and loads."""
    words = glove_small.words[:100]
    model = MimickModel.create({"@architectures": "spacy_mimick.Mimick.v1"}, words, glove_small.dim)
    params = list(model.module.parameters())
    before = [p.detach().clone() for p in params]
    opt = make_optimizer(model.module, 0.01)
    adam = opt.optimizers[0]
    assert adam.flat is not None and adam.flat.numel() == sum(p.numel() for p in params)
    assert list(model.module.parameters()) == params
    assert all(p.data.untyped_storage().data_ptr() == adam.flat.untyped_storage().data_ptr() for p in params)
    assert all(torch.equal(p, b) for p, b in zip(params, before))  # flattening copies the values
    batcher = _Batcher(model, words)
    idx = numpy.arange(16)
    opt.zero_grad()
    loss = ((model.module(batcher.featurize(idx, 0.0, random.Random(0)))
             - torch.from_numpy(glove_small.matrix[:16])) ** 2).sum()
    loss.backward()
    opt.step(5.0)
    assert all(not torch.equal(p, b) for p, b in zip(params, before) if p.grad.abs().sum() > 0)
    model.to_disk(tmp_path / "m")
    loaded = MimickModel.from_disk(tmp_path / "m")
    numpy.testing.assert_allclose(loaded.predict(words[:20]), model.predict(words[:20]), rtol=1e-6)


def test_adam_skips_parameters_without_gradients():
    a, b = torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(2))
    opt = Adam([a, b], lr=0.1)
    a.grad = torch.ones(2)
    opt.step()
    assert torch.equal(b.detach(), torch.ones(2))
    torch.testing.assert_close(a.detach(), torch.full((2,), 0.9))


# -- the vectors cache -----------------------------------------------------------------------

def _write_glove(path, rows):
    path.write_text("".join(f"{w} " + " ".join(f"{x:g}" for x in vec) + "\n" for w, vec in rows), encoding="utf8")


def test_cached_read_returns_the_text_readers_arrays(glove_small, tmp_path):
    from spacy_mimick.vectors.vectors_io import read_vectors

    src = tmp_path / "small.txt"
    _write_glove(src, zip(glove_small.words[:500], glove_small.matrix[:500]))
    plain = read_vectors(src)
    first = read_vectors(src, cache=tmp_path / "cache")
    assert len(list((tmp_path / "cache").iterdir())) == 1
    second = read_vectors(src, cache=tmp_path / "cache")  # from the cache file
    for table in (first, second):
        assert table.words == plain.words
        assert numpy.array_equal(table.matrix, plain.matrix) and table.matrix.dtype == numpy.float32
        assert table.source == str(src) and table.unk is None
    # Other read options are other entries, not the first one's rows.
    assert len(read_vectors(src, cache=tmp_path / "cache", limit=10)) == 10
    assert len(read_vectors(src, cache=tmp_path / "cache")) == 500


def test_cache_is_invalidated_when_the_source_changes(glove_small, tmp_path):
    import os

    from spacy_mimick.vectors.vectors_io import read_vectors

    src, cache = tmp_path / "v.txt", tmp_path / "cache"
    _write_glove(src, zip(glove_small.words[:50], glove_small.matrix[:50]))
    assert read_vectors(src, cache=cache).words == glove_small.words[:50]
    _write_glove(src, zip(glove_small.words[50:80], glove_small.matrix[50:80] * 2))
    st = os.stat(src)
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # a later time even on coarse clocks
    changed = read_vectors(src, cache=cache)
    assert changed.words == glove_small.words[50:80]
    assert numpy.allclose(changed.matrix, glove_small.matrix[50:80] * 2, atol=1e-5)
    # A corrupt cache file is read around and replaced.
    (entry,) = cache.iterdir()
    entry.write_bytes(b"not a cache")
    assert read_vectors(src, cache=cache).words == glove_small.words[50:80]
    assert read_vectors(src, cache=cache).words == glove_small.words[50:80]


def test_cached_read_replays_warnings_and_keeps_unk(tmp_path):
    from spacy_mimick.vectors.vectors_io import read_vectors

    src = tmp_path / "dup.txt"
    src.write_text("<UNK> 1 1\ncat 1 2\ndog 3 4\ncat 5 6\n", encoding="utf8")
    for _ in range(2):  # the parse, then the cache
        with pytest.warns(UserWarning, match="skipped 1 duplicate word"):
            table = read_vectors(src, on_duplicate="first", cache=tmp_path / "cache")
        assert table.words == ["cat", "dog"] and table.unk.tolist() == [1.0, 1.0]


def test_train_cli_caches_vectors_by_default(tmp_path, monkeypatch):
    import gzip

    from typer.testing import CliRunner

    from conftest import GLOVE
    from spacy_mimick.cli import app

    src = tmp_path / "glove.txt.gz"
    with gzip.open(GLOVE, "rt") as f, gzip.open(src, "wt") as out:
        out.writelines(line for _, line in zip(range(300), f))
    monkeypatch.setenv("SPACY_MIMICK_CACHE", str(tmp_path / "cache"))
    for extra in (["--no-cache"], [], []):
        result = CliRunner().invoke(app, ["train", str(src), str(tmp_path / "m"), "--paper", "--max-epochs", "1",
                                          "--quiet", *extra], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert (tmp_path / "cache").exists() == (extra == [])
    assert len(list((tmp_path / "cache").glob("vectors-glove.txt.gz-*.npz"))) == 1


def test_train_cli_starts_without_spacy_thinc_or_confection(tmp_path):
    """`python -m spacy_mimick train` imports neither spaCy nor thinc nor confection (about half a
    CPU-second of start-up and exit in a process of ~10: benchmarks/train_throughput.py), and
    still resolves the architecture and saves a model that spaCy's registry can load."""
    import gzip
    import subprocess
    import sys

    from conftest import GLOVE, REPO

    src = tmp_path / "glove.txt.gz"
    with gzip.open(GLOVE, "rt") as f, gzip.open(src, "wt") as out:
        out.writelines(line for _, line in zip(range(300), f))
    code = (
        "import sys\n"
        "from spacy_mimick import cli\n"
        f"sys.argv = ['spacy_mimick', 'train', {str(src)!r}, {str(tmp_path / 'm')!r}, '--paper', '--max-epochs', '1', "
        "'--quiet', '--no-cache']\n"
        "try:\n    cli.main()\nexcept SystemExit as stop:\n    assert not stop.code, stop.code\n"
        "print(sorted(m for m in ('spacy', 'thinc', 'confection') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "[]"
    from spacy.util import registry  # the saved config names an architecture spaCy's registry knows

    assert registry.architectures.get("spacy_mimick.Mimick.v1") is not None
    model = MimickModel.from_disk(tmp_path / "m")
    assert model.predict(["crossing"]).shape == (1, 50)
