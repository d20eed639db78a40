"""Every verdict, from two records: what the student's code returned against what was expected.

Observation k of what was returned (testing.Recorder's ``observations``) is
compared with observation k of what was expected; the first that differs
fails the test, with compare.py's diagnosis. ``check()`` makes both records
in one run; the grader makes them apart, in the student's sandbox and on the
reference answers. What a sandbox sends is data of unknown shape: anything
malformed fails the test, nothing in it passes one.
"""

import re
from dataclasses import dataclass

import numpy as np

from minigrad.grading.compare import mismatch

NOT_WRITTEN = "not written yet"
NEEDS = "needs exercise"  # the start of a failure caused by an earlier, unwritten exercise
TEXT_LIMIT = 300  # characters of any text that comes from a student's code, wherever it is shown
MAX_VALUES = 250_000  # JSON values outside strings in a notebook or an event (a test's record: some 600)
STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"')
A_LIST = ("a list or tuple was used as a number: ctx.inputs and ctx.outputs are lists of Variables, so take "
          "the Variable out first, as in (x,) = ctx.inputs")
OFF_PATH = "the test took another path than it does with the reference answer (a value of the wrong kind?)"


@dataclass
class Outcome:
    test: object
    passed: bool
    message: str = ""
    with_reference: tuple = ()  # the earlier exercises whose reference answers it passed with


def cap(text, limit=TEXT_LIMIT):
    """``text`` (from a student's code) cut to ``limit`` characters, at a space where one is near the end
    (never mid-word), each control character but a newline written out (``\\x1b``): a terminal's escapes
    would redraw the grader's tables."""
    text = str(text)
    cut = text[:limit]
    if len(text) > limit and not text[limit].isspace() and " " in cut[-40:]:
        cut = cut[: cut.rindex(" ")]
    cut = "".join(c if c.isprintable() or c == "\n" else ascii(c)[1:-1] for c in cut)
    return cut if len(text) <= limit else cut.rstrip() + "... (cut)"


def json_values(data):
    """About how many values the JSON text ``data`` (bytes) holds, outside strings, counted before it is
    parsed: a few MB of '{},' parse into GBs of objects."""
    structure = STRINGS.sub(b"", data)
    return sum(structure.count(c) for c in (b",", b"[", b"{"))


def judge(test, received, expected, quiet=False, limit=TEXT_LIMIT):
    """The Outcome of ``test`` from its two records ({"observations", "end"}; ``received`` may be None).

    ``quiet``: the run had reference answers in place of the student's, so no
    text that came from that sandbox is shown (it could quote them).
    ``limit``: the characters of text shown from the run (check(): more, as
    the text is the notebook's own).
    """
    if received is None:
        received = {"observations": [], "end": {"status": "not run", "message": "the test did not run"}}
    got_all = received.get("observations") if isinstance(received, dict) else None
    end = _safe_end(received.get("end"), limit) if isinstance(received, dict) else None
    if not isinstance(got_all, list) or end is None:
        return Outcome(test, False, message(test, None, {}, failure="the notebook's results could not be read"))
    given = expected["end"].get("given")  # the input the test ended on, unless it stopped short of that
    for k, want in enumerate(expected["observations"]):
        if k >= len(got_all):
            given = want.get("given")
            break
        got = got_all[k]
        failure = _compare(got, want, limit) if isinstance(got, dict) else OFF_PATH
        if failure is not None:
            if quiet:  # (a value or a shape shown could spell out a reference answer, a few characters a test)
                failure = "it still fails"
            # the evidence for a cause of higher orders: the first order was compared, and right
            higher = want.get("higher") is True or (want["kind"] == "true" and got.get("higher") is True)
            return Outcome(test, False, message(test, want.get("given"), end, failure=failure, higher=higher))
    else:
        if len(got_all) > len(expected["observations"]):
            return Outcome(test, False, message(test, given, end, failure=OFF_PATH))
        if end["status"] == "ok":
            return Outcome(test, True)
    if end["status"] == "ok":  # ended well, but short of observations: a forged or odd record
        end = {"status": "not run", "message": "the test stopped early"}
    if quiet:
        end = _quiet_end(test, end)
    return Outcome(test, False, message(test, given, end))


def _quiet_end(test, end):
    """How a run with reference answers in place ended, in the grader's words alone: that sandbox could
    spell a reference answer out in any text, a number or an exception's name it sends."""
    if end.get("type") == "NotImplementedError" and stub_exercise(end["message"]) == test.exercise:
        return {"status": "raised", "type": "NotImplementedError", "message": f"Exercise {test.exercise}: not written"}
    return {"status": "not run", "message": "it still failed"}


