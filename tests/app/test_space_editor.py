"""The Setup tab's search-space table as the bounds editor (``bracket.app.space_editor``).

Edited cells become bounds through the CLI's one bounds parser: the same bounds as the
matching ``--lr-min``/``--lr-max``/``--batch-sizes``/``--bound`` flags, and the same words
when a cell is bad. A table whose cells say what the trainer searches anyway is no bound, and
the rows drawn from a narrowed space give those bounds back (a redraw changes nothing).
"""

from __future__ import annotations

import pytest

from bracket.app.forms import parse_bounds
from bracket.app.space_editor import TableError, edited_bounds, editor_rows, preset_editor_rows, table_bounds
from bracket.errors import BracketError
from bracket.search.space import CategoricalKnob, FixedKnob, FloatKnob, IntKnob, SearchSpace

SPACE = SearchSpace({
    "optimizer_type": CategoricalKnob(("AdamW", "Adam", "SGD")),
    "learning_rate": FloatKnob(1e-5, 3e-2, log=True),
    "lr_warmup_steps": IntKnob(0, 20, step=5),
    "network_dim": CategoricalKnob((8, 16, 32)),
    "batch_size": FixedKnob(16),
    "network_module": FixedKnob("networks.lora"),
})


def _rows(space: SearchSpace = SPACE, **edits: dict[str, str]) -> list[dict[str, str]]:
    rows = editor_rows(space, SPACE)
    for row in rows:
        row.update(edits.get(row["knob"], {}))
    return rows


def test_untouched_rows_are_no_bound_and_show_every_range():
    rows = _rows()
    assert edited_bounds(rows, SPACE) == {}
    table = {r["knob"]: r for r in rows}
    assert (table["learning_rate"]["min"], table["learning_rate"]["max"]) == ("1e-05", "0.03")
    assert table["optimizer_type"]["choices"] == "AdamW, Adam, SGD" and table["batch_size"]["lock"] == "16"
    assert table["batch_size"]["status"] == "fixed" and table["network_module"]["lock"] == "networks.lora"


@pytest.mark.parametrize(("edits", "flags"), [
    ({"learning_rate": {"max": "1e-3"}}, ("1e-05", "1e-3", "", {})),
    ({"learning_rate": {"lock": "2e-4"}}, ("2e-4", "2e-4", "", {})),
    ({"batch_size": {"choices": "4, 1"}}, (None, None, "4,1", {})),
    ({"batch_size": {"lock": "8"}}, (None, None, "8", {})),
    ({"optimizer_type": {"lock": "AdamW"}}, (None, None, "", {"optimizer_type": "AdamW"})),
    ({"optimizer_type": {"choices": "AdamW,SGD"}}, (None, None, "", {"optimizer_type": "AdamW,SGD"})),
    ({"lr_warmup_steps": {"min": "5", "max": ""}}, (None, None, "", {"lr_warmup_steps": "5:20"})),
    ({"network_dim": {"lock": "16"}}, (None, None, "", {"network_dim": "16"})),
])
def test_edited_cells_give_the_bounds_of_the_cli_flags(edits, flags):
    lr_min, lr_max, batch_sizes, knobs = flags
    assert edited_bounds(_rows(**edits), SPACE) == parse_bounds(lr_min, lr_max, batch_sizes, knobs)


@pytest.mark.parametrize(("edits", "message"), [
    ({"learning_rate": {"min": "1e-2", "max": "1e-5"}}, "LR min 0.01 is above LR max 1e-05 (reversed); swap them."),
    ({"learning_rate": {"min": "0"}}, "LR min must be a positive number"),
    ({"learning_rate": {"max": "lots"}}, "LR max must be a number such as 1e-4"),
    ({"batch_size": {"choices": "a,b"}}, "must be whole numbers separated by commas"),
    ({"lr_warmup_steps": {"max": "x"}}, "Bound lr_warmup_steps=0:x: write MIN:MAX with numbers."),
])
def test_a_bad_cell_says_what_the_cli_says(edits, message):
    with pytest.raises(BracketError) as error:
        edited_bounds(_rows(**edits), SPACE)
    assert message in str(error.value)
    cli = {"learning_rate": lambda e: parse_bounds(e.get("min", "1e-05"), e.get("max", "0.03")),
           "batch_size": lambda e: parse_bounds(batch_sizes=e["choices"]),
           "lr_warmup_steps": lambda e: parse_bounds(knobs={"lr_warmup_steps": f"0:{e['max']}"})}
    (knob, cells), = edits.items()
    with pytest.raises(BracketError) as cli_error:
        cli[knob](cells)
    assert str(cli_error.value) == str(error.value)


