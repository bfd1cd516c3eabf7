//! The a-COO experiment files' own types: methods, sweep, problem, tables and figures.

use serde::{Deserialize, Serialize};

use crate::experiment::NonEmpty;
use crate::Backend;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// The paper's method: linked lists by atomic exchange, no coloring, then CSR and CG.
    AFem,
    /// Element matrices stored, colored element-by-element products in CG.
    EbeV1,
    /// Element matrices recomputed in every product, colored.
    EbeV2,
    /// Baseline: one thread per element, atomic adds into precomputed CSR slots, same CG.
    CsrAtomic,
    /// The peer "what a user would do": the csr-atomic assembly, then the CG a user writes with
    /// the vendor libraries (cuSPARSE SpMV, cuBLAS dot/axpy/scal/copy, scalars on the host, as
    /// in NVIDIA's CG sample). CUDA only.
    CusparseCg,
    /// The CPU reference: serial f64 assembly and CG (the paper's sequential FEM).
    CpuSerial,
    /// The same with rayon's threads.
    CpuParallel,
}

impl Method {
    pub const ALL: [Method; 7] =
        [Method::AFem, Method::EbeV1, Method::EbeV2, Method::CsrAtomic, Method::CusparseCg, Method::CpuSerial, Method::CpuParallel];
    pub fn as_str(self) -> &'static str {
        match self {
            Method::AFem => "a-fem",
            Method::EbeV1 => "ebe-v1",
            Method::EbeV2 => "ebe-v2",
            Method::CsrAtomic => "csr-atomic",
            Method::CusparseCg => "cusparse-cg",
            Method::CpuSerial => "cpu-serial",
            Method::CpuParallel => "cpu-parallel",
        }
    }
    pub fn on_cpu(self) -> bool {
        matches!(self, Method::CpuSerial | Method::CpuParallel)
    }
    pub fn runs_on(self, backend: Backend) -> bool {
        match self {
            Method::CusparseCg => backend == Backend::Cuda,
            _ => self.on_cpu() == (backend == Backend::Cpu),
        }
    }
    /// The paper's device bytes per element (Fig. 10), where it gives one.
    pub fn paper_bytes_per_element(self) -> Option<f64> {
        match self {
            Method::AFem => Some(192.0),
            Method::EbeV1 => Some(151.0),
            Method::EbeV2 => Some(79.0),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    pub method: NonEmpty<Method>,
    /// Uniform refinement levels of the capacitor mesh (level 0: 7.6K triangles, x4 each).
    pub level: NonEmpty<u32>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Problem_ {
    /// CG stops at ||r|| <= tolerance ||b||.
    pub tolerance: f64,
    pub max_iterations: usize,
    /// Largest relative L2 error of a solution against the f64 reference (the paper's 1e-5).
    pub max_error: f64,
}

impl Default for Problem_ {
    fn default() -> Self {
        Problem_ { tolerance: 1e-10, max_iterations: 100_000, max_error: 1e-5 }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableName {
    /// Per method at the largest size: stage times, CG iterations, time per iteration, memory.
    Largest,
    /// The paper's claims, each marked as holding or not in this run.
    Claims,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FigureName {
    /// Fig. 8: stage times against mesh size, per method.
    Stages,
    /// Fig. 9: totals with and without the coloring counted.
    Totals,
    /// Fig. 10: device bytes against triangles, and per element beside the paper's.
    Memory,
    /// Fig. 5: host pre-processing times (mesh generation, adjacency, coloring) against size.
    Preprocessing,
}

pub type Outputs = crate::experiment::Outputs<TableName, FigureName>;

#[derive(Debug, Clone, Copy)]
pub struct Point {
    pub method: Method,
    pub level: u32,
}
