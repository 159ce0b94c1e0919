"""The alternative annotator test (Calderon, Reichart & Dror, ACL 2025): may this LLM replace the human raters?

The test asks, one human at a time, who represents the *other* humans better: the LLM or the human left
out. It follows the authors' reference implementation (the ``alt_test`` function of their repository's
example notebook), edge cases included, and vectorises it over ratings so that a study of a million
ratings analyses in well under a second.

Inputs are plain Python/numpy data. Labels are numbers: nominal labels are given as codes (any numbers
that are equal exactly when the labels are).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from evalhub.stats.comparison import fdr_adjust, t_test_p_less
from evalhub.stats.inputs import distinct_codes, id_codes

Scoring = Literal["accuracy", "neg_rmse"]
SampleRule = Literal["majority", "mean"]
SCORINGS: tuple[Scoring, ...] = ("accuracy", "neg_rmse")

DEFAULT_EPSILON = 0.15
Q_FDR = 0.05
MIN_INSTANCES_PER_HUMAN = 30  # the t-test's normality needs about 30 (paper, FAQ)
MIN_HUMANS_PER_INSTANCE = 2  # the left-out human needs at least one other human to be scored against
MIN_HUMANS = 3  # with 2 humans there is no consensus to represent (paper, FAQ)

# Ties between two sums of squared errors closer than this (relative) count as ties. The sums are
# computed from per-instance moments, which carry rounding errors of about 1e-15; for integer labels
# (and means of a few integer samples) distinct sums differ by far more, so no real difference is lost.
_RELATIVE_TIE = 1e-9


@dataclass(frozen=True)
class EpsilonGuide:
    """The paper's rule of thumb for epsilon, the advantage granted to the LLM for its lower cost."""

    annotators: str
    epsilon: float
    description: str


EPSILON_GUIDANCE: tuple[EpsilonGuide, ...] = (
    EpsilonGuide("expert", 0.2, "experts: reliable but expensive, sometimes inaccessible"),
    EpsilonGuide("skilled", 0.15, "skilled annotators: trained workers, students"),
    EpsilonGuide("crowd", 0.1, "crowd workers"),
)


@dataclass(frozen=True)
class AltTestHuman:
    """One human's comparison with the LLM: ``p`` is None when scipy's p-value is NaN (undefined)."""

    rater: str
    n: int
    p: float | None
    rejected: bool
    advantage: float


@dataclass(frozen=True)
class AltTestResult:
    """The statistical part of an alt-test row; question, group and pool are the caller's.

    ``winning_rate``, ``advantage_probability`` and ``passed`` are None exactly when the test cannot
    give a verdict; ``notes`` then says what is missing.
    """

    scoring: Scoring
    epsilon: float
    q_fdr: float
    n_instances: int
    winning_rate: float | None
    advantage_probability: float | None
    passed: bool | None
    humans: tuple[AltTestHuman, ...]
    notes: tuple[str, ...]


def alt_test(
    humans: Mapping[str, Mapping[Hashable, float]],
    llm: Mapping[Hashable, float | Sequence[float]],
    *,
    scoring: Scoring,
    epsilon: float = DEFAULT_EPSILON,
    q_fdr: float = Q_FDR,
    sample_rule: SampleRule | None = None,
) -> AltTestResult:
    """The alternative annotator test on annotator-keyed mappings; see ``alt_test_long`` for the procedure.

    ``humans`` is ``{rater: {instance: label}}``; ``llm`` is ``{instance: label}`` or
    ``{instance: [sample labels]}`` (one label per sample of the LLM). Labels are numbers, NaN = missing.
    """
    index: dict[Hashable, int] = {}
    raters: list[int] = []
    instances: list[int] = []
    labels: list[float] = []
    for code, (rater, ratings) in enumerate(humans.items()):
        raters.extend([code] * len(ratings))
        instances.extend(index.setdefault(key, len(index)) for key in ratings)
        labels.extend(_numbers(ratings.values(), f"rater {rater!r}"))
    llm_instances: list[int] = []
    llm_labels: list[float] = []
    for key, value in llm.items():
        samples: list[object]
        if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
            samples = [value]  # one label (a string is one invalid label, not a sequence of samples)
        else:
            samples = list(value)
        llm_instances.extend([index.setdefault(key, len(index))] * len(samples))
        llm_labels.extend(_numbers(samples, f"the LLM's instance {key!r}"))
    return alt_test_long(
        raters=np.array(raters, dtype=np.int64),
        instances=np.array(instances, dtype=np.int64),
        labels=np.array(labels, dtype=float),
        llm_instances=np.array(llm_instances, dtype=np.int64),
        llm_labels=np.array(llm_labels, dtype=float),
        scoring=scoring,
        epsilon=epsilon,
        q_fdr=q_fdr,
        sample_rule=sample_rule,
        rater_names={code: str(rater) for code, rater in enumerate(humans)},
    )


