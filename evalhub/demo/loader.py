"""The demo: four small studies with texts we wrote, simulated human ratings and an offline judge."""
from __future__ import annotations

import csv
import random
import tempfile
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction

from annotations.importing.services import items_import
from annotations.models import PAIRWISE_SCORES, Study
from annotations.studies import study_create_from_template
from evalhub.imports.ratings import ratings_import
from llmjudge.models import Judge

DEMO_DIR = Path(__file__).resolve().parent
DEMO_JUDGE = "demo-fake"
DEMO_STUDIES = {
    "demo-story": ("story-likert", "story_items.jsonl"),
    "demo-fluency": ("adversarial-fluency", "fluency_items.jsonl"),
    "demo-meaning": ("adversarial-meaning", "meaning_items.jsonl"),
    # The demo stories again, each human-written one paired with the GPT-2 one of the same prompt.
    "demo-pairwise": ("story-pairwise", "pairwise_items.jsonl"),
}
# Simulated raters lean the way the paper's teachers did: human-written stories score higher.
_GROUP_MEAN = {"human": 4.2, "gpt2": 2.8, "benign": 4.5, "textfooler": 3.2, "pwws": 3.0, "bae": 3.6,
               "sanity-identical": 5.0}
# Pairwise demo: how often a simulated rater picks the human-written story (the group says where it is).
_PREFER_HUMAN = 0.8
_HUMAN_SIDE = {"human-first": PAIRWISE_SCORES["A"], "human-second": PAIRWISE_SCORES["B"]}


def _simulated_score(study: Study, group: str, rng: random.Random) -> int:
    if study.is_pairwise:
        human = _HUMAN_SIDE[group]
        other = PAIRWISE_SCORES["B"] if human == PAIRWISE_SCORES["A"] else PAIRWISE_SCORES["A"]
        return human if rng.random() < _PREFER_HUMAN else other
    score = round(rng.gauss(_GROUP_MEAN.get(group, 3.0), 0.8))
    return min(study.scale_max, max(study.scale_min, score))


def _simulated_ratings(study: Study, path: Path, *, raters: int = 3, seed: int = 7) -> None:
    rng = random.Random(seed)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item", "group", "question", "pool", "rater", "score"])
        for item in study.items.all():
            for question in study.questions.all():
                for rater in range(1, raters + 1):
                    score = _simulated_score(study, item.group, rng)
                    writer.writerow([item.external_id, item.group, question.key, "human", f"demo-rater-{rater}",
                                     score])


@transaction.atomic
def demo_load(*, username: str = "demo", password: str = "demo") -> list[Study]:
    """Create the demo studies (idempotent) owned by a demo researcher account."""
    user_model = get_user_model()
    owner, created = user_model.objects.get_or_create(
        username=username, defaults={"is_staff": True, "is_superuser": True}
    )
    if created:
        owner.set_password(password)
        owner.save()
    studies = []
    for slug, (template, items_file) in DEMO_STUDIES.items():
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            study = study_create_from_template(slug=slug, template=template, owner=owner)
            study.title = f"{study.title} (demo)"
            study.status = Study.Status.OPEN
            study.save(update_fields=["title", "status"])
            items_import(study=study, path=DEMO_DIR / items_file)
            with tempfile.TemporaryDirectory() as tmp:
                ratings = Path(tmp) / "simulated.csv"
                _simulated_ratings(study, ratings)
                ratings_import(study=study, path=ratings)
        studies.append(study)
    return studies


def demo_judge_load(*, owner: User | None) -> Judge:
    """The demo's offline judge: the fake backend, slowed down a little so the progress bar visibly moves."""
    judge, _ = Judge.objects.get_or_create(  # names are unique per owner
        name=DEMO_JUDGE,
        owner=owner,
        defaults={
            "backend": Judge.Backend.FAKE,
            "model": "fake-model",
            "samples": 3,
            "concurrency": 4,
            # A few refusals so the demo shows the re-ask and the refused status.
            "options": {"fake_latency": 0.15, "fake_refusal_rate": 0.05},
        },
    )
    return judge
