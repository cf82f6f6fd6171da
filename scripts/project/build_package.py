"""Package a trained pipeline as an installable sdist and wheel, with its licenses, offline and without warnings.

    python scripts/project/build_package.py MODEL_DIR packages --meta packages/<lang>_<name>.meta.json \
        --sources corpus/<tb>/sources.json [--dist packages/dist]

Four steps:

1. spaCy's ``package`` (the function behind ``python -m spacy package``, with the same
   defaults: spaCy in the requirements) writes ``packages/<lang>_<name>-<version>/`` (setup.py,
   MANIFEST.in, meta.json, the pipeline's data) from ``MODEL_DIR`` and the meta.json of
   ``package_meta.py``.
2. ``LICENSE`` and ``LICENSES_SOURCES`` are written there, in the package's root (the sdist's
   MANIFEST.in includes both, setuptools puts them into the installed package's metadata) and
   beside the pipeline's data (so they are installed with it: ``nlp.path``). LICENSE: the
   package's license (meta.json's ``license``, the treebank's, as ``package_meta.py`` chose it)
   followed by the treebank's own LICENSE.txt (found through ``sources.json``); LICENSES_SOURCES:
   every entry of meta.json's ``sources`` (treebank, vectors, spacy-mimick) with its license.
3. The sdist is built with setuptools' PEP 517 hook (``setuptools.build_meta.build_sdist``) in a
   subprocess, in the current environment: no download.
4. With ``--dist``: the pipeline's wheel (``build_wheel``, the same way), and spacy-mimick's own
   wheel built from this checkout, go into that folder beside a copy of the sdist, so that
   ``pip install --find-links packages/dist <lang>_<name>`` installs the pipeline and the
   spacy-mimick it requires without any index serving spacy-mimick (``--no-index`` too, where
   spaCy and torch are installed already). The pipeline's requirement stays a version range
   (``spacy-mimick>=0.1.0,<0.2.0``): the same package installs from an index for real users.

Why not ``python -m spacy package --build sdist``: it runs ``python -m build``, which is not a
dependency of spaCy (spaCy warns that building without it is deprecated and falls back to
``setup.py sdist``), and ``build`` by default installs setuptools into an isolated environment
from the package index, which fails offline. ``--build none`` still prints the warning about
``build``; setuptools is already installed (it installed spacy-mimick), so it builds the sdist
here with no new dependency and no network.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

SDIST_SUFFIX = ".tar.gz"
# Where the text of a license named in meta.json's "sources" can be read.
LICENSE_URLS = {
    "CC BY-SA 4.0": "https://creativecommons.org/licenses/by-sa/4.0/legalcode",
    "CC BY 4.0": "https://creativecommons.org/licenses/by/4.0/legalcode",
    "CC BY-NC-SA 4.0": "https://creativecommons.org/licenses/by-nc-sa/4.0/legalcode",
    "PDDL-1.0": "https://opendatacommons.org/licenses/pddl/1-0/",
    "MIT": "https://opensource.org/license/mit",
}
LICENSE_FILES = ("LICENSE", "LICENSES_SOURCES")


def package_name(meta: Dict[str, Any]) -> str:
    """``<lang>_<name>-<version>``, as spaCy's ``package`` names the folder and the sdist."""
    name = meta["name"] if meta["name"].startswith(meta["lang"] + "_") else f"{meta['lang']}_{meta['name']}"
    return f"{name}-{meta['version']}"


def treebank_license_text(sources: Dict[str, Any], project_dir: Path) -> Optional[str]:
    """The treebank's LICENSE.txt (``treebank_dir`` of ``data.py``'s sources.json, relative to
    the project or absolute), or None where it is not there."""
    folder = sources.get("treebank_dir")
    if not folder:
        return None
    for candidate in (Path(folder), project_dir / folder):
        path = candidate / "LICENSE.txt"
        if path.is_file():
            return path.read_text(encoding="utf8", errors="replace").strip()
    return None


