"""Markdown tables shaped like the paper's, from the metrics the project's commands wrote.

    python scripts/project/report.py METRICS_DIR [MORE_DIRS ...] --output METRICS_DIR/report.md [--settings 5000,0] [--gains-n-tokens 10000]

Reads every JSON under METRICS_DIR: ``evaluate.py``'s runs (one per treebank, token budget,
seed and variant), ``significance.py``'s tests and ``rare_word.py``'s results, and writes these
sections, numbered consecutively among those present (sections 1-3 and "All runs" need runs;
without Rare Word results "All runs" is section 4):

1. POS accuracy (the paper's Table 5): per treebank, No-Char / Mimick / char->tag / Both at
   each token budget in ``--settings`` (0 = full data, with its N_train). **Bold** (*italic*):
   significant improvement (degradation) by McNemar's test, p < ``--alpha``, of Mimick over
   No-Char and of Both over char->tag.
2. Attribute micro-F1 (Table 6), marked by the bootstrapped Z-test.
3. Gains from Mimick at ``--gains-n-tokens`` training tokens (Table 7): test tokens with no
   pretrained vector, POS accuracy gain over the full test set and over the tokens outside the
   training vocabulary ("OOV (UD)"), without and with char->tag; bold where McNemar's p < alpha.
4. Stanford Rare Word (Table 3), when ``rare_word.json`` exists.
5. Every run: mean +- standard deviation over seeds (the learning-curve data); then, where some
   runs' settings were chosen on dev (``choose_on_dev.py``), which candidate each got.
6. Against the paper, N_train = 5,000 (its Tables 2 and 3), where some treebank has runs at the
   paper's low-resource budget (Kazakh: its 1,000-token runs; the paper has no 5K Kazakh
   numbers): per treebank, our mean +- std over seeds of POS accuracy and of attribute micro-F1
   for the four variants beside the paper's number, and in how many seeds' tests (McNemar's,
   the bootstrapped Z-test) Mimick beat No-Char and Both beat char->tag significantly; then the
   mean gains over treebanks, ours and the paper's.

spaCy's own tagger + morphologizer (variant ``spacy``, the baseline beside the paper's four) gets
a column in tables 1-2, rows in the table of all runs and, in section 3, the best Mimick variant (Mimick or
Both, whichever has the higher mean POS accuracy over seeds) minus spaCy at every budget, with
the p-values of ``significance.py``'s test of the two (``sig-spacy-<variant>.json``) where it
ran. All of it appears only where some run is a spaCy run: a metrics folder without one
renders as before.

Tables 1-3 show one run per setting, the lowest seed (the one the significance tests
compare); "All runs" and the comparison with the paper show means over seeds. Scores are x 100.
"""
import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

sys.path.insert(0, str(Path(__file__).resolve().parent))
from markdown_tables import DASH, mean_std, pct, write_report  # noqa: E402
from variants import LABELS, MIMICK_VARIANTS, PAIRS, SPACY, VARIANTS  # noqa: E402
from variants import TAGGER_VARIANTS as PAPER_VARIANTS  # noqa: E402

SPACY_MODELS_DIR = "spacy_models"

