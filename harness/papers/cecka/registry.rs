//! Cecka's methods: their one registration list, [`METHODS`], and what a method's name stands
//! for. A new method is one type (see `method`), its kernel, and one line here.

use serde::Deserialize;

use super::elem::{ElemAtomic, ElemColor};
use super::host::{PARALLEL, SERIAL};
use super::method::{CeckaMethod, Gpu, GpuMethod, Role, Runs};
use super::nz_methods::{GlobalNz, LocalNz, SharedAtomic, SharedNz};
use super::peer::{SlotScatter, COO_CUSPARSE, COO_RADIX};
use super::python::{CUPY_TOCSR, SCIPY_TOCSR, TORCH_INDEX_ADD};
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
    &SCIPY_TOCSR,
];

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
    /// Its registered type.
    pub fn entry(self) -> &'static dyn CeckaMethod {
        METHODS.iter().copied().find(|m| m.names().contains(&self.0)).expect("a method is made from a registered name")
    }
    /// A route a Python script runs (`peers/cecka_assembly.py`), on a CUDA device or the host.
    pub fn external(self) -> bool {
        self.entry().external()
    }
    pub(crate) fn on_cpu(self) -> bool {
        self.entry().runs() == Runs::Host
    }
    pub(crate) fn colored(self) -> bool {
        self.entry().colored()
    }
}

impl<'de> Deserialize<'de> for Method {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Method, D::Error> {
        let name = String::deserialize(d)?;
        Method::named(&name).ok_or_else(|| {
            let known: Vec<String> = Method::all().iter().map(|m| format!("`{}`", m.0)).collect();
            serde::de::Error::custom(format!("unknown variant `{name}`, expected one of {}", known.join(", ")))
        })
    }
}
