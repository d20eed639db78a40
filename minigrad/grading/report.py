"""The grader's reports: score tables for people, Gradescope's results.json for machines."""


def student_table(results):
    """One row per (student, notebook): score, maximum, and the reasons for lost points."""
    rows = [("student", "notebook", "score", "reasons")]
    for student, r in results:
        reasons = "; ".join(r.reasons) if r.reasons else ""
        rows.append((student, r.assignment or "?", f"{r.score:g}/{r.max_score:g}", reasons))
    return _table("Scores per student", rows)


def exercise_table(results):
    """One row per exercise: its points, the mean score, and how many earned full marks."""
    rows = [("exercise", "title", "points", "mean", "full marks")]
    seen = {}
    for _, r in results:
        for e in r.exercises:
            scores = seen.setdefault((r.assignment, e.id, e.title, e.points), [])
            scores.append(0.0 if r.zeroed else e.score)
    for (_, id, title, points), scores in sorted(seen.items(), key=lambda kv: _id_key(kv[0][1])):
        full = sum(s >= points for s in scores)
        rows.append((id, title, f"{points:g}", f"{sum(scores) / len(scores):.2f}", f"{full}/{len(scores)}"))
    return _table("Scores per exercise", rows)


def _id_key(exercise):
    return tuple(int(p) if p.isdigit() else 0 for p in exercise.split("."))


def _table(title, rows):
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    lines = [title, "  ".join("-" * w for w in widths)]
    for row in rows:
        lines.append("  ".join(f"{str(c):<{w}}" for c, w in zip(row, widths)).rstrip())
    return "\n".join(lines)


def gradescope(result):
    """The NotebookResult in Gradescope's results.json format: a score and one entry per exercise."""
    tests = []
    for e in result.exercises:
        failed = [t for t in e.tests if not t["passed"]]
        lines = [f"{sum(t['passed'] for t in e.tests)} of {len(e.tests)} tests passed."]
        for t in failed:
            if t["hidden"]:
                lines.append(f"FAIL hidden test: {t['name']}")
            else:
                lines.append(f"FAIL {t['name']}\n{t['message']}")
        tests.append({"name": f"Exercise {e.id}: {e.title}", "number": e.id,
                      "score": 0.0 if result.zeroed else e.score, "max_score": e.points,
                      "output": "\n".join(lines), "visibility": "visible"})
    return {"score": result.score, "output": "\n".join(result.reasons) or "Graded.",
            "tests": tests, "stdout_visibility": "hidden"}
