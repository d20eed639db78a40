"""What of a test may enter the student's sandbox: its source with every expected value taken out.

There a test only records what the student's code returns, so it needs the
inputs and the calls, never the answers: ``t.close`` and ``t.equal`` lose
their expected argument, and an assignment or a plain helper function used
only there goes too. Nothing left computes an expected value, so none can
be read off the call stack. Hidden tests also lose their hints and their
``t.true`` messages, which could quote an answer.
"""

import ast

COMPARISONS = ("close", "equal")


class _Strip(ast.NodeTransformer):
    def __init__(self, quiet_messages):
        self.quiet_messages = quiet_messages

    def visit_Call(self, node):
        self.generic_visit(node)
        method = node.func.attr if isinstance(node.func, ast.Attribute) else None
        if method in COMPARISONS and len(node.args) >= 2:
            node.args[1] = ast.Constant(None)
            node.keywords = [k for k in node.keywords if k.arg != "expected"]
        if self.quiet_messages and method == "true" and len(node.args) >= 2:
            node.args[1] = ast.Constant("")
        if self.quiet_messages and isinstance(node.func, ast.Name) and node.func.id == "hidden":
            node.keywords = [k for k in node.keywords if k.arg != "hint"]
        return node


def strip_expected(source, hidden=False):
    """``source`` (a module or cell of tests) as the sandbox may see it; ``hidden`` also drops t.true messages."""
    tree = _Strip(hidden).visit(ast.parse(source))
    _drop_unused(tree.body, helpers=True)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef)):  # (a class's names are its attributes and methods)
            continue
        for block in (getattr(node, name, None) for name in ("body", "orelse", "finalbody")):
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                _drop_unused(block, helpers=False)
    return ast.unparse(ast.fix_missing_locations(tree))


def _drop_unused(body, helpers):
    """Remove from a module or function body each assignment that nothing reads any more, and with
    ``helpers`` (a module) each plain function (a helper that computed expected values)."""
    changed = True
    while changed:
        changed = False
        for stmt in list(body):
            if helpers and isinstance(stmt, ast.FunctionDef) and not stmt.decorator_list:
                targets = {stmt.name}
            elif isinstance(stmt, ast.Assign) and all(isinstance(t, (ast.Name, ast.Tuple, ast.List))
                                                      for t in stmt.targets):
                targets = {n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            else:
                continue
            read = {n.id for other in body if other is not stmt for n in ast.walk(other)
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            if not targets & read and len(body) > 1:
                body.remove(stmt)
                changed = True