def alt_test_long(
    *,
    raters: npt.ArrayLike,
    instances: npt.ArrayLike,
    labels: npt.ArrayLike,
    llm_instances: npt.ArrayLike,
    llm_labels: npt.ArrayLike,
    scoring: Scoring,
    epsilon: float = DEFAULT_EPSILON,
    q_fdr: float = Q_FDR,
    sample_rule: SampleRule | None = None,
    rater_names: Mapping[Hashable, str] | None = None,
) -> AltTestResult:
    """The alternative annotator test on long-format ratings (one row per human rating / LLM sample).

    Human ratings are the parallel arrays ``raters``, ``instances``, ``labels``; the LLM's are
    ``llm_instances``, ``llm_labels``, where several rows of one instance are the LLM's samples.
    Rater and instance ids are best given as integers (the fast path; ``rater_names`` maps a rater id to
    the name reported, str(id) by default); other hashable ids work but are slower to index.

    Procedure (Calderon, Reichart & Dror 2025, and their reference implementation):
    - The LLM's label of an instance is its samples' majority (``sample_rule="majority"``, the default
      for accuracy) or their mean (``"mean"``, the default for neg_rmse). A tie between the most frequent
      samples gives no label (as ``majority_choice``: no value is favoured to break it), so the instance
      is left out, with a note.
    - An instance has at least 2 human ratings and an LLM label; the others are left out, with a note.
      Instance ids are the caller's: to pool questions, give every (item, question) pair its own id.
    - For each human j with at least 30 instances (the others are skipped, with a note), on every
      instance i that j rated, with O_i the other humans' labels of i:
      S = accuracy: mean over o in O_i of [pred == o]; S = neg_rmse: -sqrt(mean over o of (pred - o)^2);
      W_llm = [S(llm_i) >= S(j_i)], W_h = [S(j_i) >= S(llm_i)] (a tie gives both 1);
      d = W_h - W_llm; p_j = ``scipy.stats.ttest_1samp(d, epsilon, alternative="less")``'s p, computed as
      scipy does by ``comparison.t_test_p_less``
      (H0: mean(d) >= epsilon); the advantage rho_j = mean(W_llm). Both scores of a rating use the same
      others, so they are compared as match counts (accuracy) or sums of squared errors (neg_rmse); sums
      within a relative 1e-9 count as a tie, which is exact for integer labels and means of samples.
    - Benjamini-Yekutieli at ``q_fdr`` over the tested humans' p-values
      (``scipy.stats.false_discovery_control(ps, method="by")``, computed as scipy does by ``fdr.fdr_adjust``;
      rejected where adjusted p <= q_fdr).
      winning_rate omega = rejected / humans tested; passed = omega >= 0.5;
      advantage_probability rho = mean of rho_j.
    Scipy's edge cases are kept: a constant d below epsilon gets p = 0 and above it p = 1 (scipy 1.17
    returns t = -inf / +inf there, not NaN). Only a constant d equal to epsilon (possible for epsilon in
    {0, 1}, e.g. all ties with epsilon 0) gives NaN: that p is undefined (None), counted as not rejected
    but still counted among the humans tested (as in the reference, where NaN never passes the
    step-up comparison), with a note.
    Missing data: NaN labels and NaN LLM samples are dropped; an LLM whose samples are all NaN has no
    label for that instance.
    Undefined (winning_rate, advantage_probability and passed None, with a note saying what is missing):
    no instance with 2 human ratings and an LLM label, no human with 30 instances, or fewer than 3
    humans tested (the paper's minimum for a reliable test; their per-human rows are still returned).
    Invalid input (arrays of different lengths, infinite labels, a rater rating an instance twice,
    an unknown scoring or sample rule, epsilon outside [0, 1], q_fdr outside (0, 1)) raises ValueError.
    """
    _checked_rule(scoring, sample_rule, epsilon, q_fdr)  # every option checked before the data, as ever
    scores = alt_test_scores(raters=raters, instances=instances, labels=labels, llm_instances=llm_instances,
                             llm_labels=llm_labels, scoring=scoring, sample_rule=sample_rule, rater_names=rater_names)
    return alt_test_verdict(scores, epsilon=epsilon, q_fdr=q_fdr)


