"""A study's lifecycle: draft -> open -> closed, and reopen. Raters reach a study only while it is open. And what
of its settings may change at each stage (the study page's settings form, issue 26, 1).

Services, so that the commands, the API and the study page change a study's status the same way and
refuse the same things with the same one-line messages.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from annotations.models import Item, Question, Study
from annotations.studies import StudySpecError, human_subset_changeable, study_spec_check


class LifecycleError(ValueError):
    """A status change that cannot happen; the message says why in one line."""


def study_open(*, study: Study) -> Study:
    """Open a draft or closed study to raters (a closed study reopens; its ratings stay).

    Refused when the study has no question or no item: its links would lead raters to an empty study.
    """
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        if locked.status == Study.Status.OPEN:
            raise LifecycleError(f"study {locked.slug!r} is already open")
        if not Question.objects.filter(study=locked).exists():
            raise LifecycleError(f"study {locked.slug!r} has no question: it cannot open")
        if not Item.objects.filter(study=locked).exists():
            raise LifecycleError(f"study {locked.slug!r} has no item: import items before opening it")
        locked.status = Study.Status.OPEN
        locked.save(update_fields=["status"])
    study.status = locked.status
    return study


def study_close(*, study: Study) -> Study:
    """Close an open study: raters who finished keep their completion code; nobody rates any more."""
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        if locked.status != Study.Status.OPEN:
            raise LifecycleError(f"study {locked.slug!r} is not open ({locked.status}): there is nothing to close")
        locked.status = Study.Status.CLOSED
        locked.save(update_fields=["status"])
    study.status = locked.status
    return study

# --- the study's settings, changed on its page (issue 26, 1) -------------------------------------------------

# The settings form's spec keys (checked by study_spec_check, the spec's own check), its model fields (not spec
# keys: checked by the model's field rules, Study.clean_fields) and the gold items (Item.kind, Item.gold_answers).
SETTINGS_SPEC_KEYS = ("title", "human_instruction", "raters_per_item", "ordering", "groups", "contrasts", "pair_order",
                      "human_subset")
SETTINGS_MODEL_FIELDS = ("consent_text", "ask_demographics", "items_per_rater", "attention_positions",
                         "attention_rule", "completion_redirect_url")
SETTINGS = SETTINGS_SPEC_KEYS + SETTINGS_MODEL_FIELDS + ("gold_items",)
# Once a study is no longer a draft, these would change what earlier raters saw or how their work was handed out:
# a change would make two halves of one study. Why, in the words the form shows.
LOCKED_ONCE_OPEN: dict[str, str] = {
    "title": "raters have seen it on the start and consent pages",
    "human_instruction": "raters have read it at the top of every page",
    "consent_text": "raters have agreed to the consent text as it stands",
    "ask_demographics": "earlier raters were asked (or not asked) these questions",
    "ordering": "earlier raters' item orders were drawn by it",
    "groups": "earlier raters' blocked item orders follow it",
    "pair_order": "earlier raters saw the two candidates in this order",
    "attention_positions": "earlier raters had their checks at these places",
    "attention_rule": "earlier raters were told what a failed check does",
    "gold_items": "earlier raters rated (or did not rate) these items as gold",
}
# What may still change on an open study, and why that is safe.
CHANGEABLE_ONCE_OPEN: dict[str, str] = {
    "raters_per_item": "seats still to fill; ratings made stay",
    "items_per_rater": "how many items a rater still takes; answers made stay",
    "completion_redirect_url": "where finishing raters are sent; codes handed out stay valid",
    "contrasts": "which group pairs the analysis compares; raters never see it",
    "human_subset": "until somebody has rated (then a new draw would leave rated items outside the subset)",
}


META_STUDY_REASON = ("a meta-evaluation study is made from a judge run (create_meta_study), not from a study "
                     "specification, so its specification settings stay as made")


class StudySettingsError(StudySpecError):
    """A setting refused; ``field`` names the form field it belongs to ("" for the form as a whole)."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


