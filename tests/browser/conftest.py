# The notebook here is a fixture opened by the browser test, kept unexecuted: not an nbval test.
collect_ignore_glob = ["*.ipynb"]
