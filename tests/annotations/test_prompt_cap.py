"""Rendered prompts have a size cap (issue 18, finding 3): MAX_PROMPT_CHARS is checked at item import (one line
naming the file's line) and again when a judge run renders, which then stops and stores no rating."""
from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from annotations.models import Item
from annotations.rendering import PromptTooLarge, llm_prompt, rater_page
from llmjudge.models import Judge, JudgeRun, LLMRating
from llmjudge.runs import lifecycle as judging
from tests.support.import_files import snapshot, write

pytestmark = pytest.mark.django_db


def test_an_item_that_would_render_above_the_cap_is_refused_at_import_naming_its_line(story_study, tmp_path,
                                                                                        settings):
    settings.MAX_PROMPT_CHARS = 5000
    path = write(tmp_path, "items.csv", "id,group,story,prompt\na,human,short,p\nb,gpt2," + "x" * 6000 + ",p\n")
    before = snapshot()
    with pytest.raises(CommandError, match=r"line 3: the rater page would be \d+ characters, "
                                           r"above MAX_PROMPT_CHARS=5000"):
        call_command("import_items", "story", str(path))
    assert snapshot() == before
    settings.MAX_PROMPT_CHARS = 20000
    call_command("import_items", "story", str(path))  # the same file under a larger cap: imported
    assert Item.objects.filter(study=story_study).count() == 2


def test_rendering_refuses_a_page_or_prompt_above_the_cap(story_study, settings):
    item = Item.objects.create(study=story_study, external_id="big", group="human",
                               fields={"story": "y" * 3000, "prompt": "p"})
    questions = list(story_study.questions.all())
    settings.MAX_PROMPT_CHARS = 2000
    with pytest.raises(PromptTooLarge, match="rater page of item 'big'"):
        rater_page(study=story_study, item=item, questions=questions)
    with pytest.raises(PromptTooLarge, match="prompt for question"):
        llm_prompt(study=story_study, item=item, question=questions[0])


def test_a_run_on_an_item_imported_before_the_cap_stops_and_stores_no_prompt(story_study, researcher, settings):
    Item.objects.create(study=story_study, external_id="big", group="human", fields={"story": "z" * 3000, "prompt": "p"})
    settings.MAX_PROMPT_CHARS = 2000
    judge = Judge.objects.create(name="j", backend="fake", model="fake", samples=1, owner=researcher)
    run = judging.judge_run_start(study=story_study, judge=judge, enqueue=False)
    judging.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FAILED and "above MAX_PROMPT_CHARS=2000" in run.error
    assert not LLMRating.objects.filter(run=run).exclude(status=LLMRating.Status.PENDING).exists()
    assert not LLMRating.objects.filter(run=run).exclude(prompt="").exists()


def test_the_import_counts_exactly_what_rendering_renders(story_study, meaning_study):
    """RenderedSize sums lengths instead of rendering: it must give rendering's own numbers."""
    from annotations.importing.services import RenderedSize
    from annotations.rendering import question_context

    for study in (story_study, meaning_study):
        questions = list(study.questions.order_by("order"))
        fields = {name: f"value of {name} " * (3 + len(name)) for name in study.item_fields}
        item = Item(study=study, external_id="x", group="human", fields=fields)
        page = rater_page(study=study, item=item, questions=questions)
        page_chars = len(page.instruction) + sum(map(len, page.fields.values())) + sum(
            len(q.text) + len(question_context(question=q, item=item)) for q in questions)
        prompts = {q.key: len(llm_prompt(study=study, item=item, question=q)) for q in questions}
        sizes = RenderedSize(study, questions)
        largest = max(page_chars, *prompts.values())
        with override_settings(MAX_PROMPT_CHARS=largest):
            assert sizes.oversize(fields) is None
        for cap in sorted({page_chars - 1, *(n - 1 for n in prompts.values())}):
            with override_settings(MAX_PROMPT_CHARS=cap):
                # The page is checked first, then the prompts in question order: the first one above the cap.
                first = page_chars if page_chars > cap else next(n for n in prompts.values() if n > cap)
                assert f"would be {first} characters, above MAX_PROMPT_CHARS={cap}" in sizes.oversize(fields)
