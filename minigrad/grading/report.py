"""What the grader writes: score tables for people, Gradescope's results.json, CSV and feedback files.

The table per exercise names the test the class failed most often: the mistake to go over in class.
"""

import csv
import io
import json
import re
import sys
from collections import Counter
from pathlib import Path

from minigrad.grading.reference import phrase
from minigrad.grading.testing import exercise_order
from minigrad.grading.verdict import NEEDS, NOT_WRITTEN

MAX_NAME_BYTES = 150  # of a feedback file's name, before its number and .txt (a file system holds 255)


def write(results, args, sandbox, single):
    """Print the three tables, and write the files the options ask for (``single``: PATH is one notebook)."""
    for table in (student_table, lost_table, exercise_table):
        print(f"\n{table(results)}")
    if args.json:
        data = (gradescope(results[0][1]) if single and len(results) == 1 else
                {"submissions": [{"student": s, "path": r.path, **gradescope(r)} for s, r in results]})
        data["sandbox"] = sandbox
        Path(args.json).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    if args.csv:
        Path(args.csv).write_text(csv_text(results), encoding="utf-8")
    if args.feedback:
        folder = Path(args.feedback)
        folder.mkdir(parents=True, exist_ok=True)
        for k, name in feedback_file_names(results).items():
            try:
                (folder / name).write_text(feedback_text(*results[k]) + "\n", encoding="utf-8")
            except OSError as e:  # (one file the file system refuses costs only itself)
                print(f"warning: {folder / name} could not be written: {e.strerror}", file=sys.stderr)
        print(f"\nFeedback for each student in {folder}/", file=sys.stderr)


def points(x):
    """The one way a score or a loss is written: at most two decimals, no trailing zeros (3.33, 0.5, 6)."""
    return f"{x:.2f}".rstrip("0").rstrip(".")


def lost_points(result):
    """[(exercise id, points lost, why)] for each exercise short of full marks; why names the failed tests."""
    if result.zeroed:
        return [("all", result.max_score, "the notebook scored 0: see the notes")] if result.max_score else []
    entries = []
    for e in result.exercises:
        if e.score >= e.points:
            continue
        failed = [t for t in e.tests if not t["passed"]]
        visible = [t for t in failed if not t["hidden"]]
        needs = sorted({id for t in visible for id in re.findall(NEEDS + r" (\S+),", t["message"])})
        if visible and all(NOT_WRITTEN in t["message"] for t in visible):
            why = f"needs {', '.join(needs)}, not written" if needs else "not written"
        else:
            why = ", ".join(("hidden: " if t["hidden"] else "") + t["name"] for t in failed) or "no test ran"
        entries.append((e.id, e.points - e.score, why))
    return entries


def _credit_note(exercise):
    """'2 tests passed with the reference answer to exercise 3.1' (reference.py), or '' if none needed one."""
    tests = [t for t in exercise.tests if t["passed"] and t.get("with_reference")]
    many = "s" if len(tests) > 1 else ""
    return f"{len(tests)} test{many} passed with {phrase(tests[0]['with_reference'])}" if tests else ""


def _labelled(results):
    """(student, notebook, result): the notebook is its assignment, and its file name if answered twice."""
    pairs = Counter((student, r.assignment) for student, r in results)
    for student, r in results:
        notebook = r.assignment or "?"
        if pairs[student, r.assignment] > 1:
            notebook += f" ({Path(r.path).name})"
        yield student, notebook, r


def student_table(results):
    """One row per (student, notebook): score, the exercises that lost points, and notes on the run."""
    rows = [("student", "notebook", "score", "lost on", "notes")]
    for student, notebook, r in _labelled(results):
        lost = ", ".join(f"{id} (-{points(lost)})" for id, lost, _ in lost_points(r))
        notes = r.reasons + [f"{e.id}: {_credit_note(e)}" for e in r.exercises if _credit_note(e)]
        rows.append((student, notebook, f"{points(r.score)}/{points(r.max_score)}", lost, "; ".join(notes)))
    return _table("Scores per student", rows)


def lost_table(results):
    """One row per exercise that lost points, per student: how many, and the tests that failed."""
    rows = [("student", "notebook", "exercise", "lost", "failed tests")]
    rows += [(student, notebook, id, points(lost), why)
             for student, notebook, r in _labelled(results) for id, lost, why in lost_points(r)]
    return _table("Points lost, and the tests that failed", rows)


def exercise_table(results):
    """One row per exercise: its points, the mean score, how many earned full marks, the test failed most."""
    rows = [("exercise", "title", "points", "mean", "full marks", "failed most (by how many)")]
    seen = {}  # (assignment, id, title, points) -> ([score per notebook], Counter of failed tests)
    for _, r in results:
        for e in r.exercises:
            scores, failures = seen.setdefault((r.assignment, e.id, e.title, e.points), ([], Counter()))
            scores.append(0.0 if r.zeroed else e.score)
            if not r.zeroed:
                failures.update(t["name"] for t in e.tests if not t["passed"] and NOT_WRITTEN not in t["message"])
    for (_, id, title, worth), (scores, failures) in sorted(seen.items(), key=lambda kv: exercise_order(kv[0][1])):
        full = sum(s >= worth for s in scores)
        common = ", ".join(f"{name} ({n})" for name, n in failures.most_common(1))
        rows.append((id, title, points(worth), points(sum(scores) / len(scores)), f"{full}/{len(scores)}", common))
    return _table("Scores per exercise", rows)


