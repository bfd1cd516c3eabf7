#!/usr/bin/env python3
"""Banaś et al.'s element stiffness matrices of linear elasticity on prisms, as a user of PyTorch
or CuPy writes them, for fembench's `external` peers: A^e = B^T (w D B) for every element at once,
B formed from the shape functions' reference derivatives and the Jacobian terms fembench hands
over (the NOJAC variant's inputs: per quadrature point the weight times det J, then J^-1), then
one batched GEMM. Every repetition does both, as fembench's `cublas-gemm` peer does (its
`kernel` row: B + GEMM). The elements go in batches whose temporaries stay under a budget, as a
user's code must on a large mesh.

  torch-bmm     PyTorch: einsum for the gradients, torch.bmm (cuBLAS' batched GEMM; FP32 without
                TF32, as PyTorch's default, f64 on the FP64 tensor cores); CUDA events
                (device-event-open)
  torch-compile the same function under torch.compile (Inductor; compiled in the checked pass, before
                the timer; a machine where Inductor cannot compile gives a skipped row with its
                reason); CUDA events (device-event-open)
  cupy-matmul   CuPy: the same with cupy.einsum and cupy.matmul; CUDA events (device-event-open)
  numpy-matmul  NumPy on the host, f64: the same with numpy.einsum and numpy.matmul, the element
                batches spread over the host's cores by threads (NumPy releases the GIL in
                them; each BLAS call on one thread, so that the threads do not oversubscribe the
                cores); the host clock (host-wall). The CPU reference's peer.

Outputs: the checked elements' A^e (fembench compares them with its f64 reference) and the count
of NaN entries over every element's A^e.
"""
import os
from concurrent.futures import ThreadPoolExecutor

# One BLAS thread per call: the NumPy route runs its element batches on threads of its own (set
# before NumPy is first imported, which this worker does lazily).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import fembench_peer as fp  # noqa: E402

# Bytes of B, w D B and the gradients of one batch (the output is allocated once, whole).
BATCH_BYTES = 1 << 30


class Torch:
    """The few calls the route makes, in PyTorch."""

    def __init__(self, p):
        import torch

        if not torch.cuda.is_available():
            fp.skip(p.folder, "PyTorch sees no CUDA device")
        self.torch, self.dev = torch, torch.device("cuda", p.device or 0)
        torch.cuda.set_device(self.dev)
        self.real = torch.float32 if p.precision == "f32" else torch.float64
        self.library = f"PyTorch {torch.__version__} (CUDA {torch.version.cuda})"

    def array(self, a, real=True):
        return self.torch.as_tensor(a, device=self.dev, dtype=self.real if real else None)

    def empty(self, shape):
        return self.torch.empty(shape, dtype=self.real, device=self.dev)

    def zeros(self, shape):
        return self.torch.zeros(shape, dtype=self.real, device=self.dev)

    def einsum(self, spec, a, b):
        return self.torch.einsum(spec, a, b)

    def gemm_tn(self, b, e, out):
        self.torch.bmm(b.transpose(1, 2), e, out=out)

    def nan_count(self, a):
        return int(self.torch.isnan(a).sum().item())

    def poison(self, a):
        a.fill_(float("nan"))

    def host(self, a):
        return a.cpu().numpy()

    def time(self, p, run):
        torch = self.torch
        event = lambda: torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        flush = fp.flush_with(p, lambda n: torch.empty(n, dtype=torch.int32, device="cuda"), lambda b, i: b.fill_(i))
        return "device-event-open", fp.time_gpu(p, run, event, lambda a, b: a.elapsed_time(b), torch.cuda.synchronize, flush)


class TorchCompiled(Torch):
    """The same calls, the element batch's function compiled by torch.compile (one compile per
    batch shape: the full batches and the last)."""

    def __init__(self, p):
        super().__init__(p)
        self.library += ", torch.compile"

    def compiled(self, f):
        return self.torch.compile(f)

    def compile_failed(self, e):
        if isinstance(e, self.torch._dynamo.exc.BackendCompilerFailed):
            return f"torch.compile could not compile here: {str(e).splitlines()[0][:300]}"
        return None

    def gemm_tn(self, b, e, out):
        out.copy_(self.torch.bmm(b.transpose(1, 2), e))


class Cupy:
    """The few calls the route makes, in CuPy."""

    def __init__(self, p):
        import cupy as cp
        import numpy as np

        cp.cuda.Device(p.device or 0).use()
        self.cp = cp
        self.real = np.float32 if p.precision == "f32" else np.float64
        cuda = cp.cuda.runtime.runtimeGetVersion()
        self.library = f"CuPy {cp.__version__} (CUDA {cuda // 1000}.{cuda % 1000 // 10})"

    def array(self, a, real=True):
        return self.cp.asarray(a.astype(self.real) if real else a)

    def empty(self, shape):
        return self.cp.empty(shape, dtype=self.real)

    def zeros(self, shape):
        return self.cp.zeros(shape, dtype=self.real)

    def einsum(self, spec, a, b):
        return self.cp.einsum(spec, a, b)

    def gemm_tn(self, b, e, out):
        self.cp.matmul(self.cp.swapaxes(b, 1, 2), e, out=out)

    def nan_count(self, a):
        return int(self.cp.isnan(a).sum().item())

    def poison(self, a):
        a.fill(float("nan"))

    def host(self, a):
        return self.cp.asnumpy(a)

    def time(self, p, run):
        cp = self.cp
        cp.cuda.Device().synchronize()
        flush = fp.flush_with(p, lambda n: cp.empty(n, dtype=cp.int32), lambda b, i: b.fill(i))
        return "device-event-open", fp.time_gpu(p, run, cp.cuda.Event, cp.cuda.get_elapsed_time, cp.cuda.Device().synchronize, flush)


