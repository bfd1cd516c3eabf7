//! Host-side planning (section 4.2): from the device's own limits (work-group size, shared
//! memory, global memory and largest allocation) and the degree, the kernel's work-group size,
//! the parts A^e is cut into, the blocks each thread updates, and the elements per launch. The
//! plan is printed as the paper's Tables 3/4 for the device used.

use serde::{Deserialize, Serialize};

use crate::device::DeviceInfo;
use crate::kernels::Defines;
use crate::Precision;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    RegJac,
    RegNojac,
    ShmJac,
    ShmNojac,
    /// Beyond the paper: REG_NOJAC's tiles, each 3x3 block accumulating the Gram sum of the two
    /// functions' gradients (9 multiply-adds per point against 22), finished by the element's
    /// Lamé constants when it is written (kernels/banas.kern, GRAM).
    GramNojac,
    /// Beyond the paper: the Gram sums on the tensor cores (CUDA on sm_80+): DMMA in f64,
    /// 3xTF32 in f32.
    MmaNojac,
}

impl Variant {
    pub const ALL: [Variant; 6] =
        [Variant::RegJac, Variant::RegNojac, Variant::ShmJac, Variant::ShmNojac, Variant::GramNojac, Variant::MmaNojac];
    /// The paper's four variants, which its observations are about.
    pub const PAPER: [Variant; 4] = [Variant::RegJac, Variant::RegNojac, Variant::ShmJac, Variant::ShmNojac];
    pub fn as_str(self) -> &'static str {
        match self {
            Variant::RegJac => "reg-jac",
            Variant::RegNojac => "reg-nojac",
            Variant::ShmJac => "shm-jac",
            Variant::ShmNojac => "shm-nojac",
            Variant::GramNojac => "gram-nojac",
            Variant::MmaNojac => "mma-nojac",
        }
    }
    pub fn shm(self) -> bool {
        matches!(self, Variant::ShmJac | Variant::ShmNojac)
    }
    pub fn jac(self) -> bool {
        matches!(self, Variant::RegJac | Variant::ShmJac)
    }
    /// Accumulates Gram sums, finished by the Lamé constants (GRAM and MMA).
    pub fn gram(self) -> bool {
        matches!(self, Variant::GramNojac | Variant::MmaNojac)
    }
    /// Runs on the tensor cores (its own kernel, `banas_mma`).
    pub fn mma(self) -> bool {
        self == Variant::MmaNojac
    }
}

/// What an experiment may fix instead of the planner.
#[derive(Debug, Clone, Default)]
pub struct Tuning {
    /// Bytes of element matrices one launch writes (the paper fills the GPU's memory).
    pub output_bytes: usize,
    pub group_size: Option<usize>,
    /// REG: rows x columns of blocks per thread.
    pub reg_blocks: Option<[usize; 2]>,
    /// SHM: shared memory for the part of A^e (default and ceiling: the device's limit).
    pub shared_bytes: Option<usize>,
    /// MMA: [warp rows, warp columns, sub-tiles per warp in a row, in a column].
    pub mma_tiling: Option<[usize; 4]>,
    /// MMA: quadrature points staged at once.
    pub mma_points: Option<usize>,
    /// Registers one work-group may hold (default: NVIDIA's 64K per block, which the OpenCL API
    /// does not report); the paper's devices had 32K (GTX580) and 16K (HD5870).
    pub register_file: Option<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub variant: Variant,
    pub nsh: usize,
    pub nq: usize,
    pub real_bytes: usize,
    pub group_size: usize,
    /// REG: a ty x tx thread grid, each thread rb x cb blocks (zero for SHM).
    pub ty: usize,
    pub tx: usize,
    pub rb: usize,
    pub cb: usize,
    /// Blocks of A^e (3x3 each) per part, and per thread within a part.
    pub part_blocks: usize,
    pub blocks_per_thread: usize,
    pub parts: usize,
    /// Quadrature points whose Jacobian terms are staged in shared memory at once.
    pub qc: usize,
    pub shared_bytes: usize,
    pub elements: usize,
    pub groups: usize,
}

/// Registers a thread of NVIDIA's GPUs may hold in one block (the per-block file is 64K); the
/// OpenCL API does not report it, so it bounds every device's plan.
const REGISTER_FILE: usize = 65536;

