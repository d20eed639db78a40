"""The fully connected layer, as nnabla writes it: affine(x, W, b, base_axis).

The axes of x from ``base_axis`` on are flattened into one vector of
features, which W maps to the outputs:

    x: (N, C, H, W) with base_axis=1  ->  (N, C*H*W) @ W (C*H*W, outputs) + b (outputs,).

It is built from reshape, matmul and add, whose rules already carry every
order of derivative, so it needs no rule of its own.
"""

import math

from minigrad.functions.linalg import matmul
from minigrad.functions.shape import reshape


def affine(x, W, b=None, base_axis=1):
    """y = x @ W + b over the features of x from ``base_axis`` on; W has shape (inputs, *outputs)."""
    x_shape, W_shape = tuple(x.shape), tuple(W.shape)
    if not 0 <= base_axis < len(x_shape):
        raise ValueError(f"affine: base_axis={base_axis} is out of range for x of shape {x_shape}")
    batch = x_shape[:base_axis]
    features = math.prod(x_shape[base_axis:])
    if len(W_shape) < 2 or W_shape[0] != features:
        raise ValueError(
            f"affine: x of shape {x_shape} has {features} features from base_axis={base_axis} on, "
            f"but W of shape {W_shape} expects {W_shape[0] if W_shape else '?'}; W must be "
            f"({features}, outputs)"
        )
    outputs = W_shape[1:]
    if b is not None and tuple(b.shape) != outputs:
        raise ValueError(f"affine: b of shape {tuple(b.shape)} does not fit W of shape {W_shape}; "
                         f"b must have shape {outputs}")
    y = matmul(reshape(x, (math.prod(batch), features)), reshape(W, (features, math.prod(outputs))))
    if b is not None:
        y = y + reshape(b, (1, math.prod(outputs)))
    return reshape(y, batch + outputs)
