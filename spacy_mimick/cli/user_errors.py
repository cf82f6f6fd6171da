"""User errors in the CLI: one clear line on stderr, exit code 1, no traceback.

A command wrapped in :func:`user_errors` turns the errors that bad input or options cause (a
malformed vectors, model or CoNLL-U file, a missing file, an option out of range, a diverged
training) into ``error: MESSAGE``. The messages name the file, line or word and what was
expected, so a traceback would only hide them. Anything else is a bug and keeps its traceback.
"""
import errno
import functools
from typing import Callable, NoReturn

import typer

from ..errors import UserError  # noqa: F401  (the CLI modules import it from here)

# What a command turns into one line: the package's own errors and the OS's about paths.
USER_ERROR_TYPES = (UserError, FileNotFoundError, FileExistsError, IsADirectoryError, NotADirectoryError,
                    PermissionError)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``error: message`` on stderr and exit with ``code``."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def user_errors(command: Callable) -> Callable:
    """Decorate a typer command (below ``@app.command``) so that user errors exit cleanly."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except USER_ERROR_TYPES as err:
            fail(str(err))
        except OSError as err:
            if err.errno not in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
                raise
            # A full disk (or a file size limit): outputs are written beside their target and
            # renamed at the end (atomic.py), so nothing the user had was replaced.
            fail(f"could not write the output: {err.strerror} (nothing was replaced: files already "
                 f"there are unchanged; free some space and run again)")

    return wrapper