def license_text(meta: Dict[str, Any], treebank_text: Optional[str], treebank_url: str) -> str:
    name = package_name(meta)
    license_name = meta.get("license") or "see LICENSES_SOURCES"
    source = meta["sources"][0]["name"] if meta.get("sources") else "its training data"
    lines = [
        f"{name}: a spaCy pipeline trained with spacy-mimick.",
        "",
        f"License: {license_name}, the license of the treebank it was trained on ({source}, "
        f"{treebank_url or 'see LICENSES_SOURCES'}): the trained weights are shared under the treebank's terms.",
        "The licenses of all its sources are in LICENSES_SOURCES.",
    ]
    if LICENSE_URLS.get(license_name):
        lines.append(f"License text: {LICENSE_URLS[license_name]}")
    if treebank_text:
        lines += ["", "The treebank's LICENSE.txt follows.", "", "-" * 72, "", treebank_text]
    return "\n".join(lines) + "\n"


def sources_text(meta: Dict[str, Any]) -> str:
    lines = [f"Sources of {package_name(meta)} and their licenses (meta.json: \"sources\").", ""]
    for source in meta.get("sources", []):
        lines.append(f"* {source.get('name')}")
        if source.get("version"):
            lines.append(f"  Version: {source['version']}")
        if source.get("url"):
            lines.append(f"  URL: {source['url']}")
        license_name = source.get("license") or "unknown"
        url = LICENSE_URLS.get(license_name)
        lines.append(f"  License: {license_name}" + (f" ({url})" if url else ""))
        lines.append("")
    return "\n".join(lines)


def write_licenses(package_dir: Path, meta: Dict[str, Any], sources: Dict[str, Any], project_dir: Path) -> List[str]:
    """Write LICENSE and LICENSES_SOURCES into the package's root and its data folder; returns
    notes for the user (the treebank's license text not found)."""
    notes = []
    treebank_text = treebank_license_text(sources, project_dir)
    if treebank_text is None:
        notes.append(f"note: no LICENSE.txt in the treebank folder {sources.get('treebank_dir')!r} (sources.json): "
                     f"LICENSE names the license ({meta.get('license')}) and links its text instead of including it")
    texts = {"LICENSE": license_text(meta, treebank_text, sources.get("treebank_url", "")),
             "LICENSES_SOURCES": sources_text(meta)}
    name = package_name(meta)
    module = name.rsplit("-", 1)[0]
    data_dir = package_dir / module / name
    for folder in (package_dir, data_dir):
        for file_name, text in texts.items():
            (folder / file_name).write_text(text, encoding="utf8")
    return notes


BUILD = "import setuptools.build_meta as b, sys; print(getattr(b, sys.argv[1])(sys.argv[2]))"
# What spacy-mimick's wheel is built from (a copy: no build/ or egg-info left in the checkout).
SPACY_MIMICK_FILES = ("setup.py", "README.md")
SPACY_MIMICK_PACKAGE = "spacy_mimick"


