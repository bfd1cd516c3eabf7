#!/usr/bin/env python3
"""The Python routes a GPU user takes for Cecka et al.'s P1 assembly, timed on the GPU they run on,
for setting beside a fembench run of the same size (cecka-sizes, level 7: 2.4M nodes, 4.8M
triangles, 43M element entries). The mesh here is a structured square of m x m nodes (m = 1550:
2.40M nodes, 4.80M triangles), not the plate with holes, so the figures compare sizes, not the
same matrix; the values are random. Each route is timed by CUDA events around the library call
alone (median of 20 after 3 warm-ups), its result checked against SciPy on the host:

  cupy-tocsr   cupyx.scipy.sparse.coo_matrix((v, (i, j))).tocsr(): sort (CUB), sum duplicates
  torch-index-add   out.index_add_(0, slot, v) into CSR values through a slot map built once

usage: scripts/python-peers.py [m]   (prints one line per route and precision)
"""
import sys

import numpy as np
import scipy.sparse as sp


def mesh(m):
    i, j = np.meshgrid(np.arange(m - 1), np.arange(m - 1), indexing="ij")
    n0 = (i * m + j).ravel()
    a = np.stack([n0, n0 + 1, n0 + m + 1], 1)
    b = np.stack([n0, n0 + m + 1, n0 + m], 1)
    return np.concatenate([a, b]).astype(np.int32)


def timed(run, event, elapsed_ms, synchronize, reps=20):
    """Median milliseconds of `run` between two device events, after 3 warm-ups."""
    for _ in range(3):
        run()
    times = []
    for _ in range(reps):
        start, stop = event(), event()
        start.record()
        run()
        stop.record()
        synchronize()
        times.append(elapsed_ms(start, stop))
    return float(np.median(times))


def main():
    m = int(sys.argv[1]) if len(sys.argv) > 1 else 1550
    tris = mesh(m)
    n = m * m
    rows = np.repeat(tris, 3, axis=1).ravel()
    cols = np.tile(tris, (1, 3)).ravel()
    rng = np.random.default_rng(1)
    vals = rng.standard_normal(rows.size)
    reference = sp.coo_matrix((vals, (rows, cols)), shape=(n, n)).tocsr()
    reference.sort_indices()
    keys = rows.astype(np.int64) * n + cols
    _, slot = np.unique(keys, return_inverse=True)
    print(f"mesh {m} x {m}: {n} nodes, {tris.shape[0]} triangles, {rows.size} entries, {reference.nnz} non-zeros")
    try:
        import cupy as cp
        import cupyx.scipy.sparse as csp

        for dtype in (np.float32, np.float64):
            r, c, v = cp.asarray(rows), cp.asarray(cols), cp.asarray(vals.astype(dtype))
            out = {}

            def run():
                out["a"] = csp.coo_matrix((v, (r, c)), shape=(n, n)).tocsr()

            ms = timed(run, cp.cuda.Event, cp.cuda.get_elapsed_time, cp.cuda.Device().synchronize)
            a = out["a"]
            a.sort_indices()
            err = np.abs(cp.asnumpy(a.data) - reference.data).max() / np.abs(reference.data).max()
            same = np.array_equal(cp.asnumpy(a.indptr), reference.indptr) and np.array_equal(cp.asnumpy(a.indices), reference.indices)
            print(f"cupy-tocsr {cp.__version__} {np.dtype(dtype).name}: {ms:.3f} ms, pattern {'same' if same else 'DIFFERS'}, max rel err {err:.1e}")
    except ImportError as e:
        print(f"cupy-tocsr skipped: {e}")
    try:
        import torch

        for dtype in (torch.float32, torch.float64):
            v = torch.as_tensor(vals, device="cuda").to(dtype)
            s = torch.as_tensor(slot, device="cuda")
            out = torch.zeros(reference.nnz, dtype=dtype, device="cuda")

            def run():
                out.zero_()
                out.index_add_(0, s, v)

            ms = timed(run, lambda: torch.cuda.Event(enable_timing=True), lambda a, b: a.elapsed_time(b), torch.cuda.synchronize)
            err = np.abs(out.cpu().double().numpy() - reference.data).max() / np.abs(reference.data).max()
            print(f"torch-index-add {torch.__version__} {str(dtype).split('.')[-1]}: {ms:.3f} ms (zero + index_add_), max rel err {err:.1e}")
    except ImportError as e:
        print(f"torch-index-add skipped: {e}")


if __name__ == "__main__":
    main()
