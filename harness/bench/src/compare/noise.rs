//! How much a row moves between two runs of the same binary on the same kind of GPU, by the
//! row's class: what `compare` must allow for before it calls a difference a change.
//!
//! A run's own samples give the within-run interval of its median. Between two processes (and
//! more so between two machines of one kind) some rows move much further: host-clocked stages
//! time the host (allocation through the hypervisor, threads it schedules), transfers cross the
//! host's memory system, and open regions hold host calls. Each row gets a between-run envelope:
//! from the spread of its own medians over earlier runs where there are at least
//! [`HISTORY_MIN`] of them, else its class's floor ([`NoiseClass::floor`]), measured on real
//! A/A pairs (`docs/ci.md`).

/// The classes of rows, by what their timer covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NoiseClass {
    /// Device-event kernels of 50 µs or more.
    Kernel,
    /// Device-event kernels under 50 µs: launch and clock effects weigh more.
    ShortKernel,
    /// Vendor-library calls in a closed region (cuBLAS GEMM, cuSPARSE SpMV): the library picks
    /// its algorithm by heuristics, in each process anew.
    Library,
    /// Uploads and downloads (device events, pinned memory).
    Transfer,
    /// Device-event regions with host calls inside (a library that waits on its stream, a
    /// full run of many launches queued by the host).
    OpenRegion,
    /// Host-clocked stages of a GPU case (allocation, preparation) and sums of stages.
    HostStage,
    /// Rows of the CPU backend (host baselines and references).
    Cpu,
}

/// A device-event row shorter than this is a short kernel.
pub const SHORT_S: f64 = 50e-6;

/// Earlier runs a row needs for its own envelope instead of its class's floor.
pub const HISTORY_MIN: usize = 3;

/// The smallest envelope a row's history may give: below it, rounding of the clocks.
pub const MIN_ENVELOPE: f64 = 0.01;

impl NoiseClass {
    pub const ALL: [NoiseClass; 7] = [
        NoiseClass::Kernel,
        NoiseClass::ShortKernel,
        NoiseClass::Library,
        NoiseClass::Transfer,
        NoiseClass::OpenRegion,
        NoiseClass::HostStage,
        NoiseClass::Cpu,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            NoiseClass::Kernel => "kernel",
            NoiseClass::ShortKernel => "short kernel",
            NoiseClass::Library => "library",
            NoiseClass::Transfer => "transfer",
            NoiseClass::OpenRegion => "open region",
            NoiseClass::HostStage => "host stage",
            NoiseClass::Cpu => "cpu",
        }
    }

    /// The least envelope a row of the class gets from its history: CPU rows, whose medians
    /// move between processes far more than inside one, never less than [`CPU_LEAST`]; the
    /// other classes [`MIN_ENVELOPE`].
    pub fn least(self) -> f64 {
        match self {
            NoiseClass::Cpu => CPU_LEAST,
            _ => MIN_ENVELOPE,
        }
    }

    /// The class's between-run envelope where a row has no history: about 1.2 times the largest
    /// relative change of a median seen in the committed A/A runs (four runs on two H100
    /// machines, three on two H200 machines, every consecutive pair; `docs/ci.md` gives the
    /// measured spreads). A change must exceed it to count. Host-timed rows are judged only
    /// against a history ([`unjudged`]); their floor is what their entry shows where they have
    /// none.
    pub fn floor(self) -> f64 {
        match self {
            NoiseClass::Kernel => 0.065,
            NoiseClass::ShortKernel => 0.25,
            NoiseClass::Library => 0.27,
            NoiseClass::Transfer => 0.35,
            NoiseClass::OpenRegion => 0.60,
            NoiseClass::HostStage => 0.90,
            NoiseClass::Cpu => 0.90,
        }
    }

    /// Whether the row's time moves when other GPU workers share the host (`harness run
    /// --gpus`): the host's clock or its calls are inside it (transfers, open regions, host
    /// stages), or it is short enough, or picked by a library's heuristics, that a busy host
    /// shows in it (on an H200 node, 4 MiB copy kernels of 4.4 µs read 30-39% slower and a
    /// cuBLAS TF32 GEMM 12% slower beside three other workers). Device-event kernels of 50 µs
    /// or more do not move.
    pub fn shares_host(self) -> bool {
        !matches!(self, NoiseClass::Kernel | NoiseClass::Cpu)
    }

    /// Whether rows of the class can fail a job by default only beyond their envelope, which is
    /// wide: they are reported, and read with care.
    pub fn is_noisy(self) -> bool {
        !matches!(self, NoiseClass::Kernel | NoiseClass::ShortKernel | NoiseClass::Library)
    }

    /// The class of a row from its columns. `timer` is `device-event`, `device-event-open`,
    /// `host-wall` or `stage-sum`. Runs made before open regions were marked in `timer` are
    /// recognised by their methods (the cuSPARSE COO route, the cuSPARSE CG, Pogo's full runs).
    pub fn of(backend: &str, timer: &str, metric: &str, case_id: &str, median_s: Option<f64>) -> NoiseClass {
        let legacy_open = ["method=coo-cusparse", "method=cusparse-cg"].iter().any(|m| case_id.contains(m)) || metric.starts_with("full");
        if backend == "cpu" {
            NoiseClass::Cpu
        } else if matches!(timer, "host-wall" | "stage-sum") || metric == "total" {
            NoiseClass::HostStage
        } else if timer == "device-event-open" || legacy_open {
            NoiseClass::OpenRegion
        } else if metric.contains("upload") || metric.contains("download") {
            NoiseClass::Transfer
        } else if ["cublas", "cusparse"].iter().any(|l| case_id.contains(l) || metric.contains(l)) || metric == "gemm" {
            NoiseClass::Library
        } else if median_s.is_some_and(|m| m < SHORT_S) {
            NoiseClass::ShortKernel
        } else {
            NoiseClass::Kernel
        }
    }
}

