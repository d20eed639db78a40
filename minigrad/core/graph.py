"""The order of a graph: the Function nodes behind some outputs, each after the nodes that made its inputs.

Every walker visits nodes in this order (the reverse walker backwards), and
``plan`` also prunes: a node is *needed* by ``grad()`` when one of its inputs
lies on a path to an output from an input we differentiate with respect to,
that is, when the input is one of them or was made by a needed node. Going
through the topological order once decides it.
"""


def topological_order(nodes, stop=()):
    """The Function nodes behind these VariableNodes, each after the creators of its inputs."""
    order, seen = [], set()
    stack = [(n.creator, False) for n in nodes if n.creator is not None and n not in stop]
    while stack:
        f, expanded = stack.pop()
        if expanded:
            order.append(f)
            continue
        if f in seen:
            continue
        seen.add(f)
        stack.append((f, True))
        for x in (f._inputs if f._inputs is not None else f.parents()):
            creator = x.creator
            if creator is not None and creator not in seen and x not in stop:
                stack.append((creator, False))
    return order


def plan(outputs, inputs, stop=()):
    """Which nodes a grad() call visits: (all nodes behind the outputs, the needed ones, lost).

    ``order`` lists every Function node behind the outputs, in topological
    order; ``needs`` maps each needed node to one flag per input (does a
    gradient go there?); ``lost`` is a freed node whose inputs are gone, if
    one was met. Drawing code uses it to show what is pruned.
    """
    return _plan(outputs, {x.node for x in inputs}, stop)


def _plan(outputs, targets, stop):
    order = topological_order([y.node for y in outputs], stop)
    needs, lost = {}, None
    for f in order:
        parents = f._inputs
        if parents is None:
            parents = f.parents()
            if lost is None and len(parents) < len(f._freed):
                lost = f  # a freed node whose inputs are gone: paths through it cannot be seen
        flags = []
        for x in parents:
            flags.append(x in targets or (x.creator in needs and x not in stop))
        if True in flags:
            needs[f] = tuple(flags)
    return order, needs, lost
