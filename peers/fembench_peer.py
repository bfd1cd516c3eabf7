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

    def one():
        start, stop = event(), event()
        start.record()
        run()
        stop.record()
        synchronize()
        return elapsed_ms(start, stop) / 1e3

    return _timed(problem, one, flush, synchronize)


def time_host(problem, run):
    """Seconds of each timed repetition of `run` by the host clock, after the warm-ups (cold
    repetitions too where asked, each after the host's flush)."""

    def one():
        t0 = time.perf_counter()
        run()
        return time.perf_counter() - t0

    return _timed(problem, one, _host_flush(problem), lambda: None)


def finish(problem, library, timer, samples, outputs):
    """Writes `result.json` and one raw file per output (numpy arrays on the host)."""
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
    _write_result(problem.folder, result)


def skip(folder, reason):
    """The route cannot run here (a package is missing): fembench records the row as skipped."""
    del folder  # the case's folder, where `run_case` writes the result
    raise Skip(reason)
