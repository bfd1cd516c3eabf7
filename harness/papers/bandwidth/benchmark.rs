//! The device-bandwidth benchmark: its cases and how each runs.

use crate::benchmark::{Benchmark, CaseCtx, CaseError, Measured, MemoryEstimate, Spec};
use crate::experiment::Params;
use crate::kernels::KernelSource;

use crate::Precision;

use super::kernel::BANDWIDTH;
use super::run::run_typed;
use super::spec::{Outputs, Point, Problem, Sweep};

pub struct DeviceBandwidth;

impl Benchmark for DeviceBandwidth {
    const NAME: &'static str = "device-bandwidth";
    const KERNELS: &'static [KernelSource] = &[BANDWIDTH];
    const KERNEL_ARGS: &'static [crate::device::args::Declared] = super::kernel::BANDWIDTH_ARGS;
    type Sweep = Sweep;
    type Problem = Problem;
    type Outputs = Outputs;
    type Point = Point;

    fn points(sweep: &Sweep) -> Vec<Point> {
        // Each kernel over every size, kernels in the file's order.
        let mut out = sweep.product();
        out.sort_by_key(|p| sweep.kernel.iter().position(|&k| k == p.kernel));
        out
    }

    fn params(p: &Point) -> Params {
        p.params()
    }

    fn check(spec: &Spec<Self>) -> Result<(), (String, String)> {
        let p = &spec.problem;
        if p.group_size == 0 || !p.group_size.is_power_of_two() || p.group_size > 1024 {
            return Err((
                "problem.group_size".into(),
                format!(
                    "problem.group_size must be a power of two up to 1024 (the dot kernel's tree reduction needs it), got {}",
                    p.group_size
                ),
            ));
        }
        for (name, v) in [
            ("elements_per_thread", p.elements_per_thread),
            ("scatter_fan_in", p.scatter_fan_in),
            ("dot_groups_per_unit", p.dot_groups_per_unit),
        ] {
            if v == 0 {
                return Err((format!("problem.{name}"), format!("problem.{name} must be at least 1")));
            }
        }
        Ok(())
    }

    /// Three arrays of `array_mib` and a gather's index array on the device; on the host the
    /// initial values, the downloaded result and the expected one.
    fn memory_estimate(_: &Problem, p: &Point) -> Option<MemoryEstimate> {
        let array = p.array_mib.0 * (1u64 << 20) as f64;
        Some(MemoryEstimate { host_bytes: 4.0 * array, device_bytes: 4.0 * array })
    }

    fn run(ctx: &mut CaseCtx, problem: &Problem, point: &Point) -> Result<Vec<Measured>, CaseError> {
        match ctx.precision {
            Precision::F32 => run_typed::<f32>(ctx, problem, point),
            Precision::F64 => run_typed::<f64>(ctx, problem, point),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::run::{relative_error, HostData};
    use super::super::spec::StreamKernel;
    use super::*;

    #[test]
    fn cost_model_counts_each_array_once() {
        assert_eq!(StreamKernel::Copy.bytes(1000, 4, 8), 8000.0);
        assert_eq!(StreamKernel::Triad.bytes(1000, 8, 8), 24000.0);
        assert_eq!(StreamKernel::Gather.bytes(1000, 4, 8), 4000.0 + 8000.0);
        assert_eq!(StreamKernel::ScatterAdd.bytes(1000, 4, 8), 4000.0 + 4000.0 + 2.0 * 125.0 * 4.0);
        assert_eq!(StreamKernel::Triad.flops(10), 20.0);
    }

    #[test]
    fn relative_error_flags_nan_and_mismatch() {
        assert_eq!(relative_error(&[1.0f32, 2.0], &[1.0, 2.0]), 0.0);
        assert!(relative_error(&[f32::NAN, 2.0], &[1.0, 2.0]).is_nan());
        assert!(relative_error(&[1.0f64], &[1.0, 2.0]).is_nan());
        assert!((relative_error(&[1.0f64, 2.0], &[1.0, 2.5]) - 0.5 / (1.0f64 + 6.25).sqrt()).abs() < 1e-15);
    }

    #[test]
    fn scatter_reference_sums_fan_in_contributions() {
        let p = Problem { scatter_fan_in: 4, ..Default::default() };
        let d = HostData::<f32>::new(StreamKernel::ScatterAdd, 64, &p);
        let y = d.reference(StreamKernel::ScatterAdd, 0.0);
        assert_eq!(y.len(), 16);
        let total: f64 = d.a.iter().map(|x| *x as f64).sum();
        assert_eq!(y.iter().sum::<f64>(), total);
        // Every target receives exactly fan_in contributions.
        let mut count = vec![0; 16];
        for &j in &d.map {
            count[j as usize] += 1;
        }
        assert!(count.iter().all(|&c| c == 4));
    }
}
