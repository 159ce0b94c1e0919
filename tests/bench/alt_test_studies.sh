#!/usr/bin/env bash
# The nine AltTest datasets through EvalHub itself: import_annotations, then analyze --format json with the
# authors' settings, and the verdict of every LLM as a markdown table (docs/alt-test.md).
# Run from the project root: bash tests/bench/alt_test_studies.sh   (a throwaway SQLite database in $VAR)
set -euo pipefail
D=${D:-../shared/data/AltTest/data}
export EVALHUB_VAR_DIR=${VAR:-$(mktemp -d)}
PY=${PY:-.venv/bin/python}
unset DATABASE_URL
$PY manage.py migrate --noinput -v 0
echo "| dataset | scoring | ε | LLM | instances | raters tested | ω (winning rate) | ρ (advantage) | verdict |"
echo "|---|---|---|---|---|---|---|---|---|"
#        dataset        scoring   epsilon  questions
while read -r name scoring epsilon questions; do
  $PY manage.py import_annotations "alttest-$name" --humans "$D/$name/human_annotations.json" \
      --llm "$D/$name/llm_annotations.json" --create $questions > /dev/null
  $PY manage.py analyze "alttest-$name" --format json --alt-scoring "$scoring" --alt-epsilon "$epsilon" --n-boot 10 \
    | $PY tests/bench/alt_test_rows_table.py "$name"
done <<'TABLE'
summeval neg_rmse 0.2 --questions=auto
10k_prompts neg_rmse 0.15
cebab_stars neg_rmse 0.1 --questions=auto
lesion neg_rmse 0.15 --questions=auto
mtbench accuracy 0.2
framing accuracy 0.15 --questions=auto
cebab_aspects accuracy 0.1 --questions=auto
lgbteen accuracy 0.2 --questions=auto
wax accuracy 0.1
TABLE