@dataclass(frozen=True)
class AltTestScores:
    """The scored human ratings of one ``alt_test_long`` call, before the humans' tests (``alt_test_scores``).

    Scoring is the costly part of the test and depends on each instance alone, so the scores of sets of
    distinct instances (one question each) may be joined (``alt_test_joined``) instead of scored again.
    """

    scoring: Scoring
    rater_ids: np.ndarray  # the distinct human rater ids, sorted; ``raters`` are positions in it
    names: list[str]  # the name of each rater id
    raters: np.ndarray  # rater code of each usable human rating
    w_llm: np.ndarray  # W_llm of each usable human rating
    w_h: np.ndarray  # W_h of each usable human rating
    n_instances: int  # usable instances
    n_tied: int  # instances left out because the LLM's most frequent samples tie
    n_few: int  # ... because they have fewer than MIN_HUMANS_PER_INSTANCE human ratings
    n_no_llm: int  # ... because the LLM has no label for them


def alt_test_scores(
    *,
    raters: npt.ArrayLike,
    instances: npt.ArrayLike,
    labels: npt.ArrayLike,
    llm_instances: npt.ArrayLike,
    llm_labels: npt.ArrayLike,
    scoring: Scoring,
    sample_rule: SampleRule | None = None,
    rater_names: Mapping[Hashable, str] | None = None,
) -> AltTestScores:
    """The first half of ``alt_test_long`` (same arguments, rules and errors): W_llm and W_h of every usable
    human rating; ``alt_test_verdict`` is the second half."""
    rule = _checked_rule(scoring, sample_rule, DEFAULT_EPSILON, Q_FDR)
    h_rater, h_inst, h_label = _long("human", raters, instances, labels)
    _, l_inst, l_label = _long("LLM", None, llm_instances, llm_labels)
    used = _usable_ratings(h_rater, h_inst, h_label, l_inst, l_label, rule, rater_names)
    w_llm, w_h = _wins(used.instances, used.labels, used.llm_label, used.n_inst, scoring)
    return AltTestScores(scoring, used.rater_ids, used.names, used.raters, w_llm, w_h, used.n_instances,
                         used.n_tied, used.n_few, used.n_no_llm)


def alt_test_joined(parts: Sequence[AltTestScores], *, rater_names: Mapping[Hashable, str] | None = None
                    ) -> AltTestScores:
    """The scores of several sets of instances as one: what ``alt_test_scores`` gives on their ratings
    concatenated in order, each part's instances kept apart (e.g. the instances of question k numbered
    k * n_items + item). Scores depend on an instance's own ratings only, so they are the parts' scores
    concatenated; the raters are coded again over all parts. The parts share one scoring."""
    if not parts:
        raise ValueError("alt_test_joined needs at least one part")
    scoring = parts[0].scoring
    if any(part.scoring != scoring for part in parts):
        raise ValueError("the parts of a joined alt-test must share one scoring")
    all_ids = np.concatenate([part.rater_ids for part in parts])
    _, rater_ids = id_codes(all_ids) if all_ids.size else (None, all_ids)
    names = [str(r) if rater_names is None else rater_names[r] for r in rater_ids.tolist()]
    raters = [np.searchsorted(rater_ids, part.rater_ids)[part.raters] for part in parts]
    return AltTestScores(
        scoring, rater_ids, names, np.concatenate(raters), np.concatenate([part.w_llm for part in parts]),
        np.concatenate([part.w_h for part in parts]), sum(part.n_instances for part in parts),
        sum(part.n_tied for part in parts), sum(part.n_few for part in parts), sum(part.n_no_llm for part in parts))


def alt_test_verdict(scores: AltTestScores, *, epsilon: float = DEFAULT_EPSILON, q_fdr: float = Q_FDR
                     ) -> AltTestResult:
    """The second half of ``alt_test_long``: the humans' tests, corrected together, and the verdict."""
    _checked_rule(scores.scoring, None, epsilon, q_fdr)
    notes: list[str] = []
    if scores.n_tied:
        notes.append(f"{_instances(scores.n_tied)} left out: the LLM's most frequent samples are tied (no majority)")
    if scores.n_few:
        notes.append(f"{_instances(scores.n_few)} left out: fewer than {MIN_HUMANS_PER_INSTANCE} human ratings")
    if scores.n_no_llm:
        notes.append(f"{_instances(scores.n_no_llm)} left out: no LLM label")
    if scores.n_instances == 0:
        notes.append(
            f"the test cannot run: no item has, on one question, at least {MIN_HUMANS_PER_INSTANCE} human ratings "
            "and an LLM label"
        )
        return _undefined(scores.scoring, epsilon, q_fdr, 0, (), notes)
    return _verdict(scores, scoring=scores.scoring, epsilon=epsilon, q_fdr=q_fdr, notes=notes)


