"""Stanza's POS + features tagger as a peer system, trained offline on the project's samples and
scored by the project's own scorer beside the Both tagger.

    python scripts/stanza_peer.py train --train SAMPLE.conllu --dev DEV.conllu --lang en \
        --vectors VECTORS.vec.gz|none --model-dir DIR [--max-steps N --batch-size B --seed S]
    python scripts/stanza_peer.py predict --model-dir DIR --input TEST.conllu --output PRED.conllu
    python scripts/stanza_peer.py score --gold TEST.conllu --train SAMPLE.conllu \
        --system [NAME=]PRED.conllu [--system spaCy=PRED.spacy ...] [--both BOTH.spacy] [--output OUT.json] \
        [--markdown OUT.md] [--treebank NAME --lang CODE]
    python scripts/stanza_peer.py table SCORES.json [...] --output TABLE.md
    python scripts/stanza_peer.py words A.conllu B.conllu ... --output WORDS.txt

This script runs under the project's environment (it imports ``spacy_mimick`` to score) and runs
Stanza as a subprocess of another interpreter (``--stanza-python``, default
``/work/stanza_venv/bin/python`` or ``$STANZA_PYTHON``), so Stanza and its torch never meet the
project's packages. Nothing here imports ``stanza``.

* ``train``: ``python -m stanza.models.tagger --mode train`` on the sample, dev for choosing the
  checkpoint (Stanza keeps the step with the best dev score, its "AllTags" accuracy), charlm off
  (no ``--charlm``), no transformer (``--no_bert_model``), on the CPU. ``--vectors`` is a
  word2vec text table (``.vec.gz`` as the project's taggers read): it is converted once to
  Stanza's ``pretrain.pt`` (``stanza.models.common.pretrain.Pretrain``) in the model folder;
  ``none`` trains with ``--no_pretrain``. Stanza's log goes to ``DIR/train.log``, progress lines
  (steps, loss, dev scores) to stdout; ``DIR/stanza_peer.json`` records the command, the settings,
  Stanza's and torch's versions, and the wall and CPU seconds.
* ``predict``: ``--mode predict`` with the model folder's settings; Stanza reads the words of the
  input (gold tokenization) and writes UPOS, XPOS and FEATS in their place.
* ``score``: every system's predictions paired with the gold sentences by position (the words
  must be the gold words, else an error naming the file and sentence), scored by
  :func:`spacy_mimick.ud.scorer.score_attributes`: UPOS accuracy, attribute micro-F1 (the
  paper's definition), and UPOS accuracy on the test tokens whose form is not in the training
  sample (OOV of training). With ``--both``, each system is compared with Both
  (:func:`spacy_mimick.ud.significance.compare_systems`: McNemar's test for UPOS, the paper's
  bootstrapped Z-test for attribute micro-F1; and McNemar on the OOV tokens), differences
  system minus Both. A system is Stanza's CoNLL-U output or any other tagger's predictions on
  the gold words, such as spaCy's baseline as ``evaluate.py`` writes it (``spacy.spacy``), so
  that one result holds the three systems of a sample (``--stanza`` is the older name of
  ``--system``).
* ``table``: many ``score`` results (one per treebank and subsample) as one table: per treebank
  and system, the mean +- standard deviation over subsamples of UPOS accuracy, attribute
  micro-F1 and UPOS on the OOV tokens; against Both, the mean difference and in how many
  subsamples the system was significantly ahead of Both / behind it (p < ``--alpha``; McNemar's
  test for UPOS, on all tokens and on the OOV ones, the bootstrapped Z-test for the attributes);
  and the paper's Both at 5,000 tokens (its Tables 2 and 3) beside Both's row, where the language
  has one.
* ``words``: the lowercased word forms of CoNLL-U files, one a line, for
  ``python -m spacy_mimick extend --words-file``: a table with a Mimick row for every such form
  the table lacks, which Stanza can take as its pretrain (it looks words up lowercased).
* ``spaced-rows``: that table plus Mimick's rows for the forms with white space inside (21% of
  Vietnamese VTB's tokens, French ``1 000``), which a word2vec line cannot hold as they are:
  written with U+00A0 for each space, as Stanza's own reader and lookup keep such words.
"""
import argparse
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

DEFAULT_STANZA_PYTHON = "/work/stanza_venv/bin/python"
SETTINGS_FILE = "stanza_peer.json"
MODEL_FILE = "tagger.pt"
PRETRAIN_FILE = "pretrain.pt"

# Stanza's log lines worth echoing while it trains.
_PROGRESS = re.compile(r"Finished STEP|dev_score|new best|Switching to|Early termination|Training ended|"
                       r"Best dev|word cutoff|Train File|Reading pretrained|Evaluating the model every|"
                       r"Error|error|Traceback")