def build_sdist(package_dir: Path, hook: str = "build_sdist", out: str = "dist", extra_env=None) -> Path:
    """Build the sdist (or, with ``hook`` build_wheel, the wheel) into ``package_dir/out`` with
    setuptools' PEP 517 hook; setuptools' log is shown only if the build fails (its warnings, if
    any, always)."""
    # Without PYTHONDONTWRITEBYTECODE, where it is set: with it setuptools' build_wheel warns
    # "byte-compiling is disabled" for every build, about nothing a user can act on.
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, **(extra_env or {})}
    result = subprocess.run([sys.executable, "-c", BUILD, hook, out], cwd=package_dir,
                            capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise SystemExit(f"error: {hook} in {package_dir} failed (exit code {result.returncode}):\n"
                         f"{result.stdout}\n{result.stderr}")
    if result.stderr.strip():
        print(result.stderr.strip(), file=sys.stderr)
    return package_dir / out / result.stdout.strip().splitlines()[-1]


def build_spacy_mimick_wheel(source_root: Path, dist: Path) -> Path:
    """spacy-mimick's pure-Python wheel, built from a copy of ``source_root`` (setup.py, README.md,
    the package) into ``dist``, replacing a wheel of the same name."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="spacy-mimick-wheel-") as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        for name in SPACY_MIMICK_FILES:
            shutil.copy(source_root / name, src / name)
        shutil.copytree(source_root / SPACY_MIMICK_PACKAGE, src / SPACY_MIMICK_PACKAGE,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "*.pyd"))  # built anew
        # Pure Python (py3-none-any), without the C extension of Mimick's trainer: the wheel
        # installs on any platform beside the pipeline, which only predicts.
        wheel = build_sdist(src, "build_wheel", "wheels", extra_env={"SPACY_MIMICK_PURE_PYTHON": "1"})
        return copy_atomic(wheel, dist)


def spacy_mimick_source() -> Path:
    """The checkout to build spacy-mimick's wheel from: this project's, or (a copy of the project
    without the package's sources) the one the imported spacy_mimick lives in."""
    import spacy_mimick

    for root in (Path(__file__).resolve().parents[2], Path(spacy_mimick.__file__).resolve().parents[1]):
        if all((root / name).is_file() for name in SPACY_MIMICK_FILES) and (root / SPACY_MIMICK_PACKAGE).is_dir():
            return root
    raise SystemExit("error: no spacy-mimick checkout (setup.py, README.md, spacy_mimick/) to build its wheel from, "
                     "neither this project nor where spacy_mimick is imported from; pass --spacy-mimick-source")


def copy_atomic(path: Path, folder: Path) -> Path:
    """Copy ``path`` into ``folder`` through a temporary file there (fsync, rename)."""
    import shutil

    from spacy_mimick.atomic import atomic_file

    folder.mkdir(parents=True, exist_ok=True)
    target = folder / path.name
    with path.open("rb") as src, atomic_file(target) as dst:
        shutil.copyfileobj(src, dst)
    return target


def size_mb(path: Path) -> str:
    """A file's size as the docs quote it: MB of 10^6 bytes, one decimal."""
    return f"{path.stat().st_size / 1e6:.1f} MB"


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir", type=Path, help="The trained pipeline (model-best)")
    parser.add_argument("output_dir", type=Path, help="Parent folder of the package (packages)")
    parser.add_argument("--meta", type=Path, required=True, help="package_meta.py's meta.json")
    parser.add_argument("--sources", type=Path, required=True, help="data.py's sources.json")
    parser.add_argument("--dist", type=Path, default=None,
                        help="Also build the pipeline's wheel and spacy-mimick's, and put them with the sdist here "
                             "(the folder of `pip install --find-links`)")
    parser.add_argument("--spacy-mimick-source", type=Path, default=None,
                        help="The checkout spacy-mimick's wheel is built from (default: the project's, else "
                             "that of the spacy_mimick being imported)")
    args = parser.parse_args(argv)
    from spacy.cli.package import package

    meta = json.loads(args.meta.read_text(encoding="utf8"))
    sources = json.loads(args.sources.read_text(encoding="utf8"))
    args.output_dir.mkdir(parents=True, exist_ok=True)
    # spaCy's package writes README.md (the model card, from meta.json) only where the package's
    # folder has none, and its `force` replaces the data folder but not that file: a package
    # rebuilt with a new card (e.g. once spaCy's baseline ran) kept the first build's README.
    (args.output_dir / package_name(meta) / "README.md").unlink(missing_ok=True)
    # silent: spaCy's own messages include a warning about the `build` package, which is not used here.
    package(args.model_dir, args.output_dir, meta_path=args.meta, create_sdist=False, create_wheel=False,
            require_parent=True, force=True, silent=True)
    package_dir = args.output_dir / package_name(meta)
    # setuptools' build folders of an earlier build: stale copies of the pipeline's files, which
    # broke a rebuild whose pipeline has a folder where the old one had a file (the Chinese
    # tokenizer, once the templates stopped pinning the rule-based one).
    for stale in [package_dir / "build", *package_dir.glob("*.egg-info")]:
        shutil.rmtree(stale, ignore_errors=True)
    for note in write_licenses(package_dir, meta, sources, Path.cwd()):
        print(note)
    sdist = build_sdist(package_dir)
    expected = package_dir / "dist" / (package_name(meta) + SDIST_SUFFIX)
    if sdist != expected:
        raise SystemExit(f"error: the sdist is {sdist}, expected {expected}")
    print(f"{package_name(meta)}: license {meta.get('license')}, sdist {size_mb(sdist)} -> {sdist}")
    if args.dist is None:
        print(f"install: pip install {sdist}")
        return
    wheel = build_sdist(package_dir, "build_wheel", "dist")
    copied = [copy_atomic(sdist, args.dist), copy_atomic(wheel, args.dist)]
    copied.append(build_spacy_mimick_wheel(args.spacy_mimick_source or spacy_mimick_source(), args.dist))
    for path in copied:
        print(f"  {path} ({size_mb(path)})")
    module = package_name(meta).rsplit("-", 1)[0]
    print(f"install: pip install --find-links {args.dist} {module}")


if __name__ == "__main__":
    main(sys.argv[1:])
