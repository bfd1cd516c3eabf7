#!/usr/bin/env python3
"""Sanfui and Sharma's problem (3D linear elasticity on a box of eight-node hexahedra) assembled
as a user of a GPU FEM library does it, for fembench's `external` peers. Every route assembles the
whole matrix every repetition, from the node coordinates; what the mesh alone fixes (the slot
map, the matrix's topology) is built once, before the timer, as a user would. The matrix is
handed over in our CSR pattern (3 dofs a node, node-major) and checked against the f64
reference like every method's.

  jax-segment-sum   JAX, as JAX-FEM assembles: every K^e by array operations at the 2x2x2
                    Gauss points (vmapped over the elements by broadcasting), then
                    jax.ops.segment_sum of all 576 entries of every element into the CSR
                    values through the slot map, one jitted function; host clock and
                    block_until_ready (JAX has no event API), host-wall
  jax-cpu           the same on JAX's CPU device
  warp-fem          NVIDIA Warp's FEM toolkit: our nodes and hexahedra as a fem.Hexmesh, a
                    vector-valued trilinear space (degree 1), fem.integrate of
                    lambda div u div v + 2 mu D(u):D(v) into a BSR matrix of 3 x 3 blocks; the
                    first call builds the topology and Warp's entry-to-block map (untimed), every
                    repetition then integrates into the same matrix through that map (Warp's
                    pool of temporaries kept); Warp's events (device-event-open)
  warp-cpu          the same on Warp's CPU device; host clock
"""
import fembench_peer as fp


def box(np, p, real):
    """Coordinates (N, 3), elements (ne, 8) in our local order, the CSR pattern, each element's
    node pairs' block positions (ne, 8, 8: node b's place in node a's neighbour list) and the
    Lamé parameters."""
    a = p.arrays
    xyz = np.stack([a["x"], a["y"], a["z"]], 1).astype(real)
    elems = a["elems"].reshape(-1, 8).astype(np.int64)
    return xyz, elems, a["row_ptr"].astype(np.int64), a["col"], a["kpos"].reshape(-1, 8, 8).astype(np.int64), (p.scalars["lambda"], p.scalars["mu"])


def slot_map(np, elems, row_ptr, kpos):
    """The CSR index of every entry (e, 3a + r, 3b + c) of every K^e: row 3 n_a + r, the third
    block of its node pair, column c."""
    rows = 3 * elems[:, :, None] + np.arange(3)[None, None, :]  # (ne, 8 a, 3 r)
    start = row_ptr[rows]  # (ne, 8, 3)
    slots = start[:, :, :, None, None] + 3 * kpos[:, :, None, :, None] + np.arange(3)[None, None, None, None, :]
    return slots.reshape(len(elems), 576)


def stiffness(xp, xyz, elems, lam, mu):
    """Every K^e (ne, 576), row-major 24 x 24, by 2x2x2 Gauss quadrature (weights 1)."""
    import numpy as np

    s = [-1.0, 1.0, 1.0, -1.0, -1.0, 1.0, 1.0, -1.0], [-1.0, -1.0, 1.0, 1.0, -1.0, -1.0, 1.0, 1.0], [-1.0, -1.0, -1.0, -1.0, 1.0, 1.0, 1.0, 1.0]
    sg = np.array(s).T  # (8 a, 3)
    g0 = 1.0 / np.sqrt(3.0)
    pts = np.array([[g0 if q & 1 else -g0, g0 if q & 2 else -g0, g0 if q & 4 else -g0] for q in range(8)])
    one = 1.0 + sg[None, :, :] * pts[:, None, :]  # (8 q, 8 a, 3)
    d = np.stack([sg[None, :, 0] * one[:, :, 1] * one[:, :, 2], sg[None, :, 1] * one[:, :, 0] * one[:, :, 2], sg[None, :, 2] * one[:, :, 0] * one[:, :, 1]], -1) / 8.0
    d = xp.asarray(d.astype(xyz.dtype))  # dN_a / dxi_r at point q: (q, a, r)
    x = xyz[elems]  # (ne, 8, 3)
    jac = xp.einsum("qar,eac->eqrc", d, x)
    det = xp.linalg.det(jac)
    g = xp.einsum("eqcr,qar->eqac", xp.linalg.inv(jac), d)  # physical gradients (e, q, a, c)
    gg = xp.einsum("eqac,eqbc->eqab", g, g)
    k = lam * xp.einsum("eqar,eqbc->eqarbc", g, g) + mu * xp.einsum("eqac,eqbr->eqarbc", g, g)
    k = k + mu * gg[:, :, :, None, :, None] * xp.eye(3, dtype=xyz.dtype)[None, None, None, :, None, :]
    return xp.einsum("eq,eqarbc->earbc", det, k).reshape(-1, 576)


