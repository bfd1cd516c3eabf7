#!/usr/bin/env python3
"""Cecka et al.'s assembly (the steady heat problem, Lagrange P1..P6 triangles) as a Python user
writes it, for fembench's `external` peers. Every route does the whole assembly every repetition,
as fembench's methods do: the element matrices from the node coordinates (vectorized: A^e is
(1/det)(c_xx S_xx + c_xy S_xy + c_yy S_yy) with the reference integrals fembench hands over, and
F^e with the prescribed values folded in), then the global matrix and right-hand side. What
depends on the mesh alone (the (row, column) pairs of the free entries, the slot map) is built
once, before the timer, as a user would.

  cupy-tocsr        CuPy: coo_matrix((v, (i, j))).tocsr() (sort by CUB, duplicates summed),
                    right-hand side by cupyx.scatter_add; CUDA events (device-event-open)
  torch-index-add   PyTorch: index_add_ of every entry into CSR values through the slot map
                    (a prescribed dof's entries into one spare slot); CUDA events
                    (device-event-open)
  torch-compile     the same route under torch.compile (Inductor fuses the element terms; the
                    compile runs in the checked pass, before the timer; a machine where Inductor
                    cannot compile gives a skipped row with its reason); CUDA events
                    (device-event-open)
  scipy-tocsr       SciPy on the host (as scikit-fem assembles): coo_matrix(...).tocsr(),
                    right-hand side by numpy.bincount; host clock, f64
  jax-segment-sum   JAX, as JAX-FEM assembles: the element terms and jax.ops.segment_sum into
                    CSR slots through the slot map, one jax.jit function (compiled before the
                    timer) on the case's GPU; host clock around each call and
                    block_until_ready (JAX has no event API), host-wall
  jax-cpu           the same on JAX's CPU device (the host backend; f32 and f64)
  warp-fem          NVIDIA Warp's FEM toolkit, as its users assemble: the mesh's vertices as a
                    Trimesh2D, a Lagrange space of the case's order (equispaced nodes, matched to
                    ours by position once), fem.integrate of grad u . grad v into a BSR matrix
                    and of v into a vector, and bsr_mv folding the prescribed values in. The
                    first call builds the matrix's topology and Warp's entry-to-block map
                    ("mapped_atomic", untimed); every repetition then runs all three into the
                    same matrix and vector ("reuse": Warp's integration kernels with atomic adds
                    through the map, and the SpMV); Warp's events (device-event-open). The
                    matrix is handed over in our dofs as CSR.
  warp-cpu          the same on Warp's CPU device; host clock
"""
import fembench_peer as fp


def element_terms(xp, p, x, y, g, conn, ref):
    """A^e (ne x en^2) and F^e (ne x en) in the arrays' precision, `xp` being numpy, cupy or torch."""
    en = int(p.scalars["en"])
    ne = conn.shape[0]
    x0, x1, x2 = x[conn[:, 0]], x[conn[:, 1]], x[conn[:, 2]]
    y0, y1, y2 = y[conn[:, 0]], y[conn[:, 1]], y[conn[:, 2]]
    ax, ay, bx, by = x1 - x0, y1 - y0, x2 - x0, y2 - y0
    det = ax * by - ay * bx
    inv = 1.0 / det
    cxx, cxy, cyy = (bx * bx + by * by) * inv, -(ax * bx + ay * by) * inv, (ax * ax + ay * ay) * inv
    a = cxx[:, None] * ref["sxx"][None, :] + cxy[:, None] * ref["sxy"][None, :] + cyy[:, None] * ref["syy"][None, :]
    f = p.scalars["source_f"] * det[:, None] * ref["m"][None, :] - (a.reshape(ne, en, en) * g[conn][:, None, :]).sum(-1)
    return a, f


def free_pairs(np, p):
    """What the mesh alone fixes: the flat indices of the entries whose row and column are free,
    their (row, column), and the free rows of F^e with their dofs."""
    en = int(p.scalars["en"])
    conn = p.arrays["conn"].reshape(-1, en).astype(np.int64)
    d = p.arrays["dof"][conn]
    rows = np.repeat(d[:, :, None], en, axis=2).ravel()
    cols = np.repeat(d[:, None, :], en, axis=1).ravel()
    keep = np.flatnonzero((rows >= 0) & (cols >= 0))
    fkeep = np.flatnonzero(d.ravel() >= 0)
    return conn, keep, rows[keep], cols[keep], fkeep, d.ravel()[fkeep]


