"""The search loop and what it decides with: ``search_loop`` (claiming, reserving, recovery,
waiting, the confirmation round — asking a scheduler of ``bracket.session.scheduling`` what to
train next), its read model (``search_view``, built by ``search_reading``), the ``budget``, the
``plan`` it shows and ``trainer_facts`` (what the plan's cost depends on in the trainer), the
proposals (``proposing``), the confirmation round (``confirm``) and the rungs' scores and steps
(``rung_scores``, ``rung_steps``)."""
