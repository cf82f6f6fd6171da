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
from typing import IO, Callable, Iterator, Optional, Union


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


_HELD = threading.local()  # the folders this thread has locked: {(st_dev, st_ino): depth}


@contextmanager
def folder_lock(folder: Union[str, Path], shared: bool = False) -> Iterator[None]:
    """An exclusive lock (flock) on ``folder`` itself: saves of directories into the same folder
    run one after the other, across processes and threads, and leave no lock file behind.
    Re-entrant within a thread, so a command can hold it around a save that takes it too (to
    look at what is in the folder and write in one step).

    ``shared=True`` is the readers' lock: loads run side by side but never while a save of the
    folder is between its renames, so a load sees a whole model, never a missing or mixed one.
    A reader that may not open or flock the folder (no read permission, a filesystem without
    flock) reads without the lock."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        yield
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except PermissionError:
        if not shared:
            raise
        fd = None
    if fd is None:
        yield
        return
    st = os.fstat(fd)
    key = (st.st_dev, st.st_ino)
    held = getattr(_HELD, "folders", None)
    if held is None:
        held = _HELD.folders = {}
    if key in held:  # this thread holds it already
        os.close(fd)
        held[key] += 1
        try:
            yield
        finally:
            held[key] -= 1
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
            locked = True
        except OSError:  # a filesystem without flock: readers go on without the lock
            if not shared:
                raise
            locked = False
        if locked:
            held[key] = 1
        try:
            yield
        finally:
            if locked:
                del held[key]
    finally:
        os.close(fd)  # releases the lock


def _clean_stale(path: Path) -> None:
    """Remove the temporary folders of earlier saves of ``path`` that were killed midway. Called
    under the folder lock, so none belongs to a live save. If a kill came between the two renames
    (``path`` moved aside, the new one not yet in place) the previous model is put back first."""
    import shutil

    for old in sorted(path.parent.glob(f".{path.name}.old-*")):
        if not path.exists() and (old / "model").is_dir():
            os.replace(old / "model", path)
        shutil.rmtree(old, ignore_errors=True)
    for tmp in path.parent.glob(f".{path.name}.tmp-*"):
        shutil.rmtree(tmp, ignore_errors=True)


@contextmanager
def atomic_directory(path: Union[str, Path], check: Optional[Callable[[Path], None]] = None) -> Iterator[Path]:
    """Yield a temporary folder beside ``path`` to write into; when the block ends without error
    it replaces ``path`` (moved aside, then removed). On any error or interruption (SIGTERM
    included) ``path`` is as it was and the temporary folder is removed. Saves of the same
    folder are serialized by a lock, and debris of earlier killed saves is cleaned up.

    ``check(path)``, if given, runs first under the lock and raises to refuse the save: what is
    at ``path`` may have changed since the caller looked (another process saving there), so
    the caller's own check before the save is not enough."""
    import shutil

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with terminate_as_interrupt(), folder_lock(path.parent):
        if check is not None:
            check(path)
        _clean_stale(path)
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.tmp-", dir=path.parent))
        try:
            yield tmp
            os.chmod(tmp, 0o777 & ~_umask())
            if path.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-", dir=path.parent))
                os.replace(path, old / "model")
                try:
                    os.replace(tmp, path)
                except BaseException:
                    os.replace(old / "model", path)
                    raise
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(tmp, path)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
