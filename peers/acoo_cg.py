#!/usr/bin/env python3
"""a-COO's capacitor (P1 triangles, -div(grad u) = 0, the plates' potentials prescribed) as a user
of a GPU library assembles and solves it, for fembench's `external` peers. A pass has two timed
stages, as fembench's CSR methods do: `elements` (every element matrix from the coordinates,
added into the values of the CSR pattern through the slot map, and the right-hand side -K_fd g)
and `solve` (conjugate gradients from x = 0 until ||r|| <= tol ||b||). What depends on the mesh
alone (pattern, slot map) is built once, before the timers, as a user would.

  warp-cg   NVIDIA Warp: the element stage as one Warp kernel with atomic adds into the values of
            a warp.sparse matrix on our CSR pattern (1 x 1 blocks); the solve by
            warp.optim.linear.cg, its buffers allocated once (run=False), convergence tested on
            the device every iteration (check_every=0: Warp records its loop as a conditional
            CUDA graph and launches it, at every solve); Warp's events (device-event-open)
  warp-cpu  the same on Warp's CPU device (convergence tested on the host every iteration); host
            clock
  jax-cg    JAX: the element stage one jitted function (element matrices by array operations and
            jax.ops.segment_sum into the slots); the solve jax.scipy.sparse.linalg.cg inside
            jit with BCSR's SpMV (cuSPARSE on a GPU); host clock and block_until_ready around
            each stage (JAX has no event API), host-wall. JAX's CG does not return its iteration
            count: one untimed solve by the same conjugate gradients in a lax.while_loop that
            returns its count (`iterations`).
  jax-cpu   the same on JAX's CPU device
"""
import fembench_peer as fp


def mesh(np, p, real):
    """Coordinates, triangles, the prescribed values, the free numbering, the slot map and the
    CSR pattern, and the stopping rule."""
    a = p.arrays
    tris = a["tris"].reshape(-1, 3).astype(np.int32)
    stop = float(p.scalars["tol"]), int(p.scalars["max_iter"])
    return a["x"].astype(real), a["y"].astype(real), tris, a["dof"], a["g"].astype(real), a["slots"], a["row_ptr"], a["col"], stop


def element_matrices(xp, x, y, tris):
    """Every element's 3 x 3 matrix (b_i b_j + c_i c_j) / (4 A), as (ne, 9)."""
    xs, ys = x[tris], y[tris]
    b = xp.stack([ys[:, 1] - ys[:, 2], ys[:, 2] - ys[:, 0], ys[:, 0] - ys[:, 1]], 1)
    c = xp.stack([xs[:, 2] - xs[:, 1], xs[:, 0] - xs[:, 2], xs[:, 1] - xs[:, 0]], 1)
    area4 = 2.0 * (b[:, 0] * c[:, 1] - b[:, 1] * c[:, 0])
    k = (b[:, :, None] * b[:, None, :] + c[:, :, None] * c[:, None, :]) / area4[:, None, None]
    return k.reshape(-1, 9)


