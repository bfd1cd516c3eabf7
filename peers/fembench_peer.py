"""The protocol between fembench and a Python peer (the `external` peer kind).

fembench writes a folder with `problem.json` and one raw little-endian file per input array for
each case. A script ends with `main(ROUTES)`: run as `python3 <script> --serve`, it is fembench's
worker for the whole run, reading one case folder a line on its standard input and answering
`done <folder>` on its standard output once the case's `result.json` is written (importing CuPy
or PyTorch and making a CUDA context is paid once a run, not once a case); run as
`python3 <script> <folder>`, it runs that one case. Cases run one at a time, never beside a
method of fembench's.

A route runs once on poisoned outputs (the checked pass), times itself with `time_gpu` (CUDA
events around each repetition) or `time_host` (the host clock), and hands back the samples, its
library versions and the checked pass's outputs with `finish`. Where the case asks for cold
runs, the same functions time them too, each repetition after a flush: `flush_with` makes one
from the library's own buffer on the device; on the host a NumPy array is written. fembench checks the outputs
against its f64 reference like any method's. A missing package is `skip`: the row says why. An
exception becomes `{"error": traceback}`, a failed row. After each case the worker frees what
CuPy and PyTorch keep cached on the device.
"""
import gc
import json
import os
import sys
import time
import traceback

DTYPES = {"f64": "<f8", "f32": "<f4", "i32": "<i4", "i64": "<i8", "u32": "<u4"}


class Problem:
    """The case as fembench hands it over: route, precision, device, repetition rule, scalars
    and arrays (numpy, on the host)."""

    def __init__(self, folder):
        import numpy as np

        self.folder = folder
        with open(os.path.join(folder, "problem.json")) as f:
            spec = json.load(f)
        self.route = spec["route"]
        self.precision = spec["precision"]
        self.device = spec.get("device")
        self.measure = spec["measure"]
        # The cache modes the case asks for, and the bytes a flush writes (twice the device's
        # last-level cache, as fembench's own flush).
        self.modes = spec.get("modes", ["warm"])
        self.flush_bytes = spec.get("flush_bytes", 0)
        self.cold_samples = None
        self.scalars = spec.get("scalars", {})
        self.arrays = {
            name: np.fromfile(os.path.join(folder, a["file"]), dtype=DTYPES[a["dtype"]], count=a["len"])
            for name, a in spec.get("arrays", {}).items()
        }

    def real(self):
        """The numpy dtype of the case's precision."""
        import numpy as np

        return np.float32 if self.precision == "f32" else np.float64


class Skip(Exception):
    """A route that cannot run here; its message is the row's reason."""


def _write_result(folder, result):
    with open(os.path.join(folder, "result.json"), "w") as f:
        json.dump(result, f)


def _release():
    """Frees what the libraries keep cached on the device, so that the next case (of fembench's
    own methods, between peer cases) finds the memory free."""
    gc.collect()
    cupy, torch = sys.modules.get("cupy"), sys.modules.get("torch")
    try:
        if cupy is not None:
            cupy.get_default_memory_pool().free_all_blocks()
            cupy.get_default_pinned_memory_pool().free_all_blocks()
        if torch is not None and torch.cuda.is_initialized():
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
    except Exception:  # noqa: BLE001 (a failed release must not fail the finished case)
        traceback.print_exc()


def run_case(routes, folder):
    """One case: its route on the problem in `folder`, the result written whatever happens."""
    try:
        try:
            import numpy  # noqa: F401
        except ImportError as e:
            raise Skip(f"NumPy is not installed ({e})")
        problem = Problem(folder)
        if problem.route not in routes:
            raise RuntimeError(f"no route {problem.route!r} in this script")
        routes[problem.route](problem)
    except Skip as s:
        _write_result(folder, {"skipped": str(s)})
    except Exception:  # noqa: BLE001 (any failure is the case's, reported in its row)
        _write_result(folder, {"error": traceback.format_exc(limit=6)})
    finally:
        _release()


def main(routes):
    """`--serve`: fembench's worker (one case folder a line, `done <folder>` once written);
    otherwise the one case in the folder named by the first argument."""
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        answers, sys.stdout = sys.stdout, sys.stderr
        for line in sys.stdin:
            folder = line.strip()
            if folder:
                run_case(routes, folder)
                answers.write(f"done {folder}\n")
                answers.flush()
    else:
        run_case(routes, sys.argv[1])


