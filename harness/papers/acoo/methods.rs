//! One case of a device method: buffers allocated once, then whole passes of the method's
//! stages (`run_staged`), each pass's solution checked against the f64 reference.

use super::capacitor::Capacitor;
use super::gpu::{
    cover, csr_error, fill_with, spmv, spmv_into, vendor_cg, Cg, CgRun, DeviceCsr, Kernels, Memory, Mesh, Stage, Stop, Vendor, ACOO, BLOCK,
};
use super::product::{self, Output, ProductRun};
use super::spec::{Method, Problem_};
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::scan::{exclusive_scan, scan_sums_len};
use crate::device::{Arg, Buffer, Device, DeviceExt};
use crate::kernels::Defines;
use crate::measure::{run_staged, CacheMode, Pass, Staged, Timer};
use crate::real::Real;

/// Bytes of one A-FEM list node (`acoo_node` in kernels/acoo.kern).
pub const NODE_BYTES: usize = 16;

/// What a method's passes measured and how its last checked pass compared.
pub(crate) struct MethodRun {
    pub(crate) staged: Vec<Staged>,
    pub(crate) cg: CgRun,
    /// Relative L2 error of the solution on the free nodes against the reference.
    pub(crate) error: f64,
    /// A-FEM: relative error of its CSR matrix (infinite if the pattern differs).
    pub(crate) csr_error: Option<f64>,
    pub(crate) memory: Memory,
    /// Host seconds of the coloring (EbE methods), and its color count.
    pub(crate) coloring: Option<(f64, usize)>,
    /// The method's matrix-vector product on its own (device methods).
    pub(crate) product: Option<ProductRun>,
}

/// The stages a method has, in table order, each with its clock.
pub(crate) fn stages_of(m: Method) -> Vec<(&'static str, Timer)> {
    let names: &[&'static str] = match m {
        Method::AFem => &["elements", "bc", "consolidate", "convert", "solve"],
        Method::EbeV1 => &["elements", "bc", "solve"],
        Method::EbeV2 => &["bc", "solve"],
        Method::CsrAtomic
        | Method::CsrColor
        | Method::CusparseCg
        | Method::CusparseCgDevice
        | Method::CusparseCgGraph
        | Method::CpuSerial
        | Method::CpuParallel => &["elements", "solve"],
    };
    let timer = if m.on_cpu() { Timer::HostWall } else { Timer::DeviceEvent };
    // The cuSPARSE/cuBLAS CG reads its scalars back every iteration: its solve is an open region.
    let open = |n: &str| m == Method::CusparseCg && n == "solve";
    names.iter().map(|&n| (n, if open(n) { Timer::DeviceEventOpen } else { timer })).collect()
}

fn check<T: Real>(dev: &dyn Device, cg: &Cg, c: &Capacitor, reference: &[f64], on_nodes: bool) -> Result<f64, CaseError> {
    let x: Vec<f64> = dev.download_vec::<T>(&cg.x, cg.n)?.into_iter().map(|v| v.to_f64()).collect();
    let free: Vec<f64> = if on_nodes { (0..c.num_nodes()).filter(|&v| c.dof[v] >= 0).map(|v| x[v]).collect() } else { x };
    Ok(fembench_fem::verify::relative_l2(&free, reference))
}

fn modes(ctx: &CaseCtx) -> Result<Vec<CacheMode>, CaseError> {
    if ctx.policy.modes.contains(&CacheMode::Cold) {
        return Err(CaseError::Failed(
            "a-COO methods run warm only: a cold flush between CG iterations is not what the paper times".into(),
        ));
    }
    Ok(vec![CacheMode::Warm])
}

/// Each color's (first, count) in the elements listed color after color.
fn color_ranges(colors: &[Vec<u32>]) -> Vec<(usize, usize)> {
    colors
        .iter()
        .scan(0, |start, g| {
            let r = (*start, g.len());
            *start += g.len();
            Some(r)
        })
        .collect()
}

