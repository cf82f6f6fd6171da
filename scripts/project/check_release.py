"""Install each package of packages/dist offline into a fresh venv, load it by name, tag a sentence.

    python scripts/project/check_release.py packages/dist en_mimick_ud_ewt "The lawnmowr was hurtling ." \
        [fr_mimick_ud_sequoia "Les chatons dormaient ." ...] [--markdown docs/packages.md]

For each NAME TEXT pair: a fresh venv that sees this Python's installed packages (spaCy, torch,
pip, ...) *except* spacy-mimick (a folder of links to every entry of this Python's site-packages
but spacy-mimick's and its editable finder, named in a .pth file), then the documented line,
``pip install --no-index --find-links DIST NAME``: pip finds spaCy and torch installed and must
take the pipeline and spacy-mimick from DIST's wheels. Then, outside the repository and without
PYTHONPATH, ``spacy.load(NAME)`` tags TEXT, and the check confirms that the pipeline and
spacy_mimick were imported from the venv. Prints (and with --markdown appends) per package: the
command, the files' sizes, the install and load times, and the tagged tokens.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Optional, Sequence

# What the fresh venv must not see of this Python: spacy-mimick (its dist-info, its editable
# finder) and the pipelines being checked.
HIDDEN_PREFIXES = ("spacy_mimick", "spacy-mimick", "__editable__", "_spacy_mimick")

CHECK = """
import json, sys, time
start = time.perf_counter()
import spacy, spacy_mimick
name, text = sys.argv[1], sys.argv[2]
nlp = spacy.load(name)
loaded = time.perf_counter() - start
doc = nlp(text)
module = __import__(name)
mimick = nlp.get_pipe("mimick_vectors")
rows = []
for t in doc:
    in_table = bool(nlp.vocab.vectors.find(key=t.orth) >= 0) or bool(nlp.vocab.vectors.find(key=t.lower) >= 0)
    rows.append({"text": t.text, "pos": t.pos_, "morph": str(t.morph), "in_table": in_table,
                 "has_vector": bool(t.has_vector)})
print(json.dumps({"prefix": sys.prefix, "spacy_mimick": spacy_mimick.__file__, "package": module.__file__,
                  "pipeline": nlp.pipe_names, "version": nlp.meta["version"], "license": nlp.meta.get("license"),
                  "performance": nlp.meta.get("performance", {}), "load_s": loaded, "tokens": rows}))
"""


def run(command: Sequence, **kwargs) -> str:
    """Run ``command``; on failure stop with one error line and the command's output."""
    command = [str(c) for c in command]
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise SystemExit(f"error: {' '.join(command)} failed with exit code {result.returncode}:\n"
                         f"{result.stdout}\n{result.stderr}")
    return result.stdout


def site_packages() -> List[Path]:
    """The site-packages directories of the running Python (its venv's, or the system's)."""
    return [Path(p) for p in sys.path if p.rstrip("/").endswith(("site-packages", "dist-packages")) and Path(p).is_dir()]


def venv_without_spacy_mimick(folder: Path, hide: Sequence[str] = ()) -> Path:
    """A fresh venv in ``folder/venv`` (no pip of its own) seeing this Python's packages but
    spacy-mimick and ``hide``; its python."""
    parent = folder / "parent-site-packages"
    parent.mkdir(parents=True)
    hidden = HIDDEN_PREFIXES + tuple(hide)
    for site in site_packages():
        for entry in site.iterdir():
            if entry.name.startswith(hidden) or entry.suffix == ".pth" or (parent / entry.name).exists():
                continue
            (parent / entry.name).symlink_to(entry)
    venv = folder / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv])
    python = venv / "bin" / "python"
    purelib = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip())
    purelib.mkdir(parents=True, exist_ok=True)
    (purelib / "_parent_site_packages.pth").write_text(f"{parent}\n", encoding="utf8")
    return python


def install_offline(python: Path, dist: Path, name: str, cwd: Path, env: dict) -> None:
    """The documented install line, with --no-index: only DIST and what the venv already sees."""
    run([python, "-m", "pip", "install", "-q", "--no-index", "--find-links", dist, name], cwd=cwd, env=env)


def check(dist: Path, name: str, text: str) -> str:
    files = sorted(p for p in dist.iterdir() if p.name.startswith((name + "-", "spacy_mimick-")))
    if not any(p.name.startswith(name + "-") for p in files):
        raise SystemExit(f"error: {dist}: no package {name} (expected {name}-<version>.tar.gz / .whl there)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the venv's copies only
    with tempfile.TemporaryDirectory(prefix="check-release-") as tmp:
        tmp = Path(tmp)
        python = venv_without_spacy_mimick(tmp, hide=(name,))
        elsewhere = tmp / "elsewhere"
        elsewhere.mkdir()
        start = time.perf_counter()
        install_offline(python, dist.resolve(), name, elsewhere, env)
        installed = time.perf_counter() - start
        out = run([python, "-c", CHECK, name, text], cwd=elsewhere, env=env)
        result = json.loads(out.strip().splitlines()[-1])
        for key in ("spacy_mimick", "package"):
            if not Path(result[key]).resolve().is_relative_to((tmp / "venv").resolve()):
                raise SystemExit(f"error: {name}: {key} was imported from {result[key]}, not from the fresh venv")
    sizes = ", ".join(f"`{p.name}` {p.stat().st_size / 1e6:.1f} MB" for p in files)
    perf = result["performance"]
    lines = [
        f"#### `{name}` {result['version']} (license {result['license']})",
        "",
        f"`pip install --no-index --find-links {dist} {name}` in a fresh venv that has spaCy and torch but not "
        f"spacy-mimick: {installed:.0f} s; `spacy.load(\"{name}\")` {result['load_s']:.1f} s (from the import "
        f"of spaCy on); pipeline {result['pipeline']}; test POS {100 * perf.get('pos_acc', float('nan')):.2f}, "
        f"morph {100 * perf.get('morph_acc', float('nan')):.2f}. Files: {sizes}.",
        "",
        "| token | POS | FEATS | in vector table | has vector |",
        "|---|---|---|---|---|",
    ]
    for t in result["tokens"]:
        morph = (t["morph"] or "_").replace("|", "\\|")
        lines.append(f"| {t['text']} | {t['pos']} | {morph} | {'yes' if t['in_table'] else 'no'} | "
                     f"{'yes' if t['has_vector'] else 'no'} |")
    missing = [t["text"] for t in result["tokens"] if not t["has_vector"]]
    if missing:
        raise SystemExit(f"error: {name}: tokens without a vector: {missing}")
    return "\n".join(lines) + "\n"


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dist", type=Path, help="The --find-links folder (packages/dist)")
    parser.add_argument("pairs", nargs="+", help="NAME TEXT pairs: a package and a sentence to tag")
    parser.add_argument("--markdown", type=Path, default=None, help="Append the results to this file")
    args = parser.parse_args(argv)
    if len(args.pairs) % 2:
        raise SystemExit(f"error: expected NAME TEXT pairs, got {len(args.pairs)} argument(s): {args.pairs}")
    if not args.dist.is_dir():
        raise SystemExit(f"error: {args.dist}: no such folder (run `package` or the `release` first)")
    texts = []
    for name, text in zip(args.pairs[::2], args.pairs[1::2]):
        texts.append(check(args.dist, name, text))
        print(texts[-1], flush=True)
    if args.markdown:
        with args.markdown.open("a", encoding="utf8") as f:
            f.write("\n".join(texts) + "\n")
            f.flush()
            os.fsync(f.fileno())


if __name__ == "__main__":
    main(sys.argv[1:])
