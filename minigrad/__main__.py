"""``python -m minigrad``: what this installation can do, and why not (``minigrad.doctor()``)."""

from minigrad.diagnostics import doctor

if __name__ == "__main__":
    doctor()
