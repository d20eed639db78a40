import _timing
import numpy as np, time
import minigrad as mg, minigrad.functions as F
import bench_mlp as B
B.SIZES = (4, 4, 4, 2); B.BATCH = 2
params_np, X, T = B.make(np.float64)
P = [mg.Variable(p.copy()) for p in params_np]
def fwd():
    W1, b1, W2, b2, W3, b3 = P
    h1 = F.tanh(X @ W1 + b1); h2 = F.tanh(h1 @ W2 + b2); y = h2 @ W3 + b3
    return F.sum((y - T) ** 2) / B.BATCH
def fb():
    return mg.grad(fwd(), P)
L = fwd()
def bwd_only(): return mg.grad(L, P, retain_graph=True)
a = mg.Variable(np.ones(2)); b = mg.Variable(np.ones(2))
def one_mul(): return a * b
def one_mul_ng():
    with mg.no_grad(): return a * b
t = _timing.compare({"fwd": fwd, "fb": fb, "bwd_only": bwd_only, "mul": one_mul}, rounds=20, repeat=200)
for k,v in t.items(): print(k, round(v*1e6,1), "us")
