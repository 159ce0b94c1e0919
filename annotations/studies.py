"""Creating studies from the protocol templates or from a JSON specification."""
from __future__ import annotations

import difflib
import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeGuard

from django.contrib.auth.models import User
from django.db import transaction

from annotations.guards.placeholders import TemplateError, plain_placeholders
from annotations.models import PAIRWISE_LABELS, HumanRating, Question, Study

PROTOCOL_FILE = Path(__file__).resolve().parent / "protocols" / "chiang-lee-2023.json"
# EvalHub's own templates (not from the paper), e.g. the pairwise A/B comparison.
EVALHUB_TEMPLATES_FILE = Path(__file__).resolve().parent / "protocols" / "evalhub-templates.json"

# EvalHub settings the protocol file states only in prose: the paper's ordering and contrasts.
_TEMPLATE_EXTRAS: dict[str, dict[str, Any]] = {
    "story-likert": {"ordering": "blocked", "contrasts": [["human", "gpt2"]]},
    "adversarial-fluency": {
        "ordering": "mixed",
        "contrasts": [["benign", "textfooler"], ["benign", "pwws"], ["benign", "bae"]],
    },
    "adversarial-meaning": {"ordering": "mixed", "contrasts": []},
}

# What raters see as headings, and which pair of fields is shown as a word diff. Field names such as
# "benign_title" must never reach a rater: they would give away which title is the attacked one.
RATER_DISPLAY: dict[str, dict[str, Any]] = {
    "story-likert": {"field_labels": {"story": "Story fragment", "prompt": "Prompt"}},
    "adversarial-fluency": {"field_labels": {"title": "News title"}},
    "adversarial-meaning": {
        "field_labels": {"benign_title": "News title 1", "adversarial_title": "News title 2"},
        "diff_fields": ["benign_title", "adversarial_title"],
    },
}


# Every key a specification may hold (docs/study-spec.md); anything else is refused with the closest of these.
SPEC_KEYS = (
    "title", "kind", "item_fields", "llm_template", "human_instruction", "scale", "questions", "groups",
    "contrasts", "ordering", "raters_per_item", "field_labels", "diff_fields", "pair_fields", "pair_order",
    "human_subset",
)
# Keys the protocol file's entries carry for people reading them: accepted, never used.
SPEC_NOTE_KEYS = ("slug", "human_form", "sanity_check", "notes")
QUESTION_KEYS = ("key", "text", "context", "reveals", "rubric")
SCALE_KEYS = ("min", "max", "labels")

CATEGORY_LABEL_MAX_CHARS = 100
_SLUG = re.compile(r"[-a-zA-Z0-9_]+")

TITLE_MAX_CHARS = 200  # Study.title
KEY_MAX_CHARS = 100  # Question.key, Item.group: a slug or a group name, as the database stores it
TEXT_MAX_CHARS = 100_000  # a template, an instruction, a question's text
SCALE_BOUND = 1_000_000  # |min|, |max|: far inside the database's integers
SCALE_POINTS_MAX = 1001  # a rater page lists every point of the scale
RATERS_PER_ITEM_MAX = 1000
SPEC_DEPTH_MAX = 10  # the deepest real spec (a question's rubric) nests 4 levels
SPEC_STRINGS_MAX = 100_000  # strings anywhere in one spec


def _walk_strings(value: object) -> list[str]:
    """Every string in a JSON value (keys included), refusing nesting deeper than SPEC_DEPTH_MAX.

    Iterative, so a spec nested 100,000 deep is refused with a message instead of a RecursionError.
    """
    found: list[str] = []
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > SPEC_DEPTH_MAX:
            raise StudySpecError(f"the study specification nests deeper than {SPEC_DEPTH_MAX} levels")
        if isinstance(node, str):
            found.append(node)
        elif isinstance(node, dict):
            found.extend(str(key) for key in node)
            stack.extend((child, depth + 1) for child in node.values())
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in node)
        if len(found) > SPEC_STRINGS_MAX:
            raise StudySpecError(f"the study specification holds more than {SPEC_STRINGS_MAX} strings")
    return found


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _string_list(spec: dict[str, Any], key: str, *, max_chars: int = KEY_MAX_CHARS) -> None:
    value = spec.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v and len(v) <= max_chars for v in value):
        raise StudySpecError(f"{key} must be a list of non-empty strings of at most {max_chars} characters")
    if len(set(value)) != len(value):
        raise StudySpecError(f"{key} lists a name twice")