def _checked_rule(scoring: Scoring, sample_rule: SampleRule | None, epsilon: float, q_fdr: float) -> SampleRule:
    """The LLM's sample rule (the scoring's default when None), after checking every option."""
    if scoring not in SCORINGS:
        raise ValueError(f"unknown scoring {scoring!r}; expected one of {', '.join(SCORINGS)}")
    rule = sample_rule or ("majority" if scoring == "accuracy" else "mean")
    if rule not in ("majority", "mean"):
        raise ValueError(f"unknown sample rule {sample_rule!r}; expected majority or mean")
    if not (math.isfinite(epsilon) and 0.0 <= epsilon <= 1.0):
        raise ValueError(f"epsilon must be between 0 and 1, got {epsilon}")
    if not (math.isfinite(q_fdr) and 0.0 < q_fdr < 1.0):
        raise ValueError(f"q_fdr must be strictly between 0 and 1, got {q_fdr}")
    return rule


@dataclass(frozen=True)
class _Usable:
    """The human ratings of the usable instances, coded: rater codes index ``names``, instance codes
    (below ``n_inst``) index ``llm_label``; ``n_instances`` counts the usable instances."""

    raters: np.ndarray
    instances: np.ndarray
    labels: np.ndarray
    llm_label: np.ndarray
    n_inst: int
    rater_ids: np.ndarray
    names: list[str]
    n_instances: int
    n_tied: int
    n_few: int
    n_no_llm: int


def _usable_ratings(
    h_rater: np.ndarray, h_inst: np.ndarray, h_label: np.ndarray, l_inst: np.ndarray, l_label: np.ndarray,
    rule: SampleRule, rater_names: Mapping[Hashable, str] | None,
) -> _Usable:
    """The human ratings of instances with 2 human ratings and an LLM label, and how many of each kind were
    left out."""
    # Common integer codes for the instances of both sides, and compact codes for the raters.
    inst_codes, inst_ids = id_codes(np.concatenate([h_inst, l_inst]))
    n_inst = inst_ids.size
    h_i, l_i = inst_codes[: h_inst.size], inst_codes[h_inst.size :]
    h_r, rater_ids = id_codes(h_rater)
    names = [str(r) if rater_names is None else rater_names[r] for r in rater_ids.tolist()]
    if _counts_of_keys(h_r * n_inst + h_i, len(names) * n_inst).max(initial=0) > 1:
        raise ValueError("a rater rated the same instance twice; give one label per rater and instance")

    llm_label, tied = _llm_labels(l_i, l_label, n_inst, rule)
    n_humans = np.bincount(h_i, minlength=n_inst)
    has_llm = ~np.isnan(llm_label)
    usable = has_llm & (n_humans >= MIN_HUMANS_PER_INSTANCE)
    few = int((has_llm & (n_humans < MIN_HUMANS_PER_INSTANCE)).sum())
    no_llm = int(((n_humans > 0) & ~has_llm & ~tied).sum())
    keep = usable[h_i]
    return _Usable(h_r[keep], h_i[keep], h_label[keep], llm_label, n_inst, rater_ids, names, int(usable.sum()),
                   int(tied.sum()), few, no_llm)


