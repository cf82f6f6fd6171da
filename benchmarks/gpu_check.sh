#!/usr/bin/env bash
# GPU check, on the CPU and on GPU 0, in one run:
#  1. the paper's Mimick model (char BiLSTM, `python -m spacy_mimick train --paper`) for 2 epochs on
#     a GloVe file (default the embedded top-20k slice; GLOVE=... for another): words/s in the
#     epoch, wall seconds of the whole command, dev loss after 2 epochs;
#  2. the joint tagger (MimickTagger.v3, Both variant) for one epoch on the embedded EWT slice
#     (`spacy train --gpu-id`), then the slice's test set tagged on the same device (on the GPU:
#     after spacy.require_gpu(), so mimick_vectors and the tagger predict there): training
#     words/s, POS and attribute accuracy, and the device mimick_vectors' model ran on;
#  3. the default Mimick model (character n-grams, sparse table) for 1 epoch on the same GloVe file;
#  4. the vocab's vectors (spacy_mimick.MimickVectors, [nlp.vectors]) of the CPU-trained tagger
#     pipeline, loaded after spacy.require_gpu(): get_batch on cupy keys (as spaCy's StaticVectors
#     calls it) for table words, OOV words and misspellings, the array type it returns, its largest
#     difference to the CPU's vectors, and a StaticVectors layer's forward pass on the GPU.
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

# mimick_rows PREFIX EPOCHS TITLE [train options]: train a Mimick model on each device, one table row
# each (whole command seconds, words/s and dev loss of every epoch) in $OUT/PREFIX.md
mimick_rows() {
  local prefix=$1 epochs=$2 title=$3
  shift 3
  printf "%s, %s epoch(s) on %s\n\n" "$title" "$epochs" "$GLOVE" > "$OUT/$prefix.md"
  printf "| device | command s | epoch words/s | dev loss |\n|---|---:|---:|---:|\n" >> "$OUT/$prefix.md"
  for gpu in $GPUS; do
    name=$(name_of "$gpu")
    start=$(date +%s.%N)
    python3 -m spacy_mimick train "$GLOVE" "$OUT/${prefix}_$name" "$@" --max-epochs "$epochs" --gpu-id "$gpu" \
        --quiet --no-cache > "$OUT/${prefix}_$name.log" 2>&1
    end=$(date +%s.%N)
    python3 - "$OUT" "$prefix" "$name" "$start" "$end" "$epochs" <<'PY'
import re, sys
out, prefix, name, start, end, epochs = sys.argv[1:7]
log = f"{out}/{prefix}_{name}.log"
rows = re.findall(r"epoch +(\d+) +train loss [\d.]+ +dev loss ([\d.]+) +([\d,]+) words/s", open(log).read())
assert len(rows) == int(epochs), f"expected {epochs} epoch lines in {log}, got {rows}"
with open(f"{out}/{prefix}.md", "a") as f:
    f.write(f"| {name} | {float(end) - float(start):.1f} | {', '.join(r[2] for r in rows)} "
            f"| {', '.join(r[1] for r in rows)} |\n")
PY
  done
  cat "$OUT/$prefix.md"
}

mimick_rows mimick 2 "Mimick, paper BiLSTM (--paper)" --paper

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

mimick_rows default 1 "Default Mimick model (character n-grams)"

python3 - "$OUT" "$GPUS" <<'PY' | tee "$OUT/vectors.md"
import sys
import numpy
import spacy
from spacy.ml.staticvectors import StaticVectors
from spacy_mimick.vectors.mimick_vectors import MimickVectors, to_numpy

out, gpus = sys.argv[1], [int(g) for g in sys.argv[2].split()]
words = ["crossing", "the", "Crossing", "corssing", "flatfish", "Vercellotti", "deactivatd", "sleepin"]


def vectors_of(nlp):
    nlp("warm up")  # mimick_vectors installs the vocab's MimickVectors
    vectors = nlp.vocab.vectors
    assert isinstance(vectors, MimickVectors), type(vectors)
    keys = numpy.asarray([nlp.vocab.strings.add(w) for w in words], dtype="uint64")
    return vectors, keys


nlp = spacy.load(f"{out}/cpu/model-last")
vectors, keys = vectors_of(nlp)
reference = to_numpy(vectors.get_batch(keys))
sources = vectors.sources(keys)
print("\nMimickVectors.get_batch (the CPU-trained tagger pipeline's vocab)\n")
print("| device | keys | returned | shape | max abs difference to CPU | StaticVectors output |")
print("|---|---|---|---|---:|---|")
print(f"| cpu | numpy | {type(reference).__module__}.{type(reference).__name__} | {reference.shape} | 0 | - |")
for gpu in [g for g in gpus if g >= 0]:
    import cupy
    spacy.require_gpu(gpu)
    nlp = spacy.load(f"{out}/cpu/model-last")
    vectors, keys = vectors_of(nlp)
    batch = vectors.get_batch(cupy.asarray(keys))
    diff = float(numpy.abs(to_numpy(batch) - reference).max())
    layer = StaticVectors(nO=16, nM=reference.shape[1])
    docs = [nlp.make_doc("The corssing of the flatfish by Vercellotti")]
    layer.initialize(X=docs)
    ragged = layer.predict(docs)
    print(f"| gpu{gpu} | cupy | {type(batch).__module__}.{type(batch).__name__} | {tuple(batch.shape)} | {diff:.2e} "
          f"| {type(ragged.dataXd).__module__}.{type(ragged.dataXd).__name__} {tuple(ragged.dataXd.shape)} |")
print("\nsources (0 table, 1 lowercase, 2 Mimick, 3 none):",
      dict(zip(words, to_numpy(sources).tolist())))
PY
