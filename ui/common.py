"""Small things every tab shares: private listeners and turning person-caused errors into gr.Error."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import gradio as gr

from bracket.errors import BracketError

#: keyword arguments for every listener that is not a public API endpoint
PRIVATE: dict[str, Any] = {"api_visibility": "private"}
#: … and for the ones polled by a timer (no spinner flicker)
QUIET: dict[str, Any] = {"api_visibility": "private", "show_progress": "hidden"}

F = TypeVar("F", bound=Callable[..., Any])


def user_errors(function: F) -> F:
    """Show a ``BracketError`` as a ``gr.Error`` (its message says what to do); nothing else happens."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except BracketError as error:
            raise gr.Error(str(error), print_exception=False) from None

    return wrapper  # type: ignore[return-value]


def inline_errors(outputs: int, at: int = 0) -> Callable[[F], F]:
    """Show a ``BracketError`` as a ``⚠`` line in the handler's own message output (position
    ``at`` of its ``outputs`` outputs), leaving every other output as it was.

    Gradio's ``gr.Error`` marks every output component of the failed event with an error badge
    that covers it and blocks clicks; an inline line stays where the action happened."""

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return function(*args, **kwargs)
            except BracketError as error:
                result = [gr.skip()] * outputs
                result[at] = f"⚠ {error}"
                return result[0] if outputs == 1 else tuple(result)

        return wrapper  # type: ignore[return-value]

    return decorate
