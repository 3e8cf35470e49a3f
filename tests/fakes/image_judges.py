"""Image judges' records planted into a finished session's runs, in the shape the image judges
write (``judges["image"]``, ``bracket.session.scoring.image_judges``), with a known front.

The session's finished search runs, in id order, get likeness 0.9, 0.7, 0.5, 0.3 (and on, 0.2
lower each) and prompt-following 0.2, 0.6, 0.4, 0.8 (repeating) at every sampled step: the front is
the configs of runs 1, 2 and 4; run 3's config is beaten by run 2's on both. Each sample image
gets its run's likeness plus 0.01 × its prompt index (the per-image record).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

FLEXIBILITY = (0.2, 0.6, 0.4, 0.8)


@dataclass
class Planted:
    #: config names on the planted front, and those beaten on both axes
    front: list[str]
    beaten: list[str]
    #: run ids, best likeness first
    order: list[int]
    likeness: dict[int, float]
    flexibility: dict[int, float]
    #: run id -> likeness of its first prompt's image
    image_likeness: dict[int, float]


def record(run: dict[str, Any], likeness: float, flexibility: float) -> dict[str, Any]:
    steps = sorted({s["step"] for s in run.get("samples") or [] if s.get("step") is not None}) or [run["max_steps"]]
    images = {}
    for sample in run.get("samples") or []:
        path = Path(sample["path"])
        try:
            key = path.resolve().relative_to(Path(run["run_dir"]).resolve()).as_posix()
        except ValueError:
            key = path.as_posix()
        images[key] = {"likeness": likeness + 0.01 * int(sample.get("prompt_index") or 0),
                       "prompt_following": flexibility, "image_quality": 5.0, "step": sample.get("step"),
                       "prompt_kind": "in"}
    return {"steps": {str(s): {"likeness": likeness, "prompt_following": flexibility, "image_quality": 5.0,
                               "n_images": 2} for s in steps},
            "images": images, "scales": {"likeness": "cosine", "prompt_following": "cosine"}}


def plant_image_judges(session: Any) -> Planted:
    """Write the planted records into ``session``'s finished search runs (see the module)."""
    runs = sorted((r for r in session.store.runs(session.name, with_series=False)
                   if r["status"] == "done" and r.get("stage") == "search" and r.get("kind") != "setup"),
                  key=lambda r: r["id"])
    likeness, flexibility, first = {}, {}, {}
    for index, run in enumerate(runs):
        likeness[run["id"]] = round(0.9 - 0.2 * index, 3)
        flexibility[run["id"]] = FLEXIBILITY[index % len(FLEXIBILITY)]
        first[run["id"]] = likeness[run["id"]]  # prompt 0
        judges = {**(run.get("judges") or {}), "image": record(run, likeness[run["id"]], flexibility[run["id"]])}
        session.store.update_run(run["id"], judges=judges)
    names = {r["id"]: r["config_name"] if "config_name" in r else None for r in runs}
    configs = {c["id"]: c["name"] for c in session.store.configs(session.name)}
    name = {r["id"]: names[r["id"]] or configs[r["config_id"]] for r in runs}
    ids = [r["id"] for r in runs]
    return Planted([name[i] for i in ids[:2]] + [name[ids[3]]], [name[ids[2]]], ids, likeness, flexibility, first)


def judged_manager(tmp_path: Path, runs_dir: Path, budget: int = 4) -> tuple[Any, Planted]:
    """A ``SessionManager`` whose open session ``j1`` (demo preset, fake trainer, ``budget`` configs of
    one seed, samples at steps 10 and 20) has finished, with the planted records in its runs."""
    from bracket.app.manager import SessionManager
    from bracket.dataset.demo_data import make_demo_dataset
    from bracket.session import SearchSettings
    from tests.fakes import FAKE_TRAINER, make_fake_python

    toml = make_demo_dataset(tmp_path / "data", count=6)
    fields = {"dataset": str(toml), "trainer_python": str(make_fake_python(tmp_path / "bin")),
              "train_script": str(FAKE_TRAINER)}
    manager = SessionManager(runs_dir, snapshot_ttl=0.0, allow_custom_executables=True)
    session = manager.start_new("demo-cpu", fields, SearchSettings(budget=budget, steps=20, sample_every_n_steps=10,
                                                                    warm_start=False), name="j1")
    assert session.wait(120)
    planted = plant_image_judges(session)
    manager.forget(changed=True)
    return manager, planted
