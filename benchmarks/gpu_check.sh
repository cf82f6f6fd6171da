#!/usr/bin/env bash
# GPU check (issue 16): the joint tagger (MimickTagger.v3, Both variant) trained for one epoch on
# the embedded EWT slice, on the CPU and on GPU 0 (`spacy train --gpu-id 0`), then evaluated on
# the slice's test set; prints words/s of training and POS / attribute accuracy for both.
# Needs a GPU with cupy for thinc; runs in a few minutes. Usage: bash benchmarks/gpu_check.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-/tmp/gpu_check}
mkdir -p "$OUT"
export OMP_NUM_THREADS=1
A=assets/UD_English-EWT
python3 -c "import spacy; from spacy.training.initialize import convert_vectors; nlp=spacy.blank('en'); convert_vectors(nlp, 'assets/glove.6B.50d.top20k.txt.gz', truncate=0, prune=-1, mode='default'); nlp.to_disk('$OUT/vectors')"
[ -d "$OUT/mimick" ] || python3 -m spacy_mimick train assets/glove.6B.50d.top20k.txt.gz "$OUT/mimick" --paper --max-epochs 2 --quiet
printf "| device | train s | train words/s | test POS | test attr micro-F1 |\n|---|---:|---:|---:|---:|\n" > "$OUT/table.md"
for gpu in -1 0; do
  name=$([ "$gpu" = -1 ] && echo cpu || echo gpu)
  start=$(date +%s.%N)
  python3 -m spacy train configs/tagger_both_v3.cfg --output "$OUT/$name" --paths.train $A/en_ewt-ud-train.conllu \
      --paths.dev $A/en_ewt-ud-dev.conllu --paths.vectors "$OUT/vectors" --paths.mimick_model "$OUT/mimick" \
      --training.max_epochs 1 --training.eval_frequency 1000 --gpu-id $gpu > "$OUT/$name.log" 2>&1
  end=$(date +%s.%N)
  python3 - "$OUT" "$name" "$start" "$end" <<'PY'
import sys, spacy
from spacy.training import Example
from spacy_mimick.ud import read_conllu
out, name, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
nlp = spacy.load(f"{out}/{name}/model-last")
gold = list(read_conllu("assets/UD_English-EWT/en_ewt-ud-test.conllu", nlp.vocab))
train_words = sum(len(d) for d in read_conllu("assets/UD_English-EWT/en_ewt-ud-train.conllu", nlp.vocab))
examples = [Example(nlp(spacy.tokens.Doc(nlp.vocab, words=[t.text for t in d])), d) for d in gold]
scores = nlp.get_pipe("mimick_tagger").score(examples)
secs = end - start
with open(f"{out}/table.md", "a") as f:
    f.write(f"| {name} | {secs:.1f} | {train_words / secs:,.0f} | {100 * scores['pos_acc']:.2f} | {100 * scores['attr_micro_f']:.2f} |\n")
PY
done
cat "$OUT/table.md"