def _validate_types(spec: dict[str, Any]) -> None:
    """The type and size of every field the study stores, before any meaning is checked.

    A wrong type stored (``"contrasts": "x"``, ``"groups": 5``) made the dashboard, the analysis and
    the items upload answer 500 later; an oversized or NUL-bearing value made the database refuse
    the insert with a 500. All are refused here, with the field's name.
    """
    for text in _walk_strings(spec):
        if "\x00" in text:
            raise StudySpecError("the study specification contains a NUL character (\\u0000)")
    title = spec.get("title")
    if not isinstance(title, str) or not title.strip() or len(title) > TITLE_MAX_CHARS:
        raise StudySpecError(f"title must be a non-empty string of at most {TITLE_MAX_CHARS} characters")
    for key in ("llm_template", "human_instruction", "kind"):
        if key in spec and (not isinstance(spec[key], str) or len(spec[key]) > TEXT_MAX_CHARS):
            raise StudySpecError(f"{key} must be a string of at most {TEXT_MAX_CHARS} characters")
    human_subset_checked(spec.get("human_subset"))
    _string_list(spec, "item_fields")
    _string_list(spec, "groups")
    _string_list(spec, "diff_fields")
    contrasts = spec.get("contrasts", [])
    if not isinstance(contrasts, list) or not all(
        isinstance(pair, list) and len(pair) == 2 and all(isinstance(g, str) and g for g in pair) for pair in contrasts
    ):
        raise StudySpecError('contrasts must be a list of pairs of group names, e.g. [["human", "gpt2"]]')
    for key in ("field_labels",):
        value = spec.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise StudySpecError(f"{key} must be an object of strings")
    if "ordering" in spec and not isinstance(spec["ordering"], (str, dict)):
        raise StudySpecError(f"ordering must be one of {Study.Ordering.values}")
    pair = spec.get("pair_fields", [])
    if not isinstance(pair, list) or len(pair) > 2 or not all(isinstance(v, str) for v in pair):
        raise StudySpecError("pair_fields must be a list of two item field names")
    if "raters_per_item" in spec:
        n = spec["raters_per_item"]
        if not _is_int(n) or not 1 <= n <= RATERS_PER_ITEM_MAX:
            raise StudySpecError(f"raters_per_item must be a whole number from 1 to {RATERS_PER_ITEM_MAX}")
    scale = spec.get("scale")
    if isinstance(scale, dict) and spec.get("kind") != Study.Kind.CATEGORICAL:
        low, high = scale.get("min"), scale.get("max")
        if not (_is_int(low) and _is_int(high)):
            raise StudySpecError("scale must be an object with integer min and max")
        if abs(low) > SCALE_BOUND or abs(high) > SCALE_BOUND or high - low + 1 > SCALE_POINTS_MAX:
            raise StudySpecError(f"scale min and max must lie within ±{SCALE_BOUND} and span at most "
                                 f"{SCALE_POINTS_MAX} points")
        labels = scale.get("labels", {})
        if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
            raise StudySpecError('scale labels must be an object of strings, e.g. {"1": "1 (lowest)"}')
    questions = spec.get("questions")
    if isinstance(questions, list):
        for n, question in enumerate(questions, start=1):
            if not isinstance(question, dict):
                raise StudySpecError(f"question {n} must be an object with a key and a text")
            question_key = question.get("key")
            if not question_key:
                continue  # "needs a key and a text", below
            if (not isinstance(question_key, str) or not _SLUG.fullmatch(question_key)
                    or len(question_key) > KEY_MAX_CHARS):
                raise StudySpecError(f"question {n}: key must be a slug (letters, digits, - and _) of at most "
                                     f"{KEY_MAX_CHARS} characters")
            for field in ("text", "context", "reveals"):
                if field in question and not isinstance(question[field], str):
                    raise StudySpecError(f"question {question_key!r}: {field} must be a string")
            if "rubric" in question and not isinstance(question["rubric"], dict):
                raise StudySpecError(f"question {question_key!r}: rubric must be an object")


class StudySpecError(ValueError):
    """The study specification is unusable; the message says which field and why."""


class StudySlugTaken(StudySpecError):
    """The slug is taken (by anyone: the words never say whose): a conflict, the API's 409."""


