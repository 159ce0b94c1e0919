"""The project's documentation (docs/*.md) for signed-in researchers, as plain text: the pages' references to the
docs are links (issue 25 review, C7), and a reader of a number can open its definition."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_GET


@require_GET
@login_required
def doc_page(request: HttpRequest, name: str) -> HttpResponse:
    """One file of docs/ by its name without ".md"; only the Markdown files found there (no path is built from the
    URL)."""
    files = {path.stem: path for path in (settings.BASE_DIR / "docs").glob("*.md")}
    if name not in files:
        raise Http404("no such document")
    return HttpResponse(files[name].read_text(encoding="utf-8"), content_type="text/plain; charset=utf-8")
