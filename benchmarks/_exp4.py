import _timing
import numpy as np, cProfile, pstats
import minigrad as mg, minigrad.functions as F
import bench_mlp as B
B.SIZES = (4, 4, 4, 2); B.BATCH = 2
params_np, X, T = B.make(np.float64)
P = [mg.Variable(p.copy()) for p in params_np]
W1, b1, W2, b2, W3, b3 = P
h1 = F.tanh(X @ W1 + b1); h2 = F.tanh(h1 @ W2 + b2); y = h2 @ W3 + b3
L = F.sum((y - T) ** 2) / B.BATCH
pr = cProfile.Profile(); pr.enable()
for _ in range(3000): mg.grad(L, P, retain_graph=True)
pr.disable()
pstats.Stats(pr).sort_stats('tottime').print_stats(22)