def jax_cg(p):
    try:
        import numpy as np
    except ImportError as e:
        fp.skip(p.folder, f"NumPy is not installed ({e})")
    jax, dev = fp.jax_on(p)
    import jax.numpy as jnp
    from jax.experimental import sparse
    from jax.scipy.sparse.linalg import cg

    real = p.real()
    x, y, tris, dof, g, slots, row_ptr, col, (tol, max_iter) = mesh(np, p, real)
    n, nnz = len(row_ptr) - 1, len(col)
    # Every entry goes somewhere: a prescribed row's or column's to a spare slot past the values;
    # the right-hand side takes -k_ij g_j of a free row's prescribed columns, the rest a spare row.
    rows = np.repeat(dof[tris], 3, axis=1).ravel()
    cols_free = np.tile(dof[tris], (1, 3)).ravel() >= 0
    to_rhs = (rows >= 0) & ~cols_free
    slot = np.where(slots >= 0, slots, nnz).astype(np.int32)
    rhs_row = np.where(to_rhs, rows, n).astype(np.int32)
    gj = np.tile(tris, (1, 3)).ravel()
    put = lambda a: jax.device_put(a, dev)
    args = [put(v) for v in (x, y, tris, slot, rhs_row, gj, g)]
    ptr, cidx = put(row_ptr.astype(np.int32)), put(col.astype(np.int32))

    @jax.jit
    def assemble(x, y, tris, slot, rhs_row, gj, g):
        k = element_matrices(jnp, x, y, tris).reshape(-1)
        vals = jax.ops.segment_sum(k, slot, nnz + 1)[:nnz]
        return vals, jax.ops.segment_sum(-k * g[gj], rhs_row, n + 1)[:n]

    bcsr = lambda vals, cidx, ptr: sparse.BCSR((vals, cidx, ptr), shape=(n, n), indices_sorted=True, unique_indices=True)
    # The timed solve closes over the pattern, so that XLA compiles it as constants: on an H200
    # at 484K triangles its iteration takes less than half the time of the same solve with the
    # pattern passed as arguments (results/published/h200 against h200-x2-reproduce, whose route
    # passes it), at the price of a cold compile that grows with the mesh. The untimed count
    # takes the pattern as arguments: it compiles in seconds.
    solve = jax.jit(lambda vals, b: cg(bcsr(vals, cidx, ptr).__matmul__, b, tol=tol, atol=0.0, maxiter=max_iter)[0])
    state = {}

    def elements():
        state["vals"], state["b"] = jax.block_until_ready(assemble(*args))

    def solving():
        state["x"] = jax.block_until_ready(solve(state["vals"], state["b"]))

    elements()
    solving()
    checked = {"x": np.array(state["x"], copy=True)}
    count = jax.jit(lambda vals, b, cidx, ptr: iterations(jax, bcsr(vals, cidx, ptr).__matmul__, b, tol, max_iter))
    checked["iterations"] = np.array([int(count(state["vals"], state["b"], cidx, ptr))], dtype=np.int32)
    totals, stages = fp.time_stages(p, [("elements", elements), ("solve", solving)], fp.host_clock(lambda: None))
    fp.finish(p, f"JAX {jax.__version__} ({dev.platform}, jit, BCSR, jax.scipy cg; iterations counted by the same CG)", "host-wall", totals, checked, stages)


def iterations(jax, matvec, b, tol, max_iter):
    """How many iterations JAX's CG takes, which it does not return: the same conjugate gradients
    (x = 0 first; each iteration one product, two dot products at the highest precision; stop
    once r.r <= tol^2 b.b or after max_iter, as jax.scipy.sparse.linalg.cg without a
    preconditioner), in a lax.while_loop that keeps its count. The solution is not needed. On a
    GPU the reductions' rounding can differ from run to run, so the count can differ from the
    timed solve's by an iteration or two, as two runs of JAX's own CG can."""
    jnp = jax.numpy
    dot = lambda u, v: jnp.vdot(u, v, precision=jax.lax.Precision.HIGHEST)
    stop = tol * tol * dot(b, b)

    def step(s):
        r, rr, d, k = s
        ad = matvec(d)
        r = r - (rr / dot(d, ad)) * ad
        new = dot(r, r)
        return r, new, r + (new / rr) * d, k + 1

    return jax.lax.while_loop(lambda s: (s[1] > stop) & (s[3] < max_iter), step, (b, dot(b, b), b, 0))[3]


