//! Published constants of Cecka, Lew and Darve 2011, shown beside our figures and labelled as
//! the paper's.

use super::spec::Method;
use crate::report::Series;

/// Table VI of the paper: (nodes, elements) and the average relative error, the same for all
/// four methods.
pub const PAPER_TABLE6: [(&str, f64); 8] = [
    ("184, 292", 1.6e-7),
    ("664, 1168", 3.0e-7),
    ("2.5K, 4.7K", 6.2e-7),
    ("9.7K, 18.7K", 1.2e-6),
    ("38K, 75K", 2.6e-6),
    ("150K, 299K", 5.2e-6),
    ("600K, 1.2M", 1.1e-5),
    ("2.4M, 4.8M", 2.1e-5),
];

/// Table IV of the paper, orders 1-6: nodes per element, |D_n|, |D_e| and |D_e| symmetric, for
/// the 2D triangle and (orders 1-5) the 3D tetrahedron, with n_f = 1; in single-precision words.
pub const PAPER_TABLE4: [([u32; 4], Option<[u32; 4]>); 6] = [
    ([3, 9, 12, 9], Some([4, 16, 20, 14])),
    ([6, 18, 42, 27], Some([10, 40, 110, 65])),
    ([10, 30, 110, 65], Some([20, 80, 420, 230])),
    ([15, 45, 240, 135], Some([35, 140, 1260, 665])),
    ([21, 63, 462, 252], Some([56, 224, 3192, 1652])),
    ([28, 84, 812, 434], None),
];

/// Sec. 4.3's storage per element with n_f = 1 in `d` dimensions at `order`: nodes e_n, nodal
/// input |D_n| = e_n (d + 1), element output |D_e| = e_f (e_f + 1) and, symmetric,
/// e_f (e_f + 3) / 2, with e_f = e_n.
pub fn storage(d: u32, order: u32) -> [u32; 4] {
    let en = if d == 2 { (order + 1) * (order + 2) / 2 } else { (order + 1) * (order + 2) * (order + 3) / 6 };
    [en, en * (d + 1), en * (en + 1), en * (en + 3) / 2]
}

/// Table IV beside our kernels' storage: the 2D rows are ours (x, y and g per node in; the full
/// A^e and F^e out, no symmetry used), the 3D rows the paper's formulas only.
pub fn table4(id: &str) -> crate::report::Table {
    let mut rows = Vec::new();
    for (k, (tri, tet)) in PAPER_TABLE4.iter().enumerate() {
        let order = k as u32 + 1;
        let (ours, tet_ours) = (storage(2, order), storage(3, order));
        let pair = |a: u32, b: u32| if a == b { a.to_string() } else { format!("{a} (paper {b})") };
        let mut row = vec![order.to_string()];
        row.extend((0..4).map(|i| pair(ours[i], tri[i])));
        row.push(format!("{} words = {} bytes f32, {} f64", ours[1] + ours[2], 4 * (ours[1] + ours[2]), 8 * (ours[1] + ours[2])));
        row.extend((0..4).map(|i| tet.map_or("-".into(), |t| pair(tet_ours[i], t[i]))));
        rows.push(row);
    }
    crate::report::Table {
        name: format!("{id}-table4"),
        title: "Table IV: storage per element, n_f = 1, in single-precision words (the paper's formulas; the paper's values where they differ)".into(),
        header: ["order", "2D e_n", "2D |D_n|", "2D |D_e|", "2D |D_e| symmetric", "our kernels per element (D_n + D_e)", "3D e_n", "3D |D_n|", "3D |D_e|", "3D |D_e| symmetric"]
            .map(String::from)
            .to_vec(),
        rows,
        notes: vec!["|D_n| = e_n (n_d + n_f), |D_e| = e_f (e_f + 1), symmetric e_f (e_f + 3) / 2 (Sec. 4.3). Our kernels read x, y and g per node (n_d + n_f = 3) and write the full A^e and F^e (no symmetry used), the 2D columns; SharedNZ's shared memory holds that per element of a partition (the partition fails where it cannot fit).".into()],
    }
}

/// Fig. 13c's full/dummy speed-ups as the text states them (8800 GTX, Sec. 6.3): SharedNZ about
/// 1.2 at order 4, LocalNZ and GlobalNZ about 1.6 at order 5.
pub(crate) const DUMMY_SPEEDUPS: [(i64, &[Method], f64); 2] =
    [(4, &[Method::SHARED_NZ], 1.2), (5, &[Method::LOCAL_NZ, Method::GLOBAL_NZ], 1.6)];

/// Figs. 13a and 14's speed-ups over the serial double-precision CPU code as the text states them
/// (Sec. 6.3): (method, orders, speed-up, GPU). SharedNZ about 35x (8800 GTX) and 65x (C1060) at
/// orders 1-2; GlobalNZ around 10-20x at orders 3-4 (8800 GTX), both ends given.
pub(crate) const CPU_SPEEDUPS: [(Method, [i64; 2], f64, &str); 4] = [
    (Method::SHARED_NZ, [1, 2], 35.0, "8800 GTX"),
    (Method::SHARED_NZ, [1, 2], 65.0, "Tesla C1060"),
    (Method::GLOBAL_NZ, [3, 4], 10.0, "8800 GTX"),
    (Method::GLOBAL_NZ, [3, 4], 20.0, "8800 GTX"),
];

/// Fig. 3's bound (8800 GTX, Sec. 4.1): doubling the colors costs less than 10%.
pub(crate) const COLOR_DOUBLING_BOUND: f64 = 1.10;