class PeerInputError(ValueError):
    """Bad input (a missing or malformed file, predictions that do not match the gold words);
    the message names the file."""


# --------------------------------------------------------------------------- reading and pairing


def _load_docs(path: Path, vocab) -> List[Any]:
    """The Docs of a CoNLL-U file (one per sentence) or of a ``.spacy`` DocBin."""
    from spacy.tokens import DocBin

    from spacy_mimick.ud.corpus import read_conllu

    if not path.is_file():
        raise PeerInputError(f"{path}: no such file")
    if path.suffix == ".spacy":
        try:
            return list(DocBin().from_disk(path).get_docs(vocab))
        except Exception as err:  # a file that is not a DocBin
            raise PeerInputError(f"{path}: not a spaCy DocBin ({type(err).__name__}: {err})") from err
    return list(read_conllu(path, vocab))  # ConlluFormatError names the file and line


def _sentence_name(doc, index: int) -> str:
    from spacy_mimick.ud.corpus import SENT_ID_KEY

    sent_id = doc.user_data.get(SENT_ID_KEY)
    return f"sentence {index + 1}" + (f" ({sent_id})" if sent_id else "")


def pair_examples(gold_docs: Sequence[Any], pred_docs: Sequence[Any], pred_path: Path, gold_path: Path) -> List[Any]:
    """Examples of the predicted Docs against the gold ones, by position. The predictions must hold
    the gold words: the same number of sentences and, in each, the same words in the same order."""
    from spacy.training import Example

    if len(pred_docs) != len(gold_docs):
        raise PeerInputError(f"{pred_path}: {len(pred_docs)} sentences, but the gold file {gold_path} has "
                             f"{len(gold_docs)} (expected predictions for the gold sentences, in order)")
    examples = []
    for i, (gold, pred) in enumerate(zip(gold_docs, pred_docs)):
        gold_words = [t.text for t in gold]
        pred_words = [t.text for t in pred]
        if gold_words != pred_words:
            where = next((j for j, (g, p) in enumerate(zip(gold_words, pred_words)) if g != p),
                         min(len(gold_words), len(pred_words)))
            found = repr(pred_words[where]) if where < len(pred_words) else "the end of the sentence"
            expected = repr(gold_words[where]) if where < len(gold_words) else "the end of the sentence"
            raise PeerInputError(
                f"{pred_path}: {_sentence_name(gold, i)} differs from the gold words of {gold_path} at word "
                f"{where + 1}: found {found}, expected {expected} ({len(pred_words)} words vs {len(gold_words)})")
        examples.append(Example(pred, gold))
    return examples


def training_words(path: Path, vocab) -> Set[str]:
    """The word forms of the training sample: the vocabulary outside which a test token is OOV."""
    return {t.text for doc in _load_docs(path, vocab) for t in doc}


# --------------------------------------------------------------------------- scoring


def _parse_system(spec: str) -> Tuple[str, Path]:
    name, sep, path = spec.partition("=")
    if not sep:
        path = spec
        name = Path(spec).stem
    return name, Path(path)


