"""Grade one notebook: run it in a sandbox, judge what it hands out, turn the verdicts into points.

The reference run (once per assignment, trusted, unsandboxed) records every
test on the solution notebook: its records are the answers. The student's
run, in a sandbox, records the same tests stripped of their expected values
(hide.py), and verdict.judge compares the two here. A failed test of an
exercise that builds on a failed one (``checks.BUILDS_ON``) runs again with
the reference answers to those in place (reference.py). An exercise is worth
its points times the fraction of its tests that pass; nothing a notebook
does raises here: what goes wrong is a note.
"""

import inspect
from dataclasses import dataclass, field

from minigrad.grading import checks, testing
from minigrad.grading.assignment import which_assignment
from minigrad.grading.feedback import load_visible
from minigrad.grading.hide import strip_expected
from minigrad.grading.notebook import NotANotebook, read_cells
from minigrad.grading.reference import phrase
from minigrad.grading.run import run_worker
from minigrad.grading.verdict import NEEDS, NOT_WRITTEN, Outcome, cap, judge


@dataclass
class Settings:
    cell_timeout: float = 30  # seconds per cell
    test_time_limit: float = 30  # seconds per test
    output_limit: int = 1_000_000  # bytes of printed output counted for a note
    memory_limit: int = 4 * 2**30  # bytes a notebook's processes may hold (0: no limit)
    notebook_timeout: float = 120  # seconds for all the cells of a notebook (the tests have their own)
    sandbox: bool = True  # False only with --no-sandbox


@dataclass
class ExerciseResult:
    id: str
    title: str
    points: float
    score: float = 0.0
    tests: list = field(default_factory=list)  # dicts: name, hidden, passed, message, with_reference


@dataclass
class NotebookResult:
    path: str
    assignment: str = None
    exercises: list = field(default_factory=list)
    reasons: list = field(default_factory=list)
    zeroed: bool = False  # the score was set to 0 for a reason (not a notebook, no assignment)

    @property
    def score(self):
        return 0.0 if self.zeroed else sum(e.score for e in self.exercises)

    @property
    def max_score(self):
        return sum(e.points for e in self.exercises)


class ReferenceFailed(RuntimeError):
    """A solution notebook fails its own tests: no student can be graded against it."""


@dataclass
class Reference:
    """An assignment ready to grade against: its tests in order, their expected records, their sources."""
    assignment: object
    tests: list  # Test objects, in the order they run
    records: dict  # test key -> {"observations", "end"} on the expected side
    sources: list  # [(stripped source, module name)] for the sandbox


def load_tests(assignment):
    """Register (in this process) the visible tests and the assignment's hidden ones; [(source, name)]."""
    sources = [(inspect.getsource(module), module.__name__, False) for module in load_visible()]
    for e in assignment.exercises:
        if e.hidden_source:
            name = f"hidden tests of {e.id}"
            testing.load_source(e.hidden_source, name)
            sources.append((e.hidden_source, name, True))
    return sources


def reference(assignment, settings):
    """The assignment's Reference: its solution notebook run, with every test recorded (trusted, unsandboxed)."""
    sources = load_tests(assignment)
    tests = [t for e in assignment.exercises for t in testing.exercise_tests(e.id)]
    generous = Settings(max(60, settings.cell_timeout), max(60, settings.test_time_limit))  # (the instructor's code)
    request = _request(generous, assignment.cells, [(s, n) for s, n, _ in sources], tests, "expected")
    run = run_worker(request, sandboxed=False, memory=0, cells_timeout=max(600, settings.notebook_timeout))
    outcomes = [judge(t, run.tests.get(t.key), run.expected[t.key]) if t.key in run.expected else
                Outcome(t, False, "it did not run") for t in tests]
    broken = [f"{o.test.key}: {o.message[:300]}" for o in outcomes if not o.passed]
    if broken or run.cell_errors:
        raise ReferenceFailed(f"the solution notebook {assignment.path} fails its own tests or cells "
                              f"({'; '.join(broken[:3]) or run.cell_errors}): fix it before grading")
    stripped = [(strip_expected(s, hidden=h), n) for s, n, h in sources]
    return Reference(assignment, tests, {t.key: run.expected[t.key] for t in tests}, stripped)


def _request(settings, cells, sources, tests, side):
    return {"side": side, "cells": list(cells), "sources": sources, "tests": [t.key for t in tests],
            "cell_timeout": settings.cell_timeout, "test_time_limit": settings.test_time_limit}