impl Plan {
    pub fn new(variant: Variant, nsh: usize, nq: usize, precision: Precision, dev: &DeviceInfo, tuning: &Tuning) -> Result<Plan, String> {
        let s = match precision {
            Precision::F32 => 4,
            Precision::F64 => 8,
        };
        let max_wg = dev.max_work_group.clamp(1, 1024);
        let qc = nq.min(64);
        let fixed_shared = (2 * 3 * nsh + 10 * qc) * s;
        let device_shared = dev.local_mem_bytes as usize;
        let shared_limit = tuning.shared_bytes.map_or(device_shared, |b| b.min(device_shared));
        if fixed_shared > shared_limit {
            return Err(format!("{fixed_shared} bytes of shared memory for the derivatives exceed the {shared_limit} available"));
        }
        let mut plan = Plan {
            variant,
            nsh,
            nq,
            real_bytes: s,
            group_size: 0,
            ty: 0,
            tx: 0,
            rb: 0,
            cb: 0,
            part_blocks: 0,
            blocks_per_thread: 0,
            parts: 0,
            qc,
            shared_bytes: fixed_shared,
            elements: 0,
            groups: 0,
        };
        if variant.mma() {
            plan.mma_tiles(precision, shared_limit, tuning)?;
        } else if variant.shm() {
            plan.shm_parts(tuning, max_wg, shared_limit)?;
        } else {
            let [ty, tx, rb, cb] = best_tiling(nsh, s, max_wg, tuning, variant.gram())?;
            plan.ty = ty;
            plan.tx = tx;
            plan.rb = rb;
            plan.cb = cb;
            plan.group_size = ty * tx;
            plan.part_blocks = ty * rb * tx * cb;
            plan.blocks_per_thread = rb * cb;
            plan.parts = nsh.div_ceil(ty * rb) * nsh.div_ceil(tx * cb);
        }
        let per_element = plan.output_bytes_per_element();
        let mut budget = tuning.output_bytes.min(dev.memory_bytes as usize / 2);
        if dev.max_alloc_bytes > 0 {
            budget = budget.min(dev.max_alloc_bytes as usize);
        }
        plan.elements = (budget / per_element).max(1);
        plan.groups = (plan.elements * plan.parts).min(1 << 30);
        Ok(plan)
    }

    /// SHM (the paper): the largest multiple-of-64 group not beyond the blocks of A^e, and a
    /// part that fills the shared memory left by the derivatives.
    fn shm_parts(&mut self, tuning: &Tuning, max_wg: usize, shared_limit: usize) -> Result<(), String> {
        let (s, blocks, fixed_shared) = (self.real_bytes, self.nsh * self.nsh, self.shared_bytes);
        let mut wg = tuning.group_size.unwrap_or_else(|| blocks.div_ceil(64).max(1).min(8) * 64).min(max_wg);
        let fit = (shared_limit - fixed_shared) / (9 * s);
        let mut part = fit.min(blocks.div_ceil(wg) * wg);
        if part < wg {
            wg = (part / 64 * 64).max(part.min(32));
            if wg == 0 {
                return Err(format!("no part of A^e fits the {shared_limit} bytes of shared memory"));
            }
        }
        part = part / wg * wg;
        self.group_size = wg;
        self.part_blocks = part;
        self.blocks_per_thread = part / wg;
        self.parts = blocks.div_ceil(part);
        self.shared_bytes = fixed_shared + 9 * part * s;
        Ok(())
    }