def jax_segment_sum(p):
    try:
        import numpy as np
    except ImportError as e:
        fp.skip(p.folder, f"NumPy is not installed ({e})")
    jax, dev = fp.jax_on(p)
    import jax.numpy as jnp

    real = p.real()
    xyz, elems, row_ptr, col, kpos, (lam, mu) = box(np, p, real)
    nnz = len(col)
    put = lambda a: jax.device_put(a, dev)
    args = put(xyz), put(elems.astype(np.int32)), put(slot_map(np, elems, row_ptr, kpos).astype(np.int32).ravel())

    @jax.jit
    def assemble(xyz, elems, slots):
        return jax.ops.segment_sum(stiffness(jnp, xyz, elems, lam, mu).reshape(-1), slots, nnz)

    vals = jax.block_until_ready(assemble(*args))
    checked = {"vals": np.array(vals, copy=True)}
    samples = fp.time_host(p, lambda: jax.block_until_ready(assemble(*args)))
    fp.finish(p, f"JAX {jax.__version__} ({dev.platform}, jit)", "host-wall", samples, checked)


def warp_fem(p):
    try:
        import numpy as np
        import warp.fem as fem
    except ImportError as e:
        fp.skip(p.folder, f"Warp is not installed ({e})")
    wp, device = fp.warp_on(p)
    real = p.real()
    xyz, elems, row_ptr, col, _, (lam, mu) = box(np, p, real)
    wreal, vec = (wp.float32, wp.vec3) if p.precision == "f32" else (wp.float64, wp.vec3d)
    geo = fem.Hexmesh(wp.array(elems.astype(np.int32), dtype=int, device=device), wp.array(xyz, dtype=vec, device=device))
    space = fem.make_polynomial_space(geo, degree=1, dtype=vec)
    # Degree 1 on a Hexmesh: Warp's nodes are the mesh's vertices, ours.
    if not np.allclose(space.node_positions().numpy(), xyz, rtol=0, atol=1e-9 * np.ptp(xyz)):
        raise RuntimeError("Warp's nodes are not the mesh's vertices in their order")
    form = _warp_form(wp, fem, wreal)
    domain = fem.Cells(geo)
    fields = {"u": fem.make_trial(space, domain=domain), "v": fem.make_test(space, domain=domain)}
    values = {"lam": wreal(lam), "mu": wreal(mu)}
    first = {"construction": "mapped_atomic", "prune_numerical_zeros": False}
    out = fem.integrate(form, fields=fields, values=values, output_dtype=wreal, bsr_options=first)
    again = {"construction": "mapped_atomic", "capacity": "reuse"}

    def run():
        fem.integrate(form, fields=fields, values=values, output_dtype=wreal, output=out, bsr_options=again)

    out.values.fill_(float("nan"))
    run()
    wp.synchronize_device(device)
    checked = {"vals": warp_to_ours(np, out, row_ptr, col)}
    samples, timer = fp.time_warp(p, wp, device, run)
    where = "cpu" if p.device is None else f"{device.name}, warp.fem"
    fp.finish(p, f"Warp {wp.__version__} ({where})", timer, samples, checked)


def warp_to_ours(np, a, row_ptr, col):
    """Warp's BSR of 3 x 3 blocks, its values in our CSR order (host, untimed)."""
    nnzb = a.nnz_sync()
    offsets, columns = a.offsets.numpy()[: a.nrow + 1], a.columns.numpy()[:nnzb].astype(np.int64)
    blocks = a.values.numpy()[:nnzb].reshape(-1, 3, 3).astype(np.float64)
    brow = np.repeat(np.arange(a.nrow), np.diff(offsets))
    # Each block's first entry in our row 3 brow: where column 3 bcol sits in that row.
    n_cols = 3 * a.ncol
    keys = np.repeat(np.arange(len(row_ptr) - 1, dtype=np.int64), np.diff(row_ptr)) * n_cols + col
    at = np.searchsorted(keys, 3 * brow * n_cols + 3 * columns)
    if len(blocks) * 9 != len(col) or (at >= len(col)).any() or (col[np.minimum(at, len(col) - 1)] != 3 * columns).any():
        raise RuntimeError("Warp's matrix holds a block outside our pattern, or not every block of it")
    vals = np.full(len(col), np.nan)
    for r in range(3):
        start = row_ptr[3 * brow + r] + (at - row_ptr[3 * brow])
        for c in range(3):
            vals[start + c] = blocks[:, r, c]
    return vals


_WARP_FORMS = {}


def _warp_form(wp, fem, wreal):
    """lambda div u div v + 2 mu D(u):D(v), made once a worker and precision (and Warp's pool of
    temporaries, as its examples keep one, so that a repeated integration borrows its scratch
    arrays instead of allocating them inside the timer)."""
    key = str(wreal)
    if key not in _WARP_FORMS:
        if not _WARP_FORMS:
            fem.set_default_temporary_store(fem.TemporaryStore())

        @fem.integrand
        def elasticity(s: fem.Sample, u: fem.Field, v: fem.Field, lam: wreal, mu: wreal):
            return lam * fem.div(u, s) * fem.div(v, s) + wreal(2.0) * mu * wp.ddot(fem.D(u, s), fem.D(v, s))

        _WARP_FORMS[key] = elasticity
    return _WARP_FORMS[key]


ROUTES = {"jax-segment-sum": jax_segment_sum, "jax-cpu": jax_segment_sum, "warp-fem": warp_fem, "warp-cpu": warp_fem}

if __name__ == "__main__":
    fp.main(ROUTES)
