//! A paper's methods as types in one registration list: what every paper's list shares. A
//! paper declares its own method trait (each method's name, [`Role`], [`Runs`] and case) and a
//! list of them; [`crate::method_name!`] gives it the method's name as a sweep-axis type,
//! resolved against that list when the experiment file is read.

use fembench_core::Backend;
use fembench_device::Device;

use crate::benchmark::{CaseCtx, CaseError, Target};

/// What a method is to the paper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The paper's CPU baselines or reference.
    Baseline,
    /// The paper's own GPU methods.
    Paper,
    /// Our own methods beyond the paper.
    Beyond,
    /// What a user of a library runs instead: compared on its own device and backend.
    Peer,
}

/// Where a method's cases run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    /// The cpu backend.
    Host,
    /// CUDA and OpenCL devices.
    Gpu,
    /// CUDA devices only (a vendor library, CuPy or PyTorch).
    Cuda,
}

impl Runs {
    /// Whether a method that runs so has cases on `backend`.
    pub fn on(self, backend: Backend) -> bool {
        match self {
            Runs::Host => backend == Backend::Cpu,
            Runs::Gpu => backend != Backend::Cpu,
            Runs::Cuda => backend == Backend::Cuda,
        }
    }
}

/// The case's GPU, for `method` (a method that runs on one): on the cpu backend its case is
/// skipped, with the reason.
pub fn gpu_for<'a>(ctx: &CaseCtx<'a>, method: &str) -> Result<&'a dyn Device, CaseError> {
    match ctx.target {
        Target::Gpu(dev) => Ok(dev),
        Target::Cpu => Err(CaseError::Skipped(format!("{method} runs on GPU backends"))),
    }
}

/// For `method`, a host method: on a GPU backend its case is skipped, with the reason.
pub fn host_for(ctx: &CaseCtx, method: &str) -> Result<(), CaseError> {
    match ctx.target {
        Target::Cpu => Ok(()),
        Target::Gpu(_) => Err(CaseError::Skipped(format!("{method} runs on the cpu backend"))),
    }
}

/// What a method's name is, as the type of a sweep's `method` axis: for `$name`, a newtype of
/// the registered name (`struct Method(pub(crate) &'static str)`, declared where the sweep is),
/// this gives the lookups in `$list` (a constant slice of `&dyn Trait` whose trait has
/// `fn names(&self) -> &'static [&'static str]`), its serde forms and its axis column. A name is
/// resolved against the list when the experiment file is read, so that an unknown one is
/// refused at its line and column with the list's names. Invoked beside the list, so that the
/// sweep's module does not import the methods.
///
/// ```ignore
/// fembench_bench::method_registry!(Method in METHODS: dyn AcooMethod);
/// ```
#[macro_export]
macro_rules! method_registry {
    ($name:ident in $list:path : $entry:ty) => {
        impl $name {
            pub const fn as_str(self) -> &'static str {
                self.0
            }
            /// Every registered name, in the list's order.
            pub fn all() -> ::std::vec::Vec<$name> {
                $list.iter().flat_map(|m| m.names().iter().map(|&n| $name(n))).collect()
            }
            /// The registered method of this name.
            pub fn named(name: &str) -> ::std::option::Option<$name> {
                $list.iter().flat_map(|m| m.names().iter()).find(|&&n| n == name).map(|&n| $name(n))
            }
            /// Its registered type.
            pub fn entry(self) -> &'static $entry {
                $list.iter().copied().find(|m| m.names().contains(&self.0)).expect("a method is made from a registered name")
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> ::std::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.0)
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> ::std::result::Result<$name, D::Error> {
                let name = <::std::string::String as ::serde::Deserialize>::deserialize(d)?;
                $name::named(&name).ok_or_else(|| {
                    let known: ::std::vec::Vec<::std::string::String> = $name::all().iter().map(|m| format!("`{}`", m.0)).collect();
                    <D::Error as ::serde::de::Error>::custom(format!("unknown variant `{name}`, expected one of {}", known.join(", ")))
                })
            }
        }

        $crate::named_axis!($name);
    };
}
