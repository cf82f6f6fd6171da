#!/usr/bin/env bash
# One call on a lent H200 machine (2026-12-04): the GPU check (benchmarks/gpu_check.sh) on GPU 0
# beside 16 CPU trainings of the low-resource grid (Both at 5,000 tokens, Hungarian and Turkish
# samples 1 and 2, the recipe and each of paper.py's DEV_CANDIDATES), each the project's
# train-tagger-both and evaluate commands as `paper.py --dry-run` lists them, one thread each.
# Carried: .whl (spaCy and its dependencies for Python 3.12, spacy-mimick's wheel) and .devdata
# (the samples, dev and test sets, blank vectors and the release Mimick models of the two treebanks).
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site || exit 1
cp -r .devdata/corpus .devdata/models .
mkdir -p "$OUT/logs"
python3 -c "import spacy, torch, cupy, spacy_mimick; print('spacy', spacy.__version__, 'torch', torch.__version__, 'cupy', cupy.__version__, 'cuda', torch.cuda.is_available())"
python3 -m spacy_mimick init-config configs/tagger_both.default.cfg --variant both --recipe default
# The samples (treebank, language, seed, paper.py's max_steps for it) and the candidates (recipe, overrides)
SAMPLES=$'UD_Hungarian-Szeged\thu\t1\t4800\nUD_Hungarian-Szeged\thu\t2\t4800\nUD_Turkish-IMST\ttr\t1\t4480\nUD_Turkish-IMST\ttr\t2\t4640'
CANDIDATES=$'_lowres\t\n_lowres-ls10\t--components.mimick_tagger.label_smoothing 0.1\n_lowres-adv15\t--components.mimick_tagger.adversarial 0.15\n_lowres-char256\t--components.mimick_tagger.model.char_hidden 256'
run_job() {
  local tb=$1 lang=$2 seed=$3 steps=$4 recipe=$5 overrides=$6
  local name=$tb$recipe.s$seed run=training/$tb$recipe/n5000.s$seed start=$SECONDS
  OMP_NUM_THREADS=1 timeout "${TRAIN_LIMIT:-470}" python3 -m spacy train configs/tagger_both.default.cfg \
      --output $run/both --paths.train corpus/$tb/train.n5000.s$seed.conllu --paths.dev corpus/$tb/raw/dev.conllu \
      --paths.vectors corpus/$tb/vectors --paths.mimick_model models/$tb/mimick --nlp.lang $lang --system.seed $seed \
      --training.max_epochs 80 --training.eval_frequency 480 --gpu-id -1 --training.max_steps $steps \
      --code scripts/project/torch_threads.py $overrides > "$OUT/logs/$name.log" 2>&1
  local rc=$?
  if [ $rc = 0 ]; then
    OMP_NUM_THREADS=1 python3 scripts/project/evaluate.py corpus/$tb/test.spacy $run metrics/$tb$recipe/n5000.s$seed \
        --train corpus/$tb/train.n5000.s$seed.spacy --treebank $tb$recipe --lang $lang --n-tokens 5000 --seed $seed \
        >> "$OUT/logs/$name.log" 2>&1 || rc=eval
  else
    rm -rf $run/both  # a stopped run's model-best must never be scored
  fi
  echo -e "$name\trc=$rc\t$((SECONDS - start))s" >> "$OUT/jobs.tsv"
}
while IFS=$'\t' read -r tb lang seed steps; do
  while IFS=$'\t' read -r recipe overrides; do
    run_job "$tb" "$lang" "$seed" "$steps" "$recipe" "$overrides" &
  done <<< "$CANDIDATES"
done <<< "$SAMPLES"
GPUS="-1 0" bash benchmarks/gpu_check.sh "$OUT/gc" > "$OUT/gpu_check.log" 2>&1; echo "gpu_check rc=$?" >> "$OUT/gpu_check.log"
wait
cat "$OUT/jobs.tsv"
tail -n 40 "$OUT/gpu_check.log"
tar czf "$OUT/grid.tgz" metrics $(ls -d training/*/n5000.s*/both/model-best 2>/dev/null | sed 's#$#/meta.json#') \
    $(ls -d training/*/n5000.s*/both/model-best 2>/dev/null | sed 's#$#/config.cfg#')
tar czf "$OUT/logs.tgz" --exclude='*/model-*' --exclude='gc/mimick*' --exclude='gc/default_*' \
    --exclude='gc/vectors' -C "$OUT" logs gc
rm -rf "$OUT/logs" "$OUT/gc"
ls -la "$OUT"