# Pinter et al. (2017), Table 2 (POS accuracy) and Table 3 (attribute micro-F1), x 100, in the
# paper's order, per language code: (No-Char, Mimick, char->tag, Both), at N_train = 5,000
# (PAPER_5K) and on the full training sets (PAPER_FULL). Vietnamese has no attributes and
# Indonesian no attribute numbers; Kazakh has no 5K numbers at all.
PAPER_5K = {
    "pos_acc": {
        "ta": (82.30, 81.55, 84.97, 85.22), "lv": (80.44, 84.32, 84.49, 85.91),
        "vi": (85.67, 84.22, 84.85, 85.43), "hu": (82.88, 88.93, 85.83, 88.34),
        "tr": (83.69, 85.60, 84.23, 86.25), "el": (93.10, 93.63, 94.05, 94.64),
        "bg": (90.97, 93.16, 93.03, 93.52), "sv": (90.87, 92.30, 92.27, 93.02),
        "eu": (82.67, 84.44, 86.01, 86.93), "ru": (87.40, 89.72, 88.65, 90.91),
        "da": (89.46, 90.13, 89.96, 90.55), "id": (89.07, 89.34, 89.81, 90.21),
        "zh": (80.84, 85.69, 81.84, 85.53), "fa": (93.50, 93.58, 93.53, 93.71),
        "he": (90.73, 91.69, 91.93, 91.70), "ro": (87.73, 89.18, 88.96, 89.38),
        "en": (87.48, 88.45, 88.89, 88.89), "ar": (89.01, 90.58, 90.49, 90.62),
        "hi": (87.89, 87.77, 87.92, 88.09), "it": (91.35, 92.50, 92.45, 93.01),
        "es": (90.54, 91.41, 91.71, 91.78), "cs": (87.97, 90.81, 90.17, 91.29),
    },
    "attr_micro_f": {
        "ta": (80.68, 81.96, 84.26, 85.63), "lv": (56.98, 59.86, 64.81, 65.82),
        "hu": (73.13, 76.30, 73.62, 76.85), "tr": (69.58, 75.21, 75.81, 78.93),
        "el": (86.87, 86.07, 86.40, 87.50), "bg": (78.26, 81.77, 82.74, 84.93),
        "sv": (82.09, 84.12, 85.26, 88.16), "eu": (65.29, 66.00, 70.67, 70.27),
        "ru": (77.31, 81.84, 79.83, 83.53), "da": (80.26, 82.74, 83.59, 82.65),
        "zh": (63.29, 71.44, 63.50, 74.66), "fa": (84.73, 86.07, 85.94, 81.75),
        "he": (75.35, 68.57, 81.06, 75.24), "ro": (84.20, 85.64, 85.61, 87.31),
        "en": (86.71, 87.99, 88.50, 89.61), "ar": (84.14, 84.17, 81.41, 81.11),
        "hi": (83.45, 86.89, 85.64, 85.27), "it": (89.96, 92.07, 91.27, 92.62),
        "es": (88.11, 89.81, 88.58, 89.63), "cs": (68.66, 72.65, 71.02, 73.61),
    },
}
PAPER_FULL = {
    "pos_acc": {
        "kk": (81.94, 83.95, 83.64, 84.88), "ta": (80.44, 82.96, 84.11, 84.46),
        "lv": (85.77, 87.95, 89.55, 89.99), "vi": (89.94, 90.34, 90.50, 90.19),
        "hu": (91.52, 93.88, 94.07, 93.74), "tr": (90.19, 91.82, 93.11, 92.68),
        "el": (97.27, 98.08, 98.09, 98.22), "bg": (96.63, 97.29, 97.95, 97.78),
        "sv": (95.26, 96.27, 96.69, 96.87), "eu": (91.67, 93.16, 94.46, 94.29),
        "ru": (92.59, 95.21, 95.98, 95.84), "da": (94.14, 95.04, 96.13, 96.02),
        "id": (92.92, 93.24, 93.41, 93.70), "zh": (90.91, 93.31, 93.36, 93.72),
        "fa": (96.77, 97.03, 97.20, 97.16), "he": (95.65, 96.15, 96.59, 96.37),
        "ro": (95.68, 96.72, 97.07, 97.09), "en": (93.39, 94.04, 94.90, 94.70),
        "ar": (95.51, 95.72, 96.37, 96.24), "hi": (96.31, 96.45, 96.64, 96.61),
        "it": (97.22, 97.47, 97.76, 97.69), "es": (94.68, 94.84, 95.08, 95.05),
        "cs": (96.34, 97.62, 98.18, 97.93),
    },
    "attr_micro_f": {
        "kk": (21.48, 20.07, 28.47, 20.98), "ta": (79.90, 81.93, 84.55, 85.01),
        "lv": (66.16, 66.61, 76.11, 75.44), "hu": (80.04, 80.64, 86.43, 84.12),
        "tr": (78.31, 83.32, 91.51, 90.86), "el": (94.64, 94.96, 96.55, 96.76),
        "bg": (91.98, 93.48, 96.12, 95.96), "sv": (92.45, 94.20, 96.37, 96.57),
        "eu": (82.75, 84.74, 90.58, 91.39), "ru": (88.80, 91.24, 93.54, 93.56),
        "da": (92.06, 94.14, 96.05, 95.96), "zh": (84.95, 85.70, 84.86, 85.87),
        "fa": (95.30, 95.55, 96.90, 96.80), "he": (90.25, 90.99, 93.35, 93.63),
        "ro": (94.97, 96.10, 97.18, 97.14), "en": (95.30, 95.59, 96.40, 96.30),
        "ar": (94.43, 94.85, 95.50, 95.37), "hi": (96.15, 96.21, 96.59, 96.67),
        "it": (97.32, 97.80, 98.18, 98.31), "es": (94.84, 95.44, 96.21, 96.84),
        "cs": (91.75, 93.71, 95.29, 95.31),
    },
}
PAPER_BUDGET = 5000
# Treebanks whose low-resource runs are at another budget: Kazakh's training set is too small
# for 5,000 tokens.
PAPER_BUDGET_OF = {"UD_Kazakh-KTB": 1000}
# Language codes of treebanks whose runs say "xx" (no spaCy language of their own).
LANG_OF_TREEBANK = {"UD_Kazakh-KTB": "kk", "UD_Vietnamese-VTB": "vi"}


def base_treebank(treebank: str) -> str:
    """The UD treebank of a metrics folder's name, without the recipe suffix that the project
    adds (``UD_Vietnamese-VTB_lowres`` -> ``UD_Vietnamese-VTB``)."""
    return "_".join(treebank.split("_")[:2]) if treebank.startswith("UD_") else treebank


