"""The dashboard's PPI panel read in headless Chromium: on docs/analysis.md's worked example (AltTest SummEval,
a random 20 % human-rated, declared random) the PPI rows and the difference beside Welch's; on the same data
with every item human-rated and nothing declared, the note that PPI's guarantee does not hold and no PPI figure.
"""
from __future__ import annotations

import pytest

from evalhub.analysis import AnalysisOptions, study_analysis
from evalhub.analysis.ppi_rows import NOT_DECLARED
from tests.support.browser import log_in
from tests.support.ppi_study import JUDGE, summeval_study


@pytest.fixture
def studies(transactional_db, django_user_model, tmp_path):
    """Created before the browser starts: Playwright's loop would make Django refuse the ORM calls."""
    owner = django_user_model.objects.create_user(username="owner", password="pw-owner-123")
    random_20 = summeval_study(slug="summeval-20", owner=owner, tmp_path=tmp_path)
    summeval_study(slug="summeval-all", owner=owner, tmp_path=tmp_path, share=None)
    return study_analysis(study=random_20, options=AnalysisOptions(n_boot=20))


@pytest.mark.e2e
def test_the_dashboard_shows_ppi_beside_the_humans_only_figures_or_says_why_not(page, studies):
    log_in(page, "/studies/summeval-20/", "owner", "pw-owner-123")
    assert "declared a random subset" in page.locator("#ppi-declared").inner_text()
    assert page.locator("#ppi-note").count() == 0
    rows = page.locator("#ppi-means tr.ppi-row")
    assert rows.count() == 2
    for k, want in enumerate(studies.ppi):
        row = rows.nth(k)
        assert (row.get_attribute("data-group"), row.get_attribute("data-pool")) == (want.group, JUDGE)
        assert row.locator("td.ppi-estimate").inner_text() == f"{want.estimate:.2f} [{want.ci_low:.2f}, {want.ci_high:.2f}]"
        assert row.locator("td.humans-only").inner_text() == (
            f"{want.humans_only_estimate:.2f} [{want.humans_only_ci_low:.2f}, {want.humans_only_ci_high:.2f}]")
        assert row.locator("td.ppi-gain").inner_text().startswith(
            f"this judge's ratings are worth {round(want.extra_items)} more human-rated items here")
    [difference] = studies.ppi_differences
    cell = page.locator("#ppi-differences tr.ppi-difference td.ppi-difference-value").inner_text()
    assert cell.startswith(f"{difference.difference:.2f} [{difference.ci_low:.2f}, {difference.ci_high:.2f}]")
    assert cell.startswith("-1.68 [-2.11, -1.26]")
    assert page.locator("#ppi-differences td.welch").inner_text().startswith("-1.60")

    page.goto("/studies/summeval-all/")
    note = page.locator("#ppi-note")
    assert note.is_visible() and NOT_DECLARED[0].upper() + NOT_DECLARED[1:] in note.inner_text()  # said as a sentence
    assert "guarantee does not hold" in note.inner_text()
    assert page.locator("#ppi-means").count() == 0 and page.locator("#ppi-differences").count() == 0
