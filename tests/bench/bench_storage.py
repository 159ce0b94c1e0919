"""How much PostgreSQL holds per rating, extrapolated to 10 million ratings.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/evalhub_bench .venv/bin/python tests/bench/bench_storage.py [N]

Creates (or reuses) that database, inserts N human and N LLM ratings with realistic texts (an LLM
rating stores its full prompt and answer), and prints bytes per row (table + indexes + TOAST).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from annotations.models import HumanRating, Item, Rater, Study  # noqa: E402
from annotations.rendering import llm_prompt  # noqa: E402
from annotations.studies import study_create_from_template  # noqa: E402
from llmjudge.models import Judge, JudgeRun, LLMRating  # noqa: E402

STORY = ("The lighthouse keeper still climbs the hundred and twelve steps each evening, polishes the lens and writes "
         "the weather in a logbook nobody collects. ") * 4


def main(n: int) -> None:
    if connection.vendor != "postgresql":
        sys.exit("set DATABASE_URL to a PostgreSQL database")
    call_command("migrate", verbosity=0)
    Study.objects.filter(slug="bench-storage").delete()
    study = study_create_from_template(slug="bench-storage", template="story-likert")
    questions = list(study.questions.all())
    n_items = n // (len(questions) * 3)
    items = Item.objects.bulk_create(
        [Item(study=study, external_id=f"i{i}", group="human" if i % 2 else "gpt2",
              fields={"story": STORY, "prompt": "Write about a lighthouse."}, position=i) for i in range(n_items)],
        batch_size=5000)
    raters = Rater.objects.bulk_create([Rater(study=study, external_id=f"r{r}") for r in range(3)])
    HumanRating.objects.bulk_create(
        [HumanRating(rater=r, item=i, question=q, score=3, time_spent_ms=12000)
         for i in items for q in questions for r in raters], batch_size=5000)
    judge, _ = Judge.objects.get_or_create(name="bench-storage-judge", defaults={"model": "gpt-4o-mini"})
    run = JudgeRun.objects.create(study=study, judge=judge)
    answer = "I would rate it 4 out of 5. The sentences fit together well and the ending follows from the setup."
    LLMRating.objects.bulk_create(
        [LLMRating(run=run, item=i, question=q, sample=s, prompt=llm_prompt(study=study, item=i, question=q),
                   prompt_hash="0" * 64, raw=answer, history=[{"raw": answer}], score=4, status="ok",
                   rationale=answer, attempts=1, model="gpt-4o-mini",
                   params={"temperature": 1.0, "top_p": 0.9}, latency_ms=800, tokens_prompt=180,
                   tokens_completion=25)
         for i in items for q in questions for s in range(3)], batch_size=2000)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE annotations_humanrating")
        cursor.execute("VACUUM ANALYZE llmjudge_llmrating")
        for table, model in (("annotations_humanrating", HumanRating), ("llmjudge_llmrating", LLMRating)):
            cursor.execute("SELECT pg_total_relation_size(%s), pg_indexes_size(%s)", [table, table])
            total, indexes = cursor.fetchone()
            rows = model.objects.count()
            per_row = total / rows
            print(f"{table}: {rows} rows, {per_row:.0f} bytes/row ({indexes / rows:.0f} in indexes); "
                  f"10 million rows = {per_row * 1e7 / 2**30:.1f} GiB")
    study.delete()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 120_000)
