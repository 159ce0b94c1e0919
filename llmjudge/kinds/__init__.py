"""The judge kinds beyond the plain protocol judge (issue 6), as pure functions.

Each module builds prompts from plain values, parses answers into typed results and aggregates
them; none touches the ORM, the network or Celery, so the judging pipeline (issue 4) calls them
from a prompt builder registered under the judge's ``Judge.kind``:

* ``rubric``: Prometheus absolute (1-5 with rubric and optional reference) and relative (A/B).
* ``personalized``: PERSE, a rater's earlier ratings as the profile.
* ``persona``: CINEMETRIC, verified movie characters role-play a rater, majority vote.
* ``roleplay``: DRPE, static and dynamic roles in one batched prompt, confidence-weighted votes.

Prompt wording is data in ``llmjudge/prompts/`` (see its README); docs/judge-kinds.md explains
the choices.
"""