def message(test, given, end, failure=None, higher=False):
    """What a student reads of a failed test: the input, what went wrong, and the hint of an attempt;
    with ``higher`` (the first derivative right, a higher one wrong), the test's cause for that."""
    written, status = True, end.get("status")
    stub = stub_exercise(end["message"]) if end.get("type") == "NotImplementedError" else None
    if failure is not None:
        text = failure
    elif status == "timeout":
        text = f"did not finish in {end['limit']:g} s: is there an endless loop?"
    elif status in ("failed", "not run"):
        text = end["message"]
    elif stub is not None:
        written = False
        if stub == test.exercise:
            text = f"{NOT_WRITTEN} (NotImplementedError: {end['message']})"
        else:  # this exercise calls the student's answer to an earlier one
            text = f"{NEEDS} {stub}, which is {NOT_WRITTEN} (NotImplementedError: {end['message']})"
    else:
        text = f"raised {end['type']}: {end['message']}{end.get('where', '')}"
        if end["type"] in ("TypeError", "AttributeError") and re.search(r"'(list|tuple)'", end["message"]):
            text += f"\nnote: {A_LIST}"
    if given:
        text = f"input: {given}\n{text}"
    if test.hint and written:  # a hint helps an attempt; before one, it would only give the answer away
        text += f"\nhint: {test.hint}"
    if getattr(test, "higher", "") and higher and written:
        text += f"\nthe first derivative is right and a higher one is not: {test.higher}"
    return text


def stub_exercise(e):
    """The exercise ("N.M") whose unwritten stub raised ``e`` (or said its message), or None."""
    if isinstance(e, BaseException) and not isinstance(e, NotImplementedError):
        return None
    found = re.match(r"Exercise (\d+\.\d+):", str(e))
    return found.group(1) if found else None


def _safe_end(end, limit):
    """How a run ended, as sent, with its text capped; None for anything else."""
    if not isinstance(end, dict) or end.get("status") not in ("ok", "failed", "timeout", "raised", "not run"):
        return None
    if end["status"] == "timeout" and not isinstance(end.get("limit"), (int, float)):
        return None
    return {**end, "message": cap(end.get("message", ""), limit), "type": cap(end.get("type", "Exception"), 100),
            "where": cap(end.get("where", ""), 100)}


def _compare(got, want, limit):
    """None when observation ``got`` matches ``want``, else what a student reads."""
    kind = got.get("kind")
    if kind == "true" and got.get("ok") is not True:  # a condition on the student's objects, checked there
        return cap(got.get("message") or "a check failed", limit)
    if kind != want["kind"]:
        return OFF_PATH
    if kind == "true":
        return None
    what = want["what"]
    if kind == "equal":
        if got.get("value") == want["value"]:
            return None
        return f"{what} is wrong\nexpected: {cap(want['value'])}\nreceived: {cap(got.get('value'))}"
    value = got.get("value")
    if value is None:  # (right only where the reference gave None too: a gradient that does not exist)
        if want["value"] is None:
            return None
        if "derivative" in what or "grad" in what:  # (grad(..., allow_unused=True) gives None: no path)
            return f"{what} is None: minigrad finds no path from the input to it, where the reference has numbers"
        return f"{what} is None: does the function return its result?"
    array = _decode(value)
    if array is None:
        shown = value.get("type") if isinstance(value, dict) else None
        return f"{what} should be numbers, got a {cap(shown, 80) if isinstance(shown, str) else 'thing'}"
    wanted = _decode(want["value"])
    if wanted is None:  # the reference itself gave no number (a None gradient): so must the student
        return f"{what} should be None, got numbers"
    return mismatch(array, wanted, what, want["rtol"], want["atol"], _decode(want.get("gy")))


def _decode(value):
    """The float64 array of an encoded value (testing.encode), or None if it is not one."""
    if not isinstance(value, dict) or not isinstance(value.get("shape"), list) or not isinstance(
            value.get("data"), list):
        return None
    shape = value["shape"]
    if not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n for n in shape) or len(shape) > 32:
        return None
    try:
        return np.array(value["data"], dtype=np.float64).reshape(shape)
    except (TypeError, ValueError, OverflowError, MemoryError):  # (ragged, or not that many numbers)
        return None
