#!/usr/bin/env bash
# Rare Word evaluation and OOV nearest neighbours for Mimick trained on GloVe 6B 50d (top 100k).
# Trains the paper-faithful model and the default model, then writes docs/rare_word.md.
#   bash scripts/rare_word.sh [SHARED_DATA_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${1:-../shared/data}
GLOVE=$DATA/embeddings/glove.6B.50d.top100k.txt.gz
RW=$DATA/similarity/en/rw.txt
OUT=docs/rare_word.md
mkdir -p models docs
start=$(date +%s)
[ -f models/glove-paper/model.pt ] || python -m spacy_mimick train "$GLOVE" models/glove-paper --paper --quiet
paper_done=$(date +%s)
[ -f models/glove-default/model.pt ] || python -m spacy_mimick train "$GLOVE" models/glove-default --quiet
default_done=$(date +%s)
WORDS="MCT McNeally Vercellotti Secretive corssing flatfish compartmentalize pesky lawnmower developiong hurtling expectedly"
{
  echo "# Stanford Rare Word and OOV neighbours (GloVe 6B 50d, top 100k words)"
  echo
  echo "Made by \`bash scripts/rare_word.sh\` ($(date -u +%Y-%m-%d)). Spearman's rho x 100; a pair with a"
  echo "missing vector scores similarity 0 and is still counted; words are lowercased before lookup."
  echo
  echo "## Paper-faithful Mimick (\`--paper\`: \`spacy_mimick.Mimick.v1\`, squared L2 loss), trained in $((paper_done - start)) s"
  echo
  python -m spacy_mimick similarity "$RW" "$GLOVE" --model models/glove-paper
  echo
  echo "## Default model (\`python -m spacy_mimick train\` defaults), trained in $((default_done - paper_done)) s"
  echo
  python -m spacy_mimick similarity "$RW" "$GLOVE" --model models/glove-default
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
