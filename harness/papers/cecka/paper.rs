//! Published constants of Cecka, Lew and Darve 2011, shown beside our figures and labelled as
//! the paper's.

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

/// The paper's fastest method per order (section 6.3, Figs. 13-14).
pub(crate) fn paper_winner(order: i64) -> &'static str {
    if order <= 3 {
        "shared-nz"
    } else {
        "global-nz"
    }
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
}