class Numpy:
    """The few calls the route makes, in NumPy on the host (f64)."""

    def __init__(self, p):
        import numpy as np

        self.np, self.real = np, np.float64
        self.threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        self.library = f"NumPy {np.__version__} ({self.threads} threads)"
        # Started once, before any timed pass: a pass does not pay for starting threads.
        self.pool = ThreadPoolExecutor(max_workers=self.threads)

    def each(self, batches, work):
        """Runs `work` on every batch, on the route's threads."""
        for _ in self.pool.map(lambda b: work(*b), batches):
            pass

    def close(self):
        self.pool.shutdown()

    def array(self, a, real=True):
        return a.astype(self.real) if real else a

    def empty(self, shape):
        return self.np.empty(shape, dtype=self.real)

    def zeros(self, shape):
        return self.np.zeros(shape, dtype=self.real)

    def einsum(self, spec, a, b):
        return self.np.einsum(spec, a, b, optimize=True)

    def gemm_tn(self, b, e, out):
        self.np.matmul(self.np.swapaxes(b, 1, 2), e, out=out)

    def nan_count(self, a):
        return int(self.np.isnan(a).sum())

    def poison(self, a):
        a.fill(float("nan"))

    def host(self, a):
        return a

    def time(self, p, run):
        return "host-wall", fp.time_host(p, run)


def element_matrices(xp, nsh, nq, dphi, jt, lame, out):
    """A^e = B^T (w D B) of the elements of `jt` and `lame` into `out` (ne x ndof x ndof). B has
    a row per (quadrature point, Voigt component) and a column per (shape function, component),
    as fembench's B kernel lays it out."""
    ne = jt.shape[0]
    # g[e, q, s, d]: the gradient of shape function s at point q, sum over r of
    # dphi[q, r, s] J^-1[e, q, r, d].
    g = xp.einsum("qrs,eqrd->eqsd", dphi, jt[:, :, 1:10].reshape(ne, nq, 3, 3))
    b = xp.zeros((ne, nq, 6, nsh, 3))
    for i in range(3):
        b[:, :, i, :, i] = g[..., i]
    for v, (i, j) in zip((3, 4, 5), ((0, 1), (1, 2), (0, 2))):
        b[:, :, v, :, i] = g[..., j]
        b[:, :, v, :, j] = g[..., i]
    lam, mu = lame[:, 0].reshape(ne, 1, 1, 1, 1), lame[:, 1].reshape(ne, 1, 1, 1, 1)
    e = mu * b
    # The normal rows: lambda div + 2 mu b, div of column (s, i) being g_i.
    e[:, :, :3] = lam * g[:, :, None] + 2 * mu * b[:, :, :3]
    e *= jt[:, :, 0].reshape(ne, nq, 1, 1, 1)
    xp.gemm_tn(b.reshape(ne, 6 * nq, 3 * nsh), e.reshape(ne, 6 * nq, 3 * nsh), out)


def gemm_route(p, make):
    try:
        import numpy as np

        xp = make(p)
    except ImportError as e:
        fp.skip(p.folder, f"the library is not installed ({e})")
    nsh, nq, ne = (int(p.scalars[k]) for k in ("nsh", "nq", "elements"))
    ndof = 3 * nsh
    dphi = xp.array(p.arrays["dphi"].reshape(nq, 3, nsh))
    jt, lame = xp.array(p.arrays["jterms"].reshape(ne, nq, 10)), xp.array(p.arrays["lame"].reshape(ne, 2))
    checked = p.arrays["checked"].astype(np.int64)
    out = xp.empty((ne, ndof, ndof))
    width = 4 if p.precision == "f32" else 8
    per_element = (2 * 6 * nq * ndof + 3 * nq * nsh) * width
    # The budget is shared by the batches in flight (one per thread on the host).
    threads = getattr(xp, "threads", 1)
    batch = max(1, min(-(-ne // threads), BATCH_BYTES // threads // per_element))
    batches = [(first, min(ne, first + batch)) for first in range(0, ne, batch)]

    def batch_of(jt_b, lame_b, out_b):
        element_matrices(xp, nsh, nq, dphi, jt_b, lame_b, out_b)

    step = xp.compiled(batch_of) if hasattr(xp, "compiled") else batch_of

    def one(first, last):
        step(jt[first:last], lame[first:last], out[first:last])

    def run():
        if threads > 1:
            xp.each(batches, one)
        else:
            for b in batches:
                one(*b)

    xp.poison(out)
    try:
        run()
    except Exception as e:
        reason = getattr(xp, "compile_failed", lambda e: None)(e)
        if reason is None:
            raise
        fp.skip(p.folder, reason)
    result = dict(a=xp.host(out[xp.array(checked, real=False)]).ravel(), nan=np.array([xp.nan_count(out)], dtype=np.int64))
    timer, samples = xp.time(p, run)
    getattr(xp, "close", lambda: None)()
    fp.finish(p, xp.library, timer, samples, result)


ROUTES = {
    "torch-bmm": lambda p: gemm_route(p, Torch),
    "torch-compile": lambda p: gemm_route(p, TorchCompiled),
    "cupy-matmul": lambda p: gemm_route(p, Cupy),
    "numpy-matmul": lambda p: gemm_route(p, Numpy),
}

if __name__ == "__main__":
    fp.main(ROUTES)
