"""im2col and col2im: array plumbing behind convolution and pooling, not a family of functions.

No graph and no rules here, hence the leading underscore: conv.py and pooling.py
build their Functions on these two array routines.

A 2-D convolution slides a kh x kw window over an image. ``im2col`` copies
every window into its own column, so that the convolution becomes one matrix
product and pooling one reduction:

    col[n, c, i, j, oh, ow] = x_padded[n, c, oh*sh + i*dh, ow*sw + j*dw].

It loops over the kh*kw kernel positions, never over pixels: each step
copies one strided slice of the whole batch. ``col2im`` is its transpose
(its adjoint): it adds every column entry back onto the pixel it came from,
so pixels shared by overlapping windows receive the sum.
"""

from numbers import Integral  # int and NumPy's integers

from minigrad.cuda import get_array_module


def pair(v, what="argument", least=1):
    """2 -> (2, 2); (2, 3) stays (2, 3). ValueError naming ``what`` unless each is an int >= ``least``."""
    p = (v, v) if isinstance(v, Integral) else tuple(v) if isinstance(v, (tuple, list)) else None
    if p is None or len(p) != 2 or not all(isinstance(a, Integral) and a >= least for a in p):
        raise ValueError(f"{what} must be an int >= {least} or a pair of them (height, width), got {v!r}")
    return tuple(int(a) for a in p)


def output_size(size, k, s, p, d):
    """How many positions a window of k taps, d apart, takes in size + 2p pixels, moving s at a time."""
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def im2col(x, kernel, stride, pad, dilation, pad_value=0.0):
    """The windows of ``x`` (N, C, H, W) as an array of shape (N, C, kh, kw, OH, OW)."""
    xp = get_array_module(x)
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, pad, dilation
    oh, ow = output_size(h, kh, sh, ph, dh), output_size(w, kw, sw, pw, dw)
    if ph or pw:
        x = xp.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=pad_value)
    col = xp.empty((n, c, kh, kw, oh, ow), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            top, left = i * dh, j * dw
            col[:, :, i, j] = x[:, :, top:top + sh * (oh - 1) + 1:sh, left:left + sw * (ow - 1) + 1:sw]
    return col


def col2im(col, x_shape, stride, pad, dilation):
    """The adjoint of im2col: sum the entries of ``col`` back onto an image of ``x_shape``."""
    xp = get_array_module(col)
    n, c, h, w = x_shape
    _, _, kh, kw, oh, ow = col.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, pad, dilation
    x = xp.zeros((n, c, h + 2 * ph, w + 2 * pw), dtype=col.dtype)
    for i in range(kh):
        for j in range(kw):
            top, left = i * dh, j * dw
            x[:, :, top:top + sh * (oh - 1) + 1:sh, left:left + sw * (ow - 1) + 1:sw] += col[:, :, i, j]
    return x[:, :, ph:ph + h, pw:pw + w]