def score_systems(
    gold_path: Path,
    systems: Sequence[Tuple[str, Path]],
    *,
    train_path: Optional[Path] = None,
    baseline: Optional[Tuple[str, Path]] = None,
    n_samples: int = 1000,
    seed: int = 0,
) -> Dict[str, Any]:
    """Scores of each system (and the baseline) against the gold file, and the paired tests of each
    system against the baseline (B = the system, A = the baseline: differences system minus
    baseline). Returns ``{"gold", "train", "systems": [{name, path, scores...}], "tests": [...]}``."""
    import numpy
    import spacy

    from spacy_mimick.ud.scorer import score_attributes, token_level_results
    from spacy_mimick.ud.significance import compare_systems, mcnemar

    vocab = spacy.blank("xx").vocab
    gold_docs = _load_docs(gold_path, vocab)
    if not gold_docs:
        raise PeerInputError(f"{gold_path}: no sentences")
    train_words = training_words(train_path, vocab) if train_path is not None else None
    everyone = ([baseline] if baseline is not None else []) + list(systems)
    examples: Dict[str, List[Any]] = {}
    rows = []
    for name, path in everyone:
        if name in examples:
            raise PeerInputError(f"{path}: the name {name!r} is given to two systems")
        examples[name] = pair_examples(gold_docs, _load_docs(path, vocab), path, gold_path)
        scores = score_attributes(examples[name], train_words=train_words)
        rows.append({
            "name": name, "path": str(path),
            "pos_acc": scores["pos_acc"], "attr_micro_f": scores["attr_micro_f"],
            "attr_micro_p": scores["attr_micro_p"], "attr_micro_r": scores["attr_micro_r"],
            "morph_acc": scores["morph_acc"],
            "oov_train_pos_acc": scores["oov_train_pos_acc"],
            "oov_train_attr_micro_f": scores["oov_train_attr_micro_f"],
            "oov_train_n_tokens": scores["oov_train_n_tokens"], "n_tokens": scores["n_tokens"],
        })
    tests = []
    if baseline is not None:
        base_name = baseline[0]
        oov_mask = None
        if train_words is not None:
            oov_mask = numpy.array([t.text not in train_words for eg in examples[base_name] for t in eg.reference
                                    if t.pos], dtype=bool)
        for name, _ in systems:
            result = compare_systems(examples[base_name], examples[name], n_samples=n_samples, seed=seed)
            test: Dict[str, Any] = {"a": base_name, "b": name, **result}
            a = token_level_results(examples[base_name]).pos_correct
            b = token_level_results(examples[name]).pos_correct
            test["pos_only_a"], test["pos_only_b"] = int(numpy.sum(a & ~b)), int(numpy.sum(~a & b))
            if oov_mask is not None and oov_mask.any():
                statistic, p_value = mcnemar(a[oov_mask], b[oov_mask])
                test.update(oov_train_n_tokens=int(oov_mask.sum()),
                            oov_train_pos_acc_delta=float(b[oov_mask].mean() - a[oov_mask].mean()),
                            oov_train_pos_p_value=p_value)
            tests.append(test)
    return {"gold": str(gold_path), "train": str(train_path) if train_path else None, "n_samples": n_samples,
            "systems": rows, "tests": tests}


def treebank_of(result: Dict[str, Any]) -> str:
    """The treebank a ``score`` result is about: its ``treebank`` entry, else the folder of the gold
    file (the one above ``raw/`` for the project's ``corpus/<treebank>/raw/test.conllu``)."""
    if result.get("treebank"):
        return result["treebank"]
    gold = Path(result["gold"])
    return gold.parent.parent.name if gold.parent.name == "raw" else gold.parent.name


# The paired tests that ``table`` counts: (name, the difference's key, its p-value's key) in a test of ``score``.
_TESTED = (("pos", "pos_acc_delta", "pos_p_value"), ("attr", "attr_micro_f_delta", "attr_p_value"),
           ("oov", "oov_train_pos_acc_delta", "oov_train_pos_p_value"))


def summarize(results: Sequence[Dict[str, Any]], alpha: float = 0.01) -> List[Dict[str, Any]]:
    """Per treebank and system (in the order first met), the scores over subsamples and the tests
    against the baseline (Both). A treebank's results must share the baseline's name, and one
    subsample (the training file) may appear once per treebank."""
    groups: Dict[str, List[Dict[str, Any]]] = {}
    for result in results:
        groups.setdefault(treebank_of(result), []).append(result)
    rows = []
    for treebank, group in groups.items():
        trains = [r.get("train") for r in group]
        repeated = sorted({t for t in trains if t is not None and trains.count(t) > 1})
        if repeated:
            raise PeerInputError(f"{treebank}: the subsample {repeated[0]} is scored twice")
        systems: Dict[str, Dict[str, Any]] = {}
        for result in group:
            tests = {t["b"]: t for t in result["tests"]}
            for row in result["systems"]:
                entry = systems.setdefault(row["name"], {
                    "treebank": treebank, "lang": result.get("lang"), "system": row["name"], "is_baseline": False,
                    "pos_acc": [], "attr_micro_f": [], "oov_train_pos_acc": [], "n_tests": 0,
                    **{f"{name}_{part}": [] if part == "delta" else 0
                       for name, _, _ in _TESTED for part in ("delta", "ahead", "behind")}})
                for key in ("pos_acc", "attr_micro_f", "oov_train_pos_acc"):
                    if row.get(key) is not None:
                        entry[key].append(row[key])
                test = tests.get(row["name"])
                if test is None:
                    entry["is_baseline"] = entry["is_baseline"] or any(t["a"] == row["name"] for t in tests.values())
                    continue
                entry["n_tests"] += 1
                for name, delta_key, p_key in _TESTED:
                    if test.get(delta_key) is None:
                        continue
                    entry[f"{name}_delta"].append(test[delta_key])
                    if test.get(p_key) is not None and test[p_key] < alpha:
                        entry[f"{name}_ahead" if test[delta_key] > 0 else f"{name}_behind"] += 1
        rows.extend(systems.values())
    return rows