class Results:
    """Everything found under a metrics folder."""

    def __init__(self) -> None:
        self.runs: Dict[Tuple[str, int, int, str], Dict[str, Any]] = {}  # (treebank, n, seed, variant)
        self.sigs: Dict[Tuple[str, int, int, str, str], Dict[str, Any]] = {}  # (treebank, n, seed, a, b)
        self.rare_word: Dict[str, Dict[str, Any]] = {}

    @property
    def treebanks(self) -> List[str]:
        return sorted({key[0] for key in self.runs} | set(self.rare_word))

    def settings(self, treebank: Optional[str] = None) -> List[int]:
        """Token budgets present, ascending, full data (0) last."""
        found = {key[1] for key in self.runs if treebank is None or key[0] == treebank}
        return sorted(found, key=lambda n: (n == 0, n))

    def main_seed(self, treebank: str, n: int) -> Optional[int]:
        seeds = [key[2] for key in self.runs if key[0] == treebank and key[1] == n]
        return min(seeds) if seeds else None

    def run(self, treebank: str, n: int, variant: str, seed: Optional[int] = None) -> Optional[Dict[str, Any]]:
        seed = self.main_seed(treebank, n) if seed is None else seed
        return self.runs.get((treebank, n, seed, variant))

    def sig(self, treebank: str, n: int, variant: str) -> Optional[Dict[str, Any]]:
        if variant not in PAIRS:
            return None
        return self.sigs.get((treebank, n, self.main_seed(treebank, n), PAIRS[variant], variant))

    def sig_between(self, treebank: str, n: int, a: str, b: str) -> Optional[Dict[str, Any]]:
        """The main seed's test of ``a`` against ``b``, whichever way round it was run."""
        seed = self.main_seed(treebank, n)
        return self.sigs.get((treebank, n, seed, a, b)) or self.sigs.get((treebank, n, seed, b, a))

    def has_variant(self, variant: str, settings: Optional[Sequence[int]] = None) -> bool:
        return any(key[3] == variant and (settings is None or key[1] in settings) for key in self.runs)

    def subset(self, treebank: str, n: int, seed: int) -> "Results":
        """The runs and tests of one treebank, budget and seed (no Rare Word results)."""
        part = Results()
        part.runs = {key: run for key, run in self.runs.items() if key[:3] == (treebank, n, seed)}
        part.sigs = {key: sig for key, sig in self.sigs.items() if key[:3] == (treebank, n, seed)}
        return part


def load_results(root: Union[Path, Sequence[Path]]) -> Results:
    """Everything under one metrics folder, or several (e.g. metrics/ and the metrics of runs
    made outside the project by the since-removed scripts/tagger_experiments.py, which wrote the same files)."""
    roots = [root] if isinstance(root, Path) else list(root)
    results = Results()
    pending_sigs = []
    setting_of_dir: Dict[Path, Tuple[str, int, int]] = {}
    # metrics/spacy_models/ holds the `spacy-models` workflow's runs (its own report,
    # spacy_models_report.py): its variants are not the tagger runs'.
    for path in sorted(p for r in roots for p in r.rglob("*.json")
                       if SPACY_MODELS_DIR not in p.relative_to(r).parts[:-1]):
        try:
            data = json.loads(path.read_text(encoding="utf8"))
        except (ValueError, UnicodeDecodeError):
            continue
        if not isinstance(data, dict):
            continue
        if "variant" in data and "scores" in data:
            key = (data.get("treebank") or path.parent.parent.name, int(data.get("n_tokens") or 0),
                   int(data.get("seed") or 0))
            results.runs[(*key, data["variant"])] = data
            setting_of_dir[path.parent] = key
        elif "pos_p_value" in data and "a" in data and "b" in data:
            pending_sigs.append((path, data))
        elif data.get("rare_word"):
            results.rare_word[data.get("treebank") or path.parent.name] = data
    for path, data in pending_sigs:
        key = setting_of_dir.get(path.parent)
        if key is not None:
            results.sigs[(*key, data["a"], data["b"])] = data
    return results


def mark(text: str, delta: Optional[float], p_value: Optional[float], alpha: float) -> str:
    """Bold for a significant improvement, italic for a significant degradation."""
    if text == DASH or delta is None or p_value is None or p_value >= alpha or delta == 0:
        return text
    return f"**{text}**" if delta > 0 else f"*{text}*"


def language_label(treebank: str, results: Results) -> str:
    name = treebank[3:] if treebank.startswith("UD_") else treebank
    langs = {run.get("lang") for key, run in results.runs.items() if key[0] == treebank} - {None, "xx"}
    return f"{sorted(langs)[0]} ({name})" if langs else name


def setting_label(n: int) -> str:
    return "Full data" if n == 0 else f"N_train = {n:,}"


def shown_variants(results: Results, settings: Optional[Sequence[int]] = None) -> Tuple[str, ...]:
    """The paper's four, and spaCy's tagger where some run (at ``settings``) has it."""
    return VARIANTS if results.has_variant(SPACY, settings) else PAPER_VARIANTS


