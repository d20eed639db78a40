"""The engine, read in one sitting, in this order (the README's "Reading order"):

1. ``variable.py``: the Variable, the node the graph holds of it, and its operator table;
2. ``function.py``: ``Function.__call__``, which runs ``forward`` and records a node: the ``ctx`` of a rule;
3. ``rules.py``: a table of rules per mode, and ``call_rule``, the one way any walker calls a rule;
4. ``graph.py``: the order of a graph, and which nodes a gradient needs;
5. ``backprop.py``: the reverse walker, lesson 2's loop.

Nothing here imports drawing, grading, notebooks or CuPy, nor ``minigrad.functions``: the Variable's
operators get the functions from ``minigrad/__init__.py`` (``variable.bind``).
"""