def warp_cg(p):
    try:
        import numpy as np
    except ImportError as e:
        fp.skip(p.folder, f"NumPy is not installed ({e})")
    wp, device = fp.warp_on(p)
    import warp.optim.linear as wlin
    import warp.sparse as wsp

    real = p.real()
    x, y, tris, dof, g, slots, row_ptr, col, (tol, max_iter) = mesh(np, p, real)
    n = len(row_ptr) - 1
    wreal = wp.float32 if p.precision == "f32" else wp.float64
    to = lambda v, t: wp.array(v, dtype=t, device=device)
    # The matrix on our pattern: its values are the slots the element kernel adds into.
    a = wsp.bsr_zeros(n, n, wreal, device=device)
    rows = np.repeat(np.arange(n, dtype=np.int32), np.diff(row_ptr))
    wsp.bsr_set_from_triplets(a, to(rows, int), to(col.astype(np.int32), int), to(np.ones(len(col), dtype=real), wreal), prune_numerical_zeros=False)
    if a.nnz_sync() != len(col) or not (a.columns.numpy()[: len(col)] == col).all():
        raise RuntimeError("Warp's matrix does not keep our CSR pattern's order")
    mesh_d = [to(x, wreal), to(y, wreal), to(tris, wp.vec3i), to(dof, int), to(g, wreal), to(slots, int)]
    b, sol = wp.zeros(n, dtype=wreal, device=device), wp.zeros(n, dtype=wreal, device=device)
    kernel = _warp_elements(wp, wreal)

    def elements():
        a.values.zero_()
        b.zero_()
        wp.launch(kernel, dim=len(tris), inputs=[*mesh_d, a.values, b], device=device)

    solver, solve = _warp_solver(wp, wlin, device, a, b, sol, tol, max_iter)
    a.values.fill_(float("nan"))
    sol.fill_(float("nan"))
    elements()
    iterations = solve()
    wp.synchronize_device(device)
    checked = {"x": sol.numpy().copy(), "iterations": np.array([iterations()], dtype=np.int32)}
    sync = lambda: wp.synchronize_device(device)
    if p.device is None:
        clock, timer, where = fp.host_clock(sync), "host-wall", "cpu"
    else:
        clock = fp.event_clock(lambda: fp.WarpEvent(wp, device), lambda s, e: wp.get_event_elapsed_time(s.e, e.e), sync)
        timer, where = "device-event-open", f"{device.name}, warp.optim.linear.cg, {solver}"
    totals, stages = fp.time_stages(p, [("elements", elements), ("solve", solve)], clock)
    fp.finish(p, f"Warp {wp.__version__} ({where})", timer, totals, checked, stages)


def _warp_solver(wp, wlin, device, a, b, sol, tol, max_iter):
    """Warp's CG on the case's device, its buffers allocated once (run=False): (how it runs,
    solve), where `solve()` runs one solve from x = 0 and returns a function giving its
    iteration count. On a GPU, convergence is tested on the device every iteration
    (check_every=0): Warp records its iteration loop as a conditional CUDA graph at each call and
    launches it; on the host, every iteration."""
    on_gpu = device.is_cuda
    if on_gpu and not wp.is_conditional_graph_supported():
        raise RuntimeError("this CUDA driver has no conditional graphs: Warp's CG would run to maxiter")
    cg = wlin.cg(a, b, sol, tol=tol, atol=0.0, maxiter=max_iter, check_every=0 if on_gpu else 1, use_cuda_graph=True, run=False)

    def solve():
        sol.zero_()
        count = cg()[0]
        return (lambda: int(count.numpy()[0])) if on_gpu else (lambda: count)

    return ("a conditional CUDA graph a solve" if on_gpu else "host checks"), solve


_WARP_KERNELS = {}


def _warp_elements(wp, wreal):
    """The element stage's kernel (made once a worker and precision): each triangle's matrix,
    added into the CSR values through the slot map, and -k_ij g_j of a free row's prescribed
    columns into the right-hand side."""
    key = str(wreal)
    if key in _WARP_KERNELS:
        return _WARP_KERNELS[key]

    @wp.kernel(module="unique")
    def elements(x: wp.array(dtype=wreal), y: wp.array(dtype=wreal), tris: wp.array(dtype=wp.vec3i), dof: wp.array(dtype=int), g: wp.array(dtype=wreal), slots: wp.array(dtype=int), vals: wp.array(dtype=wreal), rhs: wp.array(dtype=wreal)):
        e = wp.tid()
        t = tris[e]
        bx = wp.vector(y[t[1]] - y[t[2]], y[t[2]] - y[t[0]], y[t[0]] - y[t[1]])
        cx = wp.vector(x[t[2]] - x[t[1]], x[t[0]] - x[t[2]], x[t[1]] - x[t[0]])
        area4 = wreal(2.0) * (bx[0] * cx[1] - bx[1] * cx[0])
        for i in range(3):
            r = dof[t[i]]
            if r >= 0:
                for j in range(3):
                    k = (bx[i] * bx[j] + cx[i] * cx[j]) / area4
                    s = slots[9 * e + 3 * i + j]
                    if s >= 0:
                        wp.atomic_add(vals, s, k)
                    else:
                        wp.atomic_add(rhs, r, -k * g[t[j]])

    _WARP_KERNELS[key] = elements
    return elements


ROUTES = {"warp-cg": warp_cg, "warp-cpu": warp_cg, "jax-cg": jax_cg, "jax-cpu": jax_cg}

if __name__ == "__main__":
    fp.main(ROUTES)