/// q = sum of A^e p over every color, one launch per color (q zeroed first: `words` 32-bit
/// words); `kernels`: the element product and the filler, `elements`: the color-ordered element
/// list, each color's range and the stored element matrices (v1).
fn ebe_product(
    dev: &dyn Device,
    kernels: (&crate::device::Kernel, &crate::device::Kernel),
    m: &Mesh,
    elements: (&Buffer, &[(usize, usize)], &Buffer),
    p: &Buffer,
    q: &Buffer,
    words: usize,
) -> crate::device::DeviceResult<()> {
    let ((mv, z), (elist, ranges, ke)) = (kernels, elements);
    fill_with(dev, z, q, 0, words)?;
    for &(first, count) in ranges {
        let args = [
            Arg::Buf(elist),
            Arg::I64(first as i64),
            Arg::I64(count as i64),
            Arg::Buf(&m.tris),
            Arg::Buf(&m.x),
            Arg::Buf(&m.y),
            Arg::Buf(ke),
            Arg::Buf(p),
            Arg::Buf(q),
        ];
        dev.launch(mv, cover(count), &args)?;
    }
    Ok(())
}

/// Runs `pass` under the policy, the solution of every pass checked; `mem` already holds the
/// method's buffers.
fn passes(
    ctx: &mut CaseCtx,
    method: Method,
    mut pass: impl FnMut(&mut Kernels, &mut Pass) -> Result<(CgRun, f64, Option<f64>), CaseError>,
    dev: &dyn Device,
    defines: &Defines,
) -> Result<(Vec<Staged>, CgRun, f64, Option<f64>), CaseError> {
    let mut last = None;
    let mut worst: f64 = 0.0;
    let mut staged = Vec::new();
    for mode in modes(ctx)? {
        let mut k = Kernels { dev, modules: &mut *ctx.modules, defines: defines.clone() };
        staged.push(run_staged(ctx.policy, mode, &stages_of(method), "solve", |p| -> Result<(), CaseError> {
            let (cg, err, csr) = pass(&mut k, p)?;
            worst = if err.is_nan() || worst.is_nan() { f64::NAN } else { worst.max(err) };
            last = Some((cg, csr));
            Ok(())
        })?);
    }
    let (cg, csr) = last.ok_or_else(|| CaseError::Failed("no pass ran".into()))?;
    Ok((staged, cg, worst, csr))
}

/// The f64 reference a device run is checked against: the solution and the matrix's values (on
/// the capacitor's pattern).
#[derive(Clone, Copy)]
pub(crate) struct Reference<'a> {
    pub(crate) x: &'a [f64],
    pub(crate) vals: &'a [f64],
}

