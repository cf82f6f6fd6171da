"""How many torch CPU threads the components predict with.

The components predict in small batches (``nlp(text)``: one sentence; ``nlp.pipe``: a few
hundred). On such batches torch's default of one thread per core is many times slower than one
thread as soon as another process keeps a core busy, and one thread leaves a core unused on an
idle machine (docs/speed.md, ``benchmarks/pipeline_load.py``). So by default (``n_threads =
-1``, :data:`AUTO`) they use as many threads as there are cores that the rest of the machine
leaves free: measured about once a second from the machine's idle time (``/proc/stat``; the
time of niced processes counts as free, as they yield to this one, unless it is niced too) plus
this process's own CPU time over the same interval (the cores this process keeps busy are
free for it), capped by the cores it may run on (affinity, a cgroup's CPU quota). Until a
first interval has passed, and where ``/proc/stat`` cannot be read, that is one thread.

Where ``OMP_NUM_THREADS`` is set, the default is that count instead: the caller has chosen, as
torch itself honours it. A fixed count also makes the components' floats independent of the
load: a BiLSTM's output differs in its last bits between thread counts, and a training whose
vectors moved with the free cores took another path on one core than on two (docs/project.md).
The project's training and evaluation commands set it to 1 (``scripts/project/torch_threads.py``).
"""
import math
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Optional, Tuple

import torch

AUTO = -1  # n_threads: $OMP_NUM_THREADS where set, else the free cores measured at run time


def usable_cores() -> int:
    """The cores this process may run on: its affinity, capped by a cgroup v2 CPU quota."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cores)


def _machine_idle_seconds() -> Optional[float]:
    """CPU seconds of the whole machine since boot (``/proc/stat``) that a process of this one's
    priority can have: idle and iowait, and the time of niced processes (which yield to it)
    unless this process is niced itself; None where ``/proc/stat`` cannot be read."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if len(fields) < 6 or fields[0] != b"cpu":
        return None
    free = int(fields[4]) + int(fields[5])
    if _niceness() <= 0:
        free += int(fields[2])
    return free / os.sysconf("SC_CLK_TCK")


def _niceness() -> int:
    try:
        return os.getpriority(os.PRIO_PROCESS, 0)
    except (AttributeError, OSError):
        return 0


class FreeCores:
    """The number of cores other processes leave free, re-measured every ``interval`` seconds.

    free = (machine idle CPU-seconds + this process's CPU-seconds) / wall seconds, over the last
    interval, rounded to the nearest core, between 1 and :func:`usable_cores`.
    """

    def __init__(self, interval: float = 1.0,
                 idle_seconds: Callable[[], Optional[float]] = _machine_idle_seconds,
                 own_seconds: Callable[[], float] = time.process_time,
                 clock: Callable[[], float] = time.monotonic, cores: Optional[int] = None):
        self.interval = interval
        self._idle, self._own, self._clock = idle_seconds, own_seconds, clock
        self.cores = cores or usable_cores()
        self.value = 1
        self._lock = threading.Lock()
        self._last: Optional[Tuple[float, float, float]] = None

    def __call__(self) -> int:
        now = self._clock()
        last = self._last
        if last is not None and now - last[0] < self.interval:
            return self.value
        with self._lock:
            idle = self._idle()
            if idle is None:
                self.value = 1
                return 1
            own = self._own()
            if last is not None and now > last[0]:
                wall = now - last[0]
                free = ((idle - last[1]) + (own - last[2])) / wall
                self.value = min(self.cores, max(1, int(free + 0.5)))
            self._last = (now, idle, own)
        return self.value


free_cores = FreeCores()


def requested_threads() -> Optional[int]:
    """The torch thread count the environment asks for: ``OMP_NUM_THREADS`` (its first value,
    as OpenMP reads a list), None where it is unset or empty."""
    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    if not value:
        return None
    first = value.split(",")[0].strip()
    if not first.isdigit() or int(first) < 1:
        raise ValueError(f"OMP_NUM_THREADS={value!r}: expected a whole number of threads >= 1 "
                         "(or unset it to let the components use the cores left free)")
    return int(first)


def auto_threads() -> int:
    """What :data:`AUTO` means now: :func:`requested_threads` where set, else :data:`free_cores`."""
    return requested_threads() or free_cores()


@contextmanager
def torch_threads(n_threads: int) -> Iterator[None]:
    """Run the block's torch CPU work on ``n_threads`` threads (0: as torch is set; -1,
    :data:`AUTO`: :func:`auto_threads`), then restore the caller's setting."""
    if n_threads == AUTO:
        n_threads = auto_threads()
    old = torch.get_num_threads()
    if n_threads <= 0 or n_threads == old:
        yield
        return
    torch.set_num_threads(n_threads)
    try:
        yield
    finally:
        torch.set_num_threads(old)
