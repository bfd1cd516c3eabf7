#!/usr/bin/env python3
"""Pogo's explicit step (Huthwaite 2014, Eq. 4) as a user of a GPU library writes it, for
fembench's `external` peers: U_next = K' U_curr + C' U_prev + F' a(t), on the operators fembench
builds (K' as CSR in node blocks of 2 x 2, C' and the source's coefficients by dof) and handed
over as arrays. Each route runs the experiment's checked steps from rest and hands back U after
them; fembench checks it against its element-by-element f64 oracle. A timed repetition runs
`timed_steps` steps on from there (their amplitudes repeat the checked pass's: a step's time does
not depend on them).

  warp-bsr   NVIDIA Warp: K' as a BSR matrix of 2 x 2 blocks (warp.sparse), U as arrays of
             2-vectors; a step is one Warp kernel (U_next = C' U_prev + F' a_k, the amplitude
             read on the device), bsr_mv(K', U_curr, U_next, beta=1) and the step counter's
             advance, captured once as a CUDA graph for each of the three rotations of the
             vectors (wp.ScopedCapture), so that a step is one graph launch; Warp's events
             (device-event-open)
  warp-cpu   the same on Warp's CPU device (no graphs); host clock
  jax-bcsr   JAX: K' as jax.experimental.sparse.BCSR, the steps a lax.fori_loop in one jitted
             function (donated state, no host round trip per step); host clock around each call
             and block_until_ready (JAX has no event API), host-wall
  jax-cpu    the same on JAX's CPU device
"""
import fembench_peer as fp


def operators(np, p, real):
    """K' (CSR), C', F' (the source's coefficients as a dense vector) and the amplitudes, in the
    case's precision; the steps of the checked pass and of a timed repetition."""
    a = p.arrays
    n = len(a["cp"])
    f = np.zeros(n, dtype=real)
    np.add.at(f, a["src_dof"].astype(np.int64), a["src_coef"].astype(real))
    steps = int(p.scalars["check_steps"]), int(p.scalars["timed_steps"])
    return a["row_ptr"], a["col"], a["kp"].astype(real), a["cp"].astype(real), f, a["amp"].astype(real), steps


def warp_bsr(p):
    try:
        import numpy as np
    except ImportError as e:
        fp.skip(p.folder, f"NumPy is not installed ({e})")
    wp, device = fp.warp_on(p)
    import warp.sparse as wsp

    real = p.real()
    row_ptr, col, kp, cp, f, amp, (check, timed) = operators(np, p, real)
    n = len(cp) // 2
    wreal, vec, mat = (wp.float32, wp.vec2, wp.mat22) if p.precision == "f32" else (wp.float64, wp.vec2d, wp.mat22d)
    # Node i's block row: its rows 2i and 2i+1 hold the same columns, in pairs (a node's x and y).
    starts = row_ptr[0:-1:2].astype(np.int64)
    counts = (row_ptr[1::2] - row_ptr[0:-1:2]).astype(np.int64) // 2
    brow = np.repeat(np.arange(n), counts)
    first = np.repeat(starts, counts) + 2 * (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts))
    bcol = col[first] // 2
    width = np.repeat(counts * 2, counts)
    blocks = np.stack([kp[first], kp[first + 1], kp[first + width], kp[first + width + 1]], 1).reshape(-1, 2, 2)
    k = wsp.bsr_zeros(n, n, mat, device=device)
    to = lambda v, t: wp.array(v, dtype=t, device=device)
    wsp.bsr_set_from_triplets(k, to(brow.astype(np.int32), int), to(bcol.astype(np.int32), int), to(blocks, mat), prune_numerical_zeros=False)
    u = [wp.zeros(n, dtype=vec, device=device) for _ in range(3)]
    cpv, fv, ampv = to(cp.reshape(-1, 2), vec), to(f.reshape(-1, 2), vec), to(amp, wreal)
    step_k = wp.zeros(1, dtype=int, device=device)
    update, advance = _warp_kernels(wp, vec, wreal)

    def step(r):
        prev, curr, nxt = u[r % 3], u[(r + 1) % 3], u[(r + 2) % 3]
        wp.launch(update, dim=n, inputs=[nxt, prev, cpv, fv, ampv, step_k], device=device)
        wsp.bsr_mv(k, curr, nxt, alpha=1.0, beta=1.0)
        wp.launch(advance, dim=1, inputs=[step_k], device=device)

    graphs = []
    if device.is_cuda:
        # One step first, uncaptured, so that every kernel is loaded before the captures (the
        # checked pass starts again from rest).
        step(0)
        for r in range(3):
            with wp.ScopedCapture(device=device, force_module_load=False) as capture:
                step(r)
            graphs.append(capture.graph)
    done = [0]

    def steps(count):
        for _ in range(count):
            if graphs:
                wp.capture_launch(graphs[done[0] % 3])
            else:
                step(done[0] % 3)
            done[0] += 1

    # The checked pass from rest: U_prev = U_curr = 0, U_next poisoned.
    for v in u[:2]:
        v.zero_()
    u[2].fill_(vec(float("nan"), float("nan")))
    step_k.zero_()
    steps(check)
    wp.synchronize_device(device)
    # A copy: on Warp's CPU device numpy() is a view of the array, which the timed steps go on writing.
    checked = {"u": u[(done[0] + 1) % 3].numpy().reshape(-1).copy()}
    samples, timer = fp.time_warp(p, wp, device, lambda: steps(timed))
    where = "cpu" if p.device is None else f"{device.name}, warp.sparse bsr_mv, CUDA graphs"
    fp.finish(p, f"Warp {wp.__version__} ({where})", timer, samples, checked)