pub(crate) fn run_device<T: Real>(
    ctx: &mut CaseCtx,
    dev: &dyn Device,
    problem: &Problem_,
    c: &Capacitor,
    (colors, coloring_s): (&[Vec<u32>], f64),
    Reference { x: reference, vals: reference_vals }: Reference,
    method: Method,
) -> Result<MethodRun, CaseError> {
    let defines = Defines::for_precision(T::PRECISION).with("BLOCK", BLOCK);
    let s = std::mem::size_of::<T>();
    let mut mem = Memory::default();
    let mesh = Mesh::upload::<T>(dev, &mut mem, c)?;
    let stop = Stop { tol: problem.tolerance, max_iter: problem.max_iterations };
    let (nf, ne, n) = (c.n_free, c.num_elements(), c.num_nodes());
    match method {
        Method::AFem => {
            // Linked lists: row heads, and per element entry its next, column and value.
            // Each entry is a 16-byte node (next, column, value; padded in f32).
            let lists_bytes = 4 * n + 9 * ne * NODE_BYTES;
            let head = mem.alloc(dev, 4 * n)?;
            let node = mem.alloc(dev, 9 * ne * NODE_BYTES)?;
            let count = mem.alloc(dev, 4 * nf)?;
            let rhs = mem.alloc(dev, s * nf)?;
            let sums = mem.alloc(dev, 4 * scan_sums_len(nf + 1))?;
            let nnz = c.pattern.nnz();
            let a = DeviceCsr {
                row_ptr: mem.alloc(dev, 4 * (nf + 1))?,
                col: mem.alloc(dev, 4 * nnz)?,
                val: mem.alloc(dev, s * nnz)?,
                rows: nf,
            };
            // The lists are freed once converted (their buffers are kept for the next pass).
            mem.release(lists_bytes);
            let cg = Cg::new::<T>(dev, &mut mem, nf)?;
            let (staged, run, error, csr) = passes(
                ctx,
                method,
                |k, pass| {
                    // Every output poisoned (NaN values, -1 indices); the lists are emptied
                    // inside the timed elements stage (as csr-atomic zeroes its values there).
                    let z = k.filler()?;
                    for (buf, words) in [(&rhs, nf * s / 4), (&count, nf), (&a.row_ptr, nf + 1), (&a.col, nnz), (&a.val, nnz * s / 4)] {
                        k.fill(buf, u32::MAX, words)?;
                    }
                    let (push, bc, cons) = (k.get("acoo_push")?, k.get("acoo_bc")?, k.get("acoo_consolidate")?);
                    let (scan, to_csr) = (k.scan()?, k.get("acoo_to_csr")?);
                    let m = &mesh;
                    pass.device(dev, "elements", &mut || {
                        fill_with(dev, &z, &head, u32::MAX, n)?;
                        let args =
                            [Arg::Buf(&m.tris), Arg::Buf(&m.x), Arg::Buf(&m.y), Arg::Buf(&head), Arg::Buf(&node), Arg::I64(ne as i64)];
                        dev.launch(&push, cover(ne), &args)
                    })?;
                    let list = [Arg::Buf(&head), Arg::Buf(&node), Arg::Buf(&m.dof)];
                    pass.device(dev, "bc", &mut || {
                        fill_with(dev, &z, &rhs, 0, nf * s / 4)?;
                        let args = [list[0], list[1], list[2], Arg::Buf(&m.g), Arg::Buf(&rhs), Arg::I64(n as i64)];
                        dev.launch(&bc, cover(n), &args)
                    })?;
                    pass.device(dev, "consolidate", &mut || {
                        dev.launch(&cons, cover(n), &[list[0], list[1], list[2], Arg::Buf(&count), Arg::I64(n as i64)])
                    })?;
                    // Checked before the conversion (untimed): a row the kernel could not hold
                    // would make the row pointers wrong.
                    let counts: Vec<i32> = dev.download_vec(&count, nf)?;
                    if let Some(r) = counts.iter().position(|&v| v < 0) {
                        return Err(CaseError::Failed(format!("row {r} has more distinct columns than the kernel's MAXROW")));
                    }
                    pass.device(dev, "convert", &mut || {
                        exclusive_scan(dev, &scan, &count, &a.row_ptr, &sums, nf, nf + 1)?;
                        let args =
                            [list[0], list[1], list[2], Arg::Buf(&a.row_ptr), Arg::Buf(&a.col), Arg::Buf(&a.val), Arg::I64(n as i64)];
                        dev.launch(&to_csr, cover(n), &args)
                    })?;
                    let sp = k.get("cg_spmv_csr")?;
                    let run = cg.solve::<T>(k, &rhs, stop, Stage { pass, name: "solve" }, &mut |cg| spmv(dev, &sp, &a, cg))?;
                    let err = check::<T>(dev, &cg, c, reference, false)?;
                    Ok((run, err, Some(csr_error::<T>(dev, &a, &c.pattern, reference_vals)?)))
                },
                dev,
                &defines,
            )?;
            let sp = ctx.modules.kernel(dev, &ACOO, &defines, "cg_spmv_csr")?;
            let (px, qy) = product::buffers::<T>(dev, c, false)?;
            let bytes = product::csr_bytes(c, s);
            let product = product::measure::<T>(ctx, dev, (c, reference_vals), Output { q: &qy, on_nodes: false }, bytes, &mut || {
                spmv_into(dev, &sp, &a, &px, &qy, &cg.partial)
            })?;
            Ok(MethodRun { staged, cg: run, error, csr_error: csr, memory: mem, coloring: None, product: Some(product) })
        }
        Method::CsrAtomic | Method::CsrColor | Method::CusparseCg | Method::CusparseCgDevice | Method::CusparseCgGraph => {
            let nnz = c.pattern.nnz();
            // csr-color: the elements renumbered by color (their triangles and slots uploaded in
            // color order), one launch per color.
            let colored = method == Method::CsrColor;
            let order: Vec<usize> = if colored { colors.iter().flatten().map(|&e| e as usize).collect() } else { vec![] };
            let slots = if colored {
                mem.upload(dev, &order.iter().flat_map(|&e| c.slots[9 * e..9 * e + 9].iter().copied()).collect::<Vec<i32>>())?
            } else {
                mem.upload(dev, &c.slots)?
            };
            let color_tris = if colored {
                Some(mem.upload(dev, &order.iter().flat_map(|&e| c.tris[e].map(|v| v as i32)).collect::<Vec<i32>>())?)
            } else {
                None
            };
            let ranges = color_ranges(colors);
            let a = DeviceCsr {
                row_ptr: mem.upload(dev, &c.pattern.row_ptr)?,
                col: mem.upload(dev, &c.pattern.col)?,
                val: mem.alloc(dev, s * nnz)?,
                rows: nf,
            };
            let rhs = mem.alloc(dev, s * nf)?;
            let cg = Cg::new::<T>(dev, &mut mem, nf)?;
            // The peer's SpMV is planned here, outside the passes (descriptors, workspace).
            let vendor = if method.vendor() {
                let op = dev.sparse()?.csr_spmv(a.compressed(T::PRECISION, nnz), &cg.p, &cg.q)?;
                mem.count(op.workspace_bytes());
                // cuBLAS' workspace (a buffer the harness gives the handle) is the peer's too.
                let blas = dev.blas()?;
                mem.count(blas.workspace_bytes());
                Some((op, blas))
            } else {
                None
            };
            let (staged, run, error, _) = passes(
                ctx,
                method,
                |k, pass| {
                    let kern = k.get(if colored { "csr_color" } else { "csr_atomic" })?;
                    let z = k.filler()?;
                    k.fill(&cg.x, u32::MAX, nf * s / 4)?;
                    let m = &mesh;
                    pass.device(dev, "elements", &mut || {
                        fill_with(dev, &z, &a.val, 0, nnz * s / 4)?;
                        fill_with(dev, &z, &rhs, 0, nf * s / 4)?;
                        if let Some(tris) = &color_tris {
                            for &(first, count) in &ranges {
                                let args = [
                                    Arg::I64(first as i64),
                                    Arg::I64(count as i64),
                                    Arg::Buf(tris),
                                    Arg::Buf(&m.x),
                                    Arg::Buf(&m.y),
                                    Arg::Buf(&m.dof),
                                    Arg::Buf(&m.g),
                                    Arg::Buf(&slots),
                                    Arg::Buf(&a.val),
                                    Arg::Buf(&rhs),
                                ];
                                dev.launch(&kern, cover(count), &args)?;
                            }
                            return Ok(());
                        }
                        let args = [
                            Arg::Buf(&m.tris),
                            Arg::Buf(&m.x),
                            Arg::Buf(&m.y),
                            Arg::Buf(&m.dof),
                            Arg::Buf(&m.g),
                            Arg::Buf(&slots),
                            Arg::Buf(&a.val),
                            Arg::Buf(&rhs),
                            Arg::I64(ne as i64),
                        ];
                        dev.launch(&kern, cover(ne), &args)
                    })?;
                    let run = match &vendor {
                        Some((op, blas)) if method == Method::CusparseCg => {
                            vendor_cg::<T>(dev, Vendor { spmv: &**op, blas: *blas }, &z, &rhs, &cg, stop, Stage { pass, name: "solve" })?
                        }
                        Some((op, blas)) => {
                            let graph = method == Method::CusparseCgGraph;
                            let vendor = Vendor { spmv: &**op, blas: *blas };
                            cg.solve_vendor::<T>(k, vendor, graph, &rhs, stop, Stage { pass, name: "solve" })?
                        }
                        None => {
                            let sp = k.get("cg_spmv_csr")?;
                            cg.solve::<T>(k, &rhs, stop, Stage { pass, name: "solve" }, &mut |cg| spmv(dev, &sp, &a, cg))?
                        }
                    };
                    Ok((run, check::<T>(dev, &cg, c, reference, false)?, None))
                },
                dev,
                &defines,
            )?;
            let coloring = colored.then_some((coloring_s, colors.len()));
            // The product on its own: cuSPARSE's SpMV (planned again, on the product's buffers)
            // for the peer, our CSR kernel for the others.
            let (px, qy) = product::buffers::<T>(dev, c, false)?;
            let bytes = product::csr_bytes(c, s);
            let product = match &vendor {
                Some(_) => {
                    let op = dev.sparse()?.csr_spmv(a.compressed(T::PRECISION, nnz), &px, &qy)?;
                    product::measure::<T>(ctx, dev, (c, reference_vals), Output { q: &qy, on_nodes: false }, bytes, &mut || op.enqueue())?
                }
                None => {
                    let sp = ctx.modules.kernel(dev, &ACOO, &defines, "cg_spmv_csr")?;
                    product::measure::<T>(ctx, dev, (c, reference_vals), Output { q: &qy, on_nodes: false }, bytes, &mut || {
                        spmv_into(dev, &sp, &a, &px, &qy, &cg.partial)
                    })?
                }
            };
            Ok(MethodRun { staged, cg: run, error, csr_error: None, memory: mem, coloring, product: Some(product) })
        }
        Method::EbeV1 | Method::EbeV2 => {
            let recompute = method == Method::EbeV2;
            let coloring = (coloring_s, colors.len());
            let elist: Vec<i32> = colors.iter().flatten().map(|&e| e as i32).collect();
            let ranges = color_ranges(colors);
            let elist = mem.upload(dev, &elist)?;
            let ke = if recompute { mem.alloc(dev, 4)? } else { mem.alloc(dev, 9 * ne * s)? };
            let b = mem.alloc(dev, s * n)?;
            let cg = Cg::new::<T>(dev, &mut mem, n)?;
            let (staged, run, error, _) = passes(
                ctx,
                method,
                |k, pass| {
                    let (store, finish, mask) = (k.get("ebe_store")?, k.get("ebe_rhs_finish")?, k.get("cg_mask_dot")?);
                    let mv = k.ebe(recompute)?;
                    let z = k.filler()?;
                    let m = &mesh;
                    let product = |p: &Buffer, q: &Buffer| ebe_product(dev, (&mv, &z), m, (&elist, &ranges[..], &ke), p, q, n * s / 4);
                    if !recompute {
                        pass.device(dev, "elements", &mut || {
                            dev.launch(
                                &store,
                                cover(ne),
                                &[Arg::Buf(&m.tris), Arg::Buf(&m.x), Arg::Buf(&m.y), Arg::Buf(&ke), Arg::I64(ne as i64)],
                            )
                        })?;
                    }
                    // Element-level boundary conditions: b = -(A g) on the free nodes.
                    pass.device(dev, "bc", &mut || {
                        product(&m.g, &b)?;
                        dev.launch(&finish, cover(n), &[Arg::Buf(&b), Arg::Buf(&m.dof), Arg::I64(n as i64)])
                    })?;
                    let run = cg.solve::<T>(k, &b, stop, Stage { pass, name: "solve" }, &mut |cg| {
                        product(&cg.p, &cg.q)?;
                        dev.launch(
                            &mask,
                            cover(n),
                            &[Arg::Buf(&m.dof), Arg::Buf(&cg.p), Arg::Buf(&cg.q), Arg::Buf(&cg.partial), Arg::I64(n as i64)],
                        )
                    })?;
                    Ok((run, check::<T>(dev, &cg, c, reference, true)?, None))
                },
                dev,
                &defines,
            )?;
            let (mv, mask, z) = {
                let mut k = Kernels { dev, modules: &mut *ctx.modules, defines: defines.clone() };
                (k.ebe(recompute)?, k.get("cg_mask_dot")?, k.filler()?)
            };
            let (px, qy) = product::buffers::<T>(dev, c, true)?;
            let bytes = product::ebe_bytes(c, s, recompute);
            let m = &mesh;
            let product = product::measure::<T>(ctx, dev, (c, reference_vals), Output { q: &qy, on_nodes: true }, bytes, &mut || {
                ebe_product(dev, (&mv, &z), m, (&elist, &ranges[..], &ke), &px, &qy, n * s / 4)?;
                dev.launch(&mask, cover(n), &[Arg::Buf(&m.dof), Arg::Buf(&px), Arg::Buf(&qy), Arg::Buf(&cg.partial), Arg::I64(n as i64)])
            })?;
            Ok(MethodRun { staged, cg: run, error, csr_error: None, memory: mem, coloring: Some(coloring), product: Some(product) })
        }
        Method::CpuSerial | Method::CpuParallel => unreachable!("CPU methods run on the host"),
    }
}
