"""The status of a public-eval comparison, its reasons, warnings and methodology text.

Status, decided here and only here, in order of precedence:

* ``not_evaluable``: fewer than :data:`MIN_EVALUABLE_TASKS` distinct instances, or an
  arm resolved nothing;
* ``quality_loss``: the upper bound of the gate interval of the resolve-rate delta is
  below ``-margin`` (the interval shows a loss beyond the margin);
* ``not_non_inferior``: the lower bound is below ``-margin`` (non-inferiority not shown;
  this is not evidence of a loss);
* ``false_stop_risk``: the share of reviewed stops judged false exceeds
  ``--max-false-stop-rate``;
* ``no_savings``: the gate bound (``gate_lower_bound``: the lower end of the symmetric
  studentized interval at the two-sided level ``1 - alpha / 2``) of the (net, where
  overhead is recorded) token-savings
  interval is not above ``--min-savings-percent``, or it is undefined;
* ``supported``: non-inferior, within the false-stop limit and saving tokens.
"""

from __future__ import annotations

import numpy as np

from ctxbench.protocols.public_eval.model import STATUSES, Methodology, Saving, Status
from ctxbench.protocols.public_eval.model_parts import FalseStops, Quality
from ctxbench.protocols.public_eval.pairing import Arm, PairedCells
from ctxbench.protocols.public_eval.quality import LISTED_CELLS
from ctxbench.protocols.public_eval.rows import METRIC_FIELDS
from ctxbench.protocols.public_eval.settings import RANDOM_STREAM, Settings
from ctxbench.stats.bootstrap import distinct_resamples
from ctxbench.stats.proportions import wilson_interval

__all__ = [
    "MIN_EVALUABLE_TASKS",
    "MIN_RELIABLE_TASKS",
    "PREREGISTRATION_NOTE",
    "STATUSES",
    "false_stop_section",
    "methodology",
    "metric_warnings",
    "sample_warnings",
    "status_and_reasons",
]

MIN_EVALUABLE_TASKS = 10
MIN_RELIABLE_TASKS = 30
_DISTINCT_LIMIT = 64
PREREGISTRATION_NOTE = (
    "Preregister the quality non-inferiority margin before inspecting the final result. "
    "Freeze the model version, agent code, prompt, temperature, tools, limits and task "
    "order; do not drop failed, timed-out, prematurely stopped or expensive tasks; count "
    "premature stops as unresolved."
)


def _level(settings: Settings) -> str:
    return f"{settings.confidence_level * 100:g}%"


def false_stop_section(treatment: Arm, settings: Settings) -> FalseStops | None:
    """False stops among the treatment's reviewed stops, with a Wilson interval on the rate.

    Rows without ``reviewed_stops`` did not review; the rate is over the rows that did.
    None when no row reviewed a stop. ``exceeds_max`` compares the unrounded rate.
    """
    reviewed_col = treatment.metrics["reviewed_stops"]
    false_col = treatment.metrics["false_stops"]
    rows = ~np.isnan(reviewed_col)
    reviewed = sum(int(v) for v in reviewed_col[rows].tolist())
    false = sum(int(v) for v in np.nan_to_num(false_col[rows]).tolist())
    if reviewed == 0:
        return None
    ci = wilson_interval(false, reviewed, level=settings.confidence_level)
    return FalseStops(
        reviewed_stops=reviewed, false_stops=false, rate=float(ci.estimate),
        ci=(float(ci.low), float(ci.high)),
        ci_method="wilson (stops treated as independent reviews)",
        max_rate=float(settings.max_false_stop_rate),
        exceeds_max=bool(ci.estimate > settings.max_false_stop_rate))


def _quality_text(quality: Quality, level: str) -> str:
    margin = quality.margin_pp
    low, high = quality.gate_ci_pp
    if quality.shows_loss:
        return (f"quality loss shown: the {level} upper bound of the resolve-rate delta "
                f"({high:.2f} pp) is below -{margin:g} pp")
    if quality.non_inferior:
        return (f"non-inferior: the {level} lower bound of the resolve-rate delta "
                f"({low:.2f} pp) is at least -{margin:g} pp")
    text = (f"not shown non-inferior: the {level} lower bound of the resolve-rate delta "
            f"({low:.2f} pp) is below -{margin:g} pp")
    if quality.not_gating.point_estimate_within_margin:
        text += (f"; the point estimate ({quality.resolved_delta_pp:.1f} pp) is within "
                 "the margin, which the older point-estimate criterion would have accepted")
    outcome = quality.outcome
    if outcome is not None and outcome.kind == "inconclusive":
        text += (f"; inconclusive: this study supports a margin of "
                 f"{outcome.supported_margin_pp:.2f} pp")
        if outcome.instances_needed is None:
            text += (f"; the estimate is itself beyond -{margin:g} pp, so more instances "
                     "are not expected to show it")
        else:
            text += (f"; about {outcome.instances_needed} instances for -{margin:g} pp at "
                     f"{outcome.power * 100:g}% power if the truth were the estimate")
    return text


