//! What a case returns: its measured quantities ([`Measured`]), each verified or failed, or why it
//! produced none ([`CaseError`]).

use crate::results::Status;
use fembench_device::DeviceError;
use fembench_measure::Timing;

/// One measured quantity of a case, before the runner adds identity and derived columns.
#[derive(Debug, Clone)]
pub struct Measured {
    pub metric: String,
    pub status: Status,
    pub reason: Option<String>,
    pub timing: Option<Timing>,
    pub bytes: Option<f64>,
    /// Floating-point operations the timed work executes (share of peak is computed from these).
    pub flops: Option<f64>,
    /// The paper's own count for the same work, kept to compare with the paper's GFLOP/s.
    pub paper_flops: Option<f64>,
    pub error: Option<f64>,
    pub tolerance: Option<f64>,
    pub memory_bytes: Option<f64>,
    /// The library an external peer ran, with its version ("CuPy 13.3.0 (CUDA 12.4)").
    pub library: Option<String>,
    /// Extra named figures, stored as their own columns.
    pub extras: Vec<(String, f64)>,
    /// Named series (a receiver's time trace, say), each stored as a list column; reports draw
    /// them without measuring again.
    pub series: Vec<(String, Vec<f64>)>,
}

impl Measured {
    /// A timing whose outputs were checked: `ok` if `error <= tolerance`, otherwise a failure
    /// whose time is dropped (a wrong answer is never recorded as a speed).
    pub fn verified(metric: &str, timing: Timing, error: f64, tolerance: f64) -> Measured {
        let ok = error <= tolerance; // NaN compares false: a NaN error fails.
        Measured {
            metric: metric.into(),
            status: if ok { Status::Ok } else { Status::Failed },
            reason: (!ok).then(|| format!("verification failed: error {error:.3e} > tolerance {tolerance:.1e}")),
            timing: ok.then_some(timing),
            bytes: None,
            flops: None,
            paper_flops: None,
            error: Some(error),
            tolerance: Some(tolerance),
            memory_bytes: None,
            library: None,
            extras: Vec::new(),
            series: Vec::new(),
        }
    }
    /// A quantity that could not be had, with the reason (no timing).
    pub fn failed(metric: &str, reason: String) -> Measured {
        Measured {
            metric: metric.into(),
            status: Status::Failed,
            reason: Some(reason),
            timing: None,
            bytes: None,
            flops: None,
            paper_flops: None,
            error: None,
            tolerance: None,
            memory_bytes: None,
            library: None,
            extras: Vec::new(),
            series: Vec::new(),
        }
    }
    pub fn extra(mut self, name: &str, value: f64) -> Self {
        self.extras.push((name.into(), value));
        self
    }
    pub fn series(mut self, name: &str, values: Vec<f64>) -> Self {
        self.series.push((name.into(), values));
        self
    }
    pub fn bytes(mut self, b: f64) -> Self {
        self.bytes = Some(b);
        self
    }
    pub fn flops(mut self, f: f64) -> Self {
        self.flops = Some(f);
        self
    }
    pub fn paper_flops(mut self, f: f64) -> Self {
        self.paper_flops = Some(f);
        self
    }
    pub fn memory(mut self, m: f64) -> Self {
        self.memory_bytes = Some(m);
        self
    }
    pub fn library(mut self, l: &str) -> Self {
        self.library = Some(l.into());
        self
    }
}

/// Why a case produced no measurement.
#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    #[error("skipped: {0}")]
    Skipped(String),
    #[error("{0}")]
    Device(#[from] DeviceError),
    #[error("{0}")]
    Failed(String),
    /// The case cannot run by construction (a proof, not a fault): [`Status::Infeasible`].
    #[error("infeasible: {0}")]
    Infeasible(String),
}

impl CaseError {
    pub fn status(&self) -> Status {
        match self {
            CaseError::Skipped(_) => Status::Skipped,
            CaseError::Infeasible(_) => Status::Infeasible,
            _ => Status::Failed,
        }
    }
    pub fn reason(&self) -> String {
        match self {
            CaseError::Skipped(r) | CaseError::Infeasible(r) => r.clone(),
            other => other.to_string(),
        }
    }
}