    /// MMA: square tiles of functions, sub-tiles of 8 x 8 (f64) or 16 x 8 (f32) per mma; ty x tx
    /// warps of rb x cb sub-tiles each ([`mma_tiling`]'s choice unless the experiment fixes it),
    /// and chunks of `qc` points staged in shared memory (a multiple of the mma's 4 or 8 points).
    fn mma_tiles(&mut self, precision: Precision, shared_limit: usize, tuning: &Tuning) -> Result<(), String> {
        let f64 = precision == Precision::F64;
        let [ty, tx, rb, cb] = tuning.mma_tiling.unwrap_or_else(|| mma_tiling(self.nsh, f64));
        let sub_m = if f64 { 8 } else { 16 };
        if sub_m * ty * rb != 8 * tx * cb {
            return Err(format!("MMA tiling {:?} is not square ({sub_m}-row sub-tiles in {precision})", [ty, tx, rb, cb]));
        }
        let tile = sub_m * ty * rb;
        let s = self.real_bytes;
        self.qc = tuning.mma_points.unwrap_or(16);
        let k = if f64 { 4 } else { 8 };
        if self.qc % k != 0 {
            return Err(format!("MMA stages points in multiples of {k} in {precision}, not {}", self.qc));
        }
        self.shared_bytes = (2 * 3 * tile * (self.qc + 4) + 10 * self.qc) * s;
        if self.shared_bytes > shared_limit {
            return Err(format!(
                "{} bytes of shared memory for the staged gradients exceed the {shared_limit} available",
                self.shared_bytes
            ));
        }
        (self.ty, self.tx, self.rb, self.cb) = (ty, tx, rb, cb);
        self.group_size = 32 * ty * tx;
        self.part_blocks = tile * tile;
        self.blocks_per_thread = self.part_blocks / self.group_size;
        self.parts = self.nsh.div_ceil(tile).pow(2);
        Ok(())
    }

    /// The side of an MMA tile, in functions (sub-tiles of 8 rows in f64, 16 in f32).
    pub fn mma_tile(&self) -> usize {
        8 * self.tx * self.cb
    }

    pub fn output_bytes_per_element(&self) -> usize {
        (3 * self.nsh).pow(2) * self.real_bytes
    }

    /// Device input for `elements`: reference derivatives and quadrature, plus per element the
    /// six vertices (JAC) or the Jacobian terms of every point (NOJAC), and Lamé's constants.
    pub fn input_bytes(&self, jac: bool) -> usize {
        let shared = (3 * self.nsh * self.nq + 4 * self.nq) * self.real_bytes;
        let per_element = if jac { 18 } else { 10 * self.nq } + 2;
        shared + self.elements * per_element * self.real_bytes
    }

    /// The 3x3 block updates the device performs per element, padding included.
    pub fn performed_blocks(&self) -> usize {
        self.parts * self.part_blocks
    }

    /// Floating-point operations the kernel executes per element, counted from its source
    /// (kernels/banas.kern), not the paper's model: per quadrature point and part, 15 per shape
    /// function for the physical derivatives (3 x (3 mul + 2 add)), 2 for lambda dw and mu dw per
    /// thread, about 107 for the Jacobian terms with JAC; per 3x3 block update 44 (the dot
    /// product 5, three diagonal entries 5, six others 4) plus the 6 products lambda a, mu a per
    /// row a thread owns (REG: per row of its tile, padding rows and columns included; SHM: per
    /// block, padding blocks skipped).
    pub fn executed_flops_per_element(&self) -> f64 {
        let (nq, nsh, parts, wg) = (self.nq as f64, self.nsh as f64, self.parts as f64, self.group_size as f64);
        if self.variant.mma() {
            return self.mma_flops_per_element();
        }
        if self.variant.gram() {
            // Per point and part: the derivatives of every function, then per thread 3 scalings
            // by |det J| w per row of its tile and 18 per block; once per block, the finish (33).
            let blocks = parts * wg * (self.rb * self.cb) as f64;
            return nq * (parts * 15.0 * nsh + parts * wg * self.rb as f64 * 3.0 + blocks * 18.0) + blocks * 33.0;
        }
        let per_part_point = 15.0 * nsh + 2.0 * wg + if self.variant.jac() { 107.0 } else { 0.0 };
        let blocks = if self.variant.shm() {
            nsh * nsh * (44.0 + 6.0)
        } else {
            parts * wg * (self.rb as f64 * 6.0 + (self.rb * self.cb) as f64 * 44.0)
        };
        nq * (parts * per_part_point + blocks)
    }

    /// MMA's flops per element, padding included: per chunk of points (padded to `qc`), the
    /// staged gradients of both sides of every tile (15 each, 3 more for the scaled side), and
    /// the mma's 2 per multiply-add of the nine tile products (three products each in f32's
    /// 3xTF32); the finish (33 per block).
    fn mma_flops_per_element(&self) -> f64 {
        let (tile, parts) = (self.mma_tile() as f64, self.parts as f64);
        let points = self.nq.div_ceil(self.qc) as f64 * self.qc as f64;
        let products = if self.real_bytes == 8 { 1.0 } else { 3.0 };
        parts * (points * (tile * 33.0 + products * 9.0 * 2.0 * tile * tile) + tile * tile * 33.0)
    }