def grade_notebook(path, references, settings=None, assignment=None):
    """The NotebookResult of the notebook at ``path``; never raises for the notebook's sake.

    ``references``: {assignment name: Reference}; ``assignment``: the name
    to grade it as (else its file name says which).
    """
    settings = settings or Settings()
    result = NotebookResult(str(path))
    name = assignment or which_assignment(path, references)
    if name is None:
        return _zero(result, "cannot tell which assignment this notebook answers: name it after one "
                             f"({', '.join(sorted(references))}), or grade it with --assignment NAME")
    ref = references[name]
    result.assignment = name
    result.exercises = [ExerciseResult(e.id, e.title, e.points) for e in ref.assignment.exercises]
    try:
        declared, *numbered = read_cells(path)
    except NotANotebook as e:
        return _zero(result, f"not a valid notebook: {e}")
    if declared not in (None, name):
        result.reasons.append(f"its metadata says it answers {cap(declared, 60)}; graded as {name}, "
                              "which its file name says (or --assignment)")
    labels = [_label(k, source) for k, source in numbered]
    cells = [source for _, source in numbered]
    run = run_worker(_request(settings, cells, ref.sources, ref.tests, "received"), settings.sandbox,
                     settings.memory_limit, settings.notebook_timeout)
    _add_run_reasons(result, run, labels, settings)
    outcomes = {t.key: judge(t, run.tests.get(t.key), ref.records[t.key]) for t in ref.tests}
    _with_references(outcomes, ref, cells, settings)
    _score(result, ref, outcomes)
    return result


def _with_references(outcomes, ref, cells, settings):
    """Run again, with the reference answers to the failed exercises they build on, the tests that failed."""
    ids = [e.id for e in ref.assignment.exercises]
    failed = {e: any(not outcomes[t.key].passed for t in ref.tests if t.exercise == e) for e in ids}
    swap_with = {}
    for e in ids:
        earlier = [b for b in checks.BUILDS_ON.get(e, ()) if failed.get(b)]
        if earlier and failed[e]:
            swap_with[e] = earlier
    again = [t for t in ref.tests if t.exercise in swap_with and not outcomes[t.key].passed]
    if not again:
        return
    sources = {e.id: e.reference_source for e in ref.assignment.exercises}
    request = _request(settings, cells, ref.sources, again, "received")
    request["swap"] = {"references": {b: sources[b] for bs in swap_with.values() for b in bs}, "with": swap_with}
    run = run_worker(request, settings.sandbox, settings.memory_limit, settings.notebook_timeout)
    for t in again:
        first, second = outcomes[t.key], judge(t, run.tests.get(t.key), ref.records[t.key], quiet=True)
        used = tuple(swap_with[t.exercise])
        if second.passed:
            outcomes[t.key] = Outcome(t, True, f"passed with {phrase(used)} in place of yours", used)
        elif NOT_WRITTEN in second.message and NEEDS not in second.message:  # this one is not written either
            outcomes[t.key] = second
        elif first.message.startswith(NEEDS) or f"\n{NEEDS}" in first.message:
            outcomes[t.key] = Outcome(t, False, f"(run with {phrase(used)} in place of yours)\n{second.message}")


def _label(k, source):
    """How a note names a cell: its place among all cells, and its first line (JupyterLab numbers none)."""
    first = next(line.strip() for line in source.splitlines() if line.strip())
    return f"cell {k + 1} ({first if len(first) <= 40 else first[:37] + '...'})"


def _zero(result, reason):
    result.zeroed = True
    result.reasons.append(reason)
    return result


def _add_run_reasons(result, run, labels, settings):
    for k in run.cell_timeouts:
        result.reasons.append(f"{labels[k]} ran longer than {settings.cell_timeout:g} s and was interrupted "
                              "(an endless loop?)")
    for k in run.stuck_cells:
        result.reasons.append(f"{labels[k]} ran longer than {settings.cell_timeout:g} s and did not stop when "
                              "interrupted: the notebook was run again without it")
    for k, error in sorted(run.cell_errors.items()):
        over = error.startswith("MemoryError") and settings.memory_limit
        result.reasons.append(f"{labels[k]} raised {error}" + (
            f" (more than the {settings.memory_limit / 2**20:g} MB a notebook may use)" if over else ""))
    for crash in run.crashes:
        result.reasons.append(f"the notebook's process stopped ({crash}); the tests it had not run fail")
    if run.over_budget is not None:
        result.reasons.append(f"the cells ran longer than {settings.notebook_timeout:g} s in all: from "
                              f"{labels[run.over_budget]} on, they were not run")
    if run.out_of_time:
        result.reasons.append("the notebook ran longer than its cells' and tests' time in all and was "
                              "stopped; the tests it had not run fail")
    if run.printed > settings.output_limit:
        result.reasons.append(f"the notebook printed more than {settings.output_limit / 1e6:g} MB; "
                              "the rest of its output was dropped")


def _score(result, ref, outcomes):
    by_id = {e.id: e for e in result.exercises}
    for t in ref.tests:
        o = outcomes[t.key]
        by_id[t.exercise].tests.append({"name": t.name, "hidden": t.hidden, "passed": o.passed,
                                        "message": o.message, "with_reference": list(o.with_reference)})
    for exercise in result.exercises:
        if exercise.tests:
            passed = sum(t["passed"] for t in exercise.tests)
            exercise.score = round(exercise.points * passed / len(exercise.tests), 2)