def _enough(samples, m):
    """fembench's stopping rule without the noise target: at least min_reps and min_time_s, at
    most max_reps, and no more once max_time_s is spent (0: no limit)."""
    n, total = len(samples), sum(samples)
    if n >= max(m["max_reps"], 1):
        return True
    if n < max(m["min_reps"], 1):
        return False
    return total >= m["min_time_s"] or (m["max_time_s"] > 0 and total >= m["max_time_s"])


def flush_with(problem, buffer_of, fill):
    """The flush of a cold repetition on the device: `fill(buffer, i)` over one buffer of the
    case's flush size, made once by `buffer_of(words)` (4-byte words) in the route's library.
    None where the case runs warm only."""
    if "cold" not in problem.modes or problem.flush_bytes <= 0:
        return None
    buffer = buffer_of(max(problem.flush_bytes // 4, 1))
    return lambda i: fill(buffer, i)


def _host_flush(problem):
    """A cold repetition's flush on the host: an array of the flush size written (the host's
    caches hold none of the route's data after it)."""
    import numpy as np

    if "cold" not in problem.modes:
        return None
    buffer = np.empty(max(problem.flush_bytes, 64 << 20) // 4, dtype=np.int32)

    def flush(i):
        buffer.fill(i)

    return flush


def _timed(problem, one, flush, synchronize):
    """Warm samples of `one()` (seconds), after the warm-ups; where the case asks for cold runs
    and `flush` is given, as many cold samples, each after `flush(i)` and `synchronize()` (kept
    in `problem.cold_samples` for `finish`)."""
    m = problem.measure
    for _ in range(m["warmup"]):
        one()
    synchronize()
    samples = []
    while not _enough(samples, m):
        samples.append(one())
    if flush is not None:
        cold = []
        while not _enough(cold, m):
            flush(len(cold))
            synchronize()
            cold.append(one())
        problem.cold_samples = cold
    return samples


def time_gpu(problem, run, event, elapsed_ms, synchronize, flush=None):
    """Seconds of each timed repetition of `run` between two device events, after the warm-ups
    (cold repetitions too where asked, each after `flush`: `flush_with`). The host's work between
    the events (the library's calls, its waits) counts, as it does for a user: fembench records
    these rows as device-event-open."""
    clock = event_clock(event, elapsed_ms, synchronize)
    one = lambda: clock(run)
    return _timed(problem, one, flush, synchronize)


def time_host(problem, run):
    """Seconds of each timed repetition of `run` by the host clock, after the warm-ups (cold
    repetitions too where asked, each after the host's flush)."""
    clock = host_clock(lambda: None)
    one = lambda: clock(run)
    return _timed(problem, one, _host_flush(problem), lambda: None)


def time_stages(problem, stages, clock):
    """Whole passes of `stages` (a list of (name, fn), run in order), each stage timed on its
    own by `clock(fn)` (seconds: `host_clock` or `event_clock`), after the case's warm-up
    passes, until its rule is met on the passes' totals. Returns (totals, {name: samples})."""
    m = problem.measure
    for _ in range(m["warmup"]):
        for _, fn in stages:
            fn()
    per, totals = {name: [] for name, _ in stages}, []
    while not _enough(totals, m):
        total = 0.0
        for name, fn in stages:
            s = clock(fn)
            per[name].append(s)
            total += s
        totals.append(total)
    return totals, per


def host_clock(synchronize):
    """A stage's seconds by the host clock, up to `synchronize()`'s return."""

    def clock(fn):
        t0 = time.perf_counter()
        fn()
        synchronize()
        return time.perf_counter() - t0

    return clock


def event_clock(event, elapsed_ms, synchronize):
    """A stage's seconds between two device events (the host's calls between them count)."""

    def clock(fn):
        start, stop = event(), event()
        start.record()
        fn()
        stop.record()
        synchronize()
        return elapsed_ms(start, stop) / 1e3

    return clock


def finish(problem, library, timer, samples, outputs, stages=None):
    """Writes `result.json` and one raw file per output (numpy arrays on the host); `stages`:
    each stage's samples where the route times its stages (`time_stages`), `samples` then being
    the passes' totals."""
    import numpy as np

    described = {}
    for name, a in outputs.items():
        a = np.ascontiguousarray(a)
        dtype = {np.dtype("<f8"): "f64", np.dtype("<f4"): "f32", np.dtype("<i4"): "i32", np.dtype("<i8"): "i64"}[a.dtype]
        a.tofile(os.path.join(problem.folder, f"out_{name}.bin"))
        described[name] = {"dtype": dtype, "len": int(a.size), "file": f"out_{name}.bin"}
    result = {"library": library, "timer": timer, "samples_s": [float(s) for s in samples], "outputs": described}
    if problem.cold_samples is not None:
        result["cold_samples_s"] = [float(s) for s in problem.cold_samples]
    if stages is not None:
        result["stages"] = {name: [float(s) for s in v] for name, v in stages.items()}
    _write_result(problem.folder, result)


def compile_cache(library):
    """The folder where `library` keeps what it compiles: under fembench's prepared-problem cache
    (`FEMBENCH_COMPILE_CACHE`, set by the harness), so that a later run reads it back; else the
    worker's own folder, gone with it. TorchInductor, Triton and CuPy find theirs in their own
    variables, which the harness sets likewise."""
    root = os.environ.get("FEMBENCH_COMPILE_CACHE") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "compiled")
    return os.path.join(root, library)


def warp_on(p):
    """Warp, initialised once a worker and set to the case's device (a CUDA device, or Warp's CPU
    device where the case runs on the host): `(wp, device)`. Warp's kernel cache is
    `compile_cache("warp")`."""
    try:
        import warp as wp
    except ImportError as e:
        skip(p.folder, f"Warp is not installed ({e})")
    wp.config.quiet = True
    wp.config.kernel_cache_dir = compile_cache("warp")
    wp.init()
    if p.device is not None and not wp.is_cuda_available():
        skip(p.folder, "Warp sees no CUDA device")
    device = wp.get_device(f"cuda:{p.device}" if p.device is not None else "cpu")
    wp.set_device(device)
    return wp, device


class WarpEvent:
    """A timing event on Warp's stream, as `time_gpu` records one."""

    def __init__(self, wp, device):
        self.wp, self.e = wp, wp.Event(device, enable_timing=True)

    def record(self):
        self.wp.record_event(self.e)


def time_warp(p, wp, device, run):
    """`run` timed as Warp's users time it: Warp's events on the case's GPU (device-event-open),
    or the host clock on Warp's CPU device. Returns (samples, timer)."""
    sync = lambda: wp.synchronize_device(device)
    if p.device is None:
        return time_host(p, lambda: (run(), sync())), "host-wall"
    flush = flush_with(p, lambda n: wp.empty(n, dtype=wp.int32, device=device), lambda b, i: b.fill_(i))
    event = lambda: WarpEvent(wp, device)
    samples = time_gpu(p, run, event, lambda a, b: wp.get_event_elapsed_time(a.e, b.e), sync, flush)
    return samples, "device-event-open"


def jax_on(p):
    """JAX on the case's device (its GPU, or JAX's CPU device where the case runs on the host),
    with 64-bit floats enabled for f64 cases and matrix products at full precision (not TF32):
    `(jax, device)`. JAX takes 75% of the GPU's memory
    at its first use unless told otherwise, and this worker shares the GPU with fembench's own
    methods for the whole run: it allocates as it goes."""
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import jax
    except ImportError as e:
        skip(p.folder, f"JAX is not installed ({e})")
    if not getattr(jax_on, "cache_set", False):
        # Every program into the compile cache, before the first compile (JAX's own thresholds
        # would keep out the quick ones).
        jax.config.update("jax_compilation_cache_dir", compile_cache("jax"))
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax_on.cache_set = True
    if p.precision == "f64":
        jax.config.update("jax_enable_x64", True)
    # Products and contractions in the case's precision: on a GPU, JAX's default lets f32 matrix
    # products run in TF32, which the f32 checks' bounds do not allow.
    jax.config.update("jax_default_matmul_precision", "highest")
    try:
        dev = jax.devices("gpu")[p.device or 0] if p.device is not None else jax.devices("cpu")[0]
    except RuntimeError as e:
        skip(p.folder, f"JAX has no such device ({e})")
    return jax, dev


def skip(folder, reason):
    """The route cannot run here (a package is missing): fembench records the row as skipped."""
    del folder  # the case's folder, where `run_case` writes the result
    raise Skip(reason)