_WARP_KERNELS = {}


def _warp_kernels(wp, vec, wreal):
    """The step's kernels (made once a worker and precision): the update U_next = C' U_prev +
    F' a_k, k being the device's step counter, and the counter's advance."""
    key = str(wreal)
    if key not in _WARP_KERNELS:

        @wp.kernel(module="unique")
        def update(nxt: wp.array(dtype=vec), prev: wp.array(dtype=vec), cp: wp.array(dtype=vec), f: wp.array(dtype=vec), amp: wp.array(dtype=wreal), k: wp.array(dtype=int)):
            i = wp.tid()
            nxt[i] = wp.cw_mul(cp[i], prev[i]) + f[i] * amp[k[0] % amp.shape[0]]

        @wp.kernel(module="unique")
        def advance(k: wp.array(dtype=int)):
            k[0] = k[0] + 1

        _WARP_KERNELS[key] = (update, advance)
    return _WARP_KERNELS[key]


def jax_bcsr(p):
    try:
        import numpy as np
    except ImportError as e:
        fp.skip(p.folder, f"NumPy is not installed ({e})")
    jax, dev = fp.jax_on(p)
    from jax.experimental import sparse

    real = p.real()
    row_ptr, col, kp, cp, f, amp, (check, timed) = operators(np, p, real)
    n = len(cp)
    put = lambda a: jax.device_put(a, dev)
    k = sparse.BCSR((put(kp), put(col.astype(np.int32)), put(row_ptr.astype(np.int32))), shape=(n, n), indices_sorted=True)
    cpd, fd, ampd = put(cp), put(f), put(amp)

    def run(k, prev, curr, start, count):
        def body(j, state):
            prev, curr = state
            return curr, k @ curr + cpd * prev + fd * ampd[(start + j) % ampd.shape[0]]

        return jax.lax.fori_loop(0, count, body, (prev, curr))

    stepped = jax.jit(run, static_argnums=(4,), donate_argnums=(1, 2))
    zero = lambda: put(np.zeros(n, dtype=real))
    prev, curr = jax.block_until_ready(stepped(k, zero(), zero(), 0, check))
    checked = {"u": np.array(curr, copy=True)}
    state = [prev, curr]

    def again():
        state[:] = jax.block_until_ready(stepped(k, state[0], state[1], check, timed))

    # The function of a timed repetition's step count, compiled before the timer.
    again()
    samples = fp.time_host(p, again)
    fp.finish(p, f"JAX {jax.__version__} ({dev.platform}, BCSR, jit)", "host-wall", samples, checked)


ROUTES = {"warp-bsr": warp_bsr, "warp-cpu": warp_bsr, "jax-bcsr": jax_bcsr, "jax-cpu": jax_bcsr}

if __name__ == "__main__":
    fp.main(ROUTES)
