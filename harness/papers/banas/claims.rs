//! Banaś et al.'s observations (Sec. 5) and conclusions, judged on a run's rows: the `claims`
//! table of the Banaś experiment. Per GPU group (backend, device, precision, cache mode), over
//! the degrees run:
//! - Obs. 8: SHM variants are usually slower than REG (kernel time, JAC and NOJAC pairs).
//! - Obs. 6: REG_NOJAC is the fastest variant in most cases (kernel time).
//! - Obs. 7: NOJAC is more efficient than JAC in most cases (kernel time, REG and SHM pairs).
//! - Obs. 3 and the conclusions: the transfers and memory set-up are comparable to or larger than
//!   the kernel (for low p several times larger); the output transfer is the largest stage.
//! - Obs. 4: the GPU kernel is always faster than the CPU; with transfers, the GPU wins only at
//!   higher degrees.
//! - Beyond the paper: the best variant's kernel against the same run's cuBLAS batched GEMM
//!   (B computed, and the GEMM alone), at every degree.

use super::plan::Variant;
use super::report::Rows;
use crate::report::claims::{self, span, Claim, Need, Verdict};
use crate::report::Table;

pub(crate) fn claims_table(id: &str, r: &Rows) -> Table {
    let mut out = Vec::new();
    let degrees = r.degrees();
    for g in r.gpu_groups() {
        let on = format!("{} {} {} ({})", g.1, g.0, g.2, g.3);
        let time = |v: Variant, metric: &str, d: i64| r.find(&g, v.as_str(), metric, d).filter(|&i| r.ok(i)).map(|i| r.time[i]);
        let rests = |what: &str, n: usize| format!("{id}: {what}, p = {} ({n} rows)", span(&degrees));
        // Pairs (a slower than b?) over the degrees.
        let pairs = |a: Variant, b: Variant| -> Vec<(i64, f64)> {
            degrees.iter().filter_map(|&d| Some((d, time(a, "kernel", d)? / time(b, "kernel", d)?))).collect()
        };
        let ratio_list = |v: &[(i64, f64)]| v.iter().map(|(d, x)| format!("p{d} {x:.2}")).collect::<Vec<_>>().join(", ");

        let shm: Vec<(i64, f64)> =
            [(Variant::ShmJac, Variant::RegJac), (Variant::ShmNojac, Variant::RegNojac)].iter().flat_map(|&(a, b)| pairs(a, b)).collect();
        let jac_pairs = pairs(Variant::ShmJac, Variant::RegJac);
        let nojac_pairs = pairs(Variant::ShmNojac, Variant::RegNojac);
        out.push(Claim {
            on: on.clone(),
            claim: "SHM variants are usually slower than REG (Obs. 8)".into(),
            verdict: Verdict::of_cases(shm.iter().filter(|p| p.1 > 1.0).count(), shm.len(), Need::Most),
            measured: format!(
                "SHM slower in {} of {}; kernel SHM/REG JAC: {}; NOJAC: {}",
                shm.iter().filter(|p| p.1 > 1.0).count(),
                shm.len(),
                ratio_list(&jac_pairs),
                ratio_list(&nojac_pairs)
            ),
            rests_on: rests("kernel stage of the four variants", 2 * shm.len()),
        });

        let mut fastest = Vec::new();
        for &d in &degrees {
            let best = Variant::ALL.iter().filter_map(|&v| time(v, "kernel", d).map(|t| (v, t))).min_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((v, _)) = best {
                fastest.push((d, v));
            }
        }
        let reg_nojac = fastest.iter().filter(|f| f.1 == Variant::RegNojac).count();
        out.push(Claim {
            on: on.clone(),
            claim: "REG_NOJAC is the fastest variant in most cases (Obs. 6)".into(),
            verdict: Verdict::of_cases(reg_nojac, fastest.len(), Need::Most),
            measured: fastest.iter().map(|(d, v)| format!("p{d}: {}", v.as_str())).collect::<Vec<_>>().join(", "),
            rests_on: rests("kernel stage of the four variants", 4 * fastest.len()),
        });

        let nojac: Vec<(i64, f64)> =
            [(Variant::RegNojac, Variant::RegJac), (Variant::ShmNojac, Variant::ShmJac)].iter().flat_map(|&(a, b)| pairs(a, b)).collect();
        let faster = nojac.iter().filter(|p| p.1 < 1.0).count();
        out.push(Claim {
            on: on.clone(),
            claim: "NOJAC (Jacobian terms sent) is more efficient than JAC (computed on the GPU) in most cases (Obs. 7)".into(),
            verdict: Verdict::of_cases(faster, nojac.len(), Need::Most),
            measured: format!(
                "NOJAC faster in {faster} of {}; kernel NOJAC/JAC REG: {}; SHM: {}",
                nojac.len(),
                ratio_list(&pairs(Variant::RegNojac, Variant::RegJac)),
                ratio_list(&pairs(Variant::ShmNojac, Variant::ShmJac))
            ),
            rests_on: rests("kernel stage of the four variants", 2 * nojac.len()),
        });

        // The output transfer against the other stages, for the fastest variant of each degree.
        let mut largest = Vec::new();
        let mut overhead = Vec::new();
        for &(d, v) in &fastest {
            let stages: Vec<(&str, f64)> = super::spec::STAGES.iter().filter_map(|&s| time(v, s, d).map(|t| (s, t))).collect();
            if stages.len() < super::spec::STAGES.len() {
                continue;
            }
            let top = stages.iter().max_by(|a, b| a.1.total_cmp(&b.1)).map(|s| s.0).unwrap_or("-");
            largest.push((d, top));
            let kernel = stages.iter().find(|s| s.0 == "kernel").map_or(f64::NAN, |s| s.1);
            overhead.push((d, stages.iter().filter(|s| s.0 != "kernel" && s.0 != "prepare").map(|s| s.1).sum::<f64>() / kernel));
        }
        let held = largest.iter().filter(|l| l.1 == "download").count();
        out.push(Claim {
            on: on.clone(),
            claim: "The output transfer is the largest stage of a pass (Obs. 3, conclusions: PCIe limits the GPU)".into(),
            verdict: Verdict::of_cases(held, largest.len(), Need::All),
            measured: largest.iter().map(|(d, s)| format!("p{d}: {s}")).collect::<Vec<_>>().join(", "),
            rests_on: rests("every stage of each degree's fastest variant", 5 * largest.len()),
        });
        let comparable = overhead.iter().filter(|o| o.1 >= 0.5).count();
        out.push(Claim {
            on: on.clone(),
            claim: "Memory set-up and transfers take about as long as the kernel or longer, several times longer at low p (Obs. 3)".into(),
            verdict: Verdict::of_cases(comparable, overhead.len(), Need::All),
            measured: format!("(allocate + upload + download) / kernel: {}", ratio_list(&overhead)),
            rests_on: rests("every stage of each degree's fastest variant", 5 * overhead.len()),
        });

        // Against what a user of a vendor BLAS writes today (same run, GPU, precision, mode).
        let peer: Vec<(i64, f64, f64)> = fastest
            .iter()
            .filter_map(|&(d, v)| {
                let best = time(v, "kernel", d)?;
                let at = |m: &str| r.find(&g, "cublas-gemm", m, d).filter(|&i| r.ok(i)).map(|i| r.time[i] / best);
                Some((d, at("kernel")?, at("gemm")?))
            })
            .collect();
        if !peer.is_empty() {
            let list =
                |f: &dyn Fn(&(i64, f64, f64)) -> f64| peer.iter().map(|p| format!("p{} {:.2}", p.0, f(p))).collect::<Vec<_>>().join(", ");
            out.push(Claim {
                on: on.clone(),
                claim: "Beyond the paper: the best variant beats cuBLAS batched GEMM, B^T (w D B) with B computed, at every degree".into(),
                verdict: Verdict::of_cases(peer.iter().filter(|p| p.1 > 1.0).count(), peer.len(), Need::All),
                measured: format!("cublas-gemm / best kernel time, B + GEMM: {}; GEMM alone: {}", list(&|p| p.1), list(&|p| p.2)),
                rests_on: rests("the fastest variant's kernel and cublas-gemm (kernel and gemm)", 3 * peer.len()),
            });
        }

        // Against the f64 CPU reference of the same degree.
        let mut kernel_wins = Vec::new();
        let mut total_wins = Vec::new();
        for &(d, v) in &fastest {
            let Some(cpu) = r.cpu(d) else { continue };
            let (Some(k), Some(t)) = (r.find(&g, v.as_str(), "kernel", d), r.find(&g, v.as_str(), "total", d)) else { continue };
            if !(r.ok(k) && r.ok(t)) {
                continue;
            }
            kernel_wins.push((d, r.us(cpu) / r.us(k)));
            total_wins.push((d, r.us(cpu) / r.us(t)));
        }
        if !kernel_wins.is_empty() {
            out.push(Claim {
                on: on.clone(),
                claim: "The GPU kernel is always faster than the CPU (Obs. 4)".into(),
                verdict: Verdict::of_cases(kernel_wins.iter().filter(|k| k.1 > 1.0).count(), kernel_wins.len(), Need::All),
                measured: format!("CPU / GPU kernel time per element: {}", ratio_list(&kernel_wins)),
                rests_on: rests("the fastest variant's kernel and the f64 cpu-reference", 2 * kernel_wins.len()),
            });
            // "Only at higher orders": the degrees where the whole pass wins form an upper range.
            let wins: Vec<i64> = total_wins.iter().filter(|t| t.1 > 1.0).map(|t| t.0).collect();
            let upper = wins.first().is_some_and(|&w| total_wins.iter().all(|t| (t.0 >= w) == (t.1 > 1.0)));
            let lowest_loses = total_wins.first().is_some_and(|t| t.1 <= 1.0);
            out.push(Claim {
                on: on.clone(),
                claim: "With every stage counted, the GPU beats the CPU only at higher degrees (Obs. 4)".into(),
                verdict: match (upper && lowest_loses, wins.is_empty()) {
                    (true, _) => Verdict::Holds,
                    (false, true) => Verdict::Fails,
                    (false, false) if wins.len() == total_wins.len() => Verdict::Fails,
                    _ => Verdict::Partly,
                },
                measured: format!("CPU / GPU pass time per element: {}", ratio_list(&total_wins)),
                rests_on: rests("the fastest variant's total and the f64 cpu-reference", 2 * total_wins.len()),
            });
        }
    }
    claims::table(
        id,
        out,
        vec![
            "Kernel times are medians per launch; a pass is prepare + allocate + upload + kernel + download (Tables 5-7). The CPU reference is f64 and rayon-parallel on every core of the host the run was on; the paper's was one Xeon E5-2670.".into(),
            "'Most' claims (the paper says 'usually', 'in most cases') hold when more than half of the cases agree; the others need every case.".into(),
        ],
    )
}