def cupy_tocsr(p):
    try:
        import cupy as cp
        import cupyx
        import cupyx.scipy.sparse as csp
        import numpy as np
    except ImportError as e:
        fp.skip(p.folder, f"CuPy is not installed ({e})")
    cp.cuda.Device(p.device or 0).use()
    real, n = p.real(), int(p.scalars["n_free"])
    conn, keep, r, c, fkeep, fd = free_pairs(np, p)
    dev = {k: cp.asarray(v) for k, v in dict(conn=conn, keep=keep, r=r.astype(np.int32), c=c.astype(np.int32), fkeep=fkeep, fd=fd).items()}
    x, y, g = (cp.asarray(p.arrays[k].astype(real)) for k in ("x", "y", "g"))
    ref = {k: cp.asarray(p.arrays[k].astype(real)) for k in ("sxx", "sxy", "syy", "m")}
    out = {}

    def run():
        a, f = element_terms(cp, p, x, y, g, dev["conn"], ref)
        out["a"] = csp.coo_matrix((a.ravel()[dev["keep"]], (dev["r"], dev["c"])), shape=(n, n)).tocsr()
        rhs = cp.zeros(n, dtype=real)
        cupyx.scatter_add(rhs, dev["fd"], f.ravel()[dev["fkeep"]])
        out["rhs"] = rhs

    run()
    cp.cuda.Device().synchronize()
    a, rhs = out["a"], out["rhs"]
    checked = dict(indptr=cp.asnumpy(a.indptr), indices=cp.asnumpy(a.indices), vals=cp.asnumpy(a.data), rhs=cp.asnumpy(rhs))
    flush = fp.flush_with(p, lambda n: cp.empty(n, dtype=cp.int32), lambda b, i: b.fill(i))
    samples = fp.time_gpu(p, run, cp.cuda.Event, cp.cuda.get_elapsed_time, cp.cuda.Device().synchronize, flush)
    cuda = cp.cuda.runtime.runtimeGetVersion()
    library = f"CuPy {cp.__version__} (CUDA {cuda // 1000}.{cuda % 1000 // 10})"
    fp.finish(p, library, "device-event-open", samples, checked)


def torch_index_add(p, compiled=False):
    try:
        import numpy as np
        import torch
    except ImportError as e:
        fp.skip(p.folder, f"PyTorch is not installed ({e})")
    if not torch.cuda.is_available():
        fp.skip(p.folder, "PyTorch sees no CUDA device")
    dev = torch.device("cuda", p.device or 0)
    torch.cuda.set_device(dev)
    real = torch.float32 if p.precision == "f32" else torch.float64
    n, nnz = int(p.scalars["n_free"]), int(p.scalars["nnz"])
    en = int(p.scalars["en"])
    conn = p.arrays["conn"].reshape(-1, en).astype(np.int64)
    # Every entry is added, none gathered first: a prescribed dof's entries go to one spare slot
    # past the matrix (and past the right-hand side), which the result leaves out.
    slots = p.arrays["slots"].astype(np.int64)
    slots[slots < 0] = nnz
    rows = p.arrays["dof"][conn].astype(np.int64).ravel()
    rows[rows < 0] = n
    t = lambda a, dt=None: torch.as_tensor(a, device=dev, dtype=dt)
    conn_t, slot_t, row_t = t(conn), t(slots), t(rows)
    x, y, g = (t(p.arrays[k], real) for k in ("x", "y", "g"))
    ref = {k: t(p.arrays[k], real) for k in ("sxx", "sxy", "syy", "m")}
    vals = torch.empty(nnz + 1, dtype=real, device=dev)
    rhs = torch.empty(n + 1, dtype=real, device=dev)

    def assemble(vals, rhs, x, y, g):
        a, f = element_terms(torch, p, x, y, g, conn_t, ref)
        vals.zero_()
        vals.index_add_(0, slot_t, a.reshape(-1))
        rhs.zero_()
        rhs.index_add_(0, row_t, f.reshape(-1))

    # Compiled: the same function, its in-place updates of the outputs kept (Inductor fuses the
    # element terms and writes into the outputs).
    step = torch.compile(assemble) if compiled else assemble

    def run():
        step(vals, rhs, x, y, g)

    vals.fill_(float("nan"))
    rhs.fill_(float("nan"))
    try:
        run()
    except torch._dynamo.exc.BackendCompilerFailed as e:
        fp.skip(p.folder, f"torch.compile could not compile here: {str(e).splitlines()[0][:300]}")
    torch.cuda.synchronize()
    checked = dict(vals=vals[:nnz].cpu().numpy(), rhs=rhs[:n].cpu().numpy())
    event = lambda: torch.cuda.Event(enable_timing=True)
    flush = fp.flush_with(p, lambda n: torch.empty(n, dtype=torch.int32, device="cuda"), lambda b, i: b.fill_(i))
    samples = fp.time_gpu(p, run, event, lambda a, b: a.elapsed_time(b), torch.cuda.synchronize, flush)
    library = f"PyTorch {torch.__version__} (CUDA {torch.version.cuda}{', torch.compile' if compiled else ''})"
    fp.finish(p, library, "device-event-open", samples, checked)


