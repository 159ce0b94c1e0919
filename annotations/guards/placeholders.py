"""The one template check: a template may hold plain ``{name}`` placeholders and nothing else.

Used by the study specification (its ``llm_template`` and question contexts), by the model fields an
admin can edit, by the rendering before every format, and by the judge kinds whose options are
templates (a rubric judge's ``instruction`` and ``response``). Pure: no Django.

A format spec (``{prompt:>100000000}``), a conversion (``{story!r}``), attribute or index access
(``{story.__class__}``, ``{story[0]}``) or a positional ``{}`` would let a few bytes of template build
hundreds of megabytes for every page and every stored prompt (issue 18; issue 23, finding 2: a rubric
option made the preview answer 400 MB and a Celery worker grow to 9.8 GB), or reach into Python objects.
"""
from __future__ import annotations

import functools
import string


class TemplateError(ValueError):
    """A template that is not plain ``{name}`` placeholders; the message names where and which."""


@functools.lru_cache(maxsize=1024)
def _parsed(template: str) -> tuple[tuple[str | None, str | None, str | None], ...]:
    return tuple((name, spec, conversion) for _, name, spec, conversion in string.Formatter().parse(template))


def plain_placeholders(template: str, where: str) -> frozenset[str]:
    """The ``{name}`` placeholders of ``template``; TemplateError for anything but plain names.

    Cached per template text: the rendering checks each template again before every format.
    """
    try:
        parsed = _parsed(template)
    except ValueError as exc:
        raise TemplateError(f"{where} is not a valid template: {exc}") from None
    names = set()
    for name, spec, conversion in parsed:
        if name is None:
            continue
        if spec or conversion or not name.isidentifier():
            shown = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            raise TemplateError(
                f"{where}: placeholder {shown[:60]!r} is not a plain {{name}} (format specs, conversions, "
                "attribute and index access are not allowed)"
            )
        names.add(name)
    return frozenset(names)