/// Why a host-clocked row cannot be judged between two runs whose sides had different numbers
/// of other GPU workers beside them (`concurrent_workers`; none: 0): the host was shared
/// differently. None where the row can be judged (device-event kernels always can).
pub fn shared_host(class: NoiseClass, base_workers: Option<f64>, new_workers: Option<f64>) -> Option<String> {
    let (b, n) = (base_workers.unwrap_or(0.0), new_workers.unwrap_or(0.0));
    (class.shares_host() && b != n)
        .then(|| format!("a {} row, with {b:.0} and {n:.0} other GPU workers on the host: not comparable", class.as_str()))
}

/// The widest between-run envelope a CPU row may have and still be judged: a gate that allows
/// more cannot see a 25% slowdown.
pub const CPU_GATE_LIMIT: f64 = 0.20;

/// The least envelope of a judged CPU row (`docs/ci.md`: between two back-to-back runs on the
/// 2-core CI machine, the stablest CPU row's median moved up to 13%).
pub const CPU_LEAST: f64 = 0.15;

/// Earlier runs a host-timed row (CPU, host stage, open region) needs before it can be judged:
/// on the 2-core CI machine a CPU row's median can sit within 9% for ten runs and then move 2.8x
/// (a rare slow mode of the shared host), and between two H200 machines a host stage of a GPU
/// case moved 3.6x and a PyTorch route 1.9x; three runs say nothing, ten show most such modes.
pub const CPU_HISTORY_MIN: usize = 10;

impl NoiseClass {
    /// Whether the host's clock or its calls are the row's time, so that it moves between
    /// processes and machines by far more than any class floor a gate could use: CPU rows, host
    /// stages of GPU cases, and open regions (library routes that the host drives, the Python
    /// peers among them). Such rows are judged only against a history ([`unjudged`]).
    pub fn host_timed(self) -> bool {
        matches!(self, NoiseClass::Cpu | NoiseClass::HostStage | NoiseClass::OpenRegion)
    }
}

/// Why a row is not judged on this runner, or None where it is. A host-timed row
/// ([`NoiseClass::host_timed`]) needs a history of at least [`CPU_HISTORY_MIN`] runs (earlier
/// runs of the same experiments on the same device: the committed runs of the CI machine, or the
/// last runs of main), given as (runs, envelope); a CPU row's envelope there must also stay
/// within [`CPU_GATE_LIMIT`]. On a shared 2-core machine one CPU row's median moved 3x between
/// two processes back to back while another's stayed within 8% over thirty: no class floor
/// serves both.
pub fn unjudged(class: NoiseClass, history: Option<(usize, f64)>) -> Option<String> {
    if !class.host_timed() {
        return None;
    }
    let what = if class == NoiseClass::Cpu { "a CPU row".to_string() } else { format!("a {} row", class.as_str()) };
    match history {
        None => Some(format!(
            "not judged on this runner: {what} is judged against at least {CPU_HISTORY_MIN} earlier runs of its device (--history)"
        )),
        Some((runs, _)) if runs < CPU_HISTORY_MIN => {
            Some(format!("not judged on this runner: {runs} earlier runs of its device, where {what} needs {CPU_HISTORY_MIN} (--history)"))
        }
        Some((_, e)) if class == NoiseClass::Cpu && e > CPU_GATE_LIMIT => Some(format!(
            "not judged on this runner: its envelope from the history, ±{:.0}%, is beyond the ±{:.0}% a gate can use",
            100.0 * e,
            100.0 * CPU_GATE_LIMIT
        )),
        Some(_) => None,
    }
}

