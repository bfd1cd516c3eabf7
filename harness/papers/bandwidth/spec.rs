//! The device-bandwidth experiment files' own types: kernels, sizes, sweep, problem, tables
//! and figures, and a case's sweep point.

use serde::{Deserialize, Deserializer, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamKernel {
    /// The API's device-to-device copy (cuMemcpyDtoD, clEnqueueCopyBuffer): the reference.
    Memcpy,
    Copy,
    Mul,
    Add,
    Triad,
    Dot,
    Gather,
    ScatterAdd,
}

impl StreamKernel {
    pub const ALL: [StreamKernel; 8] = [
        StreamKernel::Memcpy,
        StreamKernel::Copy,
        StreamKernel::Mul,
        StreamKernel::Add,
        StreamKernel::Triad,
        StreamKernel::Dot,
        StreamKernel::Gather,
        StreamKernel::ScatterAdd,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            StreamKernel::Memcpy => "memcpy",
            StreamKernel::Copy => "copy",
            StreamKernel::Mul => "mul",
            StreamKernel::Add => "add",
            StreamKernel::Triad => "triad",
            StreamKernel::Dot => "dot",
            StreamKernel::Gather => "gather",
            StreamKernel::ScatterAdd => "scatter_add",
        }
    }

    /// The cost model: bytes each kernel must move for arrays of `n` elements of `s` bytes (each
    /// input read once, each output written once; a scatter target read and written once).
    pub fn bytes(self, n: usize, s: usize, fan_in: usize) -> f64 {
        let (n, s) = (n as f64, s as f64);
        match self {
            StreamKernel::Memcpy | StreamKernel::Copy | StreamKernel::Mul | StreamKernel::Dot => 2.0 * n * s,
            StreamKernel::Add | StreamKernel::Triad => 3.0 * n * s,
            StreamKernel::Gather => n * 4.0 + 2.0 * n * s,
            StreamKernel::ScatterAdd => n * 4.0 + n * s + 2.0 * (n / fan_in as f64).ceil() * s,
        }
    }

    pub fn flops(self, n: usize) -> f64 {
        let n = n as f64;
        match self {
            StreamKernel::Mul | StreamKernel::Add | StreamKernel::ScatterAdd => n,
            StreamKernel::Triad | StreamKernel::Dot => 2.0 * n,
            _ => 0.0,
        }
    }

    /// Streaming kernels whose best figure is the device's attainable bandwidth.
    pub fn is_stream(self) -> bool {
        matches!(self, StreamKernel::Copy | StreamKernel::Mul | StreamKernel::Add | StreamKernel::Triad | StreamKernel::Dot)
    }
}

/// A strictly positive size in MiB.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Mib(pub f64);

impl<'de> Deserialize<'de> for Mib {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(d)?;
        // Above 1 TiB no device holds the arrays; such a number is a typo.
        if !(v > 0.0 && v <= (1u64 << 20) as f64) {
            let given = format!("{v}");
            return Err(serde::de::Error::invalid_value(
                serde::de::Unexpected::Other(&given),
                &"a size in MiB greater than 0 and at most 1048576 (1 TiB)",
            ));
        }
        Ok(Mib(v))
    }
}

crate::axes! {
    pub struct Sweep =>
    #[derive(Copy)]
    pub struct Point {
        kernel: StreamKernel,
        /// Size of each array in MiB.
        array_mib: Mib,
    }
}

crate::named_axis!(StreamKernel);

impl crate::axes::AxisValue for Mib {
    fn param(&self) -> crate::experiment::ParamValue {
        crate::experiment::ParamValue::Float(self.0)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Problem {
    /// Work-group size of every kernel.
    pub group_size: u32,
    /// Elements per work-item of the streaming kernels.
    pub elements_per_thread: u32,
    /// Contributions per scatter-add target (about 6-8 for P1 triangles, 27 for hex8 nodes).
    pub scatter_fan_in: u32,
    /// Work-groups of the dot kernel per compute unit.
    pub dot_groups_per_unit: u32,
    pub scalar: f64,
    pub seed: u64,
}

impl Default for Problem {
    fn default() -> Self {
        Problem { group_size: 256, elements_per_thread: 4, scatter_fan_in: 8, dot_groups_per_unit: 4, scalar: 0.4, seed: 2011 }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableName {
    /// Best bandwidth per kernel, and each kernel against the API's memcpy.
    AttainableBandwidth,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FigureName {
    /// GB/s against array size, one figure per backend, device and precision.
    BandwidthVsSize,
}

/// The tables and figures an experiment file may ask for.
pub type Outputs = crate::experiment::Outputs<TableName, FigureName>;
