//! How the series of a figure are told apart: by colour and by marker (and, from the eleventh
//! measured series on, by a dashed line), so that a figure of many series reads in greyscale too;
//! a paper's values (point-only series) are crosses in the colour of the series they belong to.

use plotters::prelude::*;

use super::Figure;

/// The marker of a measured series' points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
    TriangleDown,
    /// A paper's values, or another point-only reference.
    Cross,
}

const MEASURED: [Marker; 5] = [Marker::Circle, Marker::Square, Marker::Triangle, Marker::Diamond, Marker::TriangleDown];

/// One series' look.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Look {
    pub colour: RGBAColor,
    pub marker: Marker,
    pub dashed: bool,
}

/// One colour of the usual qualitative palette ("tab10"); from the eleventh on, the same ten
/// darker.
pub fn colour(i: usize) -> RGBAColor {
    const TAB10: [(u8, u8, u8); 10] = [
        (31, 119, 180),
        (255, 127, 14),
        (44, 160, 44),
        (214, 39, 40),
        (148, 103, 189),
        (140, 86, 75),
        (227, 119, 194),
        (127, 127, 127),
        (188, 189, 34),
        (23, 190, 207),
    ];
    let (r, g, b) = TAB10[i % 10];
    let dim = |c: u8| if (i / 10) % 2 == 1 { (c as u16 * 3 / 5) as u8 } else { c };
    RGBColor(dim(r), dim(g), dim(b)).to_rgba()
}

/// The k-th measured series' look: colour k, and a marker that shifts by one every ten series,
/// so that no two of the first fifty share both.
fn measured(k: usize) -> Look {
    Look { colour: colour(k), marker: MEASURED[(k + k / 10) % MEASURED.len()], dashed: k >= 10 }
}

/// The measured series a point-only series belongs to: the one whose label its own starts with
/// (`COO (paper, Table 1)` is COO's, `sell f64 ideal (T1/P)` is sell f64's) or ends with
/// (`paper GTX580 reg-nojac` is reg-nojac's); the longest such label.
fn owner(fig: &Figure, label: &str) -> Option<usize> {
    // A merged series ("a = b") owns the values of each of its names.
    let names = || fig.series.iter().enumerate().filter(|(_, s)| !s.reference).flat_map(|(i, s)| s.label.split(" = ").map(move |n| (i, n)));
    let longest = |hits: Vec<(usize, usize)>| hits.into_iter().max_by_key(|h| h.1).map(|h| h.0);
    let starts = names().filter(|(_, n)| label.starts_with(&format!("{n} "))).map(|(i, n)| (i, n.len())).collect();
    longest(starts).or_else(|| longest(names().filter(|(_, n)| label.ends_with(&format!(" {n}"))).map(|(i, n)| (i, n.len())).collect()))
}

/// Every series' look, in the figure's order.
pub fn looks(fig: &Figure) -> Vec<Look> {
    let mut k = 0;
    let mut out: Vec<Look> = fig
        .series
        .iter()
        .map(|s| {
            let look = measured(k);
            k += usize::from(!s.reference);
            look
        })
        .collect();
    let mut unowned = k;
    for (i, s) in fig.series.iter().enumerate().filter(|(_, s)| s.reference) {
        let colour = match owner(fig, &s.label) {
            Some(j) => out[j].colour,
            None => {
                unowned += 1;
                colour(unowned - 1)
            }
        };
        out[i] = Look { colour, marker: Marker::Cross, dashed: false };
    }
    out
}

/// The figure with measured series of identical points drawn once, under one label that names
/// them all ("cusparse-cg = cusparse-cg-device"): a line drawn over another hides it.
pub fn merge_identical(fig: &Figure) -> Figure {
    let mut out = fig.clone();
    out.series.clear();
    for s in &fig.series {
        let twin = out.series.iter_mut().find(|o| !o.reference && !s.reference && !s.points.is_empty() && o.points == s.points);
        match twin {
            Some(o) => o.label = format!("{} = {}", o.label, s.label),
            None => out.series.push(s.clone()),
        }
    }
    out
}

/// Draws a marker centred at `at` (pixels) on `area`.
pub fn draw_marker<DB: DrawingBackend>(area: &DrawingArea<DB, plotters::coord::Shift>, at: (i32, i32), look: &Look) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let (c, (x, y)) = (look.colour, at);
    match look.marker {
        Marker::Circle => area.draw(&Circle::new(at, 3, c.filled())).map_err(e),
        Marker::Square => area.draw(&Rectangle::new([(x - 3, y - 3), (x + 3, y + 3)], c.filled())).map_err(e),
        Marker::Triangle => area.draw(&Polygon::new(vec![(x, y - 4), (x + 4, y + 3), (x - 4, y + 3)], c.filled())).map_err(e),
        Marker::TriangleDown => area.draw(&Polygon::new(vec![(x, y + 4), (x + 4, y - 3), (x - 4, y - 3)], c.filled())).map_err(e),
        Marker::Diamond => area.draw(&Polygon::new(vec![(x, y - 4), (x + 4, y), (x, y + 4), (x - 4, y)], c.filled())).map_err(e),
        Marker::Cross => area.draw(&Cross::new(at, 5, c.stroke_width(2))).map_err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::super::Series;
    use super::*;

    fn fig(labels: &[(&str, bool)]) -> Figure {
        let series = labels.iter().map(|(l, r)| Series { label: l.to_string(), points: vec![(1.0, 1.0)], reference: *r }).collect();
        Figure { name: "f".into(), title: "t".into(), x_label: "x".into(), y_label: "y".into(), series, log_x: false, log_y: false }
    }

    #[test]
    fn many_series_differ_in_colour_or_marker_and_papers_take_their_series_colour() {
        let names: Vec<String> = (0..24).map(|i| format!("method {i}")).collect();
        let mut labels: Vec<(&str, bool)> = names.iter().map(|n| (n.as_str(), false)).collect();
        labels.extend([
            ("method 3 (paper, Table 1)", true),
            ("paper GTX580 method 12", true),
            ("ideal (100%)", true),
            ("method 1 ideal (T1/P)", true),
        ]);
        let l = looks(&fig(&labels));
        for i in 0..24 {
            for j in 0..i {
                assert!(l[i].colour != l[j].colour || l[i].marker != l[j].marker, "series {i} and {j} look alike");
            }
        }
        assert!(l[..10].iter().all(|x| !x.dashed) && l[10..24].iter().all(|x| x.dashed));
        assert_eq!((l[24].colour, l[24].marker), (l[3].colour, Marker::Cross));
        assert_eq!(l[25].colour, l[12].colour);
        assert_eq!((l[26].colour, l[26].marker), (colour(24), Marker::Cross), "an unowned reference takes the next colour");
        assert_eq!(l[27].colour, l[1].colour, "method 1's ideal is method 1's, not method 12's");
    }

    #[test]
    fn identical_series_are_drawn_once_under_both_names() {
        let mut f = fig(&[("a", false), ("b", false), ("c", false), ("a (paper, x)", true)]);
        f.series[1].points = vec![(1.0, 2.0)];
        let m = merge_identical(&f);
        let labels: Vec<&str> = m.series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["a = c", "b", "a (paper, x)"]);
        assert_eq!(looks(&m)[2].colour, looks(&m)[0].colour, "the merged series keeps its paper values' colour");
    }
}
