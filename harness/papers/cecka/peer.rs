//! The peer (beyond the paper, CUDA only): the COO route a user of CuPy or SciPy takes, run in the
//! same process and stream as the paper's methods. One thread per element writes A^e as
//! triplets (value, row, column; a pair with a prescribed dof goes to a sentinel row past the
//! free ones) and adds F^e into the right-hand side atomically; cuSPARSE sorts the pairs into CSR
//! order (`coosortByRow`, `coo2csr`, `csrsort`), and the shared `coo_sum` kernels sum the
//! duplicates. The whole route is one timed region, the gate open: cuSPARSE's sorts wait on the
//! stream inside, so the host gaps between its calls count, as they do for a user.

use std::time::Instant;

use super::cost::element_flops;
use super::gpu::*;
use super::prepared::Prepared;
use super::spec::{Family, Problem_};
use super::system::SOURCE_F;
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::coo_sum::{sum_duplicates, CooSumScratch, CsrOut, SortedCoo};
use crate::device::{Arg, DeviceExt, Launch};
use crate::kernels::Defines;
use crate::measure::Gate;
use crate::real::Real;

pub(crate) fn run_coo_peer<T: Real>(ctx: &mut CaseCtx, problem: &Problem_, prep: &Prepared) -> Result<GpuRun<T>, CaseError> {
    let dev = gpu_of(ctx)?;
    let p = &prep.problem;
    let (en, ne, s, nnz) = (p.en(), p.ne(), std::mem::size_of::<T>(), p.nnz());
    let pairs = en * en * ne;
    if pairs >= i32::MAX as usize {
        return Err(CaseError::Failed(format!(
            "cuSPARSE's COO sort takes a 32-bit entry count; {ne} elements give {pairs} triplets ({} each), over 2^31 - 1",
            en * en
        )));
    }
    // The free rows, then the sentinel row n_free that collects every pair with a prescribed dof.
    let rows = p.n_free + 1;
    let lib = dev.sparse()?;
    let setup_start = Instant::now();
    let conn: Vec<u32> = (0..en * ne).map(|idx| p.mesh.element(idx % ne)[idx / ne]).collect();
    let nodal = upload_nodal::<T>(dev, p)?;
    let conn_b = dev.upload_slice(&conn)?;
    let dof = dev.upload_slice(&p.dof)?;
    let (ke, row, col, perm) = (dev.alloc(s * pairs)?, dev.alloc(4 * pairs)?, dev.alloc(4 * pairs)?, dev.alloc(4 * pairs)?);
    let row_ptr_dup = dev.alloc(4 * (rows + 1))?;
    let scratch = CooSumScratch::new(dev, pairs)?;
    // At most one distinct sentinel pair beside the pattern's nnz.
    let (out_ptr, out_col, out_val, rhs) =
        (dev.alloc(4 * (rows + 1))?, dev.alloc(4 * (nnz + 1))?, dev.alloc(s * (nnz + 1))?, dev.alloc(s * p.n_free.max(1))?);
    let sort = lib.coo_sort_to_csr(rows, rows, pairs, &row, &col, &perm, &row_ptr_dup)?;
    let setup_s = setup_start.elapsed().as_secs_f64();
    let memory = (conn.len() + p.dof.len()) * 4
        + nodal.bytes
        + pairs * (s + 12)
        + 8 * (rows + 1)
        + CooSumScratch::bytes(pairs)
        + (nnz + 1) * (4 + s)
        + p.n_free * s
        + sort.workspace_bytes();

    let gs = problem.group_size(Family::Elem);
    let defines = Defines::for_precision(T::PRECISION).with("EN", en).with("DUMMY", 0);
    let elements = ctx.modules.kernel(dev, &CECKA, &defines, "cecka_coo_elements")?;
    let zero = ctx.modules.kernel(dev, &CECKA, &Defines::for_precision(T::PRECISION), "cecka_zero")?;
    let (scan, sum) = (ctx.modules.scan(dev)?, ctx.modules.coo_sum(dev, T::PRECISION)?);
    let coo = SortedCoo { rows, pairs, row: &row, col: &col, perm: &perm, row_ptr: &row_ptr_dup, vals: &ke };
    let out = CsrOut { row_ptr: &out_ptr, col: &out_col, val: &out_val };
    let f = Arg::real(T::PRECISION, SOURCE_F);
    let outputs = [&ke, &row, &col, &perm, &row_ptr_dup, &scratch.head, &scratch.slot, &out_ptr, &out_col, &out_val, &rhs];
    // Its region is open: the host's cuSPARSE calls are inside it, so no background work (the
    // next problem built ahead) may share the cores while it is timed.
    crate::background::quiet();
    let timings = time_modes_as(ctx, dev, Gate::Open, &outputs, &mut || {
        dev.launch(&zero, Launch::cover(p.n_free.max(1), 256), &[Arg::Buf(&rhs), Arg::I32(p.n_free as i32)])?;
        let args = [
            Arg::Buf(&nodal.x),
            Arg::Buf(&nodal.y),
            Arg::Buf(&conn_b),
            Arg::Buf(&dof),
            Arg::Buf(&nodal.g),
            Arg::Buf(&nodal.refs),
            Arg::Buf(&ke),
            Arg::Buf(&row),
            Arg::Buf(&col),
            Arg::Buf(&rhs),
            f,
            Arg::I32(ne as i32),
            Arg::I32(p.n_free as i32),
        ];
        dev.launch(&elements, Launch::cover(ne, gs), &args)?;
        sort.enqueue()?;
        sum_duplicates(dev, &sum, &scan, &scratch, &coo, &out)
    })?;
    // The route must rebuild the problem's own CSR pattern before its values are compared.
    let got_ptr: Vec<i32> = dev.download_vec(&out_ptr, rows + 1)?;
    let got_col: Vec<i32> = dev.download_vec(&out_col, nnz)?;
    if let Some(r) = (0..=p.n_free).find(|&r| got_ptr[r] as i64 != p.row_ptr[r] as i64) {
        return Err(CaseError::Failed(format!(
            "verification failed: the COO route's row {r} starts at entry {}, the CSR pattern's at {}",
            got_ptr[r], p.row_ptr[r]
        )));
    }
    if let Some(k) = (0..nnz).find(|&k| got_col[k] as i64 != p.col[k] as i64) {
        return Err(CaseError::Failed(format!(
            "verification failed: the COO route's entry {k} is in column {}, the CSR pattern's in {}",
            got_col[k], p.col[k]
        )));
    }
    // Minimum traffic (cost model): connectivity, dofs and nodal data in; A^e and its pairs out;
    // the sort reads and writes the pairs and the permutation once (a lower bound for a radix
    // sort); the sum reads pairs, flags, run numbers and the gathered values and writes the CSR.
    let bytes = en * ne * (8 + 3 * s) + pairs * (s + 8) + pairs * 24 + pairs * (16 + s) + nnz * (4 + s) + (rows + 1) * 8 + 2 * p.n_free * s;
    Ok(GpuRun {
        timings,
        vals: dev.download_vec::<T>(&out_val, nnz)?,
        rhs: dev.download_vec::<T>(&rhs, p.n_free)?,
        bytes: bytes as f64,
        flops: ne as f64 * element_flops(en as f64, false) + (pairs - nnz) as f64,
        memory: memory as f64,
        setup_s,
        extras: vec![("sort_workspace_bytes", sort.workspace_bytes() as f64), ("triplets", pairs as f64)],
    })
}