def score_table(results: Results, metric: str, p_key: str, delta_key: str, settings: Sequence[int],
                alpha: float) -> List[str]:
    variants = shown_variants(results, settings)
    header = ["Treebank"]
    for n in settings:
        if n == 0:
            header.append("N_train (full)")
        header += [f"{LABELS[v]} ({'full' if n == 0 else f'{n:,}'})" for v in variants]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for treebank in results.treebanks:
        if not any(results.run(treebank, n, v) for n in settings for v in variants):
            continue
        row = [language_label(treebank, results)]
        for n in settings:
            if n == 0:
                sizes = [r["n_train_tokens"] for v in variants if (r := results.run(treebank, 0, v))
                         and r.get("n_train_tokens") is not None]
                row.append(f"{sizes[0]:,}" if sizes else DASH)
            for variant in variants:
                run = results.run(treebank, n, variant)
                text = pct(run["scores"].get(metric)) if run else DASH
                sig = results.sig(treebank, n, variant)
                if sig is not None:
                    text = mark(text, sig.get(delta_key), sig.get(p_key), alpha)
                row.append(text)
        lines.append("| " + " | ".join(row) + " |")
    return lines


def pick_gains_setting(results: Results, treebank: str, wanted: int) -> Optional[int]:
    """``wanted`` if that budget was run with both pairs, else the closest budget that was."""
    complete = [n for n in results.settings(treebank)
                if all(results.run(treebank, n, v) for v in PAPER_VARIANTS)]
    if not complete:
        return None
    if wanted in complete:
        return wanted
    full = results.run(treebank, 0, "nochar") if 0 in complete else None
    if full and full.get("n_train_tokens") is not None and full["n_train_tokens"] <= wanted:
        return 0  # a treebank smaller than the budget: all its tokens (the paper's Tamil, Kazakh)
    limited = [n for n in complete if n > 0] or complete
    return min(limited, key=lambda n: abs(n - wanted))


def gains_table(results: Results, wanted: int, alpha: float) -> List[str]:
    rows = []
    for treebank in results.treebanks:
        n = pick_gains_setting(results, treebank, wanted)
        if n is None:
            continue
        runs = {v: results.run(treebank, n, v) for v in PAPER_VARIANTS}
        scores = {v: r["scores"] for v, r in runs.items()}
        base = scores["nochar"]
        missing = (base.get("oov_vec_n_tokens") / base["n_tokens"]
                   if base.get("oov_vec_n_tokens") is not None and base.get("n_tokens") else None)
        cells = []
        for key in ("pos_acc", "oov_train_pos_acc"):
            for variant in ("mimick", "both"):
                a, b = scores[PAIRS[variant]].get(key), scores[variant].get(key)
                delta = None if a is None or b is None else b - a
                sig = results.sig(treebank, n, variant) or {}
                p_value = sig.get("pos_p_value") if key == "pos_acc" else (sig.get("oov_train") or {}).get("pos_p_value")
                text = DASH if delta is None else f"{100 * delta:.2f}"
                cells.append(f"**{text}**" if delta is not None and p_value is not None and p_value < alpha else text)
        label = language_label(treebank, results) + ("" if n == wanted else f" (N={'full' if n == 0 else f'{n:,}'})")
        rows.append((missing if missing is not None else 2.0, [label, pct(missing, 1) + ("%" if missing is not None else ""), *cells]))
    header = ["Test set", "Missing embeddings", "Full vocabulary: w/o char→tag", "Full vocabulary: with char→tag",
              "OOV (UD): w/o char→tag", "OOV (UD): with char→tag"]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    lines += ["| " + " | ".join(cells) + " |" for _, cells in sorted(rows, key=lambda r: r[0])]
    return lines if rows else []


def seed_means(results: Results, treebank: str, n: int, variant: str, seeds: Sequence[int]) -> Dict[str, Optional[float]]:
    """Mean over ``seeds`` of the scores the spaCy comparison shows (None where a run lacks one)."""
    out: Dict[str, Optional[float]] = {}
    for key in ("pos_acc", "oov_train_pos_acc", "attr_micro_f"):
        values = [results.runs[(treebank, n, s, variant)]["scores"].get(key) for s in seeds]
        out[key] = None if not values or any(v is None for v in values) else statistics.mean(values)
    return out