def test_a_cell_of_the_wrong_kind_says_which_cell_to_use():
    with pytest.raises(BracketError, match="optimizer_type has choices: keep some in its choices cell"):
        edited_bounds(_rows(optimizer_type={"max": "3"}), SPACE)
    with pytest.raises(BracketError, match="learning_rate is a range: narrow it with its min and max"):
        edited_bounds(_rows(learning_rate={"choices": "1e-4"}), SPACE)
    with pytest.raises(BracketError, match="batch_size is fixed: type one value in its lock cell"):
        edited_bounds(_rows(batch_size={"min": "1"}), SPACE)
    with pytest.raises(BracketError, match="no such knob"):
        edited_bounds([{"knob": "colour", "lock": "red"}], SPACE)


def test_rows_of_a_narrowed_space_give_its_bounds_back_and_a_cleared_lock_searches_again():
    bounds = parse_bounds("1e-4", "1e-3", "1,2", {"optimizer_type": "AdamW", "network_dim": "8,32"})
    rows = editor_rows(SPACE.narrow(bounds), SPACE)
    table = {r["knob"]: r for r in rows}
    assert table["optimizer_type"]["status"] == "locked" and table["optimizer_type"]["lock"] == "AdamW"
    assert table["network_dim"]["choices"] == "8, 32" and table["learning_rate"]["status"] == "narrowed"
    assert table["batch_size"]["choices"] == "1, 2" and table["batch_size"]["lock"] == ""
    assert SPACE.narrow(edited_bounds(rows, SPACE)) == SPACE.narrow(bounds)
    table["optimizer_type"]["lock"] = ""
    assert "optimizer_type" not in edited_bounds(rows, SPACE)


def test_a_preset_table_checks_a_bound_against_the_trainer_and_knows_the_warmup_cap():
    rows, space = preset_editor_rows("demo-cpu", {}, {}, steps=20, warmup_share=0.25)
    warmup = next(r for r in rows if r["knob"] == "lr_warmup_steps")
    assert (warmup["min"], warmup["max"], warmup["status"]) == ("0", "5", "searched")  # the cap is no bound
    assert table_bounds("demo-cpu", {}, rows, steps=20, warmup_share=0.25) == {}
    next(r for r in rows if r["knob"] == "optimizer_type")["lock"] = "Lion"
    with pytest.raises(BracketError, match="Lion is not among"):
        table_bounds("demo-cpu", {}, rows, steps=20, warmup_share=0.25)
    assert table_bounds("demo-cpu", {}, None) == {}


def test_every_bad_cell_is_named_each_in_the_cli_words():
    rows = _rows(learning_rate={"min": "0"}, lr_warmup_steps={"max": "x"}, batch_size={"choices": "a,b"},
                 optimizer_type={"max": "3"})
    with pytest.raises(TableError) as error:
        edited_bounds(rows, SPACE)
    assert len(error.value.problems) == 4 and "optimizer_type has choices" in error.value.problems[0]
    for flags in ({"lr_min": "0"}, {"knobs": {"lr_warmup_steps": "0:x"}}, {"batch_sizes": "a,b"}):
        with pytest.raises(BracketError) as cli:  # each bad cell's sentence is the CLI's error for it, word for word
            parse_bounds(**flags)
        assert str(cli.value) in error.value.problems


def test_a_negative_warmup_is_refused_as_the_cli_refuses_it():
    with pytest.raises(TableError) as error:
        edited_bounds(_rows(lr_warmup_steps={"min": "-5"}), SPACE)
    with pytest.raises(BracketError) as cli:
        parse_bounds(knobs={"lr_warmup_steps": "-5:20"})
    assert str(error.value) == str(cli.value) == (
        "Bound lr_warmup_steps=-5:20: lr_warmup_steps cannot be negative; write MIN:MAX of 0 or more.")


def test_a_preset_table_names_a_bad_value_and_every_bound_that_does_not_fit():
    rows, _ = preset_editor_rows("demo-cpu", {}, {}, steps=20, warmup_share=0.25)
    cells = {r["knob"]: r for r in rows}
    cells["optimizer_type"]["lock"], cells["lr_scheduler"]["choices"] = "Lion", "cosine, wavy"
    cells["learning_rate"]["min"] = "0"
    with pytest.raises(TableError) as error:
        table_bounds("demo-cpu", {}, rows, steps=20, warmup_share=0.25)
    problems = error.value.problems
    assert len(problems) == 3 and problems[0].startswith("LR min must be a positive number")
    assert any("Lion is not among" in p for p in problems) and any("wavy is not among" in p for p in problems)
