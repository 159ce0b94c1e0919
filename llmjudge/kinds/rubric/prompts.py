"""Rubric judge (Prometheus, Kim et al. 2024; seed 001): absolute 1-5 grading against a score rubric
with an optional reference answer, and relative A/B grading for pairwise comparisons.

Templates (``llmjudge/prompting/data/``), character for character as published:

* ``prometheus_absolute_v1`` / ``prometheus_absolute_noref_v1``: the Prometheus 1 paper (appendix,
  "Prompt for Prometheus") and model cards, output format ``"Feedback: (write a feedback for
  criteria) [RESULT] (an integer number between 1 and 5)"``. Default.
* ``prometheus_absolute_v2`` / ``..._noref_v2`` and ``prometheus_relative_v2`` / ``..._noref_v2``:
  the prometheus-eval library's ``prompts.py`` (Prometheus 2), without ``"Feedback: "`` in the output
  format. Relative grading exists only in v2. ``system_prompt`` gives the matching system messages.

The rubric block is prometheus-eval's ``SCORE_RUBRIC_TEMPLATE`` (``[criteria]`` then ``Score 1: ...``
to ``Score 5: ...``); relative grading shows only its first line, as ``load_rubric(..., "relative")``
does. Prometheus is trained on 1-5, so a rubric has exactly the five scores 1..5 and a rubric judge
needs a 1-5 study.

Mapping an EvalHub item to Prometheus' inputs (``ItemMapping``): the *instruction* and the
*response* are templates over the item's fields. For the story study the instruction is the
writing prompt (``{prompt}``) and the response is the story (``{story}``); the question's rubric
(``Question.rubric``) supplies the criteria, or, when it names none, the question text does. The
reference answer, when there is one, comes from an item field named by ``reference_field``: a
reference belongs to an item, not to a question.

Parsing delegates to ``llmjudge.parsing`` (``[RESULT] n``, ``[RESULT] A`` and the variants real
models emit); the feedback before ``[RESULT]`` is the rationale. Unlike prometheus-eval there is
no re-sampling on a parse failure here: an unparseable answer is recorded as such and the pipeline
decides what to retry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from annotations.guards.placeholders import plain_placeholders
from llmjudge.kinds.common.templates import as_mapping, fill, load_json, load_text
from llmjudge.parsing import ParsedChoice, ParsedScore, parse_pairwise, parse_score

SCORES = (1, 2, 3, 4, 5)
ABSOLUTE_VERSIONS = ("v1", "v2")
RELATIVE_VERSIONS = ("v2",)
DEFAULT_ABSOLUTE_VERSION = "v1"
DEFAULT_RELATIVE_VERSION = "v2"


@dataclass(frozen=True)
class Rubric:
    """A Prometheus score rubric: one criterion and a description for each score 1..5."""

    criteria: str
    descriptions: tuple[str, str, str, str, str]

    def __post_init__(self) -> None:
        if not isinstance(self.criteria, str) or not self.criteria.strip():
            raise ValueError("rubric criteria must be a non-empty text")
        if len(self.descriptions) != len(SCORES):
            raise ValueError(f"rubric needs a description for each score 1..5, got {len(self.descriptions)}")
        for score, text in zip(SCORES, self.descriptions, strict=True):
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"rubric description for score {score} must be a non-empty text")

    @classmethod
    def from_json(cls, data: object, *, default_criteria: str = "") -> Rubric:
        """Build from ``Question.rubric``. Two shapes are accepted:

        * Prometheus / Feedback Collection field names:
          ``{"criteria": ..., "score1_description": ..., ..., "score5_description": ...}``
        * ``{"criteria": ..., "scores": {"1": ..., ..., "5": ...}}``

        ``criteria`` may be left out when ``default_criteria`` (the question text) is given.
        """
        obj = as_mapping(data, "rubric")
        criteria = obj.get("criteria", default_criteria) or default_criteria
        if not isinstance(criteria, str):
            raise ValueError("rubric 'criteria' must be a text")
        if "scores" in obj:
            scores = as_mapping(obj["scores"], "rubric 'scores'")
            keys = {str(k).strip() for k in scores}
            expected = {str(s) for s in SCORES}
            if keys != expected:
                raise ValueError(
                    f"rubric 'scores' must have exactly the keys 1..5; missing {sorted(expected - keys)}, "
                    f"unexpected {sorted(keys - expected)}"
                )
            by_key = {str(k).strip(): v for k, v in scores.items()}
            texts = [by_key[str(s)] for s in SCORES]
        else:
            missing = [f"score{s}_description" for s in SCORES if f"score{s}_description" not in obj]
            if missing:
                raise ValueError(f"rubric is missing {', '.join(missing)} (or give 'scores': {{'1': ..., '5': ...}})")
            texts = [obj[f"score{s}_description"] for s in SCORES]
        for score, text in zip(SCORES, texts, strict=True):
            if not isinstance(text, str):
                raise ValueError(f"rubric description for score {score} must be a text")
        one, two, three, four, five = (str(t).strip() for t in texts)  # each checked to be a text above
        return cls(criteria=criteria.strip(), descriptions=(one, two, three, four, five))

    def to_json(self) -> dict[str, str]:
        out = {"criteria": self.criteria}
        out.update({f"score{s}_description": d for s, d in zip(SCORES, self.descriptions, strict=True)})
        return out

    def absolute_text(self) -> str:
        """prometheus-eval's ``SCORE_RUBRIC_TEMPLATE`` filled in."""
        lines = [f"[{self.criteria}]"]
        lines += [f"Score {s}: {d}" for s, d in zip(SCORES, self.descriptions, strict=True)]
        return "\n".join(lines)

    def relative_text(self) -> str:
        """The first line of the rubric only, as prometheus-eval uses for relative grading."""
        return f"[{self.criteria}]"


