//! Sanfui and Sharma's methods: their one registration list, [`METHODS`]. Each line states what
//! a method is ([`About`]: its name, role, where it runs, its stages, its format and how its
//! numeric kernel meets the race) beside its type (see [`super::method`]). A new method is one
//! type, its kernels and one line here.

use super::assembly::IntoFormat;
use super::benchmark::HostMethod;
use super::formats::Format;
use super::method::{About, Race, Registered, SanfuiMethod};
use super::peer::CooRoute;
use super::python::PythonAssembly;
use super::shared_nz::SharedNz;
use super::spec::Method;
use crate::methods::{Role, Runs};

/// Every method of the Sanfui-Sharma experiments, in the order tables list them.
pub const METHODS: &[&dyn SanfuiMethod] = &[
    &paper(&["coo-color"], Format::COO, Race::Colors),
    &paper(&["coo-atomic"], Format::COO, Race::Atomics),
    &paper(&["csr-color"], Format::CSR, Race::Colors),
    &paper(&["csr-atomic"], Format::CSR, Race::Atomics),
    &paper(&["ell-color"], Format::ELL, Race::Colors),
    &paper(&["ell-atomic"], Format::ELL, Race::Atomics),
    &converted(&["coom-color"], Format::COOM, Race::Colors),
    &converted(&["coom-atomic"], Format::COOM, Race::Atomics),
    &converted(&["ellm-color"], Format::ELLM, Race::Colors),
    &converted(&["ellm-atomic"], Format::ELLM, Race::Atomics),
    &gpu(&["elem-atomic"], Role::Baseline, Runs::Gpu, &["elements", "numeric"], Race::Atomics, IntoFormat),
    &Registered(About { format: Format::ELLM, ..about(&["ellm-gather"], Role::Beyond, Runs::Gpu, ASSEMBLED, Race::None) }, IntoFormat),
    // K^e is computed inside the numeric kernel, in shared memory.
    &gpu(&["shared-nz"], Role::Baseline, Runs::Gpu, &["symbolic", "numeric"], Race::None, SharedNz),
    &gpu(&["coo-cusparse"], Role::Peer, Runs::Cuda, COO_ROUTE, Race::None, CooRoute),
    &gpu(&["coo-radix"], Role::Peer, Runs::Gpu, COO_ROUTE, Race::None, CooRoute),
    // The matrix as a user of a GPU FEM library assembles it (peers/sanfui_hex8.py): JAX's
    // element matrices and segment_sum into the CSR slots, one jitted function; NVIDIA Warp's
    // fem.integrate on a Hexmesh into BSR; the same on the libraries' CPU devices (CI).
    &PythonAssembly(about(&["jax-segment-sum"], Role::Peer, Runs::Cuda, LIBRARY, Race::None)),
    &PythonAssembly(about(&["warp-fem"], Role::Peer, Runs::Cuda, LIBRARY, Race::None)),
    &PythonAssembly(about(&["jax-cpu"], Role::Peer, Runs::Host, LIBRARY, Race::None)),
    &PythonAssembly(about(&["warp-cpu"], Role::Peer, Runs::Host, LIBRARY, Race::None)),
    &HostMethod { about: about(&["cpu-serial"], Role::Baseline, Runs::Host, HOST, Race::None), parallel: false },
    &HostMethod { about: about(&["cpu-parallel"], Role::Baseline, Runs::Host, HOST, Race::Colors), parallel: true },
];

/// The stages of a format method, and of one whose blocks are converted to CSR after assembly
/// (COOM and ELLM: their blocks are worth only what a solver can do with them).
const ASSEMBLED: &[&str] = &["elements", "symbolic", "numeric"];
const CONVERTED: &[&str] = &["elements", "symbolic", "numeric", "convert"];
const COO_ROUTE: &[&str] = &["elements", "triplets", "sort", "sum"];
const HOST: &[&str] = &["symbolic", "addto"];
/// A library's route: its whole assembly, one call of its own.
const LIBRARY: &[&str] = &["assembly"];

/// A method that assembles into CSR (the baselines and peers).
const fn about(names: &'static [&'static str], role: Role, runs: Runs, stages: &'static [&'static str], race: Race) -> About {
    About { names, role, runs, stages, format: Format::CSR, race }
}

const fn gpu<M>(
    names: &'static [&'static str],
    role: Role,
    runs: Runs,
    stages: &'static [&'static str],
    race: Race,
    m: M,
) -> Registered<M> {
    Registered(about(names, role, runs, stages, race), m)
}

/// One of the paper's ten symbolic + numeric combinations.
const fn paper(names: &'static [&'static str], format: Format, race: Race) -> Registered<IntoFormat> {
    Registered(About { names, role: Role::Paper, runs: Runs::Gpu, stages: ASSEMBLED, format, race }, IntoFormat)
}

/// The same for a block format (COOM, ELLM), converted to CSR on the device after assembly.
const fn converted(names: &'static [&'static str], format: Format, race: Race) -> Registered<IntoFormat> {
    Registered(About { names, role: Role::Paper, runs: Runs::Gpu, stages: CONVERTED, format, race }, IntoFormat)
}

crate::method_registry!(Method in METHODS: dyn SanfuiMethod);

/// Every format the registered methods assemble into, in the order tables list them (the
/// paper's five first).
pub fn formats() -> Vec<Format> {
    let mut out: Vec<Format> = Vec::new();
    for m in Method::all() {
        if !out.contains(&m.format()) {
            out.push(m.format());
        }
    }
    out
}

