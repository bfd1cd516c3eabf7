//! Device bandwidth: the five BabelStream kernels (copy, mul, add, triad, dot), the API's own
//! device-to-device copy as the reference, and the two access patterns of FEM assembly (indexed
//! gather, atomic scatter-add), over array sizes from cache-resident to DRAM-bound.
//!
//! Its result is each device's attainable bandwidth, which later reports use as the ceiling.
//! As in BabelStream, each kernel has a bytes-moved weight and every result is checked after the
//! timed repetitions: outputs start as NaN, so an element a kernel never wrote fails the check.

mod benchmark;
pub mod kernel;
pub mod report;
pub mod run;
pub mod spec;

pub use benchmark::DeviceBandwidth;
pub use kernel::BANDWIDTH;
pub use report::attainable_gbs;
pub use run::{cpu_kernel, relative_error, HostData};
pub use spec::{Problem, StreamKernel};