def _savings_text(token_savings: Saving | None, settings: Settings) -> tuple[bool, str]:
    floor = settings.min_savings_percent
    net = token_savings is not None and token_savings.basis == "net"
    noun = "net token savings (agent + governance_tokens)" if net else "token savings"
    if token_savings is None:
        return False, ("token savings are unknown: an overhead or token total is not "
                       "recorded in every row")
    token_low = token_savings.gate_lower_bound
    if token_low is None:
        return False, (f"{noun} have no interval (a zero total, or every instance with the "
                       "same ratio: no spread to resample)")
    shown = f"{token_low:.1f}%"
    gate_level = f"{(1.0 - (1.0 - settings.confidence_level) / 2.0) * 100:g}%"
    gate = (f"the one-sided {gate_level} gate bound ({shown}, the lower end of the symmetric "
            f"{gate_level} interval)")
    if token_low > floor:
        return True, f"{noun}: {gate} is above {floor:g}%"
    return False, f"no {noun} shown: {gate} is not above {floor:g}%"

def status_and_reasons(*, tasks: int, resolved: tuple[int, int], quality: Quality,
                       token_savings: Saving | None, false_stops: FalseStops | None,
                       settings: Settings) -> tuple[Status, list[str]]:
    """The status and every reason behind it (failing checks first, then passing ones).

    The one place a status is decided. Every comparison uses the unrounded values the
    analysis computed (the token gate bound ``token_savings.gate_lower_bound``, the
    quality flags, ``exceeds_max``); the report model only carries the result.
    """
    blockers: list[str] = []
    if tasks < MIN_EVALUABLE_TASKS:
        blockers.append(f"only {tasks} distinct instance(s); at least {MIN_EVALUABLE_TASKS} "
                        "are needed")
    for name, count in zip((settings.baseline_name, settings.treatment_name), resolved,
                           strict=True):
        if count == 0:
            blockers.append(f"{name} resolved no task")
    level = _level(settings)
    quality_text = _quality_text(quality, level)
    saves, savings_text = _savings_text(token_savings, settings)
    stop_texts: list[str] = []
    if false_stops is not None:
        stop_texts.append(
            f"false stops: {false_stops.false_stops} of {false_stops.reviewed_stops} "
            f"reviewed stops ({100 * round(false_stops.rate, 6):.1f}%, {level} CI "
            f"{100 * round(false_stops.ci[0], 6):.1f}-{100 * round(false_stops.ci[1], 6):.1f}%)"
            f" {'exceed' if false_stops.exceeds_max else 'are within'} the maximum rate "
            f"{100 * false_stops.max_rate:g}%")
    risky = false_stops is not None and false_stops.exceeds_max
    if blockers:
        return "not_evaluable", [*blockers, quality_text, *stop_texts, savings_text]
    if quality.shows_loss:
        return "quality_loss", [quality_text, *stop_texts, savings_text]
    if not quality.non_inferior:
        return "not_non_inferior", [quality_text, *stop_texts, savings_text]
    if risky:
        return "false_stop_risk", [*stop_texts, quality_text, savings_text]
    if not saves:
        return "no_savings", [savings_text, quality_text, *stop_texts]
    return "supported", [quality_text, *stop_texts, savings_text]


def sample_warnings(tasks: int, settings: Settings, single_runs: bool) -> list[str]:
    """Warnings about sample size, the resample space and repeated runs."""
    out = []
    if tasks < MIN_RELIABLE_TASKS:
        out.append(f"only {tasks} distinct instance(s), fewer than {MIN_RELIABLE_TASKS}: "
                   "the interval is unreliable")
    # C(2n-1, n) passes 10**12 at n = 22; computing it for large n would only cost time.
    distinct = distinct_resamples(tasks) if tasks <= _DISTINCT_LIMIT else None
    if distinct is not None and distinct < settings.bootstrap_samples:
        out.append(f"only {distinct} distinct resamples of {tasks} instance(s) exist; the "
                   f"{settings.bootstrap_samples} bootstrap resamples repeat them")
    if not single_runs:
        out.append("repeated runs: mcnemar_p treats each (instance, run) cell as an "
                   "independent pair; the quality gate divides the counts by the design "
                   "effect of the instance clustering, and the bootstrap intervals "
                   "resample instances with all their runs")
    return out


