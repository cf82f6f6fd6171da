"""Writing outputs without writing in place: every file the project writes goes through
:func:`atomic_file` (a temporary file beside the target, flushed and fsynced, then renamed over
it), so a full disk, an error, Ctrl-C or SIGTERM midway leaves the previous file whole and no
temporary file behind.
"""
import os
import signal
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator, Union


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises KeyboardInterrupt (as Ctrl-C does), so the cleanup that
    Ctrl-C runs also runs when the process is terminated. A no-op outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def atomic_file(path: Union[str, Path], mode: str = "wb", **open_kw) -> Iterator[IO]:
    """Open a temporary file beside ``path`` for writing; when the block ends without error it is
    flushed, fsynced and renamed to ``path`` (permissions as a new file's). On any error or
    interruption (SIGTERM included) the temporary file is removed and ``path`` is unchanged."""
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"{path.parent} is not an existing folder: cannot write {path}")
    with terminate_as_interrupt():
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, mode, **open_kw) as out:
                yield out
                out.flush()
                os.fsync(out.fileno())
            os.chmod(tmp, 0o666 & ~_umask())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise


def write_bytes_atomic(path: Union[str, Path], data: bytes) -> None:
    with atomic_file(path) as out:
        out.write(data)