def protocol_templates() -> dict[str, dict[str, Any]]:
    entries = []
    for path in (PROTOCOL_FILE, EVALHUB_TEMPLATES_FILE):
        entries += json.loads(path.read_text(encoding="utf-8"))["studies"]
    return {entry["slug"]: entry for entry in entries}


def _placeholders(template: str, where: str = "llm_template") -> set[str]:
    """The ``{name}`` placeholders of a template, refusing all but plain names (guards.placeholders)."""
    try:
        return set(plain_placeholders(template, where))
    except TemplateError as exc:
        raise StudySpecError(str(exc)) from None


def study_spec_check(spec: object) -> None:
    """Refuse an unusable specification with a one-line StudySpecError; the API, the page and the commands."""
    _validate(spec)


def refuse_unknown_keys(keys: Iterable[object], known: tuple[str, ...], where: str) -> None:
    """An unknown key is refused with its name and the closest known key (difflib), as an import refuses an
    unknown column: a typo such as ``raters_per_itme`` would otherwise be dropped without a word."""
    for key in sorted(str(k) for k in keys if k not in known):
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
        if close:
            raise StudySpecError(f"unknown key {key!r} in {where}: did you mean {close[0]!r}?")
        (closest,) = difflib.get_close_matches(key, known, n=1, cutoff=0.0)
        raise StudySpecError(f"unknown key {key!r} in {where}: no key is like it (the closest is {closest!r}; "
                             "docs/study-spec.md lists them all)")


def _refuse_unknown_keys(spec: dict[str, Any]) -> None:
    refuse_unknown_keys(spec, SPEC_KEYS + SPEC_NOTE_KEYS, "the study specification")
    if isinstance(spec.get("scale"), dict):
        refuse_unknown_keys(spec["scale"], SCALE_KEYS, "scale")
    questions = spec.get("questions")
    for n, question in enumerate(questions if isinstance(questions, list) else [], start=1):
        if isinstance(question, dict):
            refuse_unknown_keys(question, QUESTION_KEYS, f"question {n}")


def _validate(spec: Any) -> None:
    if not isinstance(spec, dict):
        raise StudySpecError("the study specification must be a JSON object")
    _refuse_unknown_keys(spec)
    for key in ("title", "item_fields", "llm_template", "scale", "questions"):
        if key not in spec:
            raise StudySpecError(f"missing key {key!r}")
    _validate_types(spec)
    fields = spec["item_fields"]
    if not isinstance(fields, list) or not fields or not all(isinstance(f, str) and f for f in fields):
        raise StudySpecError("item_fields must be a non-empty list of field names")
    reserved = {"question", "context"} & set(fields)
    if reserved:
        raise StudySpecError(f"item_fields may not be named {sorted(reserved)} (reserved by the template)")
    allowed = set(fields) | {"question", "context"}
    unknown = _placeholders(spec["llm_template"]) - allowed
    if unknown:
        raise StudySpecError(f"llm_template uses unknown placeholders {sorted(unknown)}")
    if "{question}" not in spec["llm_template"]:
        raise StudySpecError("llm_template must contain {question}")
    scale = spec["scale"]
    if spec.get("kind") == Study.Kind.CATEGORICAL:
        category_labels(scale)
    else:
        if not isinstance(scale, dict) or not all(isinstance(scale.get(k), int) for k in ("min", "max")):
            raise StudySpecError("scale must be an object with integer min and max")
        if scale["min"] >= scale["max"]:
            raise StudySpecError("scale min must be below max")
    questions = spec["questions"]
    if not isinstance(questions, list) or not questions:
        raise StudySpecError("questions must be a non-empty list")
    keys = set()
    for n, question in enumerate(questions, start=1):
        if not isinstance(question, dict) or not question.get("key") or not question.get("text"):
            raise StudySpecError(f"question {n} needs a key and a text")
        if question["key"] in keys:
            raise StudySpecError(f"question key {question['key']!r} appears twice")
        keys.add(question["key"])
        unknown = _placeholders(question.get("context", ""), f"question {question['key']!r}: context") - set(fields)
        if unknown:
            raise StudySpecError(f"question {question['key']!r}: context uses unknown fields {sorted(unknown)}")
        reveals = question.get("reveals", "")
        if reveals and reveals not in fields:
            raise StudySpecError(f"question {question['key']!r} reveals unknown field {reveals!r}")
    ordering = spec.get("ordering")
    if isinstance(ordering, str) and ordering not in Study.Ordering.values:
        raise StudySpecError(f"ordering must be one of {Study.Ordering.values}")
    _validate_kind(spec, fields)
    _check_headings(spec)


