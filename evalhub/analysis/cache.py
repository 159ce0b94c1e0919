"""The analysis through Django's cache, keyed by the options and a cheap fingerprint of the ratings."""

from __future__ import annotations

import hashlib

from django.core.cache import cache
from django.db.models import Count, Max, Q, Sum

from annotations.models import HumanRating, Study
from annotations.selectors import counted_items
from evalhub.analysis.reading import AnalysisOptions
from evalhub.analysis.result import AnalysisResult, shape_digest
from evalhub.analysis.tables import SCHEMA_VERSION, study_analysis
from llmjudge.models import JudgeRun, LLMRating

CACHE_SECONDS = 600


def ratings_fingerprint(study: Study) -> tuple[object, ...]:
    """What the analysis of `study` depends on, cheaply: counts and last change of ratings, items and runs.

    Any new, edited or deleted rating changes a count or a last-updated time; a new or finished run
    changes the run list. Edits that touch none of these (an item's group renamed in the admin) are
    caught by the cache timeout.
    """
    question_ids = list(study.questions.values_list("id", flat=True))
    human = HumanRating.objects.filter(question_id__in=question_ids).order_by().aggregate(
        n=Count("id"), last=Max("updated_at"))
    llm = LLMRating.objects.filter(question_id__in=question_ids).order_by().aggregate(
        n=Count("id"), last=Max("updated_at"))
    # With the human subset's drawn items (issue 27): a redraw changes their number or the sum of their ids.
    drawn = Q(in_human_subset=True)
    items = counted_items(study=study).order_by().aggregate(
        n=Count("id"), last=Max("id"), drawn=Count("id", filter=drawn), drawn_ids=Sum("id", filter=drawn))
    runs = tuple(JudgeRun.objects.filter(study=study).order_by("id").values_list("id", "status", "judge__name"))
    return (study.slug, study.title, tuple(question_ids), study.scale_min, study.scale_max, tuple(study.groups),
            repr(study.contrasts), study.alt_epsilon,  # the alt-test's epsilon is the study's unless overridden
            tuple(human.values()), tuple(llm.values()), tuple(items.values()), runs,
            repr(study.human_subset))


def study_analysis_cached(*, study: Study, options: AnalysisOptions | None = None) -> AnalysisResult:
    """``study_analysis`` through the cache, keyed by the options and ``ratings_fingerprint``.

    A dashboard is opened again and again on data that has not changed; a million-rating study
    then costs two aggregate queries instead of the whole analysis.

    The cache holds the result itself (the cache pickles it): measured faster than its JSON rebuilt into the
    types (tests/bench/bench_analyze.py). A pickle is only as good as the classes it names, so the key
    carries ``shape_digest()``: a result pickled before a field was added, renamed or removed is never read.
    """
    options = options or AnalysisOptions()
    digest = hashlib.sha256(repr((options, ratings_fingerprint(study))).encode()).hexdigest()[:32]
    key = f"evalhub:analysis:{SCHEMA_VERSION}:{shape_digest()}:{study.pk}:{digest}"
    result = cache.get(key)
    if not isinstance(result, AnalysisResult):
        result = study_analysis(study=study, options=options)
        cache.set(key, result, CACHE_SECONDS)
    return result

