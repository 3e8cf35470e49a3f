"""``weights`` and ``pick``: what a person decides about a session's answer after it ran
(``bracket.app.answer_choice``, the same as the Results tab's one-click weight and its answer list)."""

from __future__ import annotations

import argparse

from bracket.cli.opening import open_session
from bracket.errors import BracketError


def cmd_weights(args: argparse.Namespace) -> int:
    """``weights PATH loss=1,vlm=0``: the session's judge weights from now on (``bracket.app.answer_choice``)."""
    from bracket.app.answer_choice import set_weights

    session = open_session(args, "its judge weights cannot be changed", validate=False)
    try:
        weights = set_weights(session, args.weights)
    finally:
        session.close()
    print("weights: " + ", ".join(f"{name}={value:g}" for name, value in weights.items()))
    return 0


def cmd_pick(args: argparse.Namespace) -> int:
    """``pick PATH CONFIG``: a config on the front of fidelity against flexibility as the answer
    (``--winner``: the winner by combined score again)."""
    from bracket.app.answer_choice import set_pick

    if bool(args.config) == bool(args.winner):
        raise BracketError("pick: name one config on the front (python -m bracket pick PATH CONFIG), or give "
                           "--winner for the winner by combined score.")
    session = open_session(args, "no config can be picked as its answer", validate=False)
    try:
        print(set_pick(session, None if args.winner else args.config))
    finally:
        session.close()
    return 0