def category_labels(scale: object) -> list[str]:
    """A categorical scale's labels, ``{"labels": ["Positive", "Negative", "unknown"]}``, checked.

    Label k (from 1) is stored as the score k, so the scale is 1..len(labels) and the database's
    scale rule holds for categories too. Labels differing only in case are refused: the judge's
    answer is read without regard to case (llmjudge.parsing.labels).
    """
    if not isinstance(scale, dict) or not isinstance(scale.get("labels"), list) or len(scale["labels"]) < 2:
        raise StudySpecError('a categorical scale is {"labels": [...]} with at least two labels')
    labels = scale["labels"]
    for label in labels:
        if not isinstance(label, str) or not label.strip() or label != label.strip():
            raise StudySpecError(f"category label {label!r} must be a non-empty string without outer spaces")
        if len(label) > CATEGORY_LABEL_MAX_CHARS:
            raise StudySpecError(f"category label {label[:40]!r}... is longer than {CATEGORY_LABEL_MAX_CHARS} "
                                 "characters")
    folded = [label.casefold() for label in labels]
    twice = sorted({label for label, key in zip(labels, folded, strict=True) if folded.count(key) > 1})
    if twice:
        raise StudySpecError(f"category labels {twice} appear twice (labels are compared without regard to case)")
    for key, expected in (("min", 1), ("max", len(labels))):
        if key in scale and scale[key] != expected:
            raise StudySpecError(f"a categorical scale's {key} is {expected} (labels are stored as 1..{len(labels)}); "
                                 f"got {scale[key]!r}")
    return labels


def _validate_kind(spec: dict[str, Any], fields: list[str]) -> None:
    kind = spec.get("kind", Study.Kind.LIKERT)
    if kind not in (Study.Kind.LIKERT, Study.Kind.PAIRWISE, Study.Kind.CATEGORICAL):
        raise StudySpecError(f"kind must be 'likert' or 'pairwise' or 'categorical' (got {kind!r})")
    if kind != Study.Kind.PAIRWISE:
        for key in ("pair_fields", "pair_order"):
            if spec.get(key):
                raise StudySpecError(f"{key} is only for kind 'pairwise'")
        return
    pair_order_check(spec)
    pair = spec.get("pair_fields", ["response_a", "response_b"])
    if not isinstance(pair, list) or len(pair) != 2 or len(set(pair)) != 2 or not set(pair) <= set(fields):
        raise StudySpecError(f"pair_fields must name two different item fields (of {fields}), got {pair!r}")
    scale = spec["scale"]
    if scale["min"] != 1 or scale["max"] not in (2, 3):
        raise StudySpecError(
            "a pairwise study's scale is 1-2 (1 = A, 2 = B) or 1-3 (3 = tie); got "
            f"{scale['min']}-{scale['max']}"
        )


_PROMISES_RANDOM_ORDER = re.compile(r"\brandom", re.IGNORECASE)


def pair_order_check(spec: dict[str, Any]) -> None:
    """``pair_order``: "counterbalanced" (the default: raters see A and B swapped on half of the items) or
    "fixed" (the file's A first for everyone), whose instruction must then not say the order is random."""
    order = spec.get("pair_order", Study.PairOrder.COUNTERBALANCED)
    if order not in Study.PairOrder.values:
        raise StudySpecError(f"pair_order must be one of {Study.PairOrder.values}, got {order!r}")
    if order == Study.PairOrder.FIXED:
        for key in ("human_instruction", "llm_template"):
            if _PROMISES_RANDOM_ORDER.search(spec.get(key, "")):
                raise StudySpecError(f"pair_order 'fixed' shows every rater the file's A first, but {key} says "
                                     "something is random: remove that promise, or counterbalance the order")


def template_of(spec: dict[str, Any]) -> str:
    """The template a specification is shaped like: the one whose kind, item fields and judge template it
    repeats (a protocol-file entry copied as a spec); "" for any other."""
    shape = (spec.get("kind", Study.Kind.LIKERT), spec["item_fields"], spec["llm_template"])
    for slug, entry in protocol_templates().items():
        if (entry.get("kind", Study.Kind.LIKERT), entry["item_fields"], entry["llm_template"]) == shape:
            return slug
    return ""