    pub fn defines(&self, precision: Precision) -> Defines {
        let mut d = Defines::for_precision(precision)
            .with("NSH", self.nsh)
            .with("NQ", self.nq)
            .with("WG", self.group_size)
            .with("QC", self.qc)
            .with("JAC", self.variant.jac() as u8)
            .with("SHM", self.variant.shm() as u8);
        if self.variant.mma() {
            d = d.with("MMA", 1).with("MWY", self.ty).with("MWX", self.tx).with("MSR", self.rb).with("MSS", self.cb).with("KC", self.qc);
        } else if self.variant.shm() {
            d = d.with("PART", self.part_blocks).with("BPT", self.blocks_per_thread);
        } else {
            d = d.with("TY", self.ty).with("TX", self.tx).with("RB", self.rb).with("CB", self.cb).with("GRAM", self.variant.gram() as u8);
        }
        d
    }
}

/// MMA: one tile of 8 up to 8 functions; beyond, of tiles of 16 and 32 functions, the one of least
/// padded area, each weighted by its staging work (1 + 2.5 / side). Measured on an H200 in f64 at p = 3, 5, 6, 7: 16 (2 x 2 warps
/// of one sub-tile) won where 32 pads more (p = 3, 6), 32 (4 x 2 warps of 1 x 2) where neither
/// pads (p = 5, 7), by 3-10%; 2 x 2 warps of 2 x 2 and 4 x 4 of one ran 5-20% slower. In f32
/// (3xTF32, 16 x 8 sub-tiles): 16 (1 x 2 warps of one) at p = 3, 32 (2 x 2 warps of 1 x 2) at
/// p = 5-7, 2-6% ahead of 2 x 4 warps of one, 12-20% of 4 x 4 of 1 x 2 (a tile of 64).
fn mma_tiling(nsh: usize, f64: bool) -> [usize; 4] {
    let cost = |side: usize| (nsh.div_ceil(side) * side).pow(2) as f64 * (1.0 + 2.5 / side as f64);
    let side = if nsh <= 8 { 8 } else { [16, 32].into_iter().min_by(|&a, &b| cost(a).total_cmp(&cost(b))).unwrap_or(16) };
    // [warp rows, warp columns, sub-tiles per warp in a row, in a column]; f32's sub-tiles have
    // 16 rows.
    match (f64, side) {
        (true, 8) => [1, 1, 1, 1],
        (true, 16) => [2, 2, 1, 1],
        (true, _) => [4, 2, 1, 2],
        (false, 8 | 16) => [1, 2, 1, 1],
        (false, _) => [2, 2, 1, 2],
    }
}

