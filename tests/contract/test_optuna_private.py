"""bracket.optuna_access.private: the only place Optuna's private names are read, checked against the
installed Optuna (a new major version fails here first, not deep in a session)."""

from __future__ import annotations

import optuna
from optuna.trial import TrialState

from bracket.optuna_access.private import CHECKED_VERSIONS, study_storage, trial_id


def test_the_installed_optuna_is_one_the_private_names_were_checked_against():
    assert optuna.__version__.startswith(CHECKED_VERSIONS), optuna.__version__


def test_trial_id_and_storage_address_the_same_trial_as_optuna_does():
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    first, second = optuna.create_study(), optuna.create_study(storage=None)
    for study in (first, second):
        trial = study.ask()
        storage = study_storage(study)
        storage.set_trial_user_attr(trial_id(trial), "note", "x")
        assert storage.set_trial_state_values(trial_id(trial), TrialState.FAIL)
        frozen = study.get_trials(deepcopy=False)[0]
        assert frozen.user_attrs == {"note": "x"} and frozen.state == TrialState.FAIL
        assert trial_id(frozen) == trial_id(trial)