def display_settings(spec: dict[str, Any], template: str) -> dict[str, Any]:
    """Order, contrasts, headings and word diff: the spec's own keys, else its template's EvalHub settings, so
    that a spec of a template's shape makes the same study as the template; else the defaults (docs/study-spec.md).
    Headings a spec leaves out are neutral (``Study.field_label``)."""
    extras = {**_TEMPLATE_EXTRAS.get(template, {}), **RATER_DISPLAY.get(template, {})}
    ordering = spec.get("ordering") if isinstance(spec.get("ordering"), str) else extras.get("ordering")
    return {
        "ordering": ordering or Study.Ordering.BLOCKED,
        "contrasts": spec.get("contrasts", extras.get("contrasts", [])),
        "field_labels": spec.get("field_labels", extras.get("field_labels", {})),
        "diff_fields": spec.get("diff_fields", extras.get("diff_fields", [])),
    }


def rater_instruction(spec: dict[str, Any]) -> str:
    # The adversarial entries give no separate human instruction: raters read the judge's first line.
    return str(spec.get("human_instruction") or spec["llm_template"].split("\n", 1)[0])


def _check_headings(spec: dict[str, Any]) -> None:
    """No heading over an item (the instruction's first line, the field labels) names a group or a condition:
    a word that tells apart two fields ending in the same word ("benign" in benign_title / adversarial_title)
    or the name of one of several groups ("textfooler"). The study's title, shown on the start and consent
    pages, may name the study's groups (a dataset's title names its source) but no condition of its fields."""
    fields = spec["item_fields"]
    heads = [re.split(r"[_\-\s]+", name) for name in fields]
    last_words = Counter(words[-1].casefold() for words in heads)
    conditions = {word.casefold() for words in heads if last_words[words[-1].casefold()] > 1 for word in words[:-1]}
    groups = {g.casefold() for g in spec.get("groups", [])} | {g.casefold() for p in spec.get("contrasts", [])
                                                             for g in p}
    if len(groups) < 2:  # one group tells no item from another (a dataset named after its only group)
        groups = set()
    labels = display_settings(spec, template_of(spec))["field_labels"]
    headings = {"title": (spec["title"], conditions),
                "the instruction's first line": (rater_instruction(spec).split("\n", 1)[0], conditions | groups)}
    headings.update({f"field_labels[{name!r}]": (label, conditions | groups) for name, label in labels.items()})
    for where, (heading, forbidden) in headings.items():
        words = {w.casefold() for w in re.findall(r"[\w-]+", heading)}
        named = sorted(words & forbidden)
        if named:
            raise StudySpecError(f"{where} ({heading!r}) names {named[0]!r}, a group or condition raters must not "
                                 "see: choose a neutral heading")


@transaction.atomic
def study_create(
    *, slug: str, spec: dict[str, Any], owner: User | None = None, template: str = ""
) -> Study:
    """Create a study and its questions from a specification shaped like one protocol-file entry."""
    _validate(spec)
    if Study.objects.filter(slug=slug).exists():
        # The same words for the caller's own slugs and everyone else's, and no owner: whether a slug
        # belongs to another researcher cannot be probed (GET answers 404 for it, as for no study).
        raise StudySlugTaken(f"slug {slug!r} is not available: choose another")
    template = template or template_of(spec)
    display = display_settings(spec, template)
    instruction = rater_instruction(spec)
    version = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]
    kind = spec.get("kind", Study.Kind.LIKERT)
    if kind == Study.Kind.CATEGORICAL:
        names = category_labels(spec["scale"])
        scale_min, scale_max = 1, len(names)
        labels = {str(code): name for code, name in enumerate(names, start=1)}
    else:
        scale_min, scale_max = spec["scale"]["min"], spec["scale"]["max"]
        labels = spec["scale"].get("labels") or (PAIRWISE_LABELS if kind == Study.Kind.PAIRWISE else {})
    study = Study.objects.create(
        slug=slug,
        title=spec["title"],
        instruction=instruction,
        llm_template=spec["llm_template"],
        item_fields=spec["item_fields"],
        groups=spec.get("groups", []),
        contrasts=display["contrasts"],
        scale_min=scale_min,
        scale_max=scale_max,
        scale_labels=labels,
        ordering=display["ordering"],
        raters_per_item=spec.get("raters_per_item", 3),
        field_labels=display["field_labels"],
        diff_fields=display["diff_fields"],
        kind=kind,
        pair_fields=spec.get("pair_fields", ["response_a", "response_b"]) if kind == Study.Kind.PAIRWISE else [],
        pair_order=spec.get("pair_order", Study.PairOrder.COUNTERBALANCED),
        template=template,
        template_version=version,
        owner=owner,
        human_subset=human_subset_checked(spec.get("human_subset")),
    )
    Question.objects.bulk_create(
        Question(
            study=study,
            key=q["key"],
            text=q["text"],
            context=q.get("context", ""),
            reveals=q.get("reveals", ""),
            rubric=q.get("rubric", {}),
            order=n,
        )
        for n, q in enumerate(spec["questions"])
    )
    return study


