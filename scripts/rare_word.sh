#!/usr/bin/env bash
# Rare Word evaluation and OOV nearest neighbours for Mimick trained on GloVe 6B 50d (top 100k).
# Trains the paper-faithful, the default and the contrastive model, then writes metrics/rare_word.md
# (its report at the time is a section of docs/oov_vectors.md).
#   bash scripts/rare_word.sh [SHARED_DATA_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${1:-../shared/data}
GLOVE=$DATA/embeddings/glove.6B.50d.top100k.txt.gz
RW=$DATA/similarity/en/rw.txt
OUT=metrics/rare_word.md
mkdir -p models metrics
train() {  # NAME ARGS...: train once, remember the wall time
  local name=$1; shift
  if [ ! -f "models/$name/model.pt" ]; then
    local t0=$(date +%s)
    python -m spacy_mimick train "$GLOVE" "models/$name" --quiet "$@"
    echo $(( $(date +%s) - t0 )) > "models/$name/train_seconds.txt"
  fi
}
train glove-paper --paper
train glove-default
train glove-contrastive --loss contrastive --temperature 0.1
SIMSETS="EN-SIMLEX-999.txt EN-MEN-TR-3k.txt EN-WS-353-ALL.txt"
simsets() {  # MODEL: the lookups of the other English similarity sets
  for set in $SIMSETS; do
    echo
    echo "### $set"
    echo
    python -m spacy_mimick similarity "$DATA/similarity/en/$set" "$GLOVE" --model "$1"
  done
}
WORDS="MCT McNeally Vercellotti Secretive corssing flatfish compartmentalize pesky lawnmower developiong hurtling expectedly"
{
  echo "# Stanford Rare Word and OOV neighbours (GloVe 6B 50d, top 100k words)"
  echo
  echo "Made by \`bash scripts/rare_word.sh\` ($(date -u +%Y-%m-%d)). Spearman's rho x 100; a pair with a"
  echo "missing vector scores similarity 0 and is still counted; words are lowercased before lookup."
  echo
  echo "## Paper-faithful Mimick (\`--paper\`: \`spacy_mimick.Mimick.v1\`, squared L2 loss), trained in $(cat models/glove-paper/train_seconds.txt) s"
  echo
  python -m spacy_mimick similarity "$RW" "$GLOVE" --model models/glove-paper
  echo
  echo "## Default model (\`python -m spacy_mimick train\` defaults), trained in $(cat models/glove-default/train_seconds.txt) s"
  echo
  python -m spacy_mimick similarity "$RW" "$GLOVE" --model models/glove-default
  echo
  echo "\"vectors ⊕ mimick\" also replaces in-vocabulary vectors by the mean of the unit table vector and"
  echo "the unit Mimick vector (an ensemble; not what the mimick_vectors component does). The same"
  echo "\"vectors (rarest 50% refined) + mimick\" does that only for the last half of the table's rows"
  echo "(ranks 50,001-100,000), keeping the vectors of frequent words: what the mimick_vectors"
  echo "component gives with its opt-in \`refine_rare = 0.5\`. The same lookups on the other English"
  echo "similarity sets, default model:"
  simsets models/glove-default
  echo
  echo "## Contrastive model (\`--loss contrastive --temperature 0.1\`), trained in $(cat models/glove-contrastive/train_seconds.txt) s"
  echo
  echo "The n-gram model trained with InfoNCE (docs/oov_vectors.md) instead of squared L2."
  echo
  python -m spacy_mimick similarity "$RW" "$GLOVE" --model models/glove-contrastive
  simsets models/glove-contrastive
  echo
  echo "## Nearest in-vocabulary neighbours of the paper's OOV examples (Table 1 of the paper)"
  echo
  echo "### Paper-faithful Mimick"
  echo
  python -m spacy_mimick neighbors models/glove-paper "$GLOVE" $WORDS -k 5
  echo
  echo "### Default model"
  echo
  python -m spacy_mimick neighbors models/glove-default "$GLOVE" $WORDS -k 5
} > "$OUT"
cat "$OUT"
