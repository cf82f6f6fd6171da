#!/usr/bin/env bash
# One table of the three taggers at 5,000 tokens, per treebank and subsample, from the runs on this
# machine: the project's Both (the run chosen on dev, metrics/<tb>_lowres-dev, where the default
# path ran with its candidates; else the recipe's run, metrics/<tb>_lowres), spaCy's tagger +
# morphologizer on the same sample (metrics/<tb>_lowres/n5000.sS/spacy.spacy) and Stanza's tagger
# (STANZA_RUNS/<lang>_sS_*/test.pred.conllu, made by scripts/stanza_peer.py train / predict).
# A treebank with fewer than 5,000 training tokens (Kazakh KTB: 4,949) has its full-data run
# (n0.sS, n_train_tokens <= 5,000 in Both's metrics) in the table instead. Each sample with Both
# and at least one peer is scored by `stanza_peer.py score` (the project's scorer, McNemar /
# bootstrap against Both) into metrics/peers/, then `stanza_peer.py table`.
#
#   scripts/peer_table.sh OUT.md [STANZA_RUNS]     (STANZA_RUNS default: stanza_runs)
set -euo pipefail
out=${1:?usage: scripts/peer_table.sh OUT.md [STANZA_RUNS]}
runs=${2:-stanza_runs}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p metrics/peers
scores=()
for run in metrics/UD_*_lowres/n5000.s* metrics/UD_*_lowres/n0.s*; do
  [ -d "$run" ] || continue
  tb=$(basename "$(dirname "$run")"); tb=${tb%_lowres}
  sample=$(basename "$run"); seed=${sample##*.s}
  if [ "${sample%%.*}" = n0 ]; then
    small=$(python -c "import json, sys; print(int(json.load(open(sys.argv[1]))['n_train_tokens'] <= 5000))" \
      "$run/both.json" 2>/dev/null || echo 0)
    [ "$small" = 1 ] || continue
  fi
  both=metrics/${tb}_lowres-dev/$sample/both.spacy
  [ -s "$both" ] || both=$run/both.spacy
  [ -s "$both" ] || continue
  lang=$(python -c "import json, sys; sys.path.insert(0, sys.argv[1]); from data import prefix_language
print(prefix_language(json.load(open(sys.argv[2]))['prefix']))" "$here/project" "corpus/$tb/sources.json")
  systems=()
  [ -s "$run/spacy.spacy" ] && systems+=(--system "spaCy=$run/spacy.spacy")
  stanza=$(ls "$runs"/"${lang}"_s"${seed}"_*/test.pred.conllu 2>/dev/null | head -n 1 || true)
  [ -n "$stanza" ] && systems+=(--system "Stanza=$stanza")
  [ ${#systems[@]} -gt 0 ] || continue
  score=metrics/peers/$tb.$sample.json
  echo "[peer-table] $tb $sample: Both=$both ${systems[*]}"
  python "$here/stanza_peer.py" score --gold "corpus/$tb/raw/test.conllu" --train "corpus/$tb/train.$sample.conllu" \
    --both "Both=$both" "${systems[@]}" --treebank "$tb" --lang "$lang" --output "$score" > /dev/null
  scores+=("$score")
done
[ ${#scores[@]} -gt 0 ] || { echo "error: no sample under metrics/UD_*_lowres/n5000.s* has Both and a peer" >&2; exit 1; }
python "$here/stanza_peer.py" table "${scores[@]}" --output "$out"
