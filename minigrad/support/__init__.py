"""Optional reading: what the engine leans on but a student need not read to understand it.

Grad mode per thread (``config``), the memory a graph keeps (``memory``), how a Variable meets NumPy
(``numpy_interop``), what ``Function`` does with numbers and devices (``function_inputs``), how a rule is
keyed by its Function class (``rule_keys``), and the checks on what ``grad()`` and the transforms are given,
with their messages (``grad_arguments``, ``func_arguments``).
"""
