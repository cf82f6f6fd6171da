"""Install a packaged pipeline into a fresh venv and tag a sentence with it there.

    python scripts/check_package.py packages/ru_mimick_ud_taiga-0.1.0/dist/ru_mimick_ud_taiga-0.1.0.tar.gz \
        "Кошки спали на подоконнике ." [--markdown docs/packages.md]

The venv sees the packages of the Python that runs this script (a user's venv or the system's:
a ``.pth`` file lists its site-packages, so nothing is downloaded; ``--system-site-packages``
would see the *base* interpreter's, without spaCy, when run from a venv) but gets its own
spacy-mimick (built from this checkout) and the pipeline package,
installed with ``pip --no-deps --no-index``; the check runs outside the repository, so only the
installed copies can be imported. Prints, per token: POS, FEATS, whether the token's form is in
the pipeline's vector table and whether it has a vector (Mimick's for OOV words). With
``--markdown``, appends the result to that file.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List

ROOT = Path(__file__).resolve().parents[1]

CHECK = """
import json, sys
import numpy, spacy, spacy_mimick
nlp = spacy.load(sys.argv[1])
doc = nlp(sys.argv[2])
mimick = nlp.get_pipe("mimick_vectors")
rows = []
for t in doc:
    in_table = bool(nlp.vocab.vectors.find(key=t.orth) >= 0 or nlp.vocab.vectors.find(key=t.lower) >= 0)
    from_mimick = t._.mimick_vector is not None and not in_table
    rows.append({"text": t.text, "pos": t.pos_, "morph": str(t.morph), "in_table": in_table,
                 "has_vector": t.has_vector, "from_mimick": from_mimick})
print(json.dumps({"prefix": sys.prefix, "spacy_mimick": spacy_mimick.__file__,
                  "pipeline": nlp.pipe_names, "name": nlp.meta["lang"] + "_" + nlp.meta["name"],
                  "version": nlp.meta["version"], "license": nlp.meta.get("license"), "tokens": rows}))
"""


def run(command, **kwargs) -> str:
    """Run ``command``; on failure raise with its whole output (pip's errors included)."""
    command = [str(c) for c in command]
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed with exit code {result.returncode}:\n"
                           f"{result.stdout}\n{result.stderr}")
    return result.stdout


def site_packages() -> List[str]:
    """The site-packages directories of the running Python (its venv's, or the system's)."""
    return [p for p in sys.path if p.rstrip("/").endswith(("site-packages", "dist-packages")) and Path(p).is_dir()]


def make_venv_seeing_current_packages(venv: Path) -> Path:
    """A fresh venv (no pip of its own) whose Python also sees the running Python's packages,
    listed in a ``.pth`` file (after its own, so what is installed into it wins); its python."""
    run([sys.executable, "-m", "venv", "--without-pip", venv])
    python = venv / "bin" / "python"
    purelib = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip()
    Path(purelib).mkdir(parents=True, exist_ok=True)
    (Path(purelib) / "_parent_site_packages.pth").write_text("\n".join(site_packages()) + "\n", encoding="utf8")
    return python


def install_in_fresh_venv(sdist: Path, tmp: Path) -> Path:
    """A venv in ``tmp/venv`` that sees the installed spaCy and torch but has its own
    spacy-mimick (from this checkout) and the package ``sdist``; returns its python."""
    python = make_venv_seeing_current_packages(tmp / "venv")
    source = tmp / "spacy-mimick"
    source.mkdir()
    for file in ("setup.py", "README.md"):
        shutil.copy(ROOT / file, source / file)
    shutil.copytree(ROOT / "spacy_mimick", source / "spacy_mimick", ignore=shutil.ignore_patterns("__pycache__"))
    run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index", source, sdist])
    return python


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sdist", type=Path, help="The package's .tar.gz (spacy package output)")
    parser.add_argument("text", help="A sentence to tag")
    parser.add_argument("--markdown", type=Path, default=None, help="Append the result to this file")
    args = parser.parse_args(argv)
    name = args.sdist.name.rsplit("-", 1)[0]
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        python = install_in_fresh_venv(args.sdist, tmp)
        elsewhere = tmp / "elsewhere"
        elsewhere.mkdir()
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the venv's copies only
        out = run([python, "-c", CHECK, name, args.text], cwd=elsewhere, env=env)
    result = json.loads(out.strip().splitlines()[-1])
    if not result["prefix"].startswith(str(tmp)) or not result["spacy_mimick"].startswith(str(tmp)):
        raise SystemExit(f"error: the check did not run on the venv's copies: {result['prefix']}, {result['spacy_mimick']}")
    lines = [
        f"### `{name}` {result['version']} ({args.sdist.stat().st_size / 1e6:.0f} MB, license {result['license']})",
        "",
        f"`python scripts/check_package.py {args.sdist} \"{args.text}\"`: installed into a fresh venv and "
        f"loaded with `spacy.load(\"{name}\")` in {time.perf_counter() - start:.0f} s; pipeline "
        f"{result['pipeline']}.",
        "",
        "| token | POS | FEATS | in vector table | has vector | vector from Mimick |",
        "|---|---|---|---|---|---|",
    ]
    for t in result["tokens"]:
        lines.append(f"| {t['text']} | {t['pos']} | {(t['morph'] or '_').replace('|', chr(92) + '|')} | {'yes' if t['in_table'] else 'no'} | "
                     f"{'yes' if t['has_vector'] else 'no'} | {'yes' if t['from_mimick'] else ''} |")
    text = "\n".join(lines) + "\n"
    print(text)
    missing = [t["text"] for t in result["tokens"] if not t["has_vector"]]
    if missing:
        raise SystemExit(f"error: tokens without a vector: {missing}")
    if args.markdown:
        with args.markdown.open("a", encoding="utf8") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