def _verdict(used: AltTestScores, *, scoring: Scoring, epsilon: float, q_fdr: float, notes: list[str]
             ) -> AltTestResult:
    """The humans' tests (those with MIN_INSTANCES_PER_HUMAN usable instances), corrected together, and the
    verdict from MIN_HUMANS of them; ``notes`` gains what was skipped or undefined."""
    names = used.names
    per_rater = np.bincount(used.raters, minlength=len(names))
    tested = np.flatnonzero(per_rater >= MIN_INSTANCES_PER_HUMAN)
    for r in np.flatnonzero(per_rater < MIN_INSTANCES_PER_HUMAN):
        notes.append(
            f"{names[r]} gave {per_rater[r]} usable rating{'' if per_rater[r] == 1 else 's'}; "
            f"the test needs {MIN_INSTANCES_PER_HUMAN}: skipped"
        )
    if tested.size == 0:
        most = int(per_rater.max()) if per_rater.size else 0
        notes.append(f"the test cannot run: no human gave {MIN_INSTANCES_PER_HUMAN} usable ratings (at most {most} "
                     "per rater): add items, or ratings per rater")
        return _undefined(scoring, epsilon, q_fdr, used.n_instances, (), notes)

    ps = _p_values(used.raters, used.w_h.astype(float) - used.w_llm, per_rater, tested, epsilon)
    advantage = np.bincount(used.raters, weights=used.w_llm, minlength=len(names))[tested] / per_rater[tested]
    undefined = np.isnan(ps)
    # An undefined p enters the correction as 1: it keeps its place in m (as in the reference) and is
    # never rejected, since the largest Benjamini-Yekutieli threshold q / H_m is below 1.
    adjusted = fdr_adjust(np.where(undefined, 1.0, ps), method="by")
    rejected = (adjusted <= q_fdr) & ~undefined
    for r in tested[undefined]:
        notes.append(
            f"{names[r]}: p is undefined (d = W_h - W_llm equals epsilon on every rating); counted as not rejected"
        )
    humans = tuple(
        AltTestHuman(
            rater=names[r],
            n=int(per_rater[r]),
            p=None if undefined[k] else float(ps[k]),
            rejected=bool(rejected[k]),
            advantage=float(advantage[k]),
        )
        for k, r in enumerate(tested)
    )
    if tested.size < MIN_HUMANS:
        notes.append(
            f"no verdict: the test needs at least {MIN_HUMANS} humans with {MIN_INSTANCES_PER_HUMAN} usable "
            f"ratings each; {tested.size} have ({', '.join(h.rater for h in humans)})"
        )
        return _undefined(scoring, epsilon, q_fdr, used.n_instances, humans, notes)
    winning_rate = float(rejected.sum()) / tested.size
    return AltTestResult(
        scoring=scoring,
        epsilon=epsilon,
        q_fdr=q_fdr,
        n_instances=used.n_instances,
        winning_rate=winning_rate,
        advantage_probability=float(advantage.mean()),
        passed=winning_rate >= 0.5,
        humans=humans,
        notes=tuple(notes),
    )


def _p_values(raters: np.ndarray, d: np.ndarray, per_rater: np.ndarray, tested: np.ndarray,
              epsilon: float) -> np.ndarray:
    """p_j of each tested human: the one-sided t-test of H0 mean(d) >= epsilon over j's ratings."""
    # Few raters: a stable sort of 16-bit codes is a linear-time radix sort.
    order = np.argsort(raters.astype(np.uint16) if per_rater.size <= 65536 else raters, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(per_rater)])
    ps = np.empty(tested.size)
    for k, r in enumerate(tested):
        # scipy.stats.ttest_1samp(..., alternative="less")'s p, without importing scipy.stats (STYLE 15).
        ps[k] = t_test_p_less(d[order[bounds[r] : bounds[r + 1]]], epsilon)
    return ps


def _wins(
    h_i: np.ndarray, h_label: np.ndarray, llm_label: np.ndarray, n_inst: int, scoring: Scoring
) -> tuple[np.ndarray, np.ndarray]:
    """W_llm and W_h of every human rating, each scored against the other humans' labels of its instance.

    Both scores of a rating use the same others, so comparing them needs no division: accuracy compares
    the numbers of others matching, neg_rmse the sums of squared errors (a smaller sum is a higher score).
    Sums over "all humans but j" are the instance's sums minus j's own term, so nothing is O(raters^2).
    """
    llm = llm_label[h_i]
    if scoring == "accuracy":
        same_as_llm = h_label == llm
        llm_matches = np.bincount(h_i, weights=same_as_llm, minlength=n_inst)[h_i] - same_as_llm
        own_matches = _pair_counts(h_i, h_label, n_inst) - 1
        return llm_matches >= own_matches, own_matches >= llm_matches
    # sum over all ratings o of i of (x - o)^2 = n_i (x - mean_i)^2 + M2_i, centred for numerical stability.
    n = np.bincount(h_i, minlength=n_inst).astype(float)
    safe_n = np.maximum(n, 1.0)
    mean = np.bincount(h_i, weights=h_label, minlength=n_inst) / safe_n
    m2 = np.bincount(h_i, weights=(h_label - mean[h_i]) ** 2, minlength=n_inst)
    n_r, mean_r, m2_r = n[h_i], mean[h_i], m2[h_i]
    own_sse = n_r * (h_label - mean_r) ** 2 + m2_r  # j's own term is 0
    llm_all = n_r * (llm - mean_r) ** 2 + m2_r
    llm_sse = llm_all - (llm - h_label) ** 2
    tolerance = _RELATIVE_TIE * (llm_all + own_sse)
    return llm_sse <= own_sse + tolerance, own_sse <= llm_sse + tolerance


