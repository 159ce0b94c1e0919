"""The world the access tests run in: two researchers' studies, two raters, a judge run, six personas.

Every secret a persona must not see is a distinctive string, so a leak is a substring search.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import Permission, User
from django.test import Client
from django.utils import timezone

from annotations.models import Assignment, HumanRating, Item, Rater, Study
from annotations.studies import study_create_from_template
from llmjudge.models import Judge, JudgeRun, LLMRating

XSS = "<script>alert(1)</script><img src=x onerror=alert(1)>"
RAW_XSS_MARKERS = ("<script>alert(", "<img src=x")  # what must never appear unescaped in an HTML page
GROUPS = ["grp-alpha-q7", "grp-beta-q7"]
EXTERNAL_IDS = ["ext-q7-1", "ext-q7-2", "ext-q7-3"]
B_COMMENT = "b-comment-secret-q7"
LLM_RAW = "llm-raw-secret-q7: I would rate it 4 out of 5."
LLM_RATIONALE = "llm-rationale-secret-q7"
JUDGE_NAME = "judge-name-secret-q7"
JUDGE_MODEL = "judge-model-secret-q7"
OTHER_TITLE = "other-title-secret-q7"
OTHER_SLUG = "other-study"
OTHER_JUDGE = "other-judge-secret-q7"
# Completion codes of a finished rater in each study (codes are what a rater shows to get paid).
COMPLETION_CODE = "CODE7Q7B"
OTHER_COMPLETION_CODE = "CODE7Q7O"

PERSONAS = ("anonymous", "rater_a", "rater_b", "owner", "other", "staff", "staffer", "viewer")
# staffer: staff, not a superuser, with every add/change/delete/view permission of the apps' models: a
# researcher with the admin open, who still reaches only their own studies. viewer: the same plus
# annotations.view_all_studies: reads every study, changes none but their own (annotations.selectors).
# The matrix rows state six columns; these two are derived (tests/reliability/test_access_matrix.py).


@dataclass
class World:
    study: Study
    other_study: Study
    rater_a: Rater
    rater_b: Rater
    judge: Judge
    run: JudgeRun
    other_run: JudgeRun
    owner: User
    other: User
    staff: User
    staffer: User
    viewer: User

    def credentials(self) -> dict[str, str]:
        """Every string that lets its holder rate or claim payment, in both studies: rater tokens, open-link
        tokens, completion codes (what a read-only viewer must never see)."""
        found = {f"token of rater {r.pk}": r.token for r in Rater.objects.all()}
        found.update({f"open token of {s.slug}": s.open_token for s in Study.objects.all()})
        found.update({f"completion code of rater {a.rater_id}": a.completion_code
                      for a in Assignment.objects.exclude(completion_code="")})
        return found

    def client(self, persona: str, **kwargs: object) -> Client:
        """Raters have no account: their link is their credential, so their client is anonymous."""
        client = Client(**kwargs)
        user = {"owner": self.owner, "other": self.other, "staff": self.staff, "staffer": self.staffer,
                "viewer": self.viewer}.get(persona)
        if user is not None:
            client.force_login(user)
        return client


def build_world(*, owner: User, other: User) -> World:
    study = study_create_from_template(slug="story", template="story-likert", owner=owner)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN, groups=GROUPS, contrasts=[],
                                             open_link_enabled=True)
    study.refresh_from_db()
    items = [
        Item.objects.create(study=study, external_id=ext, group=GROUPS[n % 2], position=n,
                            fields={"story": f"{XSS} Story {n}.", "prompt": f"Prompt {n}."})
        for n, ext in enumerate(EXTERNAL_IDS)
    ]
    rater_a = Rater.objects.create(study=study, external_id="rater-a")
    rater_b = Rater.objects.create(study=study, external_id="rater-b")
    Assignment.objects.create(rater=rater_b, item_order=[i.pk for i in items], position=len(items),
                              completion_code=COMPLETION_CODE, completed_at=timezone.now())
    for item in items:
        for question in study.questions.all():
            HumanRating.objects.create(rater=rater_b, item=item, question=question, score=4, comment=B_COMMENT)
    judge = Judge.objects.create(name=JUDGE_NAME, backend=Judge.Backend.FAKE, model=JUDGE_MODEL, owner=owner,
                                 samples=1)
    run = JudgeRun.objects.create(study=study, judge=judge, status=JudgeRun.Status.DONE)
    for item in items:
        for question in study.questions.all():
            LLMRating.objects.create(run=run, item=item, question=question, sample=0, status=LLMRating.Status.OK,
                                     score=4, raw=LLM_RAW, rationale=LLM_RATIONALE, model=JUDGE_MODEL)
    other_study = study_create_from_template(slug=OTHER_SLUG, template="story-likert", owner=other)
    Study.objects.filter(pk=other_study.pk).update(title=OTHER_TITLE, open_link_enabled=True)
    other_study.refresh_from_db()
    other_item = Item.objects.create(study=other_study, external_id="o1", group="human",
                                     fields={"story": "s", "prompt": "p"})
    other_rater = Rater.objects.create(study=other_study, external_id="other-rater")
    Assignment.objects.create(rater=other_rater, item_order=[other_item.pk], position=1,
                              completion_code=OTHER_COMPLETION_CODE, completed_at=timezone.now())
    other_judge = Judge.objects.create(name=OTHER_JUDGE, backend=Judge.Backend.FAKE, model="m", owner=other)
    other_run = JudgeRun.objects.create(study=other_study, judge=other_judge, status=JudgeRun.Status.DONE)
    staff = User.objects.create_superuser(username="staff", password="pw-staff-123", email="")
    model_permissions = Permission.objects.filter(content_type__app_label__in=["annotations", "llmjudge", "evalhub"])
    staffer = User.objects.create_user(username="staffer", password="pw-staffer-123", is_staff=True)
    staffer.user_permissions.set(model_permissions.exclude(codename="view_all_studies"))
    viewer = User.objects.create_user(username="viewer", password="pw-viewer-123", is_staff=True)
    viewer.user_permissions.set(model_permissions)
    return World(study=study, other_study=other_study, rater_a=rater_a, rater_b=rater_b, judge=judge, run=run,
                 other_run=other_run, owner=owner, other=other, staff=staff, staffer=staffer, viewer=viewer)
