"""Grade one notebook: run it in a sandbox, judge what it hands out, turn the verdicts into points.

The reference run (once per assignment, trusted, unsandboxed) records what
each test expects on the solution notebook; the student's run, in a sandbox,
what the student's code returns; verdict.judge compares the two here. An
exercise is worth its points times the fraction of its tests that pass;
nothing a notebook does raises here: what goes wrong is a note.
"""

import inspect
from dataclasses import dataclass, field

from minigrad.grading import checks, testing
from minigrad.grading.assignment import which_assignment
from minigrad.grading.feedback import load_visible
from minigrad.grading.hide import strip_expected
from minigrad.grading.notebook import NotANotebook, read_cells
from minigrad.grading.reference import phrase
from minigrad.grading.verdict import NEEDS, NOT_WRITTEN, Outcome, cap, judge
from minigrad.grading.run import deadline, run_worker


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
    tests: list  # Test objects, in the order they run: the visible ones, then the hidden ones
    records: dict  # test key -> {"observations", "end"} on the expected side
    sources: list  # [(stripped source, module name)] for the sandbox: the visible tests
    hidden_sources: list  # the same, of the hidden tests: sent only once the visible tests have run


def reference(assignment, settings):
    """The assignment's Reference: its solution notebook run, with every test recorded (trusted, unsandboxed)."""
    sources = [(inspect.getsource(module), module.__name__) for module in load_visible()]
    hidden = [(e.hidden_source, f"hidden tests of {e.id}") for e in assignment.exercises if e.hidden_source]
    for source, name in hidden:
        testing.load_source(source, name)  # (registered here too, to list the tests to run)
    tests = [t for e in assignment.exercises for t in testing.exercise_tests(e.id)]
    tests = [t for t in tests if not t.hidden] + [t for t in tests if t.hidden]
    generous = Settings(cell_timeout=max(60, settings.cell_timeout), test_time_limit=max(60, settings.test_time_limit),
                        output_limit=float("inf"), memory_limit=0, notebook_timeout=max(600, settings.notebook_timeout),
                        sandbox=False)  # (the instructor's code)
    run = run_worker(_request(assignment.cells, sources, hidden, tests, "expected"), generous)
    records = {t.key: run.records(t.key) for t in tests}
    outcomes = [judge(t, *records[t.key]) if records[t.key][1] is not None else
                Outcome(t, False, "it did not run") for t in tests]
    broken = [f"{o.test.key}: {o.message[:300]}" for o in outcomes if not o.passed]
    if broken or run.notes:
        raise ReferenceFailed(f"the solution notebook {assignment.path} fails its own tests or cells "
                              f"({'; '.join(broken[:3] + run.notes[:3])}): fix it before grading")
    return Reference(assignment, tests, {t.key: records[t.key][1] for t in tests},
                     [(strip_expected(s), n) for s, n in sources],
                     [(strip_expected(s, hidden=True), n) for s, n in hidden])


def _request(cells, sources, hidden_sources, tests, side, swap=None):
    return {"side": side, "cells": list(cells), "sources": sources, "hidden_sources": hidden_sources,
            "tests": [t.key for t in tests], "hidden": [t.key for t in tests if t.hidden], "swap": swap}


def grade_notebook(path, references, settings=None, assignment=None):
    """The NotebookResult of the notebook at ``path``; never raises for the notebook's sake.

    ``references``: {assignment name: Reference}; ``assignment``: the name
    to grade it as (else its file name says which).
    """
    settings = settings or Settings()
    name = assignment or which_assignment(path, references)
    if name is None:
        return NotebookResult(str(path), reasons=[
            "cannot tell which assignment this notebook answers: name it after one "
            f"({', '.join(sorted(references))}), or grade it with --assignment NAME"], zeroed=True)
    ref = references[name]
    exercises = [ExerciseResult(e.id, e.title, e.points) for e in ref.assignment.exercises]
    result = NotebookResult(str(path), name, exercises)
    try:
        declared, cells = read_cells(path)
    except NotANotebook as e:
        result.zeroed = True
        result.reasons.append(f"not a valid notebook: {e}")
        return result
    if declared not in (None, name):
        result.reasons.append(f"its metadata says it answers {cap(declared, 60)}; graded as {name}, "
                              "which its file name says (or --assignment)")
    until = deadline(settings, len(ref.tests))  # (for this run and the one with reference answers in place)
    run = run_worker(_request(cells, ref.sources, ref.hidden_sources, ref.tests, "received"), settings, until)
    result.reasons += run.notes
    outcomes = {t.key: judge(t, run.records(t.key)[0], ref.records[t.key]) for t in ref.tests}
    _with_references(outcomes, ref, cells, settings, until)
    by_id = {e.id: e for e in result.exercises}
    for t in ref.tests:
        o = outcomes[t.key]
        by_id[t.exercise].tests.append({"name": t.name, "hidden": t.hidden, "passed": o.passed,
                                        "message": o.message, "with_reference": list(o.with_reference)})
    for e in result.exercises:
        if e.tests:
            e.score = round(e.points * sum(t["passed"] for t in e.tests) / len(e.tests), 2)
    return result


def _with_references(outcomes, ref, cells, settings, until):
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
    swap = {"references": {b: sources[b] for bs in swap_with.values() for b in bs}, "with": swap_with}
    run = run_worker(_request(cells, ref.sources, ref.hidden_sources, again, "received", swap), settings, until)
    for t in again:
        first, second = outcomes[t.key], judge(t, run.records(t.key)[0], ref.records[t.key], quiet=True)
        used = tuple(swap_with[t.exercise])
        if second.passed:
            outcomes[t.key] = Outcome(t, True, f"passed with {phrase(used)} in place of yours", used)
        elif NOT_WRITTEN in second.message and NEEDS not in second.message:  # this one is not written either
            outcomes[t.key] = second
        elif first.message.startswith(NEEDS) or f"\n{NEEDS}" in first.message:
            outcomes[t.key] = Outcome(t, False, f"(run with {phrase(used)} in place of yours)\n{second.message}")