@dataclass(frozen=True)
class Criteria:
    """A rubric's criteria alone: all that relative grading shows, so all a pairwise question needs."""

    criteria: str

    def __post_init__(self) -> None:
        if not isinstance(self.criteria, str) or not self.criteria.strip():
            raise ValueError("rubric criteria must be a non-empty text")

    def relative_text(self) -> str:
        return f"[{self.criteria}]"


@dataclass(frozen=True)
class ItemMapping:
    """How an item's fields become Prometheus' instruction, response and reference answer.

    ``instruction`` and ``response`` are ``str.format`` templates over the item's fields;
    ``reference_field`` names the item field holding a score-5 reference answer ("" for none).
    """

    instruction: str = "{prompt}"
    response: str = "{story}"
    reference_field: str = ""

    @classmethod
    def from_options(cls, options: Mapping[str, object]) -> ItemMapping:
        """From ``Judge.options`` keys ``instruction``, ``response``, ``reference_field``."""
        values: dict[str, str] = {}
        for key in ("instruction", "response", "reference_field"):
            if key in options:
                value = options[key]
                if not isinstance(value, str):
                    raise ValueError(f"rubric judge option {key!r} must be a text")
                values[key] = value
        for key in ("instruction", "response"):
            # The study template's check: plain {name} placeholders only (issue 23, finding 2).
            plain_placeholders(values.get(key, getattr(cls, key)), f"rubric judge option {key!r}")
        return cls(**values)

    def apply(self, fields: Mapping[str, str]) -> tuple[str, str, str | None]:
        """(instruction, response, reference answer or None) for one item."""
        # Again here (cached): a judge saved before the check, or whose options were written into the table.
        plain_placeholders(self.instruction, "rubric judge option 'instruction'")
        plain_placeholders(self.response, "rubric judge option 'response'")
        try:
            instruction = self.instruction.format_map(fields)
            response = self.response.format_map(fields)
        except KeyError as exc:
            raise ValueError(
                f"rubric judge mapping uses item field {exc.args[0]!r}, which the item lacks "
                f"(it has {', '.join(sorted(fields)) or 'no fields'})"
            ) from None
        reference = None
        if self.reference_field:
            value = fields.get(self.reference_field, "")
            reference = value if value and value.strip() else None
        return instruction, response, reference