impl Method {
    pub const COO_COLOR: Method = Method("coo-color");
    pub const CSR_COLOR: Method = Method("csr-color");
    pub const ELL_COLOR: Method = Method("ell-color");
    pub const COOM_COLOR: Method = Method("coom-color");
    pub const ELLM_COLOR: Method = Method("ellm-color");
    pub const ELEM_ATOMIC: Method = Method("elem-atomic");
    pub const ELLM_GATHER: Method = Method("ellm-gather");
    pub const SHARED_NZ: Method = Method("shared-nz");
    pub const COO_CUSPARSE: Method = Method("coo-cusparse");
    pub const COO_RADIX: Method = Method("coo-radix");
    pub const CPU_SERIAL: Method = Method("cpu-serial");
    pub const CPU_PARALLEL: Method = Method("cpu-parallel");
    /// The peers, what a GPU-library user runs instead: the COO routes and the slot-map scatter
    /// (elem-atomic: K^e written, then added through CSR slots built once, PyTorch's index_add_).
    pub const PEERS: [Method; 3] = [Method::COO_RADIX, Method::ELEM_ATOMIC, Method::COO_CUSPARSE];

    fn about(self) -> &'static About {
        self.entry().about()
    }
    /// The format it assembles into (the baselines: CSR).
    pub fn format(self) -> Format {
        self.about().format
    }
    /// One of the paper's ten symbolic + numeric combinations.
    pub fn is_paper(self) -> bool {
        self.about().role == Role::Paper
    }
    /// Atomic adds rather than colors.
    pub fn atomic(self) -> bool {
        self.about().race == Race::Atomics
    }
    /// Element coloring (Algorithm 6): a device method whose numeric kernel runs color by color.
    pub fn colored(self) -> bool {
        self.about().runs != Runs::Host && self.about().race == Race::Colors
    }
    /// One of ours on the device: the paper's ten and those beyond the paper.
    pub fn ours(self) -> bool {
        matches!(self.about().role, Role::Paper | Role::Beyond) && self.about().runs != Runs::Host
    }
    /// Its cases use the element colors (a colored paper method, or the CPU baseline's threads).
    pub fn uses_colors(self) -> bool {
        self.about().race == Race::Colors
    }
    pub fn on_cpu(self) -> bool {
        self.about().runs == Runs::Host
    }
    /// A library's route (JAX, Warp), run by its Python script.
    pub fn library(self) -> bool {
        self.about().stages == LIBRARY
    }
    /// The library routes on a GPU, beside the vendor peers in the headline table.
    pub fn libraries() -> Vec<Method> {
        Method::all().into_iter().filter(|m| m.library() && !m.on_cpu()).collect()
    }
    /// A COO route (element triplets sorted into CSR, duplicates summed).
    pub fn coo_route(self) -> bool {
        self.about().stages == COO_ROUTE
    }
    pub fn runs_on(self, backend: crate::Backend) -> bool {
        self.about().runs.on(backend)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_states_what_each_method_was_before_it_was_a_type() {
        let all = Method::all();
        assert_eq!(all.iter().filter(|m| m.is_paper()).count(), 2 * Format::PAPER.len(), "the paper's formats, colors and atomics each");
        let names: std::collections::BTreeSet<&str> = all.iter().map(|m| m.as_str()).collect();
        assert_eq!(names.len(), all.len(), "a name registered twice");
        // The paper's ten: formats in pairs, colors then atomics; COOM and ELLM converted.
        let paper: Vec<Method> = all.iter().copied().filter(|m| m.is_paper()).collect();
        assert_eq!(paper, all[..10]);
        for (i, m) in paper.iter().enumerate() {
            assert_eq!((m.format(), m.atomic(), m.colored()), (Format::PAPER[i / 2], i % 2 == 1, i % 2 == 0), "{m:?}");
        }
        assert!(Method::ELEM_ATOMIC.atomic() && !Method::ELEM_ATOMIC.colored() && !Method::ELEM_ATOMIC.is_paper());
        assert!(Method::named("cpu-parallel").unwrap().uses_colors() && !Method::named("cpu-parallel").unwrap().colored());
        assert_eq!(all.iter().filter(|m| m.coo_route()).copied().collect::<Vec<_>>(), [Method::COO_CUSPARSE, Method::COO_RADIX]);
        assert!(Method::COO_CUSPARSE.runs_on(crate::Backend::Cuda) && !Method::COO_CUSPARSE.runs_on(crate::Backend::OpenCl));
        assert!(Method::COO_RADIX.runs_on(crate::Backend::OpenCl) && !Method::CPU_SERIAL.runs_on(crate::Backend::Cuda));
        assert_eq!(Method::ELLM_GATHER.format(), Format::ELLM);
        let named = [
            Method::COO_COLOR,
            Method::CSR_COLOR,
            Method::ELL_COLOR,
            Method::COOM_COLOR,
            Method::ELLM_COLOR,
            Method::ELEM_ATOMIC,
            Method::ELLM_GATHER,
            Method::SHARED_NZ,
            Method::COO_CUSPARSE,
            Method::COO_RADIX,
            Method::CPU_SERIAL,
            Method::CPU_PARALLEL,
        ];
        assert!(named.iter().chain(&Method::PEERS).all(|m| Method::named(m.as_str()) == Some(*m)), "a named constant is not registered");
    }
}
