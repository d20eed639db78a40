"""``python -m minigrad``: what this installation can do, and why not (``minigrad.doctor()``)."""

import argparse

from minigrad.diagnostics import doctor

if __name__ == "__main__":
    argparse.ArgumentParser(
        prog="python -m minigrad",
        description="Print what this installation of minigrad can do, and why not: the versions of minigrad, "
                    "Python, NumPy, CuPy and CUDA, whether a GPU is usable, which command lays out the graphs "
                    "that draw() shows, whether the grading extra is installed, and whether minigrad-grade can "
                    "make its sandbox here. Add its output to a bug report.").parse_args()
    doctor()
