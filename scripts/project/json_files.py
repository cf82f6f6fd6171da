"""The JSON files the project's commands pass each other: runs' metrics (``evaluate.py``), paired
tests (``significance.py``), ``data.py``'s ``sources.json``, packages' meta.json.

:func:`write_json` writes one as every command does (two-space indent, a final newline, the
folder made if missing) through :func:`spacy_mimick.atomic.atomic_file`, so an interrupted
command never leaves half a file for the next one to read; :func:`read_json` reads one that may
be absent; :func:`vectors_name` is the vectors' name recorded in ``sources.json``.
"""
import json
from pathlib import Path
from typing import Any, Optional

from spacy_mimick.atomic import atomic_file


def read_json(path: Optional[Path]) -> Optional[Any]:
    """The file's data, or None where ``path`` is None or not there."""
    return json.loads(path.read_text(encoding="utf8")) if path is not None and path.exists() else None


def write_json(path: Path, data: Any, indent: int = 2, ensure_ascii: bool = True) -> None:
    """``data`` as JSON with a final newline, replacing ``path`` in one step."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path, "w", encoding="utf8") as out:
        out.write(json.dumps(data, indent=indent, ensure_ascii=ensure_ascii) + "\n")


def vectors_name(sources: Optional[Path]) -> Optional[str]:
    """The vectors' name in ``data.py``'s sources.json (None: no file, or no vectors)."""
    return ((read_json(sources) or {}).get("vectors") or {}).get("name")