def _check_version(version: str, allowed: tuple[str, ...], what: str) -> None:
    if version not in allowed:
        raise ValueError(f"unknown {what} template version {version!r} (known: {', '.join(allowed)})")


def absolute_template_name(*, with_reference: bool, version: str = DEFAULT_ABSOLUTE_VERSION) -> str:
    _check_version(version, ABSOLUTE_VERSIONS, "absolute")
    return f"prometheus_absolute_{'' if with_reference else 'noref_'}{version}"


def relative_template_name(*, with_reference: bool, version: str = DEFAULT_RELATIVE_VERSION) -> str:
    _check_version(version, RELATIVE_VERSIONS, "relative")
    return f"prometheus_relative_{'' if with_reference else 'noref_'}{version}"


def absolute_prompt(
    *,
    instruction: str,
    response: str,
    rubric: Rubric,
    reference_answer: str | None,
    version: str = DEFAULT_ABSOLUTE_VERSION,
) -> str:
    """Prometheus' absolute-grading prompt; the template without a reference when there is none."""
    with_ref = reference_answer is not None
    template = load_text(absolute_template_name(with_reference=with_ref, version=version))
    values: dict[str, object] = {"instruction": instruction, "response": response, "rubric": rubric.absolute_text()}
    if with_ref:
        values["reference_answer"] = reference_answer
    return fill(template, **values)


def relative_prompt(
    *,
    instruction: str,
    response_a: str,
    response_b: str,
    rubric: Rubric | Criteria,
    reference_answer: str | None,
    version: str = DEFAULT_RELATIVE_VERSION,
) -> str:
    """Prometheus 2's relative-grading (A/B) prompt."""
    with_ref = reference_answer is not None
    template = load_text(relative_template_name(with_reference=with_ref, version=version))
    values: dict[str, object] = {
        "instruction": instruction,
        "response_A": response_a,
        "response_B": response_b,
        "rubric": rubric.relative_text(),
    }
    if with_ref:
        values["reference_answer"] = reference_answer
    return fill(template, **values)


def system_prompt(mode: str) -> str:
    """prometheus-eval's system message for ``"absolute"`` or ``"relative"`` grading (chat backends)."""
    if mode not in ("absolute", "relative"):
        raise ValueError(f"grading mode must be 'absolute' or 'relative', got {mode!r}")
    return load_text(f"prometheus_system_{mode}_v2")


def parse_absolute(text: str) -> ParsedScore:
    """``Feedback: ... [RESULT] n`` on 1-5; the feedback is the rationale (``llmjudge.parsing``)."""
    return parse_score(text, scale_min=1, scale_max=5)


def parse_relative(text: str) -> ParsedChoice:
    """``... [RESULT] A`` / ``B`` (``llmjudge.parsing.parse_pairwise``)."""
    return parse_pairwise(text)


def check_study_scale(scale: tuple[int, int]) -> None:
    """Prometheus grades 1-5 only; a rubric judge on another scale would be rescaled guesswork."""
    if tuple(scale) != (1, 5):
        raise ValueError(f"a rubric (Prometheus) judge needs a 1-5 study scale, this study's is {scale[0]}-{scale[1]}")


def shipped_rubrics(name: str = "rubrics_story_v1") -> dict[str, Rubric]:
    """Rubrics shipped as data (``llmjudge/prompting/data/<name>.json``), by question key, for importing
    into ``Question.rubric`` (e.g. the demo story study)."""
    data = as_mapping(load_json(name).get("rubrics"), f"{name}.json 'rubrics'")
    return {key: Rubric.from_json(value) for key, value in data.items()}
