import _timing
import numpy as np, cProfile, pstats
import minigrad as mg, minigrad.functions as F
import bench_mlp as B
B.SIZES = (4, 4, 4, 2); B.BATCH = 2
params_np, X, T = B.make(np.float64)
params_mg = [mg.Variable(p.copy()) for p in params_np]
pr = cProfile.Profile(); pr.enable()
for _ in range(2000): B.minigrad_step(params_mg, X, T)
pr.disable()
pstats.Stats(pr).sort_stats('tottime').print_stats(25)
