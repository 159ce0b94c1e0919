"""What a browser would post for a page's form: the named inputs, textareas and selects with their current
values (checked boxes only, selected options), read with the standard library's HTML parser."""
from __future__ import annotations

from html.parser import HTMLParser


class _FormValues(HTMLParser):
    def __init__(self, form_id: str | None) -> None:
        super().__init__(convert_charrefs=True)
        self.form_id, self.inside, self.values = form_id, form_id is None, {}
        self.textarea: str | None = None
        self.select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form" and self.form_id is not None:
            self.inside = a.get("id") == self.form_id
        if not self.inside or "name" not in a and tag != "option":
            return
        name = a.get("name", "")
        if tag == "input" and a.get("type") not in ("submit", "button", "file"):
            if a.get("type") not in ("checkbox", "radio") or "checked" in a:
                self.values.setdefault(name, []).append(a.get("value", "on" if a.get("type") == "checkbox" else ""))
        elif tag == "textarea":
            self.textarea = name
            self.values.setdefault(name, []).append("")
        elif tag == "select":
            self.select = name
        elif tag == "option" and self.select is not None and "selected" in a:
            self.values.setdefault(self.select, []).append(a.get("value", ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea":
            self.textarea = None
        elif tag == "select":
            self.select = None
        elif tag == "form" and self.form_id is not None:
            self.inside = False

    def handle_data(self, data: str) -> None:
        if self.textarea is not None:
            self.values[self.textarea][-1] += data.removeprefix("\n") if not self.values[self.textarea][-1] else data


def form_values(html: str, form_id: str | None = None) -> dict[str, list[str]]:
    """name -> values posted by the form ``form_id`` (or by every form of the page)."""
    parser = _FormValues(form_id)
    parser.feed(html)
    return parser.values
