//! What a Sanfui-Sharma method is, as a type: [`SanfuiMethod`] (a registered method: what it is,
//! [`About`], and its case), and for a device method `DeviceMethod`, registered as
//! [`Registered`]`(about, M)`, whose `run` is its case on the device in the case's precision.

use super::formats::Format;
use super::gpu::DeviceRun;
use super::reference::Prepared;
use super::spec::{Method, Problem_};
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::Device;
use crate::measure::Timer;
use crate::methods::{gpu_for, Role, Runs};
use crate::real::Real;
use crate::Precision;

/// How a method's numeric kernel keeps two elements from adding into one entry at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Race {
    /// Elements in colors, one launch per color (Algorithm 6).
    Colors,
    /// Atomic adds.
    Atomics,
    /// No race to keep: each entry is written once (gathered, reduced, sorted and summed, or
    /// one thread).
    None,
}

/// What a method is, as its registry line states it.
pub struct About {
    /// Its name in experiment files and rows.
    pub names: &'static [&'static str],
    pub role: Role,
    pub runs: Runs,
    /// Its timed stages, in table order (the total is their sum).
    pub stages: &'static [&'static str],
    /// The format it assembles into (the baselines and peers: CSR).
    pub format: Format,
    pub race: Race,
}

impl About {
    /// Its stages, each with its clock: the host's wall clock on the CPU, device events on a GPU.
    pub(crate) fn timed_stages(&self) -> Vec<(&'static str, Timer)> {
        let timer = if self.runs == Runs::Host { Timer::HostWall } else { Timer::DeviceEvent };
        self.stages.iter().map(|&n| (n, timer)).collect()
    }
}

/// What a case hands its method: the box's problem, the experiment's settings and the name the
/// case runs under.
#[derive(Clone, Copy)]
pub struct Case<'a> {
    pub(crate) prep: &'a Prepared,
    pub(crate) problem: &'a Problem_,
    pub(crate) method: Method,
}

/// A registered method.
pub trait SanfuiMethod: Sync {
    fn about(&self) -> &About;
    fn names(&self) -> &'static [&'static str] {
        self.about().names
    }
    /// One case of it, on the case's target and precision.
    fn run(&self, ctx: &mut CaseCtx, case: &Case) -> Result<DeviceRun, CaseError>;
}

/// A device method as a type: its case on the device, in `T`.
pub(crate) trait DeviceMethod: Sync {
    fn run<T: Real>(&self, ctx: &mut CaseCtx, dev: &dyn Device, case: &Case) -> Result<DeviceRun, CaseError>;
}

/// A `DeviceMethod` registered, with what it is.
pub struct Registered<M>(pub About, pub M);

impl<M: DeviceMethod> SanfuiMethod for Registered<M> {
    fn about(&self) -> &About {
        &self.0
    }
    fn run(&self, ctx: &mut CaseCtx, case: &Case) -> Result<DeviceRun, CaseError> {
        let dev = gpu_for(ctx, self.names()[0])?;
        match ctx.precision {
            Precision::F32 => self.1.run::<f32>(ctx, dev, case),
            Precision::F64 => self.1.run::<f64>(ctx, dev, case),
        }
    }
}
