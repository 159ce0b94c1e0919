"""A spec of a known kind renders exactly as the template of that kind does (issue 25, item 2): every template and
every protocol-file entry is made into a study twice, as the template and as a spec (the entry uploaded as it
stands), and the rater's pages and the judge's prompts of the same item are compared."""
from __future__ import annotations

import json
import re

import pytest

from annotations.models import Item, ItemClaim, Rater, Study
from annotations.rendering import llm_prompt
from annotations.studies import protocol_templates, study_create, study_create_from_template
from tests.conftest import shared_path
from tests.support.raterkit import answer, open_study, url_of

pytestmark = pytest.mark.django_db


def _entries() -> list[tuple[str, dict]]:
    """Every template, and every entry of the shared protocol file as a researcher would copy it."""
    shared = json.loads(shared_path("protocols", "chiang-lee-2023.json").read_text(encoding="utf-8"))["studies"]
    return [*(("template", e) for e in protocol_templates().values()), *(("shared file", e) for e in shared)]


ENTRIES = _entries()


def _fields(entry: dict) -> dict[str, str]:
    # Two fields that differ in one word, so a word diff (where the template has one) marks something.
    return {name: f"The quick brown fox number {n % 2} jumps." for n, name in enumerate(entry["item_fields"])}


def _without_per_request_strings(html: str, rater: Rater, item: Item) -> str:
    html = re.sub(r'nonce="[^"]*"', "", html)
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", html)
    return html.replace(rater.token, "<token>").replace(f"item:{item.pk}:", "item:<id>:")


def _pages(client, study: Study, entry: dict, *, swapped: bool) -> tuple[list[str], list[str]]:  # noqa: ANN001
    """The rater's pages of one item (every page, answering each) and the judge's prompt per question."""
    open_study(study)
    item = Item.objects.create(study=study, external_id="i1", group=(entry.get("groups") or ["g"])[0],
                               fields=_fields(entry))
    rater = Rater.objects.create(study=study)
    client.get(url_of(rater))
    ItemClaim.objects.filter(assignment__rater=rater).update(swapped=swapped and study.is_pairwise)
    pages = []
    for _ in study.questions.all():
        html = client.get(url_of(rater)).content.decode()
        if 'name="page" value="item:' not in html:
            break
        pages.append(_without_per_request_strings(html, rater, item))
        answer(client, rater, study.scale_min)
    prompts = [llm_prompt(study=study, item=item, question=q) for q in study.questions.all()]
    return pages, prompts


@pytest.mark.parametrize("swapped", [False, True])
@pytest.mark.parametrize(("source", "entry"), ENTRIES, ids=[f"{s}:{e['slug']}" for s, e in ENTRIES])
def test_a_spec_renders_exactly_as_the_template_of_its_kind(client, source, entry, swapped):
    from_template = study_create_from_template(slug="from-template", template=entry["slug"])
    from_spec = study_create(slug="from-spec", spec=json.loads(json.dumps(entry)))
    template_pages, template_prompts = _pages(client, from_template, entry, swapped=swapped)
    spec_pages, spec_prompts = _pages(client, from_spec, entry, swapped=swapped)
    assert template_pages and spec_pages == template_pages
    assert spec_prompts == template_prompts
    for study in (from_template, from_spec):
        labels = [study.field_label(name) for name in study.item_fields]
        # No heading names a condition: "Benign title" / "Adversarial title" never reach a rater.
        assert not any(word in label.lower() for label in labels for word in ("benign", "adversarial"))


def test_the_meaning_entry_shows_its_word_diff_and_neutral_headings_either_way(client):
    entry = protocol_templates()["adversarial-meaning"]
    pages, _ = _pages(client, study_create(slug="meaning", spec=entry), entry, swapped=False)
    assert "<h2>News title 1</h2>" in pages[0] and "<h2>News title 2</h2>" in pages[0]
    assert "number <strong>0</strong> jumps" in pages[0] and "number <strong>1</strong> jumps" in pages[0]
    assert "benign" not in pages[0].lower() and "adversarial" not in pages[0].lower()
