"""Scripts that run in a trainer's own interpreter, launched by path.

``demo_train.py`` (the CPU demo trainer), ``unsloth_driver.py`` (Unsloth + TRL training),
``llm_generate.py`` (LLM samples after a run) and ``parser_check.py`` (a command checked by
the trainer's own argparse parser) run in a python that has the trainer's packages but not
Bracket, so they import nothing from ``bracket`` (tests/trainer/test_scripts_standalone.py
checks it). Bracket launches them as ``<trainer python> <path of the script> ...``; the
LLM scripts are first copied into the run folder (``<run_dir>/scripts/``).
"""
