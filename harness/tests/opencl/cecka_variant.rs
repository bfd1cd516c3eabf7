//! A new method of one thread per element, as docs/extending.md adds one, on PoCL: the variant
//! passes its check; one that drops an element fails it; a duplicate name and a parameter of
//! another type are refused, each with what to do.

use fembench::registry::{entry, Registry};
use fembench::results::RunDir;
use fembench::runner::{run, RunOptions};

// A new method of one thread per element, as docs/extending.md adds one: a variant of the
// element kernel (here appended to a copy of cecka.kern's text; in the tree, a kernel in
// kernels/cecka.kern) and one type that prepares the shared element stage with it. `elem-dropped`
// is the same with element 0 skipped, so its check must fail; a variant whose `count` is an
// `idx_t` is refused by the argument check, with the field to change.
mod variant_method {
    use fembench::benchmark::{CaseCtx, CaseError};
    use fembench::cecka::elem::{ElemAssembly, ElemAtomic};
    use fembench::cecka::kernel::{Elements, CECKA};
    use fembench::cecka::method::{Assembly, Case, CeckaMethod, Gpu, GpuMethod, Role};
    use fembench::cecka::registry::MethodList;
    use fembench::kernels::KernelSource;
    use fembench::real::Real;

    /// The variant's kernel name (each kernel of a file has a name of its own).
    pub fn kernel(drop: bool) -> &'static str {
        if drop {
            "cecka_elem_dropped"
        } else {
            "cecka_elem_test"
        }
    }

    /// cecka.kern with `cecka_elements` copied as [`kernel`]: element 0 skipped where `drop`,
    /// its last parameter an `idx_t` where `wrong`.
    pub fn source(drop: bool, wrong: bool) -> KernelSource {
        let text = CECKA.text;
        let start = text.find("#if !FB_SELECT || defined(FB_ONLY_cecka_elements)").unwrap();
        let end = start + text[start..].find("#endif").unwrap() + "#endif".len();
        let mut variant = text[start..end].replace("cecka_elements", kernel(drop));
        if drop {
            variant = variant.replace("if (t >= count) return;", "if (t >= count || first + t == 0) return;");
        }
        if wrong {
            variant = variant.replace("int first, int count", "int first, idx_t count");
        }
        KernelSource { file: "cecka.kern", text: Box::leak(format!("{text}\n{variant}\n").into_boxed_str()) }
    }

    /// The variant method (`DROP`: the kernel that skips element 0).
    pub struct ElemTest<const DROP: bool>;

    impl<const DROP: bool> GpuMethod for ElemTest<DROP> {
        const NAMES: &'static [&'static str] = if DROP { &["elem-dropped"] } else { &["elem-test"] };
        const ROLE: Role = Role::Beyond;
        fn prepare<T: Real>(&self, ctx: &mut CaseCtx, case: &Case) -> Result<Box<dyn Assembly<T>>, CaseError> {
            Ok(Box::new(ElemAssembly::<T>::prepare(ctx, case, false, &source(DROP, false), kernel(DROP))?))
        }
    }

    /// A method that takes ElemAtomic's names.
    pub struct Twin;

    impl GpuMethod for Twin {
        const NAMES: &'static [&'static str] = &["elem-atomic"];
        const ROLE: Role = Role::Beyond;
        fn prepare<T: Real>(&self, ctx: &mut CaseCtx, case: &Case) -> Result<Box<dyn Assembly<T>>, CaseError> {
            ElemAtomic.prepare::<T>(ctx, case)
        }
    }

    pub struct WithVariant;
    impl MethodList for WithVariant {
        const METHODS: &'static [&'static dyn CeckaMethod] = &[&Gpu(ElemAtomic), &Gpu(ElemTest::<false>), &Gpu(ElemTest::<true>)];
    }

    pub struct WithTwin;
    impl MethodList for WithTwin {
        const METHODS: &'static [&'static dyn CeckaMethod] = &[&Gpu(ElemAtomic), &Gpu(Twin)];
    }

    /// docs/extending.md's `ARGS` line, as a method declares it: a constant, checked against the
    /// kernel file (which has `cecka_elem_mine` once the walkthrough's kernel is added).
    pub const WALKTHROUGH_ARGS: &[fembench::device::args::Declared] =
        &[fembench::device::args::Declared::same_as::<Elements<'static>>(CECKA, "cecka_elem_mine")];

    /// The argument check of the variant against `Elements`, as the house test runs it.
    pub fn argument_check(wrong: bool) -> Result<(), String> {
        use fembench::device::args::{Declared, KernelArgs};
        Declared { source: source(false, wrong), kernel: "cecka_elem_test", params: <Elements as KernelArgs>::params }.check()
    }
}

