"""Devices: the code runs where spaCy's --gpu-id and thinc's ops say.

CI has no GPU, so these tests check what can be checked on a CPU: the device is chosen in one
place (spacy_mimick/devices.py) and followed everywhere else; a --gpu-id without a GPU is a clear
error; the component follows the pipeline's device; training given a device trains there.
The GPU itself is exercised by benchmarks/gpu_check.sh (docs/speed.md, "GPU").
"""
import ast
from pathlib import Path

import numpy
import pytest
import torch
from thinc.util import get_torch_default_device
from typer.testing import CliRunner

import spacy_mimick
from spacy_mimick import devices
from spacy_mimick.cli import app
from spacy_mimick.devices import DeviceError, batch_to, torch_device
from spacy_mimick.vectors.mimick_trainer import TrainConfig, train_mimick

PACKAGE = Path(spacy_mimick.__file__).parent
DEVICE_NAMES = {"cpu", "cuda", "mps"}


def _device_literals(path: Path):
    """(line, what) for every device name written into the code of ``path``: a string literal
    naming a device (``"cuda"``, ``"cuda:0"``), or a ``.cuda()`` call. ``.cpu()`` (bringing a
    result to numpy) and docstrings do not count."""
    tree = ast.parse(path.read_text(), filename=str(path))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                and node.value.split(":")[0] in DEVICE_NAMES):
            found.append((node.lineno, repr(node.value)))
        if isinstance(node, ast.Attribute) and node.attr == "cuda" and isinstance(node.ctx, ast.Load):
            found.append((node.lineno, ".cuda"))
    return sorted(found)


def test_only_devices_py_names_a_device():
    """A hard-coded device would pin a code path to the CPU or to CUDA. The exceptions: devices.py
    (which maps --gpu-id to a device and queries torch.cuda) and torch.load's map_location, which
    reads saved weights onto the CPU on purpose (a model saved on a GPU loads on any machine)."""
    allowed = {
        ("devices.py", "'cuda'"), ("devices.py", ".cuda"), ("devices.py", "'cpu'"),
        ("mimick_model.py", "'cpu'"),  # torch.load(..., map_location="cpu")
    }
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, what in _device_literals(path):
            if (path.name, what) not in allowed:
                offenders.append(f"{path.name}:{line}: {what}")
    assert not offenders, "device names outside devices.py: " + ", ".join(offenders)
    # map_location is the one CPU literal there; a second one would slip through the allow-list.
    assert [what for _, what in _device_literals(PACKAGE / "vectors" / "mimick_model.py")] == ["'cpu'"]


def test_the_scan_sees_a_hard_coded_device(tmp_path):
    code = tmp_path / "bad.py"
    code.write_text('"""Runs on "cuda" (a docstring: fine)."""\nimport torch\n'
                    'x = torch.zeros(3, device="cuda:0")\ny = x.cuda()\nz = x.cpu()\n')
    assert _device_literals(code) == [(3, "'cuda:0'"), (4, ".cuda")]


def test_minus_one_is_the_pipelines_device():
    assert torch_device(-1) == get_torch_default_device()


def test_a_gpu_id_without_a_gpu_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(DeviceError, match=r"--gpu-id 0: PyTorch sees no CUDA GPU .*--gpu-id -1 for the CPU"):
        torch_device(0)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(DeviceError, match=r"--gpu-id 3: PyTorch sees 1 GPU\(s\), numbered 0 to 0"):
        torch_device(3)


@pytest.mark.parametrize("command", ["train", "add"])
def test_cli_refuses_a_missing_gpu_before_reading_anything(monkeypatch, tmp_path, command):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    args = ([command, str(tmp_path / "no-such-vectors.txt"), str(tmp_path / "out"), "--gpu-id", "0"]
            if command == "train" else
            [command, str(tmp_path / "no-such-pipeline"), str(tmp_path / "out"), "--gpu-id", "0"])
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    assert "error: --gpu-id 0: PyTorch sees no CUDA GPU" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()


def test_batch_to_keeps_lengths_where_packing_wants_them():
    batch = {"chars": torch.zeros(2, 3, dtype=torch.int64), "lengths": torch.tensor([3, 2])}
    moved = batch_to(batch, torch.device("meta"))
    assert moved["chars"].device.type == "meta"
    assert moved["lengths"] is batch["lengths"]


def test_training_runs_on_the_device_it_is_given(monkeypatch, glove_small):
    """Every batch, target and weight goes to the device asked for; the model is left there."""
    seen = []
    real_batch_to = devices.batch_to

    def spy(batch, device):
        seen.append(device)
        return real_batch_to(batch, device)

    import spacy_mimick.vectors.mimick_trainer as trainer

    monkeypatch.setattr(trainer, "batch_to", spy)
    asked = torch_device(-1)
    config = TrainConfig(max_epochs=1, batch_size=32)
    table = glove_small.subset(numpy.arange(500))
    result = train_mimick(table, {"@architectures": "spacy_mimick.Mimick.v1", "hidden": 8}, config,
                          progress=False, device=asked)
    assert seen and set(seen) == {asked}
    assert result.model.device == asked


def test_mimick_vectors_follows_the_pipelines_device(monkeypatch, nlp_glove, tiny_mimick):
    """The vectors move their model to thinc's current device before predicting (the GPU after
    spacy.require_gpu()); the fake device here is torch's 'meta', which no real code would pick."""
    import spacy_mimick.vectors.mimick_vectors as component

    pipe = nlp_glove.add_pipe("mimick_vectors")
    pipe.initialize(model_path=tiny_mimick)
    assert pipe.model.device == get_torch_default_device()
    monkeypatch.setattr(component, "pipeline_device", lambda: torch.device("meta"))
    assert pipe._require_model().device.type == "meta"


def test_components_predict_on_their_thread_setting_and_restore_the_callers(nlp_glove, tiny_mimick, monkeypatch):
    """mimick_vectors and mimick_tagger run their torch work on n_threads (default -1: the free
    cores, here made 1) whatever the caller set, and give the caller's setting back; 0 leaves
    torch's setting alone."""
    from spacy.tokens import Doc
    from spacy.training import Example

    import spacy_mimick.threads as threads

    monkeypatch.setattr(threads, "free_cores", lambda: 1)

    seen = []
    nlp_glove.add_pipe("mimick_vectors").initialize(model_path=tiny_mimick)
    model = nlp_glove.vocab.vectors.model
    real = model.predict
    model.predict = lambda words, **kw: seen.append(("vectors", torch.get_num_threads())) or real(words, **kw)
    tagger = nlp_glove.add_pipe("mimick_tagger")
    ref = Doc(nlp_glove.vocab, words=["the", "cat"], pos=["DET", "NOUN"])
    nlp_glove.initialize(lambda: [Example(nlp_glove.make_doc("the cat"), ref)])
    net = tagger.model.get_ref("net").layers[0].shims[0]._model
    net.register_forward_pre_hook(lambda module, inputs: seen.append(("tagger", torch.get_num_threads())))
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        nlp_glove("the zorblaxian cat")
        assert set(seen) == {("vectors", 1), ("tagger", 1)} and torch.get_num_threads() == 2
        seen.clear()
        nlp_glove.get_pipe("mimick_vectors").cfg["n_threads"] = 0
        tagger.n_threads = 0
        nlp_glove("the qwzzyx cat")
        assert set(seen) == {("vectors", 2), ("tagger", 2)}
    finally:
        torch.set_num_threads(before)
