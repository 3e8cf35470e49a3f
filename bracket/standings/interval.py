"""The headline's ± (``bracket.standings.headline``): the 95 % half-width of a config's relative
loss difference from another config (the stage's baseline, or the config it is compared with).

* **Measured**: the relative spread ``s`` of one run's loss over its seeds, pooled over the
  stage's configs that ran two seeds or more (:func:`pooled_spread`, each config's values less one:
  ``df = Σ (seeds − 1)`` degrees of freedom), times Student's ``t(0.975, df)`` — 12.7 for one
  degree of freedom, 4.30 for two, 3.18 for three — times ``√(1/n_a + 1/n_b)``.
* **Never narrower than the floor**: the loss judge's noise floor ``f`` (:data:`NOISE_FLOOR`: 1 %
  of a validation or eval loss, 5 % of the training loss; docs/JUDGES.md), a spread taken as
  known, so its quantile is the normal one: ``1.96 · f · √(…)``.
* **One seed each**: where no config of the stage ran two seeds nothing was measured and the ± is
  the floor's alone; every place that shows it says so in the same words (:data:`FLOOR_LABEL` in
  the headline, :data:`FLOOR_ONLY` in the verdict and the stage's note).

A difference inside the ± reads as a tie.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Iterable, Sequence
from typing import NamedTuple

#: the two-sided level of the ±
CONFIDENCE = 0.95
#: the relative spread of one run's loss the loss judges call noise, per loss figure (docs/JUDGES.md)
NOISE_FLOOR = {"val loss": 0.01, "eval loss": 0.01, "loss": 0.05}
#: the label of a ± that is the noise floor alone because no config of the stage ran two seeds
FLOOR_LABEL = "noise floor: one seed each"
#: what the verdict and the stage's note say of such a stage (the label's words)
FLOOR_ONLY = ("one seed each: no seed spread was measured, so each ± is the loss judge's noise floor; "
              "rerun the top configs with more seeds to measure it")
#: the normal quantile at :data:`CONFIDENCE` (1.96): the floor is a spread taken as known, not estimated
Z_QUANTILE = statistics.NormalDist().inv_cdf(0.5 + CONFIDENCE / 2)


class SeedNoise(NamedTuple):
    """A loss figure's relative spread of one run over seeds, pooled over a stage's configs."""

    #: the pooled relative standard deviation
    spread: float
    #: its degrees of freedom: Σ (seeds − 1) over the configs pooled
    freedom: int


def pooled_spread(groups: Iterable[Sequence[float]]) -> SeedNoise | None:
    """The relative spread of one value about its group's mean, pooled over the ``groups`` (each a
    config's values over its seeds) with two finite values or more; None where none has."""
    squares, freedom = 0.0, 0
    for group in groups:
        values = [v for v in group if math.isfinite(v)]
        if len(values) < 2 or statistics.fmean(values) == 0:
            continue
        mean = statistics.fmean(values)
        squares += sum(((v - mean) / mean) ** 2 for v in values)
        freedom += len(values) - 1
    return SeedNoise(math.sqrt(squares / freedom), freedom) if freedom else None


class PairReading(NamedTuple):
    """Two configs read by the headline's rule (``headline.pair_reading``), for the verdict."""

    #: the difference lies inside the ±
    tie: bool
    #: the first config's loss is the lower
    lower: bool
    #: the loss's words ("validation loss")
    words: str
    #: ``6.3 % apart, ± 10 %`` (the ±'s number as the headline writes it)
    apart: str
    #: what a tie lies inside: "seed noise", or "the noise floor" where nothing was measured
    noise: str
    #: what the verdict adds of the ±'s basis: :data:`FLOOR_ONLY`, or ""
    caveat: str


@functools.lru_cache(maxsize=256)
def t_quantile(freedom: int) -> float:
    """Student's t at the two-sided :data:`CONFIDENCE` for ``freedom`` degrees of freedom."""
    from scipy import stats as scipy_stats  # here: importing it costs ~2 s, a stage without seeds needs none

    return float(scipy_stats.t.ppf(0.5 + CONFIDENCE / 2, freedom))


def margin(figure: str, noise: SeedNoise | None, n: int, n_reference: int) -> tuple[float, bool]:
    """The ± of a relative difference between the means of ``n`` and ``n_reference`` runs of the loss
    ``figure`` with the stage's pooled seed ``noise`` (None: nothing measured), by the module's rule;
    and whether the measured spread decided it (False: the floor)."""
    scale = math.sqrt(1.0 / n + 1.0 / n_reference)
    floor = Z_QUANTILE * NOISE_FLOOR[figure] * scale
    if noise is None or noise.freedom < 1:
        return floor, False
    measured = t_quantile(noise.freedom) * noise.spread * scale
    return max(measured, floor), measured > floor