def scipy_tocsr(p):
    try:
        import numpy as np
        import scipy
        import scipy.sparse as sp
    except ImportError as e:
        fp.skip(p.folder, f"SciPy is not installed ({e})")
    n = int(p.scalars["n_free"])
    conn, keep, r, c, fkeep, fd = free_pairs(np, p)
    x, y, g = (p.arrays[k] for k in ("x", "y", "g"))
    ref = {k: p.arrays[k] for k in ("sxx", "sxy", "syy", "m")}
    out = {}

    def run():
        a, f = element_terms(np, p, x, y, g, conn, ref)
        out["a"] = sp.coo_matrix((a.ravel()[keep], (r, c)), shape=(n, n)).tocsr()
        out["rhs"] = np.bincount(fd, weights=f.ravel()[fkeep], minlength=n)

    run()
    a = out["a"]
    a.sort_indices()
    checked = dict(indptr=a.indptr.astype(np.int32), indices=a.indices.astype(np.int32), vals=a.data, rhs=out["rhs"])
    samples = fp.time_host(p, run)
    fp.finish(p, f"SciPy {scipy.__version__}, NumPy {np.__version__}", "host-wall", samples, checked)


def jax_segment_sum(p):
    """JAX's route: A^e and F^e, then segment sums into the slots, all in one jitted function. Its
    outputs are new arrays every call (JAX's arrays are immutable), so there is nothing to poison."""
    try:
        import numpy as np
    except ImportError as e:
        fp.skip(p.folder, f"NumPy is not installed ({e})")
    jax, dev = fp.jax_on(p)
    import jax.numpy as jnp

    real = p.real()
    n, nnz, en = int(p.scalars["n_free"]), int(p.scalars["nnz"]), int(p.scalars["en"])
    conn = p.arrays["conn"].reshape(-1, en).astype(np.int32)
    # As the PyTorch route: a prescribed dof's entries go to one spare slot past the matrix.
    slots = p.arrays["slots"].astype(np.int32)
    slots[slots < 0] = nnz
    rows = p.arrays["dof"][conn].astype(np.int32).ravel()
    rows[rows < 0] = n
    put = lambda a: jax.device_put(a, dev)
    args = [put(p.arrays[k].astype(real)) for k in ("x", "y", "g")] + [put(conn), put(slots), put(rows)]
    ref = {k: put(p.arrays[k].astype(real)) for k in ("sxx", "sxy", "syy", "m")}

    @jax.jit
    def assemble(x, y, g, conn, slots, rows, ref):
        a, f = element_terms(jnp, p, x, y, g, conn, ref)
        return jax.ops.segment_sum(a.reshape(-1), slots, nnz + 1), jax.ops.segment_sum(f.reshape(-1), rows, n + 1)

    vals, rhs = jax.block_until_ready(assemble(*args, ref))
    checked = dict(vals=np.asarray(vals[:nnz]), rhs=np.asarray(rhs[:n]))
    samples = fp.time_host(p, lambda: jax.block_until_ready(assemble(*args, ref)))
    library = f"JAX {jax.__version__} ({dev.platform}, jit)"
    fp.finish(p, library, "host-wall", samples, checked)