def _llm_labels(l_i: np.ndarray, l_label: np.ndarray, n_inst: int, rule: str) -> tuple[np.ndarray, np.ndarray]:
    """The LLM's label per instance (NaN = none) and which instances have tied majorities."""
    out = np.full(n_inst, np.nan)
    if l_i.size == 0:
        return out, np.zeros(n_inst, dtype=bool)
    if rule == "mean":
        counts = np.bincount(l_i, minlength=n_inst)
        sums = np.bincount(l_i, weights=l_label, minlength=n_inst)
        present = counts > 0
        out[present] = sums[present] / counts[present]
        return out, np.zeros(n_inst, dtype=bool)
    values, codes = distinct_codes(l_label)
    keys = l_i * values.size + codes
    if n_inst * values.size <= 4 * keys.size + 1_000_000:
        key_counts = np.bincount(keys, minlength=n_inst * values.size)
        keys = np.flatnonzero(key_counts)
        key_counts = key_counts[keys]
    else:
        keys, key_counts = np.unique(keys, return_counts=True)
    key_inst = keys // values.size
    best = np.zeros(n_inst, dtype=np.int64)
    np.maximum.at(best, key_inst, key_counts)
    is_best = key_counts == best[key_inst]
    n_best = np.bincount(key_inst[is_best], minlength=n_inst)
    winner = is_best & (n_best[key_inst] == 1)
    out[key_inst[winner]] = values[keys[winner] % values.size]
    return out, n_best > 1


def _counts_of_keys(keys: np.ndarray, n_keys: int) -> np.ndarray:
    """For each key (an integer below n_keys), how often it occurs in keys."""
    if n_keys <= 4 * keys.size + 1_000_000:
        return np.bincount(keys, minlength=n_keys)[keys]
    _, key_of, key_counts = np.unique(keys, return_inverse=True, return_counts=True)
    return key_counts[key_of.reshape(-1)]


def _pair_counts(inst: np.ndarray, label: np.ndarray, n_inst: int) -> np.ndarray:
    """For each rating, how many ratings of its instance carry its label (itself included)."""
    values, codes = distinct_codes(label)
    return _counts_of_keys(inst * values.size + codes, n_inst * values.size)


def _long(
    side: str, raters: npt.ArrayLike | None, instances: npt.ArrayLike, labels: npt.ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Checked parallel arrays with NaN labels (missing) dropped."""
    inst = np.asarray(instances)
    lab = np.asarray(labels, dtype=float)
    rat = np.asarray(raters) if raters is not None else np.zeros(inst.shape, dtype=np.int64)
    if lab.ndim != 1 or inst.shape != lab.shape or rat.shape != lab.shape:
        raise ValueError(f"{side} ratings: raters, instances and labels must be 1-D arrays of one length")
    if np.isinf(lab).any():
        raise ValueError(f"{side} ratings contain infinite labels; use NaN for missing labels")
    present = ~np.isnan(lab)
    if present.all():
        return rat, inst, lab
    return rat[present], inst[present], lab[present]


def _instances(n: int) -> str:
    # What the notes count: the judge's rating of an item x question (the paper's "instance"; docs/analysis.md,
    # "Words": pages say rating).
    return f"{n} judge rating" if n == 1 else f"{n} judge ratings"


def _numbers(values: Iterable[object], where: str) -> list[float]:
    out = []
    for value in values:
        # float("3") would accept a string; a string label is a nominal label that needs a code.
        if not isinstance(value, int | float | np.number) or isinstance(value, bool):
            raise ValueError(f"{where}: label {value!r} is not a number (give nominal labels as numeric codes)")
        out.append(float(value))
    return out


def _undefined(
    scoring: Scoring,
    epsilon: float,
    q_fdr: float,
    n_instances: int,
    humans: tuple[AltTestHuman, ...],
    notes: list[str],
) -> AltTestResult:
    return AltTestResult(scoring, epsilon, q_fdr, n_instances, None, None, None, humans, tuple(notes))