def spacy_gains_table(results: Results, alpha: float) -> List[str]:
    """Best Mimick variant minus spaCy's tagger + morphologizer at every budget with both: means
    over the seeds both ran; the best variant is the one with the higher mean POS accuracy."""
    lines = ["| Test set | Budget | Best Mimick variant | Seeds | POS acc.: best | POS acc.: spaCy "
             "| POS: best − spaCy | p (McNemar) | OOV (UD) POS: best − spaCy | Attr. micro-F1: best − spaCy "
             "| p (Z-test) | POS: best − spaCy, lowest seed | Seeds with a POS gain, p < α |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for treebank in results.treebanks:
        for n in results.settings(treebank):
            spacy_seeds = {key[2] for key in results.runs if key[:2] == (treebank, n) and key[3] == SPACY}
            candidates = {}
            for variant in MIMICK_VARIANTS:
                seeds = sorted(spacy_seeds & {key[2] for key in results.runs
                                              if key[:2] == (treebank, n) and key[3] == variant})
                if seeds:
                    candidates[variant] = (seeds, seed_means(results, treebank, n, variant, seeds))
            candidates = {v: c for v, c in candidates.items() if c[1]["pos_acc"] is not None}
            if not candidates:
                continue
            best = max(candidates, key=lambda v: candidates[v][1]["pos_acc"])  # ties: Mimick
            seeds, ours = candidates[best]
            theirs = seed_means(results, treebank, n, SPACY, seeds)

            def delta(key):
                a, b = ours[key], theirs[key]
                return DASH if a is None or b is None else f"{100 * (a - b):.2f}"

            sig = results.sig_between(treebank, n, SPACY, best) or {}

            def p_text(value):
                return DASH if value is None else f"{value:.2g}" + (" *" if value < alpha else "")

            per_seed = [results.runs[(treebank, n, s, best)]["scores"]["pos_acc"]
                        - results.runs[(treebank, n, s, SPACY)]["scores"]["pos_acc"] for s in seeds]
            # Every seed's test (the lowest seed's alone is in the p columns): gains with p < alpha.
            tested = significant = 0
            for s in seeds:
                forward = results.sigs.get((treebank, n, s, SPACY, best))
                test = forward or results.sigs.get((treebank, n, s, best, SPACY))
                if test is None or test.get("pos_p_value") is None:
                    continue
                tested += 1
                gain = test["pos_acc_delta"] if forward else -test["pos_acc_delta"]
                significant += gain > 0 and test["pos_p_value"] < alpha
            lines.append(
                f"| {language_label(treebank, results)} | {'full' if n == 0 else f'{n:,}'} | {LABELS[best]} "
                f"| {len(seeds)} | {pct(ours['pos_acc'])} | {pct(theirs['pos_acc'])} | {delta('pos_acc')} "
                f"| {p_text(sig.get('pos_p_value'))} | {delta('oov_train_pos_acc')} | {delta('attr_micro_f')} "
                f"| {p_text(sig.get('attr_p_value'))} | {100 * min(per_seed):.2f} "
                f"| {f'{significant}/{tested}' if tested else DASH} |")
    return lines if len(lines) > 2 else []


def rare_word_table(results: Results) -> List[str]:
    lines = []
    for treebank, data in sorted(results.rare_word.items()):
        vectors = data.get("vectors", {})
        lines += [
            f"Pairs file: `{data.get('pairs_file')}`; vectors: `{vectors.get('name')}` "
            f"({vectors.get('rows', 0):,} words x {vectors.get('dim')} dims).",
            "",
            f"| Vectors | Emb. dim | Vocab size | In-vocab pairs (N={data.get('n_in_vocab_pairs')}) "
            f"| All pairs (N={data.get('n_pairs')}) | Pairs with both vectors |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        rows = f"{vectors.get('rows', 0):,}"
        vocab = {"vectors": rows, "mimick": "0", "vectors + mimick": rows, "vectors ⊕ mimick": rows}
        for system in data.get("systems", []):
            name = system["name"]
            table_name = vectors.get("name") or "vectors"
            label = {"vectors": table_name, "mimick": "Mimick",
                     "vectors + mimick": f"{table_name} + Mimick (OOV words)",
                     "vectors ⊕ mimick": f"{table_name} ⊕ Mimick (mean of the unit vectors)"}.get(name, name)

            def rho(value):
                return DASH if value is None else f"{value:.1f}"

            lines.append(f"| {label} | {vectors.get('dim')} | {vocab.get(name, DASH)} | {rho(system.get('in_vocab'))} "
                         f"| {rho(system.get('all'))} | {system.get('covered', DASH)} |")
        lines.append("")
    return lines


def runs_table(results: Results) -> List[str]:
    groups: Dict[Tuple[str, int, str], List[Dict[str, Any]]] = defaultdict(list)
    for (treebank, n, seed, variant), run in results.runs.items():
        groups[(treebank, n, variant)].append(run)
    lines = ["| Treebank | Budget | Variant | Seeds | Train tokens | POS acc. | Attr. micro-F1 | OOV (UD) POS acc. | Test tokens w/o vector |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    order = {v: i for i, v in enumerate(VARIANTS)}  # spaCy's runs after the paper's four
    for (treebank, n, variant) in sorted(groups, key=lambda k: (k[0], k[1] == 0, k[1], order.get(k[2], 9), k[2])):
        runs = groups[(treebank, n, variant)]

        def values(key):
            return [r["scores"][key] for r in runs if r["scores"].get(key) is not None]

        tokens = [r["n_train_tokens"] for r in runs if r.get("n_train_tokens") is not None]
        no_vec = [r["scores"]["oov_vec_n_tokens"] / r["scores"]["n_tokens"] for r in runs
                  if r["scores"].get("oov_vec_n_tokens") is not None and r["scores"].get("n_tokens")]
        lines.append(
            f"| {language_label(treebank, results)} | {'full' if n == 0 else f'{n:,}'} | {LABELS.get(variant, variant)} "
            f"| {len(runs)} | {f'{round(statistics.mean(tokens)):,}' if tokens else DASH} | {mean_std(values('pos_acc'))} "
            f"| {mean_std(values('attr_micro_f'))} | {mean_std(values('oov_train_pos_acc'))} "
            f"| {pct(statistics.mean(no_vec), 1) + '%' if no_vec else DASH} |"
        )
    return lines


def dev_choice_table(results: Results) -> List[str]:
    """Runs whose setting ``choose_on_dev.py`` chose on dev: per treebank, budget and variant,
    how many of its seeds got each candidate recipe, and the mean dev score of each."""
    groups: Dict[Tuple[str, int, str], List[Dict[str, Any]]] = defaultdict(list)
    for (treebank, n, seed, variant), run in results.runs.items():
        if isinstance(run.get("dev_choice"), dict):
            groups[(treebank, n, variant)].append(run["dev_choice"])
    if not groups:
        return []
    lines = ["| Treebank | Budget | Variant | Seeds | Chosen on dev | Mean dev score per candidate |",
             "|---|---:|---|---:|---|---|"]
    for (treebank, n, variant) in sorted(groups, key=lambda k: (k[0], k[1] == 0, k[1], k[2])):
        choices = groups[(treebank, n, variant)]
        candidates = list(dict.fromkeys(c for choice in choices for c in choice["candidates"]))
        chosen = ", ".join(f"{c or '(paper)'} {sum(ch['chosen'] == c for ch in choices)}" for c in candidates)
        dev = ", ".join(f"{c or '(paper)'} {pct(statistics.mean(ch['dev_scores'][c] for ch in choices if c in ch['dev_scores']))}"
                        for c in candidates)
        lines.append(f"| {language_label(treebank, results)} | {'full' if n == 0 else f'{n:,}'} "
                     f"| {LABELS.get(variant, variant)} | {len(choices)} | {chosen} | {dev} |")
    return lines


def render(results: Results, settings: Optional[Sequence[int]] = None, gains_n_tokens: int = 10000,
           alpha: float = 0.01) -> str:
    present = results.settings()
    if settings is None:
        settings = [n for n in (5000, 0) if n in present] or present
    else:
        settings = [n for n in settings if n in present]
    number = iter(range(1, 100))  # sections are numbered in order, whichever are present

    def section(title: str) -> str:
        return f"## {next(number)}. {title}"

    out = ["# Results", "",
           "Scores x 100 on the test set. Tables 1, 2 and 3 show one run per setting (the lowest seed); "
           f"**bold** (*italic*): significant improvement (degradation), p < {alpha}, of Mimick over No-Char "
           "and of Both over char→tag.", ""]
    if results.runs:
        out += [section("POS tagging accuracy"), "", "McNemar's test.", ""]
        out += score_table(results, "pos_acc", "pos_p_value", "pos_acc_delta", settings, alpha) + [""]
        out += [section("Morphosyntactic attributes: micro-F1"), "",
                "Bootstrapped Z-test over test sentences. — where the treebank has no attributes.", ""]
        out += score_table(results, "attr_micro_f", "attr_p_value", "attr_micro_f_delta", settings, alpha) + [""]
        gains = gains_table(results, gains_n_tokens, alpha)
        out += [section(f"Gain in POS accuracy from Mimick, {gains_n_tokens:,} training tokens"), "",
                "Missing embeddings: test tokens with no pretrained vector (exact or lowercase form). "
                "Gains are Mimick − No-Char (w/o char→tag) and Both − char→tag (with), over all test tokens "
                "and over the test tokens outside the training vocabulary; **bold**: McNemar's p < "
                f"{alpha}. A treebank without runs of all four variants at {gains_n_tokens:,} tokens shows "
                "its closest budget that has them.", ""]
        out += (gains or ["No setting has all four variants."]) + [""]
        if results.has_variant(SPACY):
            out += [f"### Best Mimick variant − {LABELS[SPACY]}", "",
                    "spaCy's own tagger + morphologizer (configs/spacy_tagger_morphologizer.cfg) on the same "
                    "training data and vectors. Best Mimick variant: Mimick or Both, whichever has the higher mean "
                    "POS accuracy over the seeds both it and spaCy ran; scores and differences are means over those "
                    "seeds. p: the lowest seed's McNemar's test (POS) and bootstrapped Z-test (attribute micro-F1) "
                    "of the two (`significance.py`, sig-spacy-<variant>.json), — where it did not run; * p < "
                    f"{alpha}. The last two columns look at every seed: the smallest POS difference, and in how "
                    f"many of the seeds with a test the best variant was ahead with McNemar's p < {alpha}.", ""]
            out += (spacy_gains_table(results, alpha) or ["No budget has runs of spaCy and of Mimick or Both."]) + [""]
    if results.rare_word:
        out += [section("Stanford Rare Word similarity"), "",
                "Spearman's ρ x 100; a pair with a missing vector counts with similarity 0.", ""]
        out += rare_word_table(results)
    if results.runs:
        out += [section("All runs (mean ± std over seeds)"), ""] + runs_table(results) + [""]
    chosen = dev_choice_table(results)
    if chosen:
        out += [section("Settings chosen on dev"), "",
                "Runs of `choose-on-dev` (paper.py --choose-on-dev): the same samples trained with each candidate "
                "recipe; per run, the candidate whose model-best scored best on dev (the score `spacy train` "
                "chose model-best by) is the one in the tables above. Seeds that got each candidate, and the mean "
                "dev score of each.", ""] + chosen + [""]
    for full in (False, True):
        paper_rows = paper_comparison_rows(results, full)
        if not paper_rows:
            continue
        title = "full training sets" if full else f"N_train = {PAPER_BUDGET:,}"
        out += [section(f"Against the paper: {title}"), "",
                "Ours: mean ± std over seeds; in parentheses the paper's number (Pinter et al., 2017, Table 2 "
                "for POS, Table 3 for attributes), — where it has none. Significant gains: in how many seeds "
                f"the test (`significance.py`: McNemar's for POS, the bootstrapped Z-test for attributes) found "
                f"a gain with p < {alpha}, out of the seeds it ran on (— where it ran on none)."
                + ("" if full else " Kazakh: its 1,000-token runs (the paper has no 5,000-token Kazakh numbers)."), ""]
        for metric, p_key, delta_key, title, test in (
                ("pos_acc", "pos_p_value", "pos_acc_delta", "POS accuracy", "McNemar"),
                ("attr_micro_f", "attr_p_value", "attr_micro_f_delta", "Attribute micro-F1", "Z-test")):
            out += [f"### {title}", ""]
            out += paper_table(results, paper_rows, metric, p_key, delta_key, alpha, test) + [""]
            out += [paper_mean_gains(results, paper_rows, metric), ""]
        out += ["†: no vectors table for the language. The paper's No-Char and char→tag had Polyglot vectors; "
                "ours, in languages without a vectors table (†), have random word embeddings, and our Mimick and "
                "Both use the original release's Mimick model (Polyglot 64d) alone (Mimick-only vectors). "
                "The UD versions differ too (see docs/paper_results.md).", ""]
    if not results.runs and not results.rare_word:
        out += ["No metrics found.", ""]
    return "\n".join(out)


def paper_lang(treebank: str, results: Results) -> str:
    """The language code of a treebank's runs ("xx" or none: LANG_OF_TREEBANK, else its name)."""
    langs = {run.get("lang") for key, run in results.runs.items() if key[0] == treebank} - {None, "xx"}
    if langs:
        return sorted(langs)[0]
    return LANG_OF_TREEBANK.get(base_treebank(treebank), treebank[3:] if treebank.startswith("UD_") else treebank)


def paper_numbers(metric: str, n: int) -> Dict[str, Tuple[float, ...]]:
    """The paper's numbers of ``metric`` at budget ``n`` (5,000 or 0, the full data), else none."""
    return PAPER_5K[metric] if n == PAPER_BUDGET else PAPER_FULL[metric] if n == 0 else {}


def paper_comparison_rows(results: Results, full: bool = False) -> List[Tuple[str, int, str]]:
    """(treebank, budget, label) of every treebank with a paper variant's run at its low-resource
    budget (``full``: on the full training set), in the paper's order of languages (others after
    it, by code)."""
    rows = []
    for treebank in results.treebanks:
        n = 0 if full else PAPER_BUDGET_OF.get(base_treebank(treebank), PAPER_BUDGET)
        if any(key[0] == treebank and key[1] == n and key[3] in PAPER_VARIANTS for key in results.runs):
            rows.append((treebank, n, paper_lang(treebank, results)))
    codes = [lang for _, _, lang in rows]
    order = {lang: i for i, lang in enumerate((PAPER_FULL if full else PAPER_5K)["pos_acc"])}
    labelled = []
    for treebank, n, lang in sorted(rows, key=lambda r: (order.get(r[2], len(order)), r[2], r[0])):
        label = lang
        if codes.count(lang) > 1:  # two treebanks of one language
            label += f" ({treebank[3:] if treebank.startswith('UD_') else treebank})"
        if n not in (PAPER_BUDGET, 0):
            label += f" ({n:,} tokens)"
        nochar = [run for key, run in results.runs.items() if key[0] == treebank and key[1] == n
                  and key[3] == "nochar"]
        if nochar and all((run.get("vectors") or {}).get("rows") == 0 for run in nochar):
            label += " †"
        labelled.append((treebank, n, label))
    return labelled


def variant_scores(results: Results, treebank: str, n: int, variant: str, metric: str) -> List[float]:
    """``metric`` of every seed's run of ``variant`` (runs without it left out)."""
    return [run["scores"][metric] for key, run in sorted(results.runs.items())
            if key[0] == treebank and key[1] == n and key[3] == variant and run["scores"].get(metric) is not None]


def significant_seeds(results: Results, treebank: str, n: int, variant: str, p_key: str, delta_key: str,
                      alpha: float) -> str:
    """"k/n": of the n seeds whose test of ``variant`` against its baseline gave a p-value, the k
    with a significant gain."""
    tests = [sig for key, sig in results.sigs.items()
             if key[:2] == (treebank, n) and key[3:] == (PAIRS[variant], variant) and sig.get(p_key) is not None]
    if not tests:
        return DASH
    gains = sum(1 for sig in tests if sig[p_key] < alpha and (sig.get(delta_key) or 0) > 0)
    return f"{gains}/{len(tests)}"


def paper_table(results: Results, rows: Sequence[Tuple[str, int, str]], metric: str, p_key: str,
                delta_key: str, alpha: float, test: str) -> List[str]:
    header = ["Language", "Seeds", *(f"{LABELS[v]} (paper)" for v in PAPER_VARIANTS),
              f"Mimick > No-Char (p<{alpha:g}, {test})", f"Both > char→tag (p<{alpha:g}, {test})"]
    lines = ["| " + " | ".join(header) + " |", "|---|---:|" + "---:|" * (len(header) - 2)]
    for treebank, n, label in rows:
        lang = paper_lang(treebank, results)
        paper = paper_numbers(metric, n).get(lang)
        seeds = {key[2] for key in results.runs if key[:2] == (treebank, n) and key[3] in PAPER_VARIANTS}
        cells = [label, str(len(seeds))]
        for i, variant in enumerate(PAPER_VARIANTS):
            theirs = DASH if paper is None else f"{paper[i]:.2f}"
            cells.append(f"{mean_std(variant_scores(results, treebank, n, variant, metric))} ({theirs})")
        for variant in ("mimick", "both"):
            cells.append(significant_seeds(results, treebank, n, variant, p_key, delta_key, alpha))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def paper_mean_gains(results: Results, rows: Sequence[Tuple[str, int, str]], metric: str) -> str:
    """Mean over treebanks of Both - char->tag and Mimick - No-Char: ours (over the treebanks with
    both means) and the paper's (over those of them it has numbers for)."""
    parts = []
    for variant in ("both", "mimick"):
        base = PAIRS[variant]
        ours, theirs = [], []
        for treebank, n, _ in rows:
            a = variant_scores(results, treebank, n, base, metric)
            b = variant_scores(results, treebank, n, variant, metric)
            if not a or not b:
                continue
            ours.append(statistics.mean(b) - statistics.mean(a))
            paper = paper_numbers(metric, n).get(paper_lang(treebank, results))
            if paper is not None:
                i, j = PAPER_VARIANTS.index(variant), PAPER_VARIANTS.index(base)
                theirs.append((paper[i] - paper[j]) / 100)
        text = f"{LABELS[variant]} − {LABELS[base]}: "
        if not ours:
            parts.append(text + DASH)
            continue
        text += f"{100 * statistics.mean(ours):+.2f} over {len(ours)} treebank{'s' if len(ours) > 1 else ''}"
        if theirs:
            text += f" (paper: {100 * statistics.mean(theirs):+.2f} over the {len(theirs)} of them it reports)"
        parts.append(text)
    return "Mean over treebanks of our means: " + "; ".join(parts) + "."


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("metrics_dir", type=Path)
    parser.add_argument("more_dirs", type=Path, nargs="*", help="Other folders of evaluate.py/significance.py JSON")
    parser.add_argument("--output", "-o", type=Path, default=None, help="Markdown file (default: METRICS_DIR/report.md)")
    parser.add_argument("--settings", default=None, help="Token budgets of tables 1-2, e.g. 5000,0 (0: full data); "
                        "default: 5000 and full data if present, else every budget found")
    parser.add_argument("--gains-n-tokens", type=int, default=10000, help="Token budget of table 3")
    parser.add_argument("--alpha", type=float, default=0.01, help="Significance level")
    args = parser.parse_args(argv)
    settings = [int(s) for s in args.settings.split(",")] if args.settings else None
    results = load_results([args.metrics_dir, *args.more_dirs])
    text = render(results, settings, args.gains_n_tokens, args.alpha)
    write_report(text, args.output or args.metrics_dir / "report.md")


if __name__ == "__main__":
    main(sys.argv[1:])
