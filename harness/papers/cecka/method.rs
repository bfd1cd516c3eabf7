//! What a Cecka method is, as a type, and the lifecycle of a GPU method's case.
//!
//! A method is a type implementing [`CeckaMethod`]: its names (the full method, then its dummy
//! variant where it has one), its role, where it runs, the host plan it builds ahead, and its
//! case. A GPU method implements [`GpuMethod`] instead and is registered as [`Gpu`]`(M)`: its
//! `prepare` sets a case up outside any timer (plan, uploads, kernels) and returns the
//! [`Assembly`] whose `enqueue` is the timed work, with its `outputs`, their `read`-back and its
//! `cost`. The case's lifecycle around it is [`run_gpu`]'s, the same for every GPU method: the
//! outputs poisoned, one checked pass, the trials in every mode the policy asks for, the check
//! of every entry against the f64 reference, the rows. A new GPU method is one type, one kernel
//! and one line in `registry::METHODS` (`docs/extending.md` walks through one).

use super::gpu::gpu_of;
use super::problem::checked::{checked_rows, Cost, GpuRun};
use super::problem::prepared::Prepared;
use super::spec::{Point, Problem_};
use crate::benchmark::{CaseCtx, CaseError, Measured};
use crate::device::args::Declared;
use crate::device::{Buffer, Device, DeviceResult};
use crate::lifecycle::drive_body;
use crate::measure::Gate;
use crate::real::Real;
use crate::Precision;

pub use crate::methods::{Role, Runs};

/// What a method's host plan is built for, ahead of its cases (`plans::warm`).
pub struct Ahead<'a> {
    pub(crate) prep: &'a Prepared,
    pub(crate) problem: &'a Problem_,
    /// Shared memory a block may use, in bytes.
    pub(crate) limit: usize,
    /// Bytes of a real.
    pub(crate) s: usize,
    /// The case's minimum number of colors.
    pub(crate) colors: u32,
}

/// A registered method.
pub trait CeckaMethod: Sync {
    /// Its name in experiment files and rows, then its dummy variant's where it has one.
    fn names(&self) -> &'static [&'static str];
    fn role(&self) -> Role;
    fn runs(&self) -> Runs;
    /// Its cases take a number of colors (`sweep.colors`).
    fn colored(&self) -> bool {
        false
    }
    /// A route a Python script runs (the `external` peers).
    fn external(&self) -> bool {
        false
    }
    /// A FEM library's route (JAX, NVIDIA Warp, compiled PyTorch): reports set the fastest of
    /// them beside the strongest of the other peers.
    fn fem_library(&self) -> bool {
        false
    }
    /// Builds the host plan its cases will use; nothing by default.
    fn plan_ahead(&self, _: &Ahead) {}
    /// The argument structs of kernels of its own (checked against their signatures by a test).
    fn kernel_args(&self) -> &'static [Declared] {
        &[]
    }
    /// One case of it, on the case's target and precision.
    fn run(&self, ctx: &mut CaseCtx, problem: &Problem_, prep: &Prepared, point: &Point) -> Result<Vec<Measured>, CaseError>;
}

/// What a prepared GPU case offers its lifecycle.
pub trait Assembly<T> {
    /// One assembly: the timed work.
    fn enqueue(&self, dev: &dyn Device) -> DeviceResult<()>;
    /// Every buffer the assembly writes, poisoned before the checked pass.
    fn outputs(&self) -> Vec<&Buffer>;
    /// The checked pass's CSR values and right-hand side.
    fn read(&self, dev: &dyn Device) -> Result<(Vec<T>, Vec<T>), CaseError>;
    /// Its declared bytes and flops, device memory, set-up and extra columns.
    fn cost(&self) -> Cost;
    /// How the timed region holds `enqueue`: closed (device events only) unless it waits on
    /// the host.
    fn gate(&self) -> Gate {
        Gate::Closed
    }
}

/// The case a GPU method prepares: its device, the experiment's problem settings, the built
/// problem (with its reference and plans) and the sweep point.
#[derive(Clone, Copy)]
pub struct Case<'a> {
    pub dev: &'a dyn Device,
    pub problem: &'a Problem_,
    pub prep: &'a Prepared,
    pub point: &'a Point,
}

/// A GPU method as a type.
pub trait GpuMethod: Sync {
    /// Its name, then its dummy variant's.
    const NAMES: &'static [&'static str];
    const ROLE: Role;
    const RUNS: Runs = Runs::Gpu;
    const COLORED: bool = false;
    /// The argument structs of kernels of its own, for the test that checks each against its
    /// kernel's signature: `Declared::same_as::<Elements>(CECKA, "my_kernel")` for a variant of a
    /// shipped kernel with its parameters, or the list `kernel_args!` makes.
    const ARGS: &'static [Declared] = &[];
    /// Builds the host plan its cases will use; nothing by default.
    fn plan_ahead(&self, _: &Ahead) {}
    /// Sets a case up outside any timer.
    fn prepare<T: Real>(&self, ctx: &mut CaseCtx, case: &Case) -> Result<Box<dyn Assembly<T>>, CaseError>;
}

/// A [`GpuMethod`] registered.
pub struct Gpu<M>(pub M);

impl<M: GpuMethod> CeckaMethod for Gpu<M> {
    fn names(&self) -> &'static [&'static str] {
        M::NAMES
    }
    fn role(&self) -> Role {
        M::ROLE
    }
    fn runs(&self) -> Runs {
        M::RUNS
    }
    fn colored(&self) -> bool {
        M::COLORED
    }
    fn plan_ahead(&self, ahead: &Ahead) {
        self.0.plan_ahead(ahead)
    }
    fn kernel_args(&self) -> &'static [Declared] {
        M::ARGS
    }
    fn run(&self, ctx: &mut CaseCtx, problem: &Problem_, prep: &Prepared, point: &Point) -> Result<Vec<Measured>, CaseError> {
        match ctx.precision {
            Precision::F32 => run_gpu::<f32, M>(&self.0, ctx, problem, prep, point),
            Precision::F64 => run_gpu::<f64, M>(&self.0, ctx, problem, prep, point),
        }
    }
}

/// The lifecycle of a GPU method's case: prepared, its outputs poisoned, one checked pass and
/// its read-back, the trials, then the rows of its system checked entry by entry.
fn run_gpu<T: Real, M: GpuMethod>(
    method: &M,
    ctx: &mut CaseCtx,
    problem: &Problem_,
    prep: &Prepared,
    point: &Point,
) -> Result<Vec<Measured>, CaseError> {
    let dev = gpu_of(ctx)?;
    let assembly = method.prepare::<T>(ctx, &Case { dev, problem, prep, point })?;
    let outputs = assembly.outputs();
    let body = &mut || assembly.enqueue(dev);
    let read = &mut || assembly.read(dev);
    let (timings, (vals, rhs)) = drive_body(ctx, dev, assembly.gate(), &outputs, body, read)?;
    let rows = checked_rows(prep, point, GpuRun::new(timings, vals, rhs, assembly.cost()), None);
    crate::measure::trace::mark("checked");
    rows
}
