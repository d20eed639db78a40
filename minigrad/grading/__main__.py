"""``python -m minigrad.grading PATH``: the same command as ``minigrad-grade PATH``."""

import sys

from minigrad.grading.cli import main

sys.exit(main())