def study_spec_of(study: Study) -> dict[str, Any]:
    """The study as a specification (docs/study-spec.md), for the spec's own check of a changed setting."""
    questions = [{"key": q.key, "text": q.text, "context": q.context, "reveals": q.reveals, "rubric": q.rubric}
                 for q in study.questions.all()]
    scale: dict[str, Any] = ({"labels": study.category_labels()} if study.is_categorical else
                             {"min": study.scale_min, "max": study.scale_max, "labels": study.scale_labels})
    spec: dict[str, Any] = {
        "title": study.title, "kind": study.kind, "item_fields": list(study.item_fields),
        "llm_template": study.llm_template, "human_instruction": study.instruction, "scale": scale,
        "questions": questions, "groups": list(study.groups), "contrasts": list(study.contrasts),
        "ordering": study.ordering, "raters_per_item": study.raters_per_item,
        "field_labels": dict(study.field_labels), "diff_fields": list(study.diff_fields),
        "human_subset": dict(study.human_subset or {}),
    }
    if study.is_pairwise:
        spec.update(pair_fields=list(study.pair_fields), pair_order=study.pair_order)
    return spec


def study_settings_of(study: Study) -> dict[str, Any]:
    """The form's settings as the study holds them (``human_instruction`` is Study.instruction)."""
    values = {key: value for key, value in study_spec_of(study).items() if key in SETTINGS_SPEC_KEYS}
    values.setdefault("pair_order", study.pair_order)
    values.update({name: getattr(study, name) for name in SETTINGS_MODEL_FIELDS})
    gold = Item.objects.filter(study=study, kind=Item.Kind.GOLD).order_by("position", "pk")
    values["gold_items"] = {item.external_id: item.gold_answers for item in gold}
    return values


def _field_of(message: str) -> str:
    """The setting a spec check's message is about: the messages begin with the key they refuse."""
    if message.startswith("the instruction's first line") or "human_instruction" in message:
        return "human_instruction"
    for key in SETTINGS_SPEC_KEYS:
        if message.startswith(key):
            return key
    return ""


def _check_attention_positions(value: object) -> None:
    positions = value if isinstance(value, list) else [None]
    if not all(type(p) is int and p >= 1 for p in positions) or len(set(positions)) != len(positions):
        raise StudySettingsError("attention checks: a list of different whole numbers of rated items, each at least 1, "
                                 "e.g. [5, 20]", field="attention_positions")


def study_settings_changes(*, study: Study, values: dict[str, Any]) -> dict[str, Any]:
    """The settings of ``values`` that differ from the study's, checked; StudySettingsError (nothing written) when
    one is unknown, refused by the spec's check or a model field's rule, or locked because the study is open."""
    unknown = sorted(set(values) - set(SETTINGS))
    if unknown:
        raise StudySettingsError(f"unknown settings {unknown}; the form's settings are {list(SETTINGS)}")
    current = study_settings_of(study)
    changes = {key: values[key] for key in SETTINGS if key in values and values[key] != current[key]}
    if study.status != Study.Status.DRAFT:
        for key in sorted(changes.keys() & LOCKED_ONCE_OPEN.keys()):
            raise StudySettingsError(f"{key} cannot change: the study is {study.status} and "
                                     f"{LOCKED_ONCE_OPEN[key]}", field=key)
    _check_spec_settings(study, changes)
    if "attention_positions" in changes:
        _check_attention_positions(changes["attention_positions"])
    if "gold_items" in changes:
        _check_gold_items(study, changes["gold_items"])
    _check_model_fields(study, changes)
    return changes