/// A row's own between-run envelope from its medians in earlier runs: one and a half times the
/// largest relative distance of one of them from their median, at least [`MIN_ENVELOPE`]; None
/// with fewer than [`HISTORY_MIN`] runs.
pub fn history_envelope(medians: &[f64]) -> Option<f64> {
    let m: Vec<f64> = medians.iter().copied().filter(|v| v.is_finite() && *v > 0.0).collect();
    if m.len() < HISTORY_MIN {
        return None;
    }
    let centre = fembench_core::stats::median(&m);
    let spread = m.iter().map(|v| (v / centre - 1.0).abs()).fold(0.0, f64::max);
    Some((1.5 * spread).max(MIN_ENVELOPE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_fall_in_the_class_of_their_timer() {
        let of = |b, t, m, c, s| NoiseClass::of(b, t, m, c, Some(s));
        assert_eq!(of("cuda", "device-event", "assembly", "cuda/f32/method=global-nz", 1e-3), NoiseClass::Kernel);
        assert_eq!(of("cuda", "device-event", "assembly", "cuda/f32/method=global-nz", 1e-5), NoiseClass::ShortKernel);
        assert_eq!(of("cuda", "device-event", "upload", "cuda/f32/method=reg-jac", 1e-3), NoiseClass::Transfer);
        assert_eq!(of("cuda", "host-wall", "allocate", "cuda/f32/method=reg-jac", 1e-3), NoiseClass::HostStage);
        assert_eq!(of("cuda", "device-event-open", "assembly", "cuda/f32/method=x", 1e-3), NoiseClass::OpenRegion);
        assert_eq!(of("cuda", "device-event", "assembly", "cuda/f32/method=coo-cusparse", 1e-3), NoiseClass::OpenRegion);
        assert_eq!(of("cpu", "host-wall", "assembly", "cpu/f64/method=cpu-serial", 1.0), NoiseClass::Cpu);
        assert_eq!(of("opencl", "device-event", "kernel", "opencl/f32/kernel=copy", 1e-3), NoiseClass::Kernel);
        assert_eq!(of("cuda", "device-event", "gemm", "cuda/f64/method=cublas-gemm,degree=3", 1e-3), NoiseClass::Library);
        assert_eq!(of("cuda", "device-event", "step", "cuda/f64/method=csr-cusparse", 1e-3), NoiseClass::Library);
    }

    #[test]
    fn a_host_stage_timed_beside_other_workers_cannot_be_judged_and_a_kernel_can() {
        // An ordinary run (no column) against one of four workers (three others beside each).
        assert!(shared_host(NoiseClass::HostStage, None, Some(3.0)).unwrap().contains("0 and 3 other GPU workers"));
        assert!(shared_host(NoiseClass::OpenRegion, Some(3.0), None).is_some());
        assert_eq!(shared_host(NoiseClass::Kernel, None, Some(3.0)), None);
        assert!(shared_host(NoiseClass::ShortKernel, None, Some(3.0)).is_some(), "a 4 µs kernel moved 30-39% beside three workers");
        assert!(shared_host(NoiseClass::Library, None, Some(1.0)).is_some());
        assert_eq!(shared_host(NoiseClass::HostStage, Some(3.0), Some(3.0)), None);
        assert_eq!(shared_host(NoiseClass::HostStage, Some(0.0), None), None);
    }

    #[test]
    fn a_history_gives_an_envelope_from_three_runs() {
        assert_eq!(history_envelope(&[1.0, 1.0]), None);
        let e = history_envelope(&[1.0, 1.02, 0.99]).unwrap();
        assert!((e - 0.03).abs() < 1e-9, "{e}");
        assert_eq!(history_envelope(&[1.0, 1.0, 1.0]), Some(MIN_ENVELOPE));
    }
}