def warp_fem(p):
    """Warp's route (see the module's notes): its matrix over all nodes, ours over the free ones."""
    try:
        import numpy as np
        import scipy.sparse as sp
        from scipy.spatial import cKDTree
        import warp.fem as fem
        import warp.sparse as wsp
    except ImportError as e:
        fp.skip(p.folder, f"Warp is not installed ({e})")
    wp, device = fp.warp_on(p)
    real = p.real()
    wreal, vec = (wp.float32, wp.vec2) if p.precision == "f32" else (wp.float64, wp.vec2d)
    en = int(p.scalars["en"])
    order = int(round(((8 * en + 1) ** 0.5 - 3) / 2))
    conn = p.arrays["conn"].reshape(-1, en).astype(np.int64)
    x, y, dof, g = p.arrays["x"], p.arrays["y"], p.arrays["dof"], p.arrays["g"]
    verts = np.unique(conn[:, :3])
    vid = np.full(len(x), -1, dtype=np.int64)
    vid[verts] = np.arange(len(verts))
    tris = wp.array(vid[conn[:, :3]].astype(np.int32), dtype=int, device=device)
    geo = fem.Trimesh2D(tris, wp.array(np.stack([x[verts], y[verts]], 1).astype(real), dtype=vec, device=device))
    space = fem.make_polynomial_space(geo, degree=order, dtype=wreal)
    # Warp's node w is our node ours[w]: both place a triangle's nodes equispaced.
    wpos = space.node_positions().numpy().astype(np.float64)
    dist, ours = cKDTree(np.stack([x, y], 1)).query(wpos)
    extent = max(np.ptp(x), np.ptp(y))
    if len(ours) != len(x) or len(np.unique(ours)) != len(x) or dist.max() > 1e-5 * extent:
        raise RuntimeError(f"Warp's {len(ours)} nodes are not ours ({len(x)}) one to one (farthest {dist.max():.3g})")
    if not _WARP_FORMS:
        _WARP_FORMS.extend(_warp_forms())
        # Warp's pool of temporaries, as its examples keep one: a repeated integration borrows
        # its scratch arrays from it instead of allocating them inside the timer.
        fem.set_default_temporary_store(fem.TemporaryStore())
    laplace_form, unit_form = _WARP_FORMS
    domain = fem.Cells(geo)
    u, v = fem.make_trial(space, domain=domain), fem.make_test(space, domain=domain)
    gw = wp.array(g[ours].astype(real), dtype=wreal, device=device)
    f = float(p.scalars["source_f"])
    # Warp's repeated assembly: the first call builds the BSR topology and the map from each
    # element entry to its block (every node pair of an element kept, as our pattern keeps it);
    # each timed call then integrates and adds atomically through that map into the same matrix.
    fields = {"u": u, "v": v}
    first = {"construction": "mapped_atomic", "prune_numerical_zeros": False}
    try:
        out = {"a": fem.integrate(laplace_form, fields=fields, output_dtype=wreal, bsr_options=first)}
    except Exception as e:
        # A form Warp cannot generate code for at this degree (Warp 1.19: the gradients of its
        # triangle Lagrange spaces from degree 4) is a limit of the library here, not a wrong answer.
        if not type(e).__module__.startswith("warp."):
            raise
        fp.skip(p.folder, f"Warp cannot build the Laplace form at degree {order}: {type(e).__name__}: {str(e).splitlines()[-1][:200]}")
    out["b"] = fem.integrate(unit_form, fields={"v": v}, output_dtype=wreal)
    again = {"construction": "mapped_atomic", "capacity": "reuse"}

    def run():
        fem.integrate(laplace_form, fields=fields, output_dtype=wreal, output=out["a"], bsr_options=again)
        fem.integrate(unit_form, fields={"v": v}, output_dtype=wreal, output=out["b"])
        wsp.bsr_mv(out["a"], gw, y=out["b"], alpha=-1.0, beta=f)

    out["a"].values.fill_(float("nan"))
    out["b"].fill_(float("nan"))
    run()
    wp.synchronize_device(device)
    checked = warp_to_csr(np, sp, out["a"], out["b"].numpy(), dof[ours], int(p.scalars["n_free"]))
    samples, timer = fp.time_warp(p, wp, device, run)
    where = "cpu" if p.device is None else f"{device.name}, warp.fem"
    fp.finish(p, f"Warp {wp.__version__} ({where})", timer, samples, checked)


def warp_to_csr(np, sp, a, b, dofs, n):
    """Warp's matrix and vector over its nodes, in our free dofs as sorted CSR (host, untimed)."""
    nnz = a.nnz_sync()
    offsets, columns = a.offsets.numpy()[: a.nrow + 1], a.columns.numpy()[:nnz]
    vals = a.values.numpy()[:nnz].reshape(-1)
    rows = np.repeat(np.arange(a.nrow), np.diff(offsets))
    r, c = dofs[rows], dofs[columns]
    keep = (r >= 0) & (c >= 0)
    m = sp.csr_matrix((vals[keep], (r[keep], c[keep])), shape=(n, n))
    m.sort_indices()
    rhs = np.zeros(n, dtype=b.dtype)
    free = dofs >= 0
    rhs[dofs[free]] = b[free]
    return dict(indptr=m.indptr.astype(np.int32), indices=m.indices.astype(np.int32), vals=m.data, rhs=rhs)


def _warp_forms():
    """Warp's integrands (made once a worker, at its first Warp case)."""
    import warp as wp
    import warp.fem as fem

    @fem.integrand
    def laplace(s: fem.Sample, u: fem.Field, v: fem.Field):
        return wp.dot(fem.grad(u, s), fem.grad(v, s))

    @fem.integrand
    def unit(s: fem.Sample, v: fem.Field):
        return v(s)

    return laplace, unit


_WARP_FORMS = []


ROUTES = {
    "cupy-tocsr": cupy_tocsr,
    "torch-index-add": torch_index_add,
    "torch-compile": lambda p: torch_index_add(p, compiled=True),
    "scipy-tocsr": scipy_tocsr,
    "jax-segment-sum": jax_segment_sum,
    "jax-cpu": jax_segment_sum,
    "warp-fem": warp_fem,
    "warp-cpu": warp_fem,
}

if __name__ == "__main__":
    fp.main(ROUTES)
