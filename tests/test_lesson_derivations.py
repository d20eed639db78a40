"""Every registered rule, of every mode, is derived in a lesson.

A lesson marks a derivation with a markdown line naming the Functions (by their
registered names) whose rules it derives, one line per table:

    Derives: Sin, Cos                 (backward rules)
    Derives (forward): Sin, Cos       (forward rules)
    Derives (Taylor): Sin, Cos        (Taylor rules)
    Derives (transpose): Reshape      (transpose rules)

A rule added to a table without a derivation makes this test fail, as does a
name that is registered nowhere (a typo would otherwise count as a derivation).
"""

import re
from pathlib import Path

import nbformat
import pytest

import minigrad  # noqa: F401  (registers every rule)
from minigrad.core import rules

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
LINE = re.compile(r"^Derives(?: \((forward|Taylor|transpose)\))?: (.+)$")
KINDS = {None: "backward", "forward": "forward", "Taylor": "Taylor", "transpose": "transpose"}


def derivations():
    """{table kind: {Function name: [notebook, ...]}} from the lessons' markdown."""
    found = {kind: {} for kind in KINDS.values()}
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "markdown":
                continue
            for line in cell.source.splitlines():
                match = LINE.match(line.strip())
                if match:
                    for name in match.group(2).split(","):
                        found[KINDS[match.group(1)]].setdefault(name.strip(), []).append(path.name)
    return found


def library_rules(table):
    """The rules minigrad registers itself: not a namesake's (``__main__.Sin``), nor the rule of a Function
    that another test module defines and registers in the same process (``BadSquare``)."""
    return [key for key in table.registered()
            if "." not in key and getattr(table.rules[key], "__module__", "").startswith("minigrad.")]


@pytest.mark.parametrize("table", rules.tables, ids=lambda t: t.kind)
def test_every_registered_rule_is_derived_in_a_lesson(table):
    derived = derivations()[table.kind]
    missing = [name for name in library_rules(table) if name not in derived]
    assert not missing, (
        f"{len(missing)} {table.kind} rules are derived in no lesson: {', '.join(missing)}. Derive each in a "
        f"notebook (math, the rule's source, a numerical check) under a markdown line "
        f"'Derives{'' if table.kind == 'backward' else f' ({table.kind})'}: Name'"
    )


@pytest.mark.parametrize("table", rules.tables, ids=lambda t: t.kind)
def test_every_derives_line_names_a_registered_rule(table):
    unknown = {name: where for name, where in derivations()[table.kind].items()
               if name not in table.registered()}
    assert not unknown, f"Derives lines name {table.kind} rules that are not registered: {unknown}"


def test_the_four_tables_are_walked():
    assert sorted(t.kind for t in rules.tables) == ["Taylor", "backward", "forward", "transpose"]
