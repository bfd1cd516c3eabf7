//! What a Pogo stepping method is, as a type: [`PogoMethod`] (a registered method: what it is,
//! [`About`], and its case's run), and for a device method `DeviceMethod`, registered as
//! [`Registered`]`(about, M)`, whose `run` is its case on the device in the case's precision.

use super::gpu::StepRun;
use super::prepared::Prepared;
use super::spec::{Blocker, Method};
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::Device;
use crate::methods::{gpu_for, Role, Runs};
use crate::real::Real;
use crate::Precision;

/// What a method is, as its registry line states it.
pub struct About {
    /// Its name in experiment files and rows.
    pub names: &'static [&'static str],
    pub role: Role,
    pub runs: Runs,
    /// The blocker whose memory arrangement it runs on (the paper's kernel only).
    pub blocker: Option<Blocker>,
    /// K' stored in f32 under f64 U and sums (the method runs in f64 only).
    pub kf32: bool,
    /// It makes a full-length run (ours and the paper's kernel on aligned blocks).
    pub full_run: bool,
    /// The multi-GPU study splits it across GPUs.
    pub splits: bool,
    /// A FEM or array library's route, run by its Python script (`peers/pogo_step.py`).
    pub library: bool,
    /// K' stored as a BSR matrix of node blocks (Warp's).
    pub bsr: bool,
}

impl About {
    pub const fn new(names: &'static [&'static str], role: Role, runs: Runs) -> About {
        About { names, role, runs, blocker: None, kf32: false, full_run: false, splits: false, library: false, bsr: false }
    }
    pub const fn on(self, blocker: Blocker) -> About {
        About { blocker: Some(blocker), ..self }
    }
    pub const fn kf32(self) -> About {
        About { kf32: true, ..self }
    }
    pub const fn full_run(self) -> About {
        About { full_run: true, ..self }
    }
    pub const fn splits(self) -> About {
        About { splits: true, ..self }
    }
    pub const fn library(self) -> About {
        About { library: true, ..self }
    }
    pub const fn bsr(self) -> About {
        About { bsr: true, ..self }
    }
}

/// What a case hands its method: the model, the name the case runs under, the timed steps (of
/// a device repetition, and of a host one), and the full-length run's window and steps where
/// it makes one.
#[derive(Clone, Copy)]
pub struct Case<'a> {
    pub(crate) prep: &'a Prepared,
    pub(crate) method: Method,
    pub(crate) steps: usize,
    pub(crate) cpu_steps: usize,
    pub(crate) full: Option<(usize, usize)>,
}

/// A registered method.
pub trait PogoMethod: Sync {
    fn about(&self) -> &About;
    fn names(&self) -> &'static [&'static str] {
        self.about().names
    }
    /// One case of it, on the case's target and precision.
    fn run(&self, ctx: &mut CaseCtx, case: &Case) -> Result<StepRun, CaseError>;
}

/// A device method as a type: its case on the device, in `T`.
pub(crate) trait DeviceMethod: Sync {
    fn run<T: Real>(&self, ctx: &mut CaseCtx, dev: &dyn Device, case: &Case) -> Result<StepRun, CaseError>;
}

/// A `DeviceMethod` registered, with what it is.
pub struct Registered<M>(pub About, pub M);

impl<M: DeviceMethod> PogoMethod for Registered<M> {
    fn about(&self) -> &About {
        &self.0
    }
    fn run(&self, ctx: &mut CaseCtx, case: &Case) -> Result<StepRun, CaseError> {
        let dev = gpu_for(ctx, self.names()[0])?;
        match ctx.precision {
            Precision::F32 => self.1.run::<f32>(ctx, dev, case),
            Precision::F64 => self.1.run::<f64>(ctx, dev, case),
        }
    }
}
