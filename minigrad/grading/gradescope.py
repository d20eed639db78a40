"""Gradescope's autograder zip for one assignment: ``minigrad-grade --gradescope-autograder OUT.zip NAME``.

The solution notebook stays in ``source/``, outside the student's sandbox.
``AUTOGRADER_ROOT`` stands for ``/autograder`` (a test unpacks the zip elsewhere).
"""

import zipfile
from pathlib import Path

import minigrad

SETUP = """\
#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder's image.
set -euo pipefail
apt-get update -qq
apt-get install -y -qq bubblewrap python3-pip python3-venv >/dev/null
python3 -m venv /autograder/venv
/autograder/venv/bin/pip install --quiet "/autograder/source/minigrad-src[grade]"
# Without a sandbox, each notebook runs as an unprivileged user: it needs this Python, never source/.
chmod 711 /autograder && chmod -R a+rX /autograder/venv
"""

RUN = """\
#!/usr/bin/env bash
# Gradescope runs this for each submission: grade it, write results/results.json.
set -uo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
PYTHON="${{AUTOGRADER_PYTHON:-$ROOT/venv/bin/python}}"
mkdir -p "$ROOT/results"
chmod -R go-rwx "$ROOT/source"  # (without a sandbox, the student's code runs unprivileged: the solutions are root's)
SANDBOX=""
"$PYTHON" -c "import sys; from minigrad.grading.sandbox import why_no_sandbox as w; sys.exit(w() is not None)" \\
    || SANDBOX="--no-sandbox"  # (Gradescope's container is the student's alone)
"$PYTHON" -m minigrad.grading "$ROOT/submission" --assignment {name} --solutions "$ROOT/source/solutions" \\
    --json "$ROOT/results/all.json" $SANDBOX
"$PYTHON" - "$ROOT/results" <<'EOF'
import json, sys
from pathlib import Path
results = Path(sys.argv[1])
try:
    data = json.loads((results / "all.json").read_text())
    found, sandbox = data["submissions"], data["sandbox"]
except (OSError, ValueError, KeyError):
    found, sandbox = [], None
nothing = {{"score": 0, "output": "No notebook (.ipynb) was found in the submission: upload {name}.ipynb."}}
best = max(found, key=lambda s: s["score"], default=nothing)
shown = {{key: value for key, value in best.items() if key not in ("student", "path")}}
(results / "results.json").write_text(json.dumps({{**shown, "extra_data": {{"sandbox": sandbox}}}}, indent=1))
EOF
"""


def write_autograder(out, assignment):
    """Write the autograder zip for ``assignment`` (an Assignment) to ``out``."""
    root = Path(minigrad.__file__).resolve().parents[1]
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, script in (("setup.sh", SETUP), ("run_autograder", RUN.format(name=assignment.name))):
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o755 << 16  # (rwxr-xr-x: Gradescope runs them)
            z.writestr(info, script)
        z.write(assignment.path, f"solutions/{assignment.path.name}")
        for path in sorted((root / "minigrad").rglob("*.py")):
            z.write(path, f"minigrad-src/{path.relative_to(root)}")
        for extra in ("pyproject.toml", "README.md"):
            if (root / extra).exists():
                z.write(root / extra, f"minigrad-src/{extra}")