def study_create_from_template(*, slug: str, template: str, owner: User | None = None) -> Study:
    templates = protocol_templates()
    if template not in templates:
        raise StudySpecError(f"unknown template {template!r}; choose from {', '.join(sorted(templates))}")
    return study_create(slug=slug, spec=templates[template], owner=owner, template=template)


HUMAN_SUBSET_KEYS = ("share", "count", "seed", "declared_random")


def human_subset_checked(value: object) -> dict[str, Any]:
    """The study setting ``human_subset`` (which items people rate), checked: ``{}`` (every item),
    ``{"share": s}`` with 0 < s <= 1 or ``{"count": k}`` with k >= 1 (per group), each with an optional
    integer ``"seed"`` >= 0 (default 0), or ``{"declared_random": true}``. Anything else raises StudySpecError
    naming what is wrong."""
    if value is None or value == {}:
        return {}
    if not isinstance(value, dict):
        raise StudySpecError('human_subset must be an object: {"share": 0.2}, {"count": 300} '
                             'or {"declared_random": true}')
    unknown = sorted(set(value) - set(HUMAN_SUBSET_KEYS))
    if unknown:
        raise StudySpecError(f"human_subset: unknown key(s) {', '.join(map(repr, unknown))}; "
                             f"use {', '.join(HUMAN_SUBSET_KEYS)}")
    if "declared_random" in value:
        if value != {"declared_random": True}:
            raise StudySpecError('human_subset: declared_random takes true and no other key: {"declared_random": true}')
        return {"declared_random": True}
    if ("share" in value) == ("count" in value):
        raise StudySpecError("human_subset: give exactly one of share and count")
    seed = value.get("seed", 0)
    if not _is_int(seed) or not 0 <= seed < 2**32:
        raise StudySpecError(f"human_subset: seed must be a whole number from 0 to {2**32 - 1}, got {seed!r}")
    if "share" in value:
        share = value["share"]
        if not isinstance(share, (int, float)) or isinstance(share, bool) or not 0 < share <= 1:
            raise StudySpecError(f"human_subset: share must be a number above 0 and at most 1, got {share!r}")
        return {"share": float(share), "seed": seed}
    count = value["count"]
    if not _is_int(count) or count < 1:
        raise StudySpecError(f"human_subset: count must be a whole number of at least 1, got {count!r}")
    return {"count": count, "seed": seed}


class HumanSubsetLocked(StudySpecError):
    """The human subset cannot change any more: people have rated."""


def human_subset_changeable(*, study: Study, setting: object) -> dict[str, Any]:
    """``human_subset_checked(setting)``, refused (StudySpecError) when it would change which items people rate
    (a draw made, dropped or redrawn) once somebody has rated: rated items would fall outside the subset."""
    checked = human_subset_checked(setting)
    draws = {k for s in (checked, study.human_subset or {}) for k in s} & {"share", "count"}
    if checked != study.human_subset and draws and HumanRating.objects.filter(question__study=study).exists():
        raise HumanSubsetLocked("human_subset: people have already rated items of this study; a new draw would leave "
                             "rated items outside the subset, so the setting cannot change now")
    return checked


def study_alt_epsilon_set(*, study: Study, epsilon: float) -> Study:
    """Set the study's alt-test epsilon (0 < epsilon < 1; a check constraint repeats the rule)."""
    if not (math.isfinite(epsilon) and 0.0 < epsilon < 1.0):
        raise ValueError(f"epsilon must be strictly between 0 and 1, got {epsilon}")
    study.alt_epsilon = epsilon
    study.save(update_fields=["alt_epsilon"])
    return study