static VARIANT_REGISTRY: Registry = Registry(&[entry::<fembench::cecka::benchmark::Assembly<variant_method::WithVariant>>()]);
static TWIN_REGISTRY: Registry = Registry(&[entry::<fembench::cecka::benchmark::Assembly<variant_method::WithTwin>>()]);

#[test]
fn a_variant_of_the_element_kernel_is_one_type_and_its_mistakes_are_refused_or_fail() {
    let _turn = crate::common::opencl_turn();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("variant.yaml");
    std::fs::write(
        &file,
        "id: variant\ntitle: variant\nbenchmark: cecka-assembly\nsweep:\n  method: [elem-atomic, elem-test, elem-dropped]\n  level: [0]\n  order: [1, 2]\n\
         backends: [opencl]\nprecisions: [f64]\nmeasure: { warmup: 0, min_reps: 2, max_reps: 2, min_time_s: 0 }\noutputs: { tables: [timings] }\n",
    )
    .unwrap();
    // Two methods under one name: every file of the paper is refused, saying what to do.
    let e = TWIN_REGISTRY.load(&file).err().expect("a list that registers elem-atomic twice").to_string();
    assert!(e.contains("`elem-atomic` is registered twice") && e.contains("names of its own"), "{e}");
    // A parameter of another type: refused, naming the argument and the field to change.
    assert_eq!(variant_method::argument_check(false), Ok(()));
    // The walkthrough's line compiles; it checks out in a tree that has its kernel, and in the
    // shipped tree fails only for want of the kernel.
    if let Err(e) = variant_method::WALKTHROUGH_ARGS[0].check() {
        assert!(e.contains("no definition `void cecka_elem_mine(...)"), "{e}");
    }
    let e = variant_method::argument_check(true).unwrap_err();
    assert!(
        e.contains("argument 12 (`count`) is `idx_t` in the kernel, but the argument struct passes `int`: make that field `i64`"),
        "{e}"
    );

    let exps = VARIANT_REGISTRY.load_all(&[&file]).unwrap_or_else(|e| panic!("{e:?}"));
    let s = run(&exps, &RunOptions { out_dir: dir.path().join("results"), ..Default::default() }).unwrap();
    if s.rows_ok + s.rows_failed == 0 {
        assert_ne!(std::env::var("FEMBENCH_REQUIRE_OPENCL").as_deref(), Ok("1"), "FEMBENCH_REQUIRE_OPENCL=1 but no case ran on OpenCL");
        return eprintln!("skipping: no OpenCL device");
    }
    // The variant passes its check against the f64 reference; the one that drops an element
    // fails it, with the reason.
    let df = RunDir::open(&s.run_dir).unwrap().read_experiment("variant").unwrap().unwrap();
    let strs = |c: &str| df.column(c).unwrap().str().unwrap().iter().map(|v| v.unwrap_or("").to_string()).collect::<Vec<_>>();
    let rows: Vec<String> = strs("method").into_iter().zip(strs("status")).map(|(m, st)| format!("{m} {st}")).collect();
    assert_eq!(rows.iter().filter(|r| r.ends_with("ok")).count(), 4, "{rows:?}");
    assert_eq!(rows.iter().filter(|r| *r == "elem-dropped failed").count(), 2, "{rows:?}");
    assert!(strs("reason").iter().any(|r| r.contains("verification failed")), "{:?}", strs("reason"));
}
