"""Timestep knobs shared by the newer sd-scripts flow-matching families (Lumina, Anima, HunyuanImage).

Their scripts take ``--timestep_sampling`` and ``--discrete_flow_shift`` as FLUX.1 does, but
each has its own recommended sampler and shift. :func:`flow_knobs` searches the sampler and,
for ``shift`` only, the shift (the other samplers ignore it in training); :func:`flow_args`
always passes ``--discrete_flow_shift`` — the family's documented value when the sampler is not
``shift`` — because the scripts' sample scheduler reads it too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bracket.search.space import CategoricalKnob, FixedKnob, FloatKnob, Knob


def flow_knobs(samplings: tuple[str, ...], shift_range: tuple[float, float]) -> dict[str, Knob]:
    """``timestep_sampling`` (searched) and ``discrete_flow_shift`` (searched for ``shift``)."""
    knobs: dict[str, Knob] = {
        "timestep_sampling": CategoricalKnob(samplings) if len(samplings) > 1 else FixedKnob(samplings[0]),
    }
    if "shift" in samplings:
        knobs["discrete_flow_shift"] = FloatKnob(*shift_range, when={"timestep_sampling": ("shift",)})
    return knobs


def flow_args(knobs: Mapping[str, Any], default_shift: float) -> list[str]:
    """``--timestep_sampling`` and ``--discrete_flow_shift`` (the searched one for ``shift``)."""
    sampling = str(knobs["timestep_sampling"])
    shift = knobs.get("discrete_flow_shift") if sampling == "shift" else None
    return ["--timestep_sampling", sampling,
            "--discrete_flow_shift", repr(float(default_shift if shift is None else shift))]


def flow(sampling: str, shift: float | None = None) -> dict[str, Any]:
    """The timestep part of a named config."""
    return {"timestep_sampling": sampling, **({"discrete_flow_shift": shift} if shift is not None else {})}
