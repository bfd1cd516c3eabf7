//! Cecka's methods: their one registration list, [`METHODS`], and what a method's name stands
//! for. A new method is one type (see `method`), its kernel, and one line here.
//!
//! The benchmark runs the methods of a [`MethodList`]: [`Shipped`] ([`METHODS`]) in every
//! build, another list in a test that adds a method in its own file.

use serde::Deserialize;

use super::elem::{ElemAtomic, ElemColor};
use super::host::{PARALLEL, SERIAL};
use super::method::{CeckaMethod, Gpu, GpuMethod, Role};
use super::nz::methods::{GlobalNz, LocalNz, SharedAtomic, SharedNz};
use super::peer::{SlotScatter, COO_CUSPARSE, COO_RADIX};
use super::python::{CUPY_TOCSR, JAX_CPU, JAX_SEGMENT_SUM, SCIPY_TOCSR, TORCH_COMPILE, TORCH_INDEX_ADD, WARP_CPU, WARP_FEM};
use super::spec::Method;

/// Every method of the Cecka experiments, in the order tables list them.
pub const METHODS: &[&dyn CeckaMethod] = &[
    &SERIAL,
    &PARALLEL,
    &Gpu(ElemColor),
    &Gpu(GlobalNz),
    &Gpu(SharedNz),
    &Gpu(LocalNz),
    &Gpu(ElemAtomic),
    &Gpu(SharedAtomic),
    &COO_CUSPARSE,
    &COO_RADIX,
    &Gpu(SlotScatter),
    &CUPY_TOCSR,
    &TORCH_INDEX_ADD,
    &TORCH_COMPILE,
    &SCIPY_TOCSR,
    &JAX_SEGMENT_SUM,
    &JAX_CPU,
    &WARP_FEM,
    &WARP_CPU,
];

/// The methods a benchmark of this paper runs, as a type (the benchmark is generic over it).
pub trait MethodList: Send + Sync + 'static {
    const METHODS: &'static [&'static dyn CeckaMethod];

    /// The method registered under `name` (a full method's name or its dummy's).
    fn entry(name: Method) -> Option<&'static dyn CeckaMethod> {
        Self::METHODS.iter().copied().find(|m| m.names().contains(&name.as_str()))
    }
    /// Every registered name, in the list's order.
    fn names() -> Vec<&'static str> {
        Self::METHODS.iter().flat_map(|m| m.names().iter().copied()).collect()
    }
}

/// The list every build runs: [`METHODS`].
pub struct Shipped;

impl MethodList for Shipped {
    const METHODS: &'static [&'static dyn CeckaMethod] = METHODS;
}

impl Method {
    pub const CPU_SERIAL: Method = Method(SERIAL.names[0]);
    pub const ELEM_COLOR: Method = Method(<ElemColor as GpuMethod>::NAMES[0]);
    pub const GLOBAL_NZ: Method = Method(<GlobalNz as GpuMethod>::NAMES[0]);
    pub const SHARED_NZ: Method = Method(<SharedNz as GpuMethod>::NAMES[0]);
    pub const LOCAL_NZ: Method = Method(<LocalNz as GpuMethod>::NAMES[0]);

    /// Every registered name, in the registry's order (a method, then its dummy variant).
    pub fn all() -> Vec<Method> {
        METHODS.iter().flat_map(|m| m.names().iter().map(|&n| Method(n))).collect()
    }
    /// The registered method of this name.
    pub fn named(name: &str) -> Option<Method> {
        METHODS.iter().flat_map(|m| m.names().iter()).find(|&&n| n == name).map(|&n| Method(n))
    }
    /// The full methods of `role`, in the registry's order.
    pub fn of_role(role: Role) -> Vec<Method> {
        METHODS.iter().filter(|m| m.role() == role).map(|m| Method(m.names()[0])).collect()
    }
    /// The paper's four GPU methods (Sec. 4), in its order.
    pub fn paper() -> Vec<Method> {
        Method::of_role(Role::Paper)
    }
    pub fn paper_names() -> Vec<&'static str> {
        Method::paper().into_iter().map(Method::as_str).collect()
    }
    /// The peers: what a user of a library runs instead of the paper's methods. Each is compared
    /// on its own device and backend only, so SciPy's host route is the CPU baselines' peer.
    pub fn peers() -> Vec<Method> {
        Method::of_role(Role::Peer)
    }
    /// The FEM libraries' routes among the peers (JAX, Warp, compiled PyTorch).
    pub fn libraries() -> Vec<Method> {
        Method::peers().into_iter().filter(|m| m.entry().fem_library()).collect()
    }
    /// Its registered type (in the shipped list).
    pub fn entry(self) -> &'static dyn CeckaMethod {
        Shipped::entry(self).expect("a shipped method")
    }
    /// A route a Python script runs (`peers/cecka_assembly.py`), on a CUDA device or the host.
    pub fn external(self) -> bool {
        self.entry().external()
    }
}

/// A shipped name is the registry's own; any other is kept for the benchmark's list to judge
/// (`unknown_method`, at its line, before anything runs): its few bytes are leaked, once per
/// name read, since a name outlives the experiment file.
impl<'de> Deserialize<'de> for Method {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Method, D::Error> {
        let name = String::deserialize(d)?;
        Ok(Method::named(&name).unwrap_or_else(|| Method(Box::leak(name.into_boxed_str()))))
    }
}

/// The first method of `methods` that `L` does not list, as the error `check` reports.
pub(crate) fn unknown_method<L: MethodList>(methods: &[Method]) -> Option<String> {
    let m = methods.iter().find(|&&m| L::entry(m).is_none())?;
    let known: Vec<String> = L::names().iter().map(|n| format!("`{n}`")).collect();
    Some(format!("unknown method `{}`, expected one of {}", m.as_str(), known.join(", ")))
}

/// A name two methods of `L` register, as the error `check` reports: every experiment file of the
/// paper is refused until the new method has names of its own.
pub(crate) fn twice_registered<L: MethodList>() -> Option<String> {
    let names = L::names();
    let twice = names.iter().enumerate().find(|&(i, n)| names[..i].contains(n))?.1;
    Some(format!(
        "the method name `{twice}` is registered twice in the method list (registry.rs): give the new method names of its own (its `NAMES`)"
    ))
}