/// REG: the register tiling (ty x tx threads, rb x cb blocks each) of least modelled cost that
/// fits the device's work-group and register limits.
fn best_tiling(nsh: usize, s: usize, max_wg: usize, tuning: &Tuning, gram: bool) -> Result<[usize; 4], String> {
    let words = s / 4;
    let register_file = tuning.register_file.unwrap_or(REGISTER_FILE);
    let mut best: Option<(f64, [usize; 4])> = None;
    let dims = [4usize, 8, 16, 32];
    let rbs: Vec<[usize; 2]> = match tuning.reg_blocks {
        Some(b) => vec![b],
        // GRAM from p = 5 (100 functions and more): the blocks per thread measured fastest on an
        // H200 at p = 5-7 (2 x 2 in f64, 4 x 2 in f32; the model's choice, made for the paper's
        // 22 multiply-adds per block, ran up to 1.35x slower on GRAM's 9).
        None if gram && nsh >= 100 => vec![if words == 2 { [2, 2] } else { [4, 2] }],
        None => (1..=4).flat_map(|r| (1..=4).map(move |c| [r, c])).collect(),
    };
    for &ty in &dims {
        for &tx in &dims {
            let wg = ty * tx;
            if wg < 64 || wg > max_wg.min(512) || tuning.group_size.is_some_and(|g| g != wg) {
                continue;
            }
            for &[rb, cb] in &rbs {
                let regs = words * (9 * rb * cb + 3 * cb + 6) + rb + cb + 24;
                if words * 9 * rb * cb > 160 || regs * wg > register_file {
                    continue;
                }
                let parts = nsh.div_ceil(ty * rb) * nsh.div_ceil(tx * cb);
                // Instruction slots per thread per quadrature point: the block updates,
                // their shared loads and scalings, this thread's share of the
                // derivatives, and a barrier's worth; over all parts and threads.
                let per_point = 24 * rb * cb + 3 * (rb + cb) + 6 * rb + 15 * nsh.div_ceil(wg) + 30;
                // Latency is hidden by warps: whole groups resident per multiprocessor
                // (registers, at most 2048 threads), full speed from 24 warps. On the
                // H200 this ordered the measured tilings at p = 7 (2x2 > 2x4 > 3x4, 4x4).
                let resident = (register_file / regs).min(2048) / wg * wg;
                let occupancy = (resident as f64 / 32.0 / 24.0).min(1.0);
                if resident == 0 {
                    continue;
                }
                let cost = (parts * wg * per_point) as f64 / occupancy;
                if best.is_none_or(|(c, _)| cost < c) {
                    best = Some((cost, [ty, tx, rb, cb]));
                }
            }
        }
    }
    Ok(best.ok_or("no register tiling fits the device's work-group and register limits")?.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executed_flops_are_below_the_papers_count_for_high_degrees() {
        let (dev, tuning) = hopper_like();
        for p in [3usize, 5, 7] {
            let nsh = crate::banas::prism::shape_functions(p);
            let nq = crate::banas::prism::quadrature(p).unwrap().len();
            let paper = crate::banas::elasticity::element_flops(nsh, nq);
            for v in Variant::PAPER {
                let plan = Plan::new(v, nsh, nq, Precision::F32, &dev, &tuning).unwrap();
                let ratio = paper / plan.executed_flops_per_element();
                // 63 against 44 per block update, padding and per-part work aside.
                assert!((1.05..1.5).contains(&ratio), "p = {p} {v:?}: paper / executed = {ratio}");
            }
            // The Gram sums: 63 against 18 per block update, less the padding and per-part work
            // (MMA's tiles pad more at p = 3: 40 functions in two tiles of 32).
            for (v, precision, low) in [(Variant::GramNojac, Precision::F32, 2.0), (Variant::MmaNojac, Precision::F64, 1.0)] {
                // (f32's MMA counts three products per multiply-add: 3xTF32.)
                let plan = Plan::new(v, nsh, nq, precision, &dev, &tuning).unwrap();
                let ratio = paper / plan.executed_flops_per_element();
                assert!((low..3.5).contains(&ratio), "p = {p} {v:?}: paper / executed = {ratio}");
            }
            let cpu = paper / cpu_executed_flops(nsh, nq);
            assert!((1.3..1.5).contains(&cpu), "cpu: {cpu}");
        }
    }

    fn h200_like() -> DeviceInfo {
        DeviceInfo { max_work_group: 1024, local_mem_bytes: 48 << 10, memory_bytes: 140 << 30, compute_units: 132, ..Default::default() }
    }

    #[test]
    fn plans_respect_the_device_limits() {
        let dev = h200_like();
        let tuning = Tuning { output_bytes: 256 << 20, ..Default::default() };
        for (nsh, nq) in [(6, 6), (18, 18), (40, 48), (75, 80), (126, 150), (196, 231), (288, 336)] {
            for v in Variant::ALL {
                for prec in [Precision::F32, Precision::F64] {
                    let p = Plan::new(v, nsh, nq, prec, &dev, &tuning).unwrap();
                    assert!(p.shared_bytes <= 48 << 10, "{v:?} {nsh}: {} bytes", p.shared_bytes);
                    assert!(p.group_size <= 512 && p.group_size % 32 == 0, "{v:?} {nsh}: group {}", p.group_size);
                    assert!(p.parts * p.part_blocks >= nsh * nsh, "{v:?} {nsh}: the parts miss blocks");
                    assert_eq!(p.part_blocks, p.group_size * p.blocks_per_thread);
                    assert!(p.elements * p.output_bytes_per_element() <= 256 << 20);
                    assert!(p.elements >= 1);
                }
            }
        }
    }

    #[test]
    fn the_paper_devices_plans_follow_their_shared_memory_as_the_papers_tables_do() {
        let [(_, gtx, gt), (_, hd, ht)] = paper_devices();
        for p in 2..=7usize {
            let nsh = crate::banas::prism::shape_functions(p);
            let nq = crate::banas::prism::quadrature(p).unwrap().len();
            let shm = |dev: &DeviceInfo, t: &Tuning| Plan::new(Variant::ShmJac, nsh, nq, Precision::F32, dev, t).unwrap().parts;
            let (a, b) = (shm(&gtx, &gt), shm(&hd, &ht));
            eprintln!("p = {p}: SHM parts GTX580 {a}, HD5870 {b}");
            assert!(b >= a, "p = {p}: the HD5870's 32 KiB needs at least the GTX580's parts ({b} < {a})");
            // The paper's Tables 3/4 SHM parts: within a factor of two of ours.
            let paper = [[1, 2, 6, 16, 38, 81], [1, 3, 8, 21, 51, 108]];
            for (ours, theirs) in [(a, paper[0][p - 2]), (b, paper[1][p - 2])] {
                assert!(ours <= 2 * theirs && theirs <= 2 * ours.max(1), "p = {p}: ours {ours}, paper {theirs}");
            }
        }
    }

    #[test]
    fn a_small_shared_memory_means_more_parts() {
        let mut dev = h200_like();
        let tuning = Tuning { output_bytes: 1 << 20, ..Default::default() };
        let big = Plan::new(Variant::ShmJac, 288, 336, Precision::F32, &dev, &tuning).unwrap();
        dev.local_mem_bytes = 16 << 10;
        let small = Plan::new(Variant::ShmJac, 288, 336, Precision::F32, &dev, &tuning).unwrap();
        assert!(small.parts > big.parts);
        dev.local_mem_bytes = 1 << 10;
        assert!(Plan::new(Variant::ShmJac, 288, 336, Precision::F32, &dev, &tuning).is_err());
    }
}

/// The limits an H100/H200 reports (1024 threads, 48 KiB of static shared memory per block, 132
/// SMs, 80 GiB) and the default 256 MiB launch: for planning without a device (NVRTC compile
/// tests, flop-count tests).
pub fn hopper_like() -> (DeviceInfo, Tuning) {
    let dev =
        DeviceInfo { max_work_group: 1024, local_mem_bytes: 48 << 10, memory_bytes: 80 << 30, compute_units: 132, ..Default::default() };
    (dev, Tuning { output_bytes: 256 << 20, ..Default::default() })
}

/// The paper's two GPUs as the planner sees them, with the tuning the paper's launches imply:
/// (name, limits, tuning). GTX580: 48 KiB of shared memory, 1024 threads a group, 1.5 GB with
/// 384 MB the largest allocation, 32K registers; HD5870: 32 KiB, 256 threads, 1 GB with 128 MB
/// the largest allocation, 16K registers (Sec. 5.3; the device manuals for what the paper does
/// not state).
pub fn paper_devices() -> [(&'static str, DeviceInfo, Tuning); 2] {
    let tuning = |registers: usize| Tuning { output_bytes: 320 << 20, register_file: Some(registers), ..Default::default() };
    [
        (
            "GTX580",
            DeviceInfo {
                max_work_group: 1024,
                local_mem_bytes: 48 << 10,
                memory_bytes: 1536 << 20,
                max_alloc_bytes: 384 << 20,
                compute_units: 16,
                ..Default::default()
            },
            tuning(32768),
        ),
        (
            "HD5870",
            DeviceInfo {
                max_work_group: 256,
                local_mem_bytes: 32 << 10,
                memory_bytes: 1 << 30,
                max_alloc_bytes: 128 << 20,
                compute_units: 20,
                ..Default::default()
            },
            tuning(16384),
        ),
    ]
}

/// Floating-point operations the f64 CPU reference executes per element (elasticity.rs): per
/// quadrature point about 107 for the Jacobian terms, 15 per shape function for the physical
/// derivatives, 9 per row for the scaled rows, 44 per 3x3 block.
pub fn cpu_executed_flops(nsh: usize, nq: usize) -> f64 {
    let nsh = nsh as f64;
    nq as f64 * (107.0 + 24.0 * nsh + 44.0 * nsh * nsh)
}
