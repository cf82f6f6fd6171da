"""The components' torch threads: $OMP_NUM_THREADS where set, else the free cores, measured from
the machine's idle time."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from spacy_mimick.threads import AUTO, FreeCores, torch_threads, usable_cores


class Machine:
    """A fake clock, machine idle time and own CPU time, advanced by ``run``."""

    def __init__(self):
        self.now, self.idle, self.own = 100.0, 5000.0, 10.0

    def run(self, seconds, idle_cores, own_cores):
        self.now += seconds
        self.idle += seconds * idle_cores
        self.own += seconds * own_cores

    def free_cores(self, cores=4):
        return FreeCores(interval=1.0, idle_seconds=lambda: self.idle, own_seconds=lambda: self.own,
                         clock=lambda: self.now, cores=cores)


def test_one_thread_until_a_first_interval_has_passed():
    machine = Machine()
    free = machine.free_cores()
    assert free() == 1
    machine.run(0.5, idle_cores=4, own_cores=0)
    assert free() == 1  # within the interval: the last value


def test_an_idle_machine_gives_every_core():
    machine = Machine()
    free = machine.free_cores()
    free()
    machine.run(2.0, idle_cores=4, own_cores=0)
    assert free() == 4


def test_cores_this_process_keeps_busy_count_as_free():
    """Running on 4 threads, the machine shows no idle time; the 4 cores are still this process's."""
    machine = Machine()
    free = machine.free_cores()
    free()
    machine.run(1.0, idle_cores=0, own_cores=3.9)
    assert free() == 4


def test_other_processes_take_their_cores():
    machine = Machine()
    free = machine.free_cores()
    free()
    machine.run(1.0, idle_cores=0.1, own_cores=1.0)  # three other processes on three cores
    assert free() == 1
    machine.run(1.0, idle_cores=1.0, own_cores=0.9)  # one of them ended
    assert free() == 2


def test_never_more_than_the_usable_cores_nor_fewer_than_one():
    machine = Machine()
    free = machine.free_cores(cores=2)
    free()
    machine.run(1.0, idle_cores=8, own_cores=0)
    assert free() == 2
    machine.run(1.0, idle_cores=0, own_cores=0)
    assert free() == 1
    assert 1 <= usable_cores() <= (torch.get_num_threads() + 64)


def test_without_proc_stat_one_thread():
    free = FreeCores(idle_seconds=lambda: None)
    assert free() == 1


def test_torch_threads_restores_the_callers_setting(monkeypatch):
    import spacy_mimick.threads as threads

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)

    before = torch.get_num_threads()
    monkeypatch.setattr(threads, "free_cores", lambda: 1 if before != 1 else 2)
    expected = 1 if before != 1 else 2
    with torch_threads(AUTO):
        assert torch.get_num_threads() == expected
    assert torch.get_num_threads() == before
    with torch_threads(0):
        assert torch.get_num_threads() == before


def test_omp_num_threads_is_the_default_where_set(monkeypatch):
    """The caller's OMP_NUM_THREADS wins over the free cores: a fixed count, whatever the load."""
    import spacy_mimick.threads as threads

    monkeypatch.setattr(threads, "free_cores", lambda: 2)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert threads.auto_threads() == 1
    with torch_threads(AUTO):
        assert torch.get_num_threads() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "3,1")  # OpenMP's list form: the outer level's count
    assert threads.auto_threads() == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "")
    assert threads.auto_threads() == 2
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert threads.auto_threads() == 2


def test_a_bad_omp_num_threads_names_itself(monkeypatch):
    import spacy_mimick.threads as threads

    for bad in ("two", "0", "-1"):
        monkeypatch.setenv("OMP_NUM_THREADS", bad)
        with pytest.raises(ValueError, match=f"OMP_NUM_THREADS='{bad}': expected a whole number"):
            threads.auto_threads()


def test_the_projects_commands_fix_the_components_threads(tmp_path):
    """scripts/project/torch_threads.py (imported by every training and evaluation command) puts
    its count where the components' default reads it: 1 without OMP_NUM_THREADS, else that."""
    script = Path(__file__).resolve().parents[1] / "scripts" / "project"
    probe = (f"import sys; sys.path.insert(0, {str(script)!r}); import torch_threads, torch; "
             "from spacy_mimick.threads import auto_threads; "
             "print(auto_threads(), torch.get_num_threads())")
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", probe], env=env, cwd=tmp_path, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["1", "1"]
    out = subprocess.run([sys.executable, "-c", probe], env={**env, "OMP_NUM_THREADS": "2"},
                         cwd=tmp_path, capture_output=True, text=True, check=True).stdout.split()
    assert out == ["2", "2"]