def metric_warnings(cells: PairedCells, settings: Settings) -> list[str]:
    """Name every metric that is measured in some rows but not all (its totals are null)."""
    out = []
    arms = ((settings.baseline_name, cells.baseline), (settings.treatment_name, cells.treatment))
    for name in METRIC_FIELDS:
        missing = [(label, int(np.isnan(arm.metrics[name]).sum())) for label, arm in arms]
        lacking = [f"{label}: {count} of {cells.cells} rows" for label, count in missing
                   if count]
        if not lacking:
            continue
        everywhere = all(count == cells.cells for _, count in missing)
        if name == "usd":
            flagged = [f"{label}: {arm.usd_unmeasured} row(s) say usd_measured false"
                       for label, arm in arms if arm.usd_unmeasured]
            out.append(f"usd is not measured ({'; '.join(lacking + flagged)}): USD totals, "
                       "savings and USD per resolved task are unknown (null), not 0")
        elif everywhere:
            if name in ("latency_ms", "tool_calls"):
                out.append(f"{name} is not measured in any row: its totals and savings "
                           "are null")
        else:
            out.append(f"{name} is not measured in every row ({'; '.join(lacking)}): its totals "
                       "are null, never counted as 0")
    return out


def methodology(settings: Settings, single_runs: bool,
                basis: dict[str, str]) -> Methodology:
    """How every number of the report was obtained, and how to reproduce it."""
    net = [m for m, b in basis.items() if b == "net"]
    return Methodology(
        confidence_level=settings.confidence_level,
        bootstrap_resamples=settings.bootstrap_samples,
        seed=settings.seed,
        random_stream=RANDOM_STREAM,
        clustering="instance: each resample draws instances with replacement and keeps "
                   "all runs of an instance together; every statistic is computed from "
                   "the same resample (paired)",
        margin_pp=float(settings.quality_margin_pp),
        min_savings_percent=float(settings.min_savings_percent),
        max_false_stop_rate=float(settings.max_false_stop_rate),
        min_instances=MIN_EVALUABLE_TASKS,
        non_inferiority_gate=(
            "score interval of the matched-pair resolve-rate delta (Tango 1998 variance)"
            if single_runs else
            "score interval of the resolve-rate delta over instance clusters") + " on the "
            "bounded scale: empty cells at the scale's ends, the total moved half the "
            "largest step of one instance toward zero, Student-t critical value on "
            "instances - 1 degrees of freedom; non-inferior when its lower bound >= "
            "-margin_pp; a loss is "
            "shown when its upper bound < -margin_pp; bounds compared unrounded",
        savings_interval="symmetric studentized bootstrap (bootstrap-t) of log(treatment "
                         "total / baseline total) with the delta-method standard error per "
                         "resample (Efron & Tibshirani 1993, 12.5; Hall 1988); no interval "
                         "(and no pass) when every instance has the same ratio",
        savings_gate="gate_lower_bound of the headline token savings > min_savings_percent: "
                     "the lower end of the same symmetric interval at the two-sided level "
                     "1 - (1 - confidence_level) / 2, so the one-sided error is at most "
                     "(1 - confidence_level) / 2 however the misses split between the "
                     "tails (they do not split evenly for skewed token counts)",
        not_gating="percentile bootstrap intervals (savings, per resolved task, the "
                   "resolve-rate delta) and Newcombe's (1998) hybrid score interval are "
                   "reported for comparison only",
        net_savings=("headline savings of " + ", ".join(net) + " are net: agent total + "
                     "the rows' governance overhead (an arm whose rows carry no overhead "
                     "field is charged none); gross (agent-only) savings are reported "
                     "beside them as gross_*") if net else
                    "no row records governance overhead: savings are agent totals",
        false_stop_gate="false_stops / reviewed_stops over the treatment rows that "
                        "reviewed stops, Wilson interval reported; false_stop_risk when "
                        "the rate exceeds max_false_stop_rate",
        resolve_rate_interval="Wilson (1927) score interval over cells",
        mcnemar="exact two-sided binomial test of regressions vs recoveries",
        listed_cells=f"quality.regressed_cells and quality.recovered_cells list the first "
                     f"{LISTED_CELLS} cells of each in (instance_id, run) order (ids in "
                     "code-point order); total counts them all",
        savings="percent saved = 100 * (1 - treatment total / baseline total)",
        totals="integer totals are exact (Python integers); counts above 2**53 - 1 are "
               "rejected when read",
        missing_metrics="a metric's totals and savings are reported only when every row "
                        "of both arms measured it; otherwise null, never 0",
        preregistration=PREREGISTRATION_NOTE,
    )
