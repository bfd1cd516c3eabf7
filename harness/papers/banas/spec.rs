//! The Banaś et al. experiment files' own types: variants, sweep, problem, tables and figures,
//! a case's sweep point and the stage names.

use serde::{Deserialize, Serialize};

use super::plan::Variant;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Algorithm 2 in f64 on the host, rayon-parallel over elements (the paper's OpenMP code).
    CpuReference,
    RegJac,
    RegNojac,
    ShmJac,
    ShmNojac,
    /// Beyond the paper: REG_NOJAC accumulating Gram sums, finished by Lamé's constants.
    GramNojac,
    /// Beyond the paper: the Gram sums on the tensor cores (CUDA on sm_80+): DMMA in f64,
    /// 3xTF32 in f32 (about f32's accuracy).
    MmaNojac,
    /// Beyond the paper, the peer (CUDA only): A^e = B^T (w D B) as one cuBLAS strided-batched
    /// GEMM, B computed by our kernel (what a user of cuBLAS or torch writes). cuBLAS' default
    /// math: FP32 without TF32, f64 on the FP64 tensor cores where the GPU has them.
    CublasGemm,
    /// The same on the TF32 tensor cores (f32 only; TF32's accuracy, about 1e-3).
    CublasGemmTf32,
    /// The same as 3xTF32 (f32 only): B and w D B split into TF32 high and low parts by our
    /// kernel, then three TF32 GEMMs accumulated, keeping about f32's accuracy.
    #[serde(rename = "cublas-gemm-3xtf32")]
    CublasGemm3xTf32,
    /// Beyond the paper, an external peer (CUDA, through Python, `peers/banas_gemm.py`): B with
    /// PyTorch's einsum, then `torch.bmm` (PyTorch's default math: FP32 without TF32).
    TorchBmm,
    /// The same with CuPy: `cupy.einsum`, then `cupy.matmul` over the batch.
    CupyMatmul,
    /// The same with NumPy on the host, f64 (`numpy.einsum`, `numpy.matmul`): the CPU
    /// reference's peer, on the same elements.
    NumpyMatmul,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match (self, self.variant()) {
            (_, Some(v)) => v.as_str(),
            (Method::CublasGemm, None) => "cublas-gemm",
            (Method::CublasGemmTf32, None) => "cublas-gemm-tf32",
            (Method::CublasGemm3xTf32, None) => "cublas-gemm-3xtf32",
            (Method::TorchBmm, None) => "torch-bmm",
            (Method::CupyMatmul, None) => "cupy-matmul",
            (Method::NumpyMatmul, None) => "numpy-matmul",
            _ => "cpu-reference",
        }
    }
    /// The peers, in the order reports list them: cuBLAS through our code, then the Python
    /// libraries' routes.
    pub const PEERS: [Method; 5] =
        [Method::CublasGemm, Method::CublasGemm3xTf32, Method::CublasGemmTf32, Method::TorchBmm, Method::CupyMatmul];
    /// A peer (CUDA only).
    pub fn is_peer(self) -> bool {
        Self::PEERS.contains(&self)
    }
    /// A peer run by a Python script (the `external` kind).
    pub fn is_python(self) -> bool {
        matches!(self, Method::TorchBmm | Method::CupyMatmul | Method::NumpyMatmul)
    }
    /// A peer on the TF32 tensor cores (f32 only).
    pub fn tf32(self) -> bool {
        matches!(self, Method::CublasGemmTf32 | Method::CublasGemm3xTf32)
    }
    pub(crate) fn variant(self) -> Option<Variant> {
        match self {
            Method::CpuReference
            | Method::CublasGemm
            | Method::CublasGemmTf32
            | Method::CublasGemm3xTf32
            | Method::TorchBmm
            | Method::CupyMatmul
            | Method::NumpyMatmul => None,
            Method::RegJac => Some(Variant::RegJac),
            Method::RegNojac => Some(Variant::RegNojac),
            Method::ShmJac => Some(Variant::ShmJac),
            Method::ShmNojac => Some(Variant::ShmNojac),
            Method::GramNojac => Some(Variant::GramNojac),
            Method::MmaNojac => Some(Variant::MmaNojac),
        }
    }
}

crate::axes! {
    pub struct Sweep =>
    #[derive(Copy)]
    pub struct Point {
        method: Method,
        /// Polynomial degree p, 1..7.
        degree: u32,
    }
}

crate::named_axis!(Method);

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Problem_ {
    /// Element matrices one launch writes, in MiB; the planner fits the elements per launch to
    /// it and to the device's memory (the paper's launches wrote about 300 MB).
    pub output_mib: f64,
    /// Fraction of every launch's elements checked against the f64 reference after every pass
    /// (evenly spread, first and last included; at least one); the whole output is also scanned
    /// for NaN left of the poison. Default 0.01.
    pub verify_fraction: f64,
    /// Elements the CPU reference integrates per timed repetition (default: 8 per thread).
    pub cpu_elements: Option<usize>,
    /// Override the planner's work-group size.
    pub group_size: Option<usize>,
    /// REG: override the planner's blocks per thread, as [rows, columns].
    pub reg_blocks: Option<[usize; 2]>,
    /// SHM: shared memory for a part of A^e, in bytes (ceiling: the device's limit).
    pub shared_bytes: Option<usize>,
    /// MMA: override the planner's tiling, as [warp rows, warp columns, 8x8 sub-tiles per warp
    /// in a row, in a column]; the tile must be square (sub-tiles have 8 columns, and 8 rows in
    /// f64, 16 in f32).
    pub mma_tiling: Option<[usize; 4]>,
    /// MMA: quadrature points staged at once (a multiple of 4 in f64, of 8 in f32; default 16).
    pub mma_points: Option<usize>,
}

impl Default for Problem_ {
    fn default() -> Self {
        Problem_ {
            output_mib: 256.0,
            verify_fraction: 0.01,
            cpu_elements: None,
            group_size: None,
            reg_blocks: None,
            shared_bytes: None,
            mma_tiling: None,
            mma_points: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableName {
    /// Table 2: entries of the arrays the integration works on, ours beside the paper's.
    Sizes,
    /// Tables 3/4: the plan the host computed from the device's limits.
    Plan,
    /// Tables 5/6/7: per element, the time of each stage, flops and GFLOP/s.
    Stages,
    /// Per degree: the best variant, its GFLOP/s and fraction of peak, against the CPU.
    Best,
    /// The paper's observations, each with a verdict on this run's rows (claims.rs).
    Claims,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FigureName {
    /// Fig. 2: stage times per element against p, stacked.
    StageTimes,
    /// Fig. 3: kernel GFLOP/s against p.
    GflopsVsDegree,
}

pub type Outputs = crate::experiment::Outputs<TableName, FigureName>;

/// The stages of one GPU run, in the order the paper's tables list them.
pub const STAGES: [&str; 5] = ["prepare", "allocate", "upload", "kernel", "download"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_is_written_in_yaml_as_its_name() {
        for m in [
            Method::CpuReference,
            Method::RegJac,
            Method::ShmNojac,
            Method::GramNojac,
            Method::MmaNojac,
            Method::CublasGemm,
            Method::CublasGemmTf32,
            Method::CublasGemm3xTf32,
            Method::TorchBmm,
            Method::CupyMatmul,
            Method::NumpyMatmul,
        ] {
            let parsed: Method = serde_json::from_str(&format!("\"{}\"", m.as_str())).unwrap_or_else(|e| panic!("{}: {e}", m.as_str()));
            assert_eq!(parsed, m);
        }
    }
}
