"""The protocol between fembench and a Python peer (the `external` peer kind).

fembench writes a folder with `problem.json` and one raw little-endian file per input array, then
runs `python3 <script> <folder>` on the case's device, one case at a time. The script reads the
problem with `load`, runs its route once on poisoned outputs (the checked pass), times the route
with `time_gpu` (CUDA events around each repetition) or `time_host` (the host clock), and hands
back the samples, its library versions and the checked pass's outputs with `finish`. fembench
checks the outputs against its f64 reference like any method's. A missing package is `skip`:
the row says why.
"""
import json
import os
import sys
import time

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
        self.scalars = spec.get("scalars", {})
        self.arrays = {
            name: np.fromfile(os.path.join(folder, a["file"]), dtype=DTYPES[a["dtype"]], count=a["len"])
            for name, a in spec.get("arrays", {}).items()
        }

    def real(self):
        """The numpy dtype of the case's precision."""
        import numpy as np

        return np.float32 if self.precision == "f32" else np.float64


def load():
    """The case fembench handed over; a host without NumPy skips it."""
    try:
        import numpy  # noqa: F401
    except ImportError as e:
        skip(sys.argv[1], f"NumPy is not installed ({e})")
    return Problem(sys.argv[1])


def _enough(samples, m):
    """fembench's stopping rule without the noise target: at least min_reps and min_time_s, at
    most max_reps, and no more once max_time_s is spent (0: no limit)."""
    n, total = len(samples), sum(samples)
    if n >= max(m["max_reps"], 1):
        return True
    if n < max(m["min_reps"], 1):
        return False
    return total >= m["min_time_s"] or (m["max_time_s"] > 0 and total >= m["max_time_s"])


def time_gpu(problem, run, event, elapsed_ms, synchronize):
    """Seconds of each timed repetition of `run` between two device events, after the warm-ups.
    The host's work between the events (the library's calls, its waits) counts, as it does for
    a user: fembench records these rows as device-event-open."""
    m = problem.measure
    for _ in range(m["warmup"]):
        run()
    synchronize()
    samples = []
    while not _enough(samples, m):
        start, stop = event(), event()
        start.record()
        run()
        stop.record()
        synchronize()
        samples.append(elapsed_ms(start, stop) / 1e3)
    return samples


def time_host(problem, run):
    """Seconds of each timed repetition of `run` by the host clock, after the warm-ups."""
    m = problem.measure
    for _ in range(m["warmup"]):
        run()
    samples = []
    while not _enough(samples, m):
        t0 = time.perf_counter()
        run()
        samples.append(time.perf_counter() - t0)
    return samples


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
    with open(os.path.join(problem.folder, "result.json"), "w") as f:
        json.dump(result, f)


def skip(folder, reason):
    """The route cannot run here (a package is missing): fembench records the row as skipped."""
    with open(os.path.join(folder, "result.json"), "w") as f:
        json.dump({"skipped": reason}, f)
    sys.exit(0)
