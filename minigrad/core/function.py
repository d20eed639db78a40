"""Function: one operation, and, once called, one node of the graph.

Subclass it and write ``forward(self, *arrays)``: plain arrays in, an array
(or a tuple of them) out. Calling an instance turns arrays into a graph:

1. take every input's graph node (numbers and arrays become constant nodes);
2. run ``forward`` on their arrays;
3. if grad mode is on and some input requires grad, record the node: the
   instance keeps its inputs (strongly: they are needed to go back) and its
   outputs (weakly: no cycle output -> creator -> output keeps a graph alive);
4. while a jvp runs, push its tangents through the forward rule (tangents.py);
5. say which arrays the rule will read (``reads_inputs``, ``reads_outputs``),
   so that what nobody reads is freed with its Variable (support/memory.py).

The same instance is the ``ctx`` its rules receive: ``ctx.inputs``,
``ctx.outputs`` and ``ctx.function`` (the instance, for attributes such as ``axis``).
"""

import copy
import weakref

import numpy as np

from minigrad.support import config as settings, lean
from minigrad.support.config import config
from minigrad.support.function_inputs import (InputsRequiringGrad, _as_array, _constant_node, check_one_device,
                                              constant_outputs, forward_failed, freed_message, unrecorded_message)
from minigrad.support.memory import RELEASE_FROM_BYTES, revived, watch
from minigrad.support.rule_keys import function_defined
from minigrad.core.tangents import push
from minigrad.core.variable import Variable, VariableNode, _variable_of


class Function:
    """Base class of every operation. Subclasses implement ``forward``."""

    # What the backward rule reads (memory.py). True is always safe; a Function
    # whose rule reads only shapes, or only its outputs, says so, and the graph keeps less memory.
    reads_inputs = True
    reads_outputs = True
    _inputs = None  # VariableNodes, once recorded; None again once freed
    _outputs = None  # weak references to the output VariableNodes
    _freed = None  # weak references to the inputs of a freed node
    _kept_outputs = None  # the arrays of the outputs, when its rule reads them and it has several (memory.py)
    order = 0  # derivative order: 0 forward, n for a node of an n-th derivative's graph
    rule_key = "Function"  # its name in the rule tables: set for every subclass (core/rules.py)
    needs_input_grad = InputsRequiringGrad()  # the walker sets it, input by input, before it calls the rule

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        function_defined(cls)  # so that register("Sin") finds the class named Sin defined last

    def __call__(self, *inputs):
        """The five steps of this module's docstring, for one output or many."""
        if self._outputs is not None:  # called again: the first call's node stays, this call is a new one
            return self._new_node()(*inputs)
        if settings.leaning and config.lean and Variable not in map(type, inputs):
            return lean.call(self, inputs)  # arrays in, arrays out: a rule's step in a lean pass (support/lean.py)
        nodes, arrays, wanted = [], [], False
        for x in inputs:  # 1. every input's node (a number or an array becomes a constant node)
            n = x.node if type(x) is Variable else _constant_node(x, inputs, self)
            nodes.append(n)
            arrays.append(n.data)
            wanted = wanted or n.requires_grad
        for a in arrays:  # (an array off the host: are they all on one device?)
            if type(a) is not np.ndarray:
                check_one_device(self, arrays)
                break
        try:
            ys = self.forward(*arrays)  # 2. forward on their arrays
        except (ValueError, TypeError, IndexError) as e:
            forward_failed(self, arrays, e)  # (raises it again, with this Function's name and its inputs)
        several = type(ys) is tuple
        ys = ys if several else (ys,)
        record = wanted and (not settings.switched or config.enable_backprop)
        if record:
            outputs = self._record(nodes, ys)  # 3. record the node
        else:  # nothing recorded: constants (an UnrecordedNode lets backward() say why there is no graph)
            outputs = constant_outputs(ys, nodes, wanted)
        if settings.engaged and config.levels:  # 4. forward mode is running: the tangents go through the forward rule
            push(self, nodes, outputs)
        variables = tuple(map(_variable_of, outputs)) if several else _variable_of(outputs[0])
        if record:
            watch(self, nodes, variables, RELEASE_FROM_BYTES)  # 5. what the rule reads; the rest may be freed
        return variables

    def _record(self, nodes, ys):
        """This call as a node of the graph: inputs held strongly, outputs weakly; the output nodes."""
        self._inputs = nodes
        if settings.engaged and config.derivative_order:
            self.order = config.derivative_order
        outputs = []
        for y in ys:
            outputs.append(VariableNode(y if type(y) is np.ndarray else _as_array(y), True, None, self))
        self._outputs = list(map(weakref.ref, outputs))
        return outputs

    def forward(self, *xs):
        """The outputs from the inputs' arrays: the one method a subclass must write.

        It receives one floating-point array per input (NumPy, or CuPy on a GPU;
        ``xp = get_array_module(x)`` runs the same code on either), never
        Variables: nothing done here is recorded, and the inputs are not changed
        in place (the graph keeps them). It returns an array, or a tuple of them.
        Attributes such as an ``axis`` live on ``self`` (``ctx.function.axis``);
        the derivative is a rule registered under the class's name, ``@register("Square")``.
        """
        raise NotImplementedError(
            f"{self.name}.forward is not written: subclass Function and define "
            "forward(self, *arrays) returning an array or a tuple of arrays"
        )

    # ---- the ctx a backward rule receives ----
    @property
    def name(self):
        return type(self).__name__

    @property
    def function(self):
        """The Function instance itself, for its attributes (``ctx.function.axis``)."""
        return self

    @property
    def inputs(self):
        """The input Variables of this node."""
        if self._inputs is None:
            raise RuntimeError(freed_message(self) if self._freed is not None else unrecorded_message(self))
        if settings.leaning and config.lean:  # (their arrays, in a lean pass)
            return [n.data for n in self._inputs]
        return list(map(VariableNode.variable, self._inputs))  # (the student's Variable while it lives)

    @property
    def outputs(self):
        """The output Variables of this node (None for an output that no longer exists)."""
        if self._outputs is None:
            return []
        outputs = []
        for i, ref in enumerate(self._outputs):
            node = ref() or revived(self, i, VariableNode)  # (a dropped output of several: memory.py)
            outputs.append(None if node is None else node.data if settings.leaning and config.lean else
                           node.variable())
        return outputs

    def parents(self):
        """The input VariableNodes still known: all of them, or, once freed, those still alive."""
        if self._inputs is not None:
            return self._inputs
        return [n for n in (ref() for ref in self._freed) if n is not None]

    def _new_node(self):
        """A copy of this Function with no node recorded yet: its attributes (axis, ...) and nothing else."""
        f = copy.copy(self)
        for name in ("_inputs", "_outputs", "_freed", "_kept_outputs", "needs_input_grad", "order"):
            f.__dict__.pop(name, None)
        return f

    def free(self):
        """Drop the inputs (and the memory they hold); keep weak links for error messages."""
        if self._inputs is not None:
            self._freed = list(map(weakref.ref, self._inputs))
            self._inputs = None
            if self._kept_outputs is not None:
                self._kept_outputs = None

    def __repr__(self):
        return f"<{self.name} node>" if self._outputs is not None else f"<{self.name}>"