def _table(title, rows):
    rows = [[" ".join(str(cell).split("\n")) for cell in row] for row in rows]  # (one line a row, whatever a note says)
    widths = [max(len(str(cell)) for cell in column) for column in zip(*rows)]
    lines = ["  ".join(f"{str(cell):<{w}}" for cell, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join([title, "  ".join("-" * w for w in widths), *lines])


def gradescope(result):
    """The NotebookResult in Gradescope's results.json format: a score and one entry per exercise, where a
    failed visible test shows its message and a hidden one its name; and an entry worth no points per
    hidden test, shown once the grades are published."""
    shown = [{"name": f"Exercise {e.id}: {e.title}", "number": e.id, "score": 0.0 if result.zeroed else e.score,
              "max_score": e.points, "output": "\n".join(_shown(e)), "visibility": "visible"}
             for e in result.exercises]
    hidden = [{"name": f"Exercise {e.id}, hidden test: {t['name']}", "score": 0.0, "max_score": 0.0,
               "status": "passed" if t["passed"] and not result.zeroed else "failed",
               "visibility": "after_published"} for e in result.exercises for t in e.tests if t["hidden"]]
    return {"score": round(result.score, 2), "output": "\n".join(_summary(result)), "tests": shown + hidden,
            "stdout_visibility": "hidden"}


def _summary(result):
    lines = [f"Score {points(result.score)} of {points(result.max_score)}."]
    lines += [f"Lost {points(lost)} on {id}: {why}." for id, lost, why in lost_points(result)]
    return lines + result.reasons


def _shown(e, indent=""):
    """What a student sees of an exercise: how many tests passed, and each failed test, a visible one with
    its message (each line after ``indent``), a hidden one by its name only."""
    lines = [f"{sum(t['passed'] for t in e.tests)} of {len(e.tests)} tests passed."]
    if _credit_note(e):
        lines.append(f"{_credit_note(e)} in place of yours, as yours fails its own tests: "
                     "a mistake costs its points once.")
    for t in e.tests:
        if not t["passed"] and t["hidden"]:
            lines.append(f"FAIL hidden test: {t['name']}")
        elif not t["passed"]:
            lines += [f"FAIL {t['name']}", *(indent + line for line in t["message"].splitlines())]
    return lines


def feedback_text(student, result):
    """What to hand back to a student: what Gradescope shows, as text."""
    lines = [f"{student}: {result.assignment or Path(result.path).name}", *_summary(result), ""]
    for e in result.exercises:
        score = 0.0 if result.zeroed else e.score
        lines.append(f"Exercise {e.id}: {e.title}: {points(score)} of {points(e.points)} points")
        lines += ["  " + line for line in _shown(e, indent="      ")]
        lines.append("")
    return "\n".join(lines)


def csv_text(results):
    """One row per student and assignment: the points, the maximum, and one column per exercise (empty
    where that assignment has no such exercise). Where a student handed in several notebooks for one
    assignment, the one that scored best counts, whole (never the best exercise of each)."""
    columns = sorted({e.id for _, r in results for e in r.exercises}, key=exercise_order)
    chosen = {}
    for student, r in results:
        key = (student, r.assignment or f"? ({Path(r.path).name})")
        if key not in chosen or r.score > chosen[key].score:
            chosen[key] = r
    out = io.StringIO()
    writer = csv.DictWriter(out, ["student", "assignment", "points", "max_points", *columns], lineterminator="\n")
    writer.writeheader()
    for (student, assignment), r in sorted(chosen.items()):
        scores = {e.id: points(0.0 if r.zeroed else e.score) for e in r.exercises}
        writer.writerow({"student": _no_formula(student), "assignment": _no_formula(assignment),
                         "points": points(r.score), "max_points": points(r.max_score), **scores})
    return out.getvalue()


def _no_formula(text):
    """``text`` as a spreadsheet shows it: one that starts as a formula would is run as one."""
    return "'" + text if text.startswith(("=", "+", "-", "@", "\t", "\r")) else text


def feedback_file_names(results):
    """{index: file name}, one per notebook and never two alike: ``student.txt``, else
    ``student_assignment.txt``, else ``student_notebook.txt``, and a number where names differ only in
    characters a file name cannot hold ("Mary Ann" and "Mary_Ann")."""
    counts = Counter(student for student, _ in results)
    pairs = Counter((student, r.assignment) for student, r in results)
    names, taken = {}, set()
    for k, (student, r) in enumerate(results):
        if counts[student] == 1:
            stem = student
        elif pairs[student, r.assignment] == 1 and r.assignment:
            stem = f"{student}_{r.assignment}"
        else:
            stem = f"{student}_{Path(r.path).stem}"
        stem = re.sub(r"[^\w.-]", "_", stem).encode()[:MAX_NAME_BYTES].decode(errors="ignore")
        name, n = stem + ".txt", 1
        while name.lower() in taken:  # (case-insensitive: macOS and Windows file systems are)
            n += 1
            name = f"{stem}_{n}.txt"
        taken.add(name.lower())
        names[k] = name
    return names
