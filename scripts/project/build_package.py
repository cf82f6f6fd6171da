"""Package a trained pipeline as an installable sdist, with its licenses, offline and without warnings.

    python scripts/project/build_package.py MODEL_DIR packages --meta packages/<lang>_<name>.meta.json \
        --sources corpus/<tb>/sources.json

Three steps:

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

Why not ``python -m spacy package --build sdist``: it runs ``python -m build``, which is not a
dependency of spaCy (spaCy warns that building without it is deprecated and falls back to
``setup.py sdist``), and ``build`` by default installs setuptools into an isolated environment
from the package index, which fails offline. ``--build none`` still prints the warning about
``build``; setuptools is already installed (it installed spacy-mimick), so it builds the sdist
here with no new dependency and no network.
"""
import argparse
import json
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


BUILD_SDIST = "import setuptools.build_meta as b, sys; print(b.build_sdist(sys.argv[1]))"


def build_sdist(package_dir: Path) -> Path:
    """Build the sdist into ``package_dir/dist`` with setuptools' PEP 517 hook; setuptools' log is
    shown only if the build fails (its warnings, if any, always)."""
    result = subprocess.run([sys.executable, "-c", BUILD_SDIST, "dist"], cwd=package_dir,
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"error: building the sdist in {package_dir} failed (exit code {result.returncode}):\n"
                         f"{result.stdout}\n{result.stderr}")
    if result.stderr.strip():
        print(result.stderr.strip(), file=sys.stderr)
    return package_dir / "dist" / result.stdout.strip().splitlines()[-1]


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir", type=Path, help="The trained pipeline (model-best)")
    parser.add_argument("output_dir", type=Path, help="Parent folder of the package (packages)")
    parser.add_argument("--meta", type=Path, required=True, help="package_meta.py's meta.json")
    parser.add_argument("--sources", type=Path, required=True, help="data.py's sources.json")
    args = parser.parse_args(argv)
    from spacy.cli.package import package

    meta = json.loads(args.meta.read_text(encoding="utf8"))
    sources = json.loads(args.sources.read_text(encoding="utf8"))
    args.output_dir.mkdir(parents=True, exist_ok=True)
    # silent: spaCy's own messages include a warning about the `build` package, which is not used here.
    package(args.model_dir, args.output_dir, meta_path=args.meta, create_sdist=False, create_wheel=False,
            require_parent=True, force=True, silent=True)
    package_dir = args.output_dir / package_name(meta)
    for note in write_licenses(package_dir, meta, sources, Path.cwd()):
        print(note)
    sdist = build_sdist(package_dir)
    expected = package_dir / "dist" / (package_name(meta) + SDIST_SUFFIX)
    if sdist != expected:
        raise SystemExit(f"error: the sdist is {sdist}, expected {expected}")
    print(f"{package_name(meta)}: license {meta.get('license')}, {sdist.stat().st_size / 1e6:.1f} MB -> {sdist}")
    print(f"install: pip install {sdist}")


if __name__ == "__main__":
    main(sys.argv[1:])
