#!/usr/bin/env bash
# GPU check, on the CPU and on GPU 0, in one run:
#  1. the paper's Mimick model (char BiLSTM, `python -m spacy_mimick train --paper`) for 2 epochs on
#     a GloVe file (default the embedded top-20k slice; GLOVE=... for another): words/s in the
#     epoch, wall seconds of the whole command, dev loss after 2 epochs;
#  2. the joint tagger (MimickTagger.v3, Both variant) for one epoch on the embedded EWT slice
#     (`spacy train --gpu-id`), then the slice's test set tagged on the same device (on the GPU:
#     after spacy.require_gpu(), so mimick_vectors and the tagger predict there): training
#     words/s, POS and attribute accuracy, and the device mimick_vectors' model ran on.
# Needs torch with CUDA and cupy (thinc's GPU ops); a few minutes on one GPU.
# Usage: bash benchmarks/gpu_check.sh [OUT_DIR]      (GPUS="-1" runs the CPU rows only)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-/tmp/gpu_check}
GPUS=${GPUS:-"-1 0"}
GLOVE=${GLOVE:-assets/glove.6B.50d.top20k.txt.gz}
mkdir -p "$OUT"
export OMP_NUM_THREADS=1
A=assets/UD_English-EWT
name_of() { [ "$1" = -1 ] && echo cpu || echo "gpu$1"; }

printf "Mimick, paper BiLSTM (--paper), 2 epochs on %s\n\n" "$GLOVE" > "$OUT/mimick.md"
printf "| device | command s | epoch words/s (1, 2) | dev loss (1, 2) |\n|---|---:|---:|---:|\n" >> "$OUT/mimick.md"
for gpu in $GPUS; do
  name=$(name_of "$gpu")
  start=$(date +%s.%N)
  python3 -m spacy_mimick train "$GLOVE" "$OUT/mimick_$name" --paper --max-epochs 2 --gpu-id "$gpu" \
      --quiet --no-cache > "$OUT/mimick_$name.log" 2>&1
  end=$(date +%s.%N)
  python3 - "$OUT" "$name" "$start" "$end" <<'PY'
import re, sys
out, name, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
rows = re.findall(r"epoch +(\d+) +train loss [\d.]+ +dev loss ([\d.]+) +([\d,]+) words/s",
                  open(f"{out}/mimick_{name}.log").read())
assert len(rows) == 2, f"expected 2 epoch lines in {out}/mimick_{name}.log, got {rows}"
speed = ", ".join(r[2] for r in rows)
loss = ", ".join(r[1] for r in rows)
with open(f"{out}/mimick.md", "a") as f:
    f.write(f"| {name} | {end - start:.1f} | {speed} | {loss} |\n")
PY
done
cat "$OUT/mimick.md"

python3 -c "import spacy; from spacy.training.initialize import convert_vectors; nlp=spacy.blank('en'); convert_vectors(nlp, 'assets/glove.6B.50d.top20k.txt.gz', truncate=0, prune=-1, mode='default'); nlp.to_disk('$OUT/vectors')"
[ -d "$OUT/mimick" ] || python3 -m spacy_mimick train assets/glove.6B.50d.top20k.txt.gz "$OUT/mimick" --paper --max-epochs 2 --quiet
python3 -m spacy_mimick init-config "$OUT/tagger_both.cfg" --variant both
printf "\nTagger MimickTagger.v3 (Both), 1 epoch on %s train\n\n" "$A" > "$OUT/table.md"
printf "| device | train s | train words/s | test POS | test attr micro-F1 | mimick_vectors ran on |\n|---|---:|---:|---:|---:|---|\n" >> "$OUT/table.md"
for gpu in $GPUS; do
  name=$(name_of "$gpu")
  start=$(date +%s.%N)
  python3 -m spacy train "$OUT/tagger_both.cfg" --output "$OUT/$name" --paths.train $A/en_ewt-ud-train.conllu \
      --paths.dev $A/en_ewt-ud-dev.conllu --paths.vectors "$OUT/vectors" --paths.mimick_model "$OUT/mimick" \
      --training.max_epochs 1 --training.eval_frequency 1000 --gpu-id "$gpu" > "$OUT/$name.log" 2>&1
  end=$(date +%s.%N)
  python3 - "$OUT" "$name" "$start" "$end" "$gpu" <<'PY'
import sys, spacy
out, name, start, end, gpu = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
if gpu >= 0:
    spacy.require_gpu(gpu)  # predict on the GPU, as a user of a GPU pipeline would
from spacy.training import Example
from spacy_mimick.ud.corpus import read_conllu
nlp = spacy.load(f"{out}/{name}/model-last")
gold = list(read_conllu("assets/UD_English-EWT/en_ewt-ud-test.conllu", nlp.vocab))
train_words = sum(len(d) for d in read_conllu("assets/UD_English-EWT/en_ewt-ud-train.conllu", nlp.vocab))
examples = [Example(nlp(spacy.tokens.Doc(nlp.vocab, words=[t.text for t in d])), d) for d in gold]
scores = nlp.get_pipe("mimick_tagger").score(examples)
device = nlp.get_pipe("mimick_vectors").model.device
secs = end - start
with open(f"{out}/table.md", "a") as f:
    f.write(f"| {name} | {secs:.1f} | {train_words / secs:,.0f} | {100 * scores['pos_acc']:.2f} "
            f"| {100 * scores['attr_micro_f']:.2f} | {device} |\n")
PY
done
cat "$OUT/table.md"
