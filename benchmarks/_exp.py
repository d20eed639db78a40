import _timing
import numpy as np
import minigrad as mg, minigrad.functions as F
import bench_mlp as B
B.SIZES = (4, 4, 4, 2); B.BATCH = 2
params_np, X, T = B.make(np.float64)
params_mg = [mg.Variable(p.copy()) for p in params_np]
t = _timing.compare({"np": lambda: B.numpy_step(params_np, X, T), "mg": lambda: B.minigrad_step(params_mg, X, T)}, rounds=20, repeat=50)
for k,v in t.items(): print(k, round(v*1e6,1), "us")
