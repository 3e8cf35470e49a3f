"""The two private names of Optuna that Bracket needs, in one place (pinned by a test to the
installed Optuna version, tests/contract/test_optuna_private.py).

Optuna offers no public way to key per-trial state by the storage's trial id, nor to write a
finished trial's user attribute or state back through its study; both are needed (the
controller's per-trial plans, the verdict study's notes). When Optuna changes either, only
this module and its test change.
"""

from __future__ import annotations

from typing import Any

#: the Optuna versions these names were checked against (the test fails on another one)
CHECKED_VERSIONS = ("4.", "5.")


def trial_id(trial: Any) -> int:
    """The storage's id of ``trial`` (a ``Trial`` or ``FrozenTrial``): unique across studies."""
    return trial._trial_id  # noqa: SLF001 (the one read of Optuna's private trial id, pinned by a test)


def study_storage(study: Any) -> Any:
    """The storage object behind ``study`` (its ``set_trial_user_attr`` / ``set_trial_state_values``)."""
    return study._storage  # noqa: SLF001 (the one read of Optuna's private storage, pinned by a test)
