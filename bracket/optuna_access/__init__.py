"""How Bracket reaches Optuna: ``quiet`` imports it (lazily, its INFO lines off) wherever a study
is made or loaded; ``private`` holds the only reads of Optuna's private names, pinned to the
installed version by a test. Both sit below everything else in ``bracket``."""