/// The paper's fastest method per order (section 6.3, Figs. 13-14).
pub(crate) fn paper_winner(order: i64) -> &'static str {
    if order <= 3 {
        "shared-nz"
    } else {
        "global-nz"
    }
}

/// The paper's stated values for a figure of ours, as point-only series labelled as the paper's
/// and named after the series they belong to (so they take its colour): on the time-per-element
/// figures against order, where each method would lie with the paper's speed-up over our serial
/// f64 CPU row (Figs. 13a, 14); against colors, Fig. 3's bound from our fewest-colors time. The
/// paper states no values for Fig. 12 (sizes), so that figure gets none.
pub(crate) fn figure_marks(what: &str, series: &[Series]) -> Vec<Series> {
    let find = |label: &str| series.iter().find(|s| !s.reference && s.label == label);
    let mut out = Vec::new();
    match what {
        "order" => {
            let Some(cpu) = find(&format!("{} (CPU, f64)", Method::CPU_SERIAL.as_str())) else { return out };
            for (m, [lo, hi], speedup, gpu) in CPU_SPEEDUPS {
                let at = |p: i64| cpu.points.iter().find(|q| q.0 == p as f64).map(|q| (q.0, q.1 / speedup));
                let points: Vec<(f64, f64)> = (lo..=hi).filter_map(at).collect();
                if find(m.as_str()).is_some() && !points.is_empty() {
                    let label = format!("{} paper: {speedup}x the serial CPU ({gpu})", m.as_str());
                    out.push(Series { label, points, reference: true });
                }
            }
        }
        "colors" => {
            let m = Method::ELEM_COLOR.as_str();
            if let Some(&(c0, t0)) = find(m).and_then(|s| s.points.iter().min_by(|a, b| a.0.total_cmp(&b.0))) {
                let xs = find(m).map(|s| s.points.iter().map(|p| p.0)).into_iter().flatten();
                let points = xs.map(|c| (c, t0 * COLOR_DOUBLING_BOUND.powf((c / c0).log2()))).collect();
                out.push(Series { label: format!("{m} paper: bound, +10% a doubling of colors (8800 GTX)"), points, reference: true });
            }
        }
        _ => {}
    }
    out
}

/// Fig. 13c's values on our full/dummy figure, each beside the first series of its method.
pub(crate) fn dummy_marks(series: &[Series]) -> Vec<Series> {
    let mut out = Vec::new();
    for (order, methods, value) in DUMMY_SPEEDUPS {
        for m in methods {
            if let Some(s) = series.iter().find(|s| !s.reference && s.label.starts_with(&format!("{} (", m.as_str()))) {
                let label = format!("{} paper: {value} (8800 GTX)", s.label);
                out.push(Series { label, points: vec![(order as f64, value)], reference: true });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_iv_is_the_papers_formulas() {
        for (k, (tri, tet)) in PAPER_TABLE4.iter().enumerate() {
            assert_eq!(&storage(2, k as u32 + 1), tri, "2D order {}", k + 1);
            if let Some(t) = tet {
                assert_eq!(&storage(3, k as u32 + 1), t, "3D order {}", k + 1);
            }
        }
        let t = table4("x");
        assert_eq!(t.rows.len(), 6);
        assert!(t.rows.iter().all(|r| !r.iter().any(|c| c.contains("paper"))), "every value equals the paper's");
    }

    fn measured(label: &str, points: &[(f64, f64)]) -> Series {
        Series { label: label.into(), points: points.to_vec(), reference: false }
    }

    #[test]
    fn the_papers_marks_sit_where_its_sentences_put_them() {
        let cpu = measured("cpu-serial (CPU, f64)", &[(1.0, 70.0), (2.0, 130.0), (3.0, 600.0), (4.0, 1000.0)]);
        let ours = [cpu, measured("shared-nz", &[(1.0, 1.0)]), measured("global-nz", &[(3.0, 1.0)])];
        let m = figure_marks("order", &ours);
        let got: Vec<(&str, Vec<(f64, f64)>)> = m.iter().map(|s| (s.label.as_str(), s.points.clone())).collect();
        assert_eq!(got[0], ("shared-nz paper: 35x the serial CPU (8800 GTX)", vec![(1.0, 2.0), (2.0, 130.0 / 35.0)]));
        assert_eq!(got[1].1, [(1.0, 70.0 / 65.0), (2.0, 2.0)]);
        assert_eq!((got[2].1.clone(), got[3].1.clone()), (vec![(3.0, 60.0), (4.0, 100.0)], vec![(3.0, 30.0), (4.0, 50.0)]));
        assert!(m.iter().all(|s| s.reference) && figure_marks("size", &ours).is_empty());
        // Without its method's series, a mark is left out.
        assert_eq!(figure_marks("order", &ours[..2]).len(), 2);
        let colors = figure_marks("colors", &[measured("elem-color", &[(24.0, 3.0), (12.0, 2.0), (48.0, 9.0)])]);
        let bound: Vec<f64> = colors[0].points.iter().map(|p| p.1).collect();
        assert!((bound[0] - 2.2).abs() < 1e-12 && bound[1] == 2.0 && (bound[2] - 2.42).abs() < 1e-12, "{bound:?}");
        let dummy = dummy_marks(&[measured("local-nz (opencl)", &[(5.0, 1.1)]), measured("shared-nz (cuda)", &[(4.0, 1.3)])]);
        let got: Vec<(&str, (f64, f64))> = dummy.iter().map(|s| (s.label.as_str(), s.points[0])).collect();
        assert_eq!(got, [("shared-nz (cuda) paper: 1.2 (8800 GTX)", (4.0, 1.2)), ("local-nz (opencl) paper: 1.6 (8800 GTX)", (5.0, 1.6))]);
    }
}