def _check_spec_settings(study: Study, changes: dict[str, Any]) -> None:
    """The spec keys changed, by the spec's own check of the study rewritten as a spec; the human subset as well
    through human_subset_changeable (``changes`` gets its checked form)."""
    if study.kind == Study.Kind.META:  # not made from a spec: the spec's check cannot judge it
        for key in sorted(changes.keys() & set(SETTINGS_SPEC_KEYS)):
            raise StudySettingsError(f"{key} cannot change here: {META_STUDY_REASON}", field=key)
        return
    if "pair_order" in changes and not study.is_pairwise:
        raise StudySettingsError("pair_order is only for kind 'pairwise'", field="pair_order")
    spec = {**study_spec_of(study), **{k: v for k, v in changes.items() if k in SETTINGS_SPEC_KEYS}}
    if not study.is_pairwise:
        spec.pop("pair_order", None)  # the spec refuses pair_order on other kinds; the model keeps a default
    try:
        study_spec_check(spec)
        if "human_subset" in changes:
            changes["human_subset"] = human_subset_changeable(study=study, setting=changes["human_subset"])
    except StudySpecError as exc:
        raise StudySettingsError(str(exc), field=_field_of(str(exc))) from None


def _check_gold_items(study: Study, value: object) -> None:
    """Gold items: ``{item id: {question key: known answer}}``, each id an item of the study, each key one of its
    questions, each answer a point of its scale (a categorical study's label number)."""
    example = 'e.g. {"h1": {"grammaticality": 1}}'
    if not isinstance(value, dict) or not all(isinstance(a, dict) and a for a in value.values()):
        raise StudySettingsError(f"gold items: an object of item ids, each with its known answers, {example}",
                                 field="gold_items")
    missing = sorted(set(value) - set(Item.objects.filter(study=study).values_list("external_id", flat=True)))
    if missing:
        raise StudySettingsError(f"gold items: no item {missing[0]!r} in this study (upload the items first)",
                                 field="gold_items")
    keys = set(study.questions.values_list("key", flat=True))
    for item_id, answers in value.items():
        for key, answer in answers.items():
            if key not in keys:
                raise StudySettingsError(f"gold items: item {item_id!r}: no question {key!r} (the questions: "
                                         f"{', '.join(sorted(keys))})", field="gold_items")
            if type(answer) is not int or not study.scale_min <= answer <= study.scale_max:
                raise StudySettingsError(f"gold items: item {item_id!r}, {key}: the answer must be a whole number "
                                         f"from {study.scale_min} to {study.scale_max}, got {answer!r}",
                                         field="gold_items")


def _gold_items_save(study: Study, gold: dict[str, dict[str, int]]) -> None:
    Item.objects.filter(study=study, kind=Item.Kind.GOLD).exclude(external_id__in=gold).update(
        kind=Item.Kind.NORMAL, gold_answers={})
    for item_id, answers in gold.items():
        Item.objects.filter(study=study, external_id=item_id).update(kind=Item.Kind.GOLD, gold_answers=answers)


def _check_model_fields(study: Study, changes: dict[str, Any]) -> None:
    """The model's own field rules (a URL, a positive number, a choice) on a copy: the study is not touched."""
    copy = Study.objects.get(pk=study.pk)
    for key, value in changes.items():
        setattr(copy, "instruction" if key == "human_instruction" else key, value)
    try:
        copy.clean_fields(exclude=[f.name for f in Study._meta.fields if f.name not in SETTINGS_MODEL_FIELDS])
    except ValidationError as exc:
        field, errors = next(iter(exc.message_dict.items()))
        raise StudySettingsError(f"{field}: {' '.join(errors)}", field=field) from None


@transaction.atomic
def study_settings_set(*, study: Study, values: dict[str, Any]) -> list[str]:
    """Save the settings of ``values`` that changed (the human subset is saved and drawn by its own service,
    evalhub's study_human_subset_set: pass it there). Returns the names changed; refuses as
    study_settings_changes, writing nothing."""
    locked = Study.objects.select_for_update().get(pk=study.pk)
    changes = study_settings_changes(study=locked, values=values)
    changes.pop("human_subset", None)
    changed = sorted(changes)
    if "gold_items" in changes:
        _gold_items_save(study, changes.pop("gold_items"))
    for key, value in changes.items():
        setattr(study, "instruction" if key == "human_instruction" else key, value)
    if changes:
        study.save(update_fields=["instruction" if k == "human_instruction" else k for k in changes])
    return changed
