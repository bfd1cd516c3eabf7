//! What a Banaś method is, as a type: [`BanasMethod`] (a registered method: what it is,
//! [`About`], and its case's rows), and for a device method `DeviceMethod`, registered as
//! [`Registered`]`(about, M)`, whose `run` is its case on the device in the case's precision.

use super::spec::{Point, Problem_};
use crate::benchmark::{CaseCtx, CaseError, Measured};
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
    /// It takes f32 inputs only (the TF32 tensor cores).
    pub f32_only: bool,
}

impl About {
    pub const fn new(names: &'static [&'static str], role: Role, runs: Runs) -> About {
        About { names, role, runs, f32_only: false }
    }
    pub const fn f32_only(self) -> About {
        About { f32_only: true, ..self }
    }
    /// Whether it has a case on `backend` in `precision`: host methods in f64 (the paper's
    /// baseline precision).
    pub fn has_case(&self, backend: crate::Backend, precision: Precision) -> bool {
        self.runs.on(backend) && (self.runs != Runs::Host || precision == Precision::F64) && (!self.f32_only || precision == Precision::F32)
    }
}

/// A registered method.
pub trait BanasMethod: Sync {
    fn about(&self) -> &About;
    fn names(&self) -> &'static [&'static str] {
        self.about().names
    }
    /// One case of it, on the case's target and precision: its rows.
    fn run(&self, ctx: &mut CaseCtx, problem: &Problem_, point: &Point) -> Result<Vec<Measured>, CaseError>;
}

/// A device method as a type: its case on the device, in `T`.
pub(crate) trait DeviceMethod: Sync {
    fn run<T: Real>(&self, ctx: &mut CaseCtx, dev: &dyn Device, problem: &Problem_, point: &Point) -> Result<Vec<Measured>, CaseError>;
}

/// A `DeviceMethod` registered, with what it is.
pub struct Registered<M>(pub About, pub M);

impl<M: DeviceMethod> BanasMethod for Registered<M> {
    fn about(&self) -> &About {
        &self.0
    }
    fn run(&self, ctx: &mut CaseCtx, problem: &Problem_, point: &Point) -> Result<Vec<Measured>, CaseError> {
        let dev = gpu_for(ctx, self.names()[0])?;
        if self.0.f32_only && ctx.precision != Precision::F32 {
            return Err(CaseError::Skipped(format!("{} takes f32 inputs", self.names()[0])));
        }
        match ctx.precision {
            Precision::F32 => self.1.run::<f32>(ctx, dev, problem, point),
            Precision::F64 => self.1.run::<f64>(ctx, dev, problem, point),
        }
    }
}
