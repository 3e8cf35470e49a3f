"""The Setup form by name: its components under the names of the values they hold.

Start reads the form through Gradio's ``inputs_kwargs`` (each component's value arrives as the
keyword argument of its name: ``ui.setup_tab.start_search``), and Open, Resume, Clone and a page
load fill it from a dict of values by name, handed to Gradio as ``{component: value}`` (a name
not returned leaves its component as it is). Nothing depends on the order of the components,
so a box added to the form cannot shift another's value into the wrong argument.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import gradio as gr


class SetupForm:
    """The Setup tab's components by name (``form["budget"]``)."""

    def __init__(self, **components: Any) -> None:
        self.components = components

    def __getitem__(self, name: str) -> Any:
        return self.components[name]

    def kwargs(self, names: Iterable[str]) -> dict[str, Any]:
        """``{name: component}`` for a listener's ``inputs_kwargs``."""
        return {name: self.components[name] for name in names}

    def outputs(self, names: Iterable[str]) -> list[Any]:
        """The components of ``names``, for a listener whose function returns :meth:`updates`."""
        return [self.components[name] for name in names]

    def updates(self, values: Mapping[str, Any]) -> Any:
        """``values`` by name as Gradio's ``{component: value}``; ``gr.skip()`` when there are none
        (every output stays as it is). A name the form does not have is a bug: ``KeyError``."""
        unknown = sorted(set(values) - set(self.components))
        if unknown:
            raise KeyError(f"the Setup form has no {', '.join(unknown)}")
        return {self.components[name]: value for name, value in values.items()} or gr.skip()

    def filler(self, function: Callable[..., Mapping[str, Any]]) -> Callable[..., Any]:
        """``function`` (returning values by name) as a listener function returning :meth:`updates`."""

        @functools.wraps(function)
        def fill(*args: Any, **kwargs: Any) -> Any:
            return self.updates(function(*args, **kwargs))

        return fill