def summary_table(results: Sequence[Dict[str, Any]], alpha: float = 0.01, title: Optional[str] = None) -> str:
    """:func:`summarize` as Markdown, with the paper's Both at 5,000 tokens beside the baseline."""
    sys.path.insert(0, str(Path(__file__).resolve().parent / "project"))
    from markdown_tables import mean_std
    from report import PAPER_5K

    def counted(row: Dict[str, Any], name: str, of: str = "") -> str:
        """The mean difference to Both and the significant subsamples each way."""
        values = row[f"{name}_delta"]
        if not values:
            return "—"
        return f"{100 * sum(values) / len(values):+.2f} ({row[f'{name}_ahead']} / {row[f'{name}_behind']}{of})"

    def paper(lang: Optional[str], metric: str) -> str:
        value = PAPER_5K[metric].get(lang or "")
        return "—" if value is None else f"{value[3]:.2f}"

    lines = [f"**{title}**", ""] if title else []
    lines += [f"| treebank | system | subsamples | UPOS | attr micro-F1 | OOV UPOS | UPOS − Both (ahead / behind, p<{alpha:g}) "
              f"| attr − Both (ahead / behind) | OOV UPOS − Both (ahead / behind) | paper's Both, UPOS / attr |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in summarize(results, alpha):
        if row["n_tests"]:
            pos, attr, oov = (counted(row, name, f" of {row['n_tests']}" if name == "pos" else "")
                              for name, _, _ in _TESTED)
        else:
            pos = attr = oov = ""
        lang = row["lang"]
        theirs = (f"{paper(lang, 'pos_acc')} / {paper(lang, 'attr_micro_f')}" if row["is_baseline"] else "")
        lines.append(f"| {row['treebank']} | {row['system']} | {len(row['pos_acc'])} | {mean_std(row['pos_acc'])} | "
                     f"{mean_std(row['attr_micro_f'])} | {mean_std(row['oov_train_pos_acc'])} | {pos} | {attr} | "
                     f"{oov} | {theirs} |")
    return "\n".join(lines) + "\n"


def _pct(value: Optional[float]) -> str:
    return "-" if value is None else f"{100 * value:.2f}"


def _delta(value: Optional[float]) -> str:
    return "-" if value is None else f"{100 * value:+.2f}"


def _p(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2g}"


def markdown_table(result: Dict[str, Any], title: Optional[str] = None) -> str:
    """The systems' scores as a Markdown table, then the paired tests against the baseline."""
    lines = [f"**{title}**", ""] if title else []
    lines += ["| system | UPOS acc | attr micro-F1 | OOV UPOS acc | OOV tokens |", "|---|---:|---:|---:|---:|"]
    for row in result["systems"]:
        n_oov = "-" if row["oov_train_n_tokens"] is None else row["oov_train_n_tokens"]
        lines.append(f"| {row['name']} | {_pct(row['pos_acc'])} | {_pct(row['attr_micro_f'])} | "
                     f"{_pct(row['oov_train_pos_acc'])} | {n_oov} |")
    if result["tests"]:
        lines += ["", "| B vs A | UPOS delta | McNemar p | only A / only B right | attr F1 delta | bootstrap p | "
                      "OOV UPOS delta | OOV McNemar p |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for t in result["tests"]:
            lines.append(
                f"| {t['b']} vs {t['a']} | {_delta(t['pos_acc_delta'])} | {_p(t['pos_p_value'])} | "
                f"{t['pos_only_a']} / {t['pos_only_b']} | {_delta(t['attr_micro_f_delta'])} | "
                f"{_p(t['attr_p_value'])} | {_delta(t.get('oov_train_pos_acc_delta'))} | "
                f"{_p(t.get('oov_train_pos_p_value'))} |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- running Stanza


def stanza_python(given: Optional[str]) -> str:
    python = given or os.environ.get("STANZA_PYTHON") or DEFAULT_STANZA_PYTHON
    if not Path(python).exists():
        raise PeerInputError(f"{python}: no such interpreter (the environment with stanza; create it with "
                             f"`python3 -m venv /work/stanza_venv && /work/stanza_venv/bin/pip install stanza`)")
    return python


def _check_conllu(path: Path, what: str) -> None:
    """A readable CoNLL-U file with words (the project's reader: errors name the file and line)."""
    import spacy

    from spacy_mimick.ud.corpus import read_conllu

    if not path.is_file():
        raise PeerInputError(f"{path}: no such file ({what})")
    if next(iter(read_conllu(path, spacy.blank("xx").vocab, limit=1)), None) is None:
        raise PeerInputError(f"{path}: no sentences ({what})")


def _versions(python: str) -> Dict[str, str]:
    out = subprocess.run([python, "-c", "import stanza, torch; print(stanza.__version__, torch.__version__)"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise PeerInputError(f"{python}: cannot import stanza and torch: {out.stderr.strip().splitlines()[-1:]}")
    stanza_version, torch_version = out.stdout.split()
    return {"stanza": stanza_version, "torch": torch_version}


def _child_env(threads: int) -> Dict[str, str]:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = str(threads)
    env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def _run_logged(cmd: List[str], log_path: Path, env: Dict[str, str], echo: bool = True) -> Dict[str, float]:
    """Run ``cmd``, its output appended to ``log_path`` and the progress lines echoed; its wall and
    CPU seconds (user + system of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.time()
    with log_path.open("a", encoding="utf8") as log:
        log.write("$ " + shlex.join(cmd) + "\n")
        log.flush()
        process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   errors="replace", bufsize=1, env=env)
        assert process.stdout is not None
        tail: List[str] = []
        for line in process.stdout:
            log.write(line)
            tail = (tail + [line.rstrip()])[-20:]
            if echo and _PROGRESS.search(line):
                print(f"[stanza-peer] {line.rstrip()}", flush=True)
        code = process.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if code != 0:
        raise SystemExit(f"error: Stanza failed (exit code {code}); the end of its output ({log_path}):\n"
                         + "\n".join(tail))
    return {"wall_seconds": round(time.time() - start, 1),
            "cpu_seconds": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 1)}


def tagger_args(settings: Dict[str, Any], model_dir: Path) -> List[str]:
    """The arguments shared by Stanza's train and predict modes."""
    args = ["--lang", settings["lang"], "--shorthand", settings["shorthand"], "--save_dir", str(model_dir),
            "--save_name", MODEL_FILE, "--no_bert_model", "--cpu", "--batch_size", str(settings["batch_size"])]
    if settings["pretrain"]:
        args += ["--wordvec_pretrain_file", str(model_dir / PRETRAIN_FILE)]
    else:
        args += ["--no_pretrain"]
    return args


def cmd_train(args: argparse.Namespace) -> None:
    python = stanza_python(args.stanza_python)
    _check_conllu(args.train, "the training sample")
    _check_conllu(args.dev, "the dev set")
    use_vectors = str(args.vectors).lower() != "none"
    if use_vectors and not Path(args.vectors).is_file():
        raise PeerInputError(f"{args.vectors}: no such file (a word2vec text vectors table, or `none`)")
    model_dir: Path = args.model_dir
    model_dir.mkdir(parents=True, exist_ok=True)
    log_path = model_dir / "train.log"
    env = _child_env(args.threads)
    settings: Dict[str, Any] = {
        "lang": args.lang, "shorthand": args.shorthand or f"{args.lang}_peer", "batch_size": args.batch_size,
        "max_steps": args.max_steps, "seed": args.seed, "eval_interval": args.eval_interval,
        "max_steps_before_stop": args.max_steps_before_stop, "pretrain": use_vectors,
        "vectors": str(args.vectors) if use_vectors else None, "charlm": False, "bert_model": None,
        "threads": args.threads, "train": str(args.train), "dev": str(args.dev),
        "extra_args": args.extra,
    }
    record: Dict[str, Any] = {"settings": settings, "versions": _versions(python), "times": {}}
    print(f"[stanza-peer] Stanza {record['versions']['stanza']} (torch {record['versions']['torch']}) "
          f"via {python}; model folder {model_dir}", flush=True)
    if use_vectors:
        pretrain = model_dir / PRETRAIN_FILE
        if pretrain.exists():
            pretrain.unlink()  # built afresh: the table may have changed
        code = ("import sys; from stanza.models.common.pretrain import Pretrain; "
                "pt = Pretrain(sys.argv[1], sys.argv[2], max_vocab=-1); "
                "print('pretrain rows', len(pt), 'width', pt.emb.shape[1])")
        print(f"[stanza-peer] converting {args.vectors} to {pretrain}", flush=True)
        cmd = [python, "-c", code, str(pretrain), str(args.vectors)]
        record["times"]["pretrain"] = _run_logged(cmd, log_path, env, echo=False)
        record["pretrain_command"] = cmd
        rows = [line for line in log_path.read_text(encoding="utf8").splitlines() if line.startswith("pretrain rows")]
        record["pretrain_rows"] = rows[-1] if rows else None
        print(f"[stanza-peer] {record['pretrain_rows']}", flush=True)
    cmd = [python, "-m", "stanza.models.tagger", "--mode", "train", "--train_file", str(args.train),
           "--eval_file", str(args.dev), "--output_file", str(model_dir / "dev.pred.conllu"),
           *tagger_args(settings, model_dir), "--max_steps", str(args.max_steps), "--seed", str(args.seed),
           "--log_step", str(args.log_step)]
    if args.eval_interval is not None:
        cmd += ["--eval_interval", str(args.eval_interval)]
    if args.max_steps_before_stop is not None:
        cmd += ["--max_steps_before_stop", str(args.max_steps_before_stop)]
    cmd += args.extra
    if args.nice:
        cmd = ["nice", "-n", str(args.nice)] + cmd
    record["train_command"] = cmd
    print("[stanza-peer] " + shlex.join(cmd), flush=True)
    record["times"]["train"] = _run_logged(cmd, log_path, env)
    text = log_path.read_text(encoding="utf8")
    steps = re.findall(r"Training ended with (\d+) steps", text)
    best = re.findall(r"Best dev F1 = ([\d.]+), at iteration = (\d+)", text)
    record["steps_run"] = int(steps[-1]) if steps else None
    record["best_dev"] = {"all_tags": float(best[-1][0]), "step": int(best[-1][1])} if best else None
    if not (model_dir / MODEL_FILE).exists():
        raise SystemExit(f"error: Stanza finished without saving {model_dir / MODEL_FILE}; see {log_path}")
    (model_dir / SETTINGS_FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf8")
    print(f"[stanza-peer] trained: {record['steps_run']} steps, best dev AllTags {record['best_dev']}, "
          f"{record['times']['train']['wall_seconds']:.0f} s wall, {record['times']['train']['cpu_seconds']:.0f} s CPU "
          f"-> {model_dir / MODEL_FILE}", flush=True)


def load_settings(model_dir: Path) -> Dict[str, Any]:
    path = model_dir / SETTINGS_FILE
    if not path.is_file():
        raise PeerInputError(f"{path}: no such file (expected a model folder made by `stanza_peer.py train`)")
    try:
        return json.loads(path.read_text(encoding="utf8"))
    except json.JSONDecodeError as err:
        raise PeerInputError(f"{path}: not JSON ({err})") from err


def cmd_predict(args: argparse.Namespace) -> None:
    python = stanza_python(args.stanza_python)
    record = load_settings(args.model_dir)
    _check_conllu(args.input, "the sentences to tag")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    cmd = [python, "-m", "stanza.models.tagger", "--mode", "predict", "--eval_file", str(args.input),
           "--output_file", str(args.output), *tagger_args(record["settings"], args.model_dir)]
    if args.nice:
        cmd = ["nice", "-n", str(args.nice)] + cmd
    print("[stanza-peer] " + shlex.join(cmd), flush=True)
    times = _run_logged(cmd, args.model_dir / "predict.log", _child_env(args.threads), echo=False)
    if not args.output.is_file():
        raise SystemExit(f"error: Stanza wrote no {args.output}; see {args.model_dir / 'predict.log'}")
    print(f"[stanza-peer] tagged {args.input} -> {args.output} ({times['wall_seconds']:.0f} s)", flush=True)


def cmd_score(args: argparse.Namespace) -> None:
    systems = [_parse_system(s) for s in args.systems]
    baseline = _parse_system(args.both if "=" in args.both else f"Both={args.both}") if args.both else None
    result = score_systems(args.gold, systems, train_path=args.train, baseline=baseline, n_samples=args.n_samples,
                           seed=args.seed)
    if args.treebank:
        result["treebank"] = args.treebank
    if args.lang:
        result["lang"] = args.lang
    table = markdown_table(result, args.title)
    print(table, end="")
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=1) + "\n", encoding="utf8")
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(table, encoding="utf8")


def cmd_table(args: argparse.Namespace) -> None:
    results = []
    for path in args.scores:
        try:
            results.append(json.loads(path.read_text(encoding="utf8")))
        except (OSError, json.JSONDecodeError) as err:
            raise PeerInputError(f"{path}: not a result of `score` ({err})") from None
        if not isinstance(results[-1], dict) or "systems" not in results[-1]:
            raise PeerInputError(f"{path}: not a result of `score` (no 'systems')")
    table = summary_table(results, alpha=args.alpha, title=args.title)
    print(table, end="")
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(table, encoding="utf8")


def lowercase_forms(paths: Sequence[Path]) -> Tuple[List[str], List[str]]:
    """The lowercased word forms of CoNLL-U files, each once, in order of first occurrence: the
    keys Stanza looks its pretrain up by (it lowercases every word before the lookup). Forms with
    white space inside (French ``1 000``) are returned apart: a word2vec text table cannot hold
    them. Returns ``(forms, forms_with_spaces)``."""
    import spacy

    vocab = spacy.blank("xx").vocab
    seen: Dict[str, None] = {}
    spaced: Dict[str, None] = {}
    for path in paths:
        for doc in _load_docs(path, vocab):
            for token in doc:
                form = token.text.lower()
                (spaced if any(c.isspace() for c in form) else seen).setdefault(form, None)
    return list(seen), list(spaced)


def cmd_words(args: argparse.Namespace) -> None:
    words, spaced = lowercase_forms(args.conllu)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("".join(w + "\n" for w in words), encoding="utf8")
    print(f"[stanza-peer] {len(words):,} lowercased forms of {len(args.conllu)} file(s) -> {args.output}"
          + (f"; {len(spaced):,} with white space left out ({', '.join(map(repr, spaced[:3]))}"
             f"{', ...' if len(spaced) > 3 else ''}: add their rows with `spaced-rows`)" if spaced else ""))


def stanza_key(form: str) -> str:
    """The key Stanza looks a form with spaces up by: its pretrain vocabulary replaces each space
    with U+00A0 (``PretrainedWordVocab.normalize_unit``), and its text reader joins the pieces of a
    row whose word holds spaces with U+00A0, so a row written with U+00A0 is found."""
    return form.replace(" ", "\xa0")


def cmd_spaced_rows(args: argparse.Namespace) -> None:
    """A copy of the table with Mimick's rows for the forms of the CoNLL-U files that hold white
    space (VTB's ``hàng xóm``, French ``1 000``), written under Stanza's key for them: without them
    Stanza would have no vector for words that the Both tagger's mimick_vectors does embed. Each
    row is the mean of the form's parts' predictions, as mimick_vectors' ``spaced_from_parts``
    gives a Mimick-only pipeline; ``--whole-forms``: Mimick's prediction for the whole form, as
    before that setting."""
    import numpy

    from spacy_mimick.cli.mimick import check_width
    from spacy_mimick.vectors.mimick_model import MimickModel
    from spacy_mimick.vectors.mimick_vectors import MimickVectors
    from spacy_mimick.vectors.vectors_io import read_vectors, write_vectors_text

    inputs = [args.vectors, *args.conllu]
    if any(args.output.resolve() == Path(p).resolve() for p in inputs):
        raise PeerInputError(f"{args.output}: is one of the inputs (write the table elsewhere; nothing is "
                             f"written in place)")
    _, spaced = lowercase_forms(args.conllu)
    table = read_vectors(args.vectors)
    model = MimickModel.from_disk(args.mimick_model)
    check_width(model, args.mimick_model, table)
    keys = [stanza_key(form) for form in spaced]
    new = [(form, key) for form, key in zip(spaced, keys) if table.get(key) is None]
    if new:
        vectors = MimickVectors(model=model, mimick_only=True, spaced_from_parts=not args.whole_forms, cache_size=0)
        rows = numpy.asarray(vectors.predict([form for form, _ in new]), dtype=table.matrix.dtype)
        matrix = numpy.vstack([table.matrix, rows])
    else:
        matrix = table.matrix
    args.output.parent.mkdir(parents=True, exist_ok=True)
    write_vectors_text(args.output, list(table.words) + [key for _, key in new], matrix)
    print(f"[stanza-peer] {len(table.words):,} rows of {args.vectors} and {len(new):,} Mimick rows of forms with "
          f"white space ({', '.join(repr(f) for f, _ in new[:3])}{', ...' if len(new) > 3 else ''}; "
          f"{len(spaced) - len(new):,} already there) -> {args.output}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--stanza-python", default=None,
                       help=f"Interpreter with stanza installed (default: $STANZA_PYTHON or {DEFAULT_STANZA_PYTHON})")
        p.add_argument("--threads", type=int, default=1, help="torch/OpenMP threads of Stanza (default 1)")
        p.add_argument("--nice", type=int, default=15, help="Run Stanza under `nice -n N` (0: not)")

    train = sub.add_parser("train", help="Train Stanza's tagger on a sample")
    train.add_argument("--train", type=Path, required=True, help="Training sample (.conllu)")
    train.add_argument("--dev", type=Path, required=True, help="Dev set (.conllu): Stanza keeps its best step on it")
    train.add_argument("--lang", required=True, help="Language code (en, fr, ...)")
    train.add_argument("--shorthand", default=None, help="Stanza's treebank shorthand (default LANG_peer)")
    train.add_argument("--vectors", required=True,
                       help="word2vec text vectors table (.vec, .vec.gz, .xz) for Stanza's pretrain, or `none`")
    train.add_argument("--model-dir", type=Path, required=True, help="Folder for the model, its pretrain and logs")
    train.add_argument("--max-steps", type=int, default=2000, help="Stanza --max_steps (its default: 50000)")
    train.add_argument("--batch-size", type=int, default=32,
                       help="Stanza --batch_size, in sentences (its default: 250)")
    train.add_argument("--eval-interval", type=int, default=None, help="Stanza --eval_interval (its default: 100)")
    train.add_argument("--max-steps-before-stop", type=int, default=None,
                       help="Stanza --max_steps_before_stop (its default: 3000)")
    train.add_argument("--seed", type=int, default=0, help="Stanza --seed (its default: 1234)")
    train.add_argument("--log-step", type=int, default=100, help="Stanza --log_step (its default: 20)")
    train.add_argument("extra", nargs="*", help="More Stanza tagger options, after --")
    common(train)
    train.set_defaults(func=cmd_train)

    predict = sub.add_parser("predict", help="Tag a CoNLL-U file (gold words) with a trained model")
    predict.add_argument("--model-dir", type=Path, required=True)
    predict.add_argument("--input", type=Path, required=True, help="CoNLL-U file whose words to tag")
    predict.add_argument("--output", type=Path, required=True, help="Predicted CoNLL-U file to write")
    common(predict)
    predict.set_defaults(func=cmd_predict)

    score = sub.add_parser("score", help="Score predictions with the project's scorer; McNemar against Both")
    score.add_argument("--gold", type=Path, required=True, help="Gold test set (.conllu or .spacy)")
    score.add_argument("--system", "--stanza", dest="systems", action="append", required=True, metavar="[NAME=]PRED",
                       help="A system's predictions on the gold words, each tested against Both (repeatable): "
                            "Stanza's .conllu, or another tagger's, such as spaCy's baseline run by evaluate.py "
                            "(metrics/.../spacy.spacy)")
    score.add_argument("--both", default=None, metavar="[NAME=]PRED.spacy",
                       help="The project's Both predictions (evaluate.py's .spacy): the baseline of the tests")
    score.add_argument("--train", type=Path, default=None, help="The training sample (.conllu), for OOV")
    score.add_argument("--output", type=Path, default=None, help="JSON file to write")
    score.add_argument("--markdown", type=Path, default=None, help="Markdown table to write")
    score.add_argument("--title", default=None, help="A title line above the table")
    score.add_argument("--n-samples", type=int, default=1000, help="Bootstrap resamples (attribute F1 test)")
    score.add_argument("--seed", type=int, default=0, help="Bootstrap seed")
    score.add_argument("--treebank", default=None, help="The treebank's name, kept in the JSON for `table` "
                                                        "(default: the gold file's folder)")
    score.add_argument("--lang", default=None, help="Its language code, kept in the JSON for `table` (the paper's "
                                                    "numbers)")
    score.set_defaults(func=cmd_score)

    table = sub.add_parser("table", help="Many `score` results (treebanks x subsamples) as one table, means over "
                                         "subsamples, significance counts against Both, the paper's Both beside")
    table.add_argument("scores", type=Path, nargs="+", help="JSON files written by `score --output`")
    table.add_argument("--output", type=Path, default=None, help="Markdown table to write")
    table.add_argument("--title", default=None, help="A title line above the table")
    table.add_argument("--alpha", type=float, default=0.01, help="Significance level of the counts (default 0.01)")
    table.set_defaults(func=cmd_table)

    words = sub.add_parser("words", help="The lowercased word forms of CoNLL-U files, one a line (for `python -m "
                                         "spacy_mimick extend --words-file`: Mimick rows for Stanza's pretrain)")
    words.add_argument("conllu", type=Path, nargs="+", help="CoNLL-U files")
    words.add_argument("--output", type=Path, required=True, help="Text file to write")
    words.set_defaults(func=cmd_words)

    spaced = sub.add_parser("spaced-rows", help="The table plus Mimick's rows for the forms with white space of "
                                                "CoNLL-U files, written as Stanza looks them up (spaces as U+00A0)")
    spaced.add_argument("conllu", type=Path, nargs="+", help="CoNLL-U files")
    spaced.add_argument("--vectors", type=Path, required=True, help="The word2vec text table (e.g. `extend`'s)")
    spaced.add_argument("--mimick-model", type=Path, required=True, help="The Mimick model that made its rows")
    spaced.add_argument("--output", type=Path, required=True, help="The table to write (.gz: gzipped)")
    spaced.add_argument("--whole-forms", action="store_true",
                        help="Mimick's prediction for each whole form (spaces inside), not the mean of its parts'")
    spaced.set_defaults(func=cmd_spaced_rows)
    return parser


def main(argv: Optional[List[str]] = None) -> None:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except PeerInputError as err:
        raise SystemExit(f"error: {err}") from None
    except ValueError as err:  # the project's UserErrors (e.g. ConlluFormatError) are ValueErrors
        from spacy_mimick.errors import UserError

        if isinstance(err, UserError):
            raise SystemExit(f"error: {err}") from None
        raise


if __name__ == "__main__":
    main(sys.argv[1:])
