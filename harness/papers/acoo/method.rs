//! What an a-COO method is, as a type: [`AcooMethod`] (a registered method: what it is, and its
//! case), and for a device method `DeviceMethod`, registered as [`Registered`]`(about, M)`:
//! its passes on the case's device after the shared set-up (`run_device`: the mesh uploaded,
//! the stopping rule and the kernels' definitions), with the case lifecycle around them (the
//! checked pass on poisoned outputs, then the timed passes, every pass's solution checked) and
//! its matrix-vector product measured on its own.

use super::capacitor::Capacitor;
use super::gpu::{CgForm, Memory, Mesh, Stop, BLOCK};
use super::methods::{Base, MethodRun, Reference, WARM_ONLY};
use super::spec::Problem_;
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::Device;
use crate::kernels::Defines;
use crate::lifecycle::warm_only;
use crate::measure::{CacheMode, Timer};
use crate::methods::{gpu_for, Role, Runs};
use crate::real::Real;
use crate::Precision;

/// What a method is, as its registry line states it.
pub struct About {
    /// Its name in experiment files and rows (one: a-COO's methods have no variants).
    pub names: &'static [&'static str],
    pub role: Role,
    pub runs: Runs,
    /// Its timed stages, in table order (the total is their sum).
    pub stages: &'static [&'static str],
    /// The stage whose region waits on the host (an open region), if one does.
    pub open_stage: Option<&'static str>,
    /// The paper's device bytes per element (Fig. 10), where it gives one.
    pub paper_bytes_per_element: Option<f64>,
    /// A FEM or array library's route, run by its Python script (`peers/acoo_cg.py`).
    pub library: bool,
}

impl About {
    pub const fn new(names: &'static [&'static str], role: Role, runs: Runs, stages: &'static [&'static str]) -> About {
        About { names, role, runs, stages, open_stage: None, paper_bytes_per_element: None, library: false }
    }
    pub const fn open(self, stage: &'static str) -> About {
        About { open_stage: Some(stage), ..self }
    }
    pub const fn paper_bytes(self, bytes: f64) -> About {
        About { paper_bytes_per_element: Some(bytes), ..self }
    }
    /// Its stages are timed by its script (device events or the host clock, as it says): open
    /// regions on a GPU.
    pub const fn library(self) -> About {
        About { library: true, ..self }
    }
    /// Its stages, each with its clock: the host's wall clock on the CPU, device events on a
    /// GPU, an open region where the stage waits on the host.
    pub(crate) fn timed_stages(&self) -> Vec<(&'static str, Timer)> {
        let timer = match self.runs {
            Runs::Host => Timer::HostWall,
            _ if self.library => Timer::DeviceEventOpen,
            _ => Timer::DeviceEvent,
        };
        self.stages.iter().map(|&n| (n, if self.open_stage == Some(n) { Timer::DeviceEventOpen } else { timer })).collect()
    }
}

/// What a case hands its method: the problem at the case's precision, the level's capacitor,
/// its coloring (and the seconds it took) and the f64 reference.
#[derive(Clone, Copy)]
pub struct Case<'a> {
    pub(crate) problem: &'a Problem_,
    pub(crate) c: &'a Capacitor,
    pub(crate) colors: (&'a [Vec<u32>], f64),
    pub(crate) reference: Reference<'a>,
}

/// A registered method.
pub trait AcooMethod: Sync {
    fn about(&self) -> &About;
    fn names(&self) -> &'static [&'static str] {
        self.about().names
    }
    /// One case of it, on the case's target and precision.
    fn run(&self, ctx: &mut CaseCtx, case: &Case) -> Result<MethodRun, CaseError>;
}

/// What a device method's passes are given beside the shared set-up: the device memory counted
/// so far, the level's coloring, what the method is, and the mode its passes run in.
pub(crate) struct Passes<'a> {
    pub(crate) mem: Memory,
    pub(crate) colors: (&'a [Vec<u32>], f64),
    pub(crate) about: &'a About,
    pub(crate) mode: CacheMode,
}

/// A device method as a type: its passes on the case's device, after the shared set-up.
pub(crate) trait DeviceMethod: Sync {
    /// Its buffers and kernels made, the case lifecycle driven (`mode`), its product measured.
    fn run<T: Real>(&self, ctx: &mut CaseCtx, base: &Base, passes: Passes) -> Result<MethodRun, CaseError>;
}

/// A `DeviceMethod` registered, with what it is.
pub struct Registered<M>(pub About, pub M);

impl<M: DeviceMethod> AcooMethod for Registered<M> {
    fn about(&self) -> &About {
        &self.0
    }
    fn run(&self, ctx: &mut CaseCtx, case: &Case) -> Result<MethodRun, CaseError> {
        let dev = gpu_for(ctx, self.names()[0])?;
        match ctx.precision {
            Precision::F32 => run_device::<f32, M>(ctx, dev, case, self),
            Precision::F64 => run_device::<f64, M>(ctx, dev, case, self),
        }
    }
}

/// A device method's case on `dev`, in `T`.
pub(crate) fn run_device<T: Real, M: DeviceMethod>(
    ctx: &mut CaseCtx,
    dev: &dyn Device,
    case: &Case,
    method: &Registered<M>,
) -> Result<MethodRun, CaseError> {
    let mode = warm_only(ctx.policy, WARM_ONLY)?;
    let mut mem = Memory::default();
    let mesh = Mesh::upload::<T>(dev, &mut mem, case.c)?;
    let stop = Stop { tol: case.problem.tolerance, max_iter: case.problem.max_iterations };
    let defines = Defines::for_precision(T::PRECISION).with("BLOCK", BLOCK);
    let csr_cg = if case.problem.cg_single_reduction { CgForm::SingleReduction } else { CgForm::Fused };
    let base = Base { dev, c: case.c, mesh: &mesh, stop, reference: case.reference, defines, csr_cg };
    let Registered(about, method) = method;
    method.run::<T>(ctx, &base, Passes { mem, colors: case.colors, about, mode })
}
