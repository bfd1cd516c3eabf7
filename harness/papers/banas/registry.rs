//! Banaś et al.'s methods: their one registration list, [`METHODS`]. Each line states what a
//! method is ([`About`]: its name, role, where it runs) beside its type (see
//! [`super::method`]). A new method is one type, its kernel and one line here.

use super::benchmark::HostReference;
use super::method::{About, BanasMethod, Registered};
use super::peer::CublasRoute;
use super::plan::Variant;
use super::python::PythonRoute;
use super::spec::Method;
use super::staged::KernelVariant;
use crate::methods::{Role, Runs};

/// Every method of the Banaś experiments, in the order tables list them.
pub const METHODS: &[&dyn BanasMethod] = &[
    // Algorithm 2 in f64 on the host, rayon-parallel over elements (the paper's OpenMP code).
    &HostReference { about: About::new(&["cpu-reference"], Role::Baseline, Runs::Host) },
    &Registered(About::new(&["reg-jac"], Role::Paper, Runs::Gpu), KernelVariant(Variant::RegJac)),
    &Registered(About::new(&["reg-nojac"], Role::Paper, Runs::Gpu), KernelVariant(Variant::RegNojac)),
    &Registered(About::new(&["shm-jac"], Role::Paper, Runs::Gpu), KernelVariant(Variant::ShmJac)),
    &Registered(About::new(&["shm-nojac"], Role::Paper, Runs::Gpu), KernelVariant(Variant::ShmNojac)),
    // Beyond the paper: REG_NOJAC accumulating Gram sums, finished by Lamé's constants.
    &Registered(About::new(&["gram-nojac"], Role::Beyond, Runs::Gpu), KernelVariant(Variant::GramNojac)),
    // Beyond the paper: the Gram sums on the tensor cores (CUDA on sm_80+): DMMA in f64, 3xTF32
    // in f32 (about f32's accuracy).
    &Registered(About::new(&["mma-nojac"], Role::Beyond, Runs::Gpu), KernelVariant(Variant::MmaNojac)),
    // The peer (CUDA only): A^e = B^T (w D B) as one cuBLAS strided-batched GEMM, B computed by
    // our kernel (what a user of cuBLAS or torch writes). cuBLAS' default math: FP32 without
    // TF32, f64 on the FP64 tensor cores where the GPU has them.
    &Registered(About::new(&["cublas-gemm"], Role::Peer, Runs::Cuda), CublasRoute),
    // The same on the TF32 tensor cores (TF32's accuracy, about 1e-3).
    &Registered(About::new(&["cublas-gemm-tf32"], Role::Peer, Runs::Cuda).f32_only(), CublasRoute),
    // The same as 3xTF32: B and w D B split into TF32 high and low parts by our kernel, then
    // three TF32 GEMMs accumulated, keeping about f32's accuracy.
    &Registered(About::new(&["cublas-gemm-3xtf32"], Role::Peer, Runs::Cuda).f32_only(), CublasRoute),
    // External peers (`peers/banas_gemm.py`): B with PyTorch's einsum, then `torch.bmm`
    // (PyTorch's default math: FP32 without TF32); the same with CuPy (`cupy.einsum`,
    // `cupy.matmul`); with NumPy on the host, f64: the CPU reference's peer, on the same elements.
    &PythonRoute { about: About::new(&["torch-bmm"], Role::Peer, Runs::Cuda) },
    // The same function under torch.compile (Inductor).
    &PythonRoute { about: About::new(&["torch-compile"], Role::Peer, Runs::Cuda) },
    &PythonRoute { about: About::new(&["cupy-matmul"], Role::Peer, Runs::Cuda) },
    &PythonRoute { about: About::new(&["numpy-matmul"], Role::Peer, Runs::Host) },
];

crate::method_registry!(Method in METHODS: dyn BanasMethod);

impl Method {
    pub const CPU_REFERENCE: Method = Method("cpu-reference");
    pub const CUBLAS_GEMM: Method = Method("cublas-gemm");
    pub const CUBLAS_GEMM_TF32: Method = Method("cublas-gemm-tf32");
    pub const CUBLAS_GEMM_3XTF32: Method = Method("cublas-gemm-3xtf32");
    pub const TORCH_BMM: Method = Method("torch-bmm");
    pub const TORCH_COMPILE: Method = Method("torch-compile");
    pub const CUPY_MATMUL: Method = Method("cupy-matmul");
    pub const NUMPY_MATMUL: Method = Method("numpy-matmul");
    /// The peers, in the order reports list them: cuBLAS through our code, then the Python
    /// libraries' routes.
    pub const PEERS: [Method; 6] = [
        Method::CUBLAS_GEMM,
        Method::CUBLAS_GEMM_3XTF32,
        Method::CUBLAS_GEMM_TF32,
        Method::TORCH_BMM,
        Method::TORCH_COMPILE,
        Method::CUPY_MATMUL,
    ];

    /// A peer (CUDA only).
    pub fn is_peer(self) -> bool {
        Self::PEERS.contains(&self)
    }
    /// A peer on the TF32 tensor cores (f32 only).
    pub fn tf32(self) -> bool {
        self.entry().about().f32_only
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel variant named as `m`, if one is.
    fn variant(m: &Method) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.as_str() == m.0)
    }

    #[test]
    fn the_registry_states_what_each_method_was_before_it_was_a_type() {
        let all = Method::all();
        // The variants, the peers, the CPU reference and its NumPy peer.
        assert_eq!(all.len(), Variant::ALL.len() + Method::PEERS.len() + 2);
        let names: std::collections::BTreeSet<&str> = all.iter().map(|m| m.as_str()).collect();
        assert_eq!(names.len(), all.len(), "a name registered twice");
        let variants: Vec<Variant> = all.iter().filter_map(variant).collect();
        assert_eq!(variants, Variant::ALL, "every kernel variant is registered under its own name, in order");
        assert!(all.iter().filter(|m| variant(m).is_some()).all(|m| m.entry().about().runs == Runs::Gpu));
        assert_eq!(all.iter().filter(|m| m.tf32()).copied().collect::<Vec<_>>(), [Method::CUBLAS_GEMM_TF32, Method::CUBLAS_GEMM_3XTF32]);
        assert!(Method::PEERS.iter().all(|m| m.entry().about().runs == Runs::Cuda));
        use crate::{Backend, Precision};
        let has = |m: Method, b, p| m.entry().about().has_case(b, p);
        assert!(has(Method::NUMPY_MATMUL, Backend::Cpu, Precision::F64) && !has(Method::NUMPY_MATMUL, Backend::Cpu, Precision::F32));
        assert!(
            has(Method::CUBLAS_GEMM_TF32, Backend::Cuda, Precision::F32) && !has(Method::CUBLAS_GEMM_TF32, Backend::Cuda, Precision::F64)
        );
        assert!(!has(Method::CUBLAS_GEMM, Backend::OpenCl, Precision::F32) && has(Method::CUBLAS_GEMM, Backend::Cuda, Precision::F64));
        let named = [Method::CPU_REFERENCE, Method::CUBLAS_GEMM_TF32, Method::NUMPY_MATMUL];
        assert!(named.iter().chain(&Method::PEERS).all(|m| Method::named(m.as_str()) == Some(*m)), "a named constant is not registered");
        let reg = Method::named("reg-jac").unwrap();
        assert!(has(reg, Backend::OpenCl, Precision::F32) && !has(reg, Backend::Cpu, Precision::F64));
    }
}
