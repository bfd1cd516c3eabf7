//! Sweep axes declared once ([`crate::axes!`]): each axis is one line, which gives the experiment
//! file's list (`sweep.<axis>`, at least one value), the case's field, its place in the cases'
//! product and its parameter column. nvbench's axes are the model: the first axis varies fastest.

use crate::experiment::{ParamValue, Params};

/// A value of a sweep axis as it appears in a case's parameter column.
pub trait AxisValue: Clone {
    fn param(&self) -> ParamValue;
    /// The case's columns for this axis (`name`): one, the value, unless the value is several
    /// numbers with names of their own (a box's nx, ny, nz).
    fn columns(&self, name: &str, params: Params) -> Params {
        params.push(name, self.param())
    }
}

macro_rules! int_axis {
    ($($t:ty),*) => {
        $(impl AxisValue for $t {
            fn param(&self) -> ParamValue {
                ParamValue::Int(*self as i64)
            }
        })*
    };
}
int_axis!(u32, u64, usize, i32, i64);

impl AxisValue for f64 {
    fn param(&self) -> ParamValue {
        ParamValue::Float(*self)
    }
}

impl AxisValue for String {
    fn param(&self) -> ParamValue {
        ParamValue::Str(self.clone())
    }
}

/// The index of each axis for case `i` of the product of axes of lengths `lens`, the first axis
/// varying fastest.
pub fn product_index(i: usize, lens: &[usize], out: &mut [usize]) {
    let mut rest = i;
    for (k, &n) in lens.iter().enumerate() {
        out[k] = rest % n;
        rest /= n;
    }
}

/// An axis of a type with `as_str` (a paper's method or study enum): its name is the column's
/// value. `fembench_bench::named_axis!(Method, Study);`
#[macro_export]
macro_rules! named_axis {
    ($($t:ty),+) => {
        $(impl $crate::axes::AxisValue for $t {
            fn param(&self) -> $crate::experiment::ParamValue {
                $crate::experiment::ParamValue::Str(self.as_str().into())
            }
        })+
    };
}

/// Declares a benchmark's sweep and its case type from one list of axes:
///
/// ```ignore
/// fembench_bench::axes! {
///     /// The experiment file's `sweep:`.
///     pub struct Sweep => pub struct Point {
///         method: Method,
///         /// Uniform refinement level.
///         level: u32,
///     }
/// }
/// ```
///
/// `Sweep` holds a non-empty list per axis (unknown fields refused); `Point` one value per axis.
/// `Sweep::product` lists every combination, the first axis varying fastest; `Point::params`
/// gives the parameter columns in the declared order (an axis's value may give several:
/// [`AxisValue::columns`]). An axis's type implements [`AxisValue`]
/// (integers, `f64` and `String` do; `named_axis!` gives an enum's name). Adding an axis is one line here (and the experiment
/// file's list); the run side reads it as `point.<axis>`.
#[macro_export]
macro_rules! axes {
    (
        $(#[$smeta:meta])* $svis:vis struct $sweep:ident => $(#[$pmeta:meta])* $pvis:vis struct $point:ident {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty ),+ $(,)?
        }
    ) => {
        $(#[$smeta])*
        #[derive(Debug, Clone, ::serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        $svis struct $sweep {
            $( $(#[$fmeta])* pub $field: $crate::experiment::NonEmpty<$ty> ),+
        }

        $(#[$pmeta])*
        #[derive(Debug, Clone)]
        $pvis struct $point {
            $( pub $field: $ty ),+
        }

        impl $sweep {
            /// Every combination of the axes' values, the first axis varying fastest.
            pub fn product(&self) -> Vec<$point> {
                let lens = [$( self.$field.len() ),+];
                let total: usize = lens.iter().product();
                let mut at = lens;
                (0..total)
                    .map(|i| {
                        $crate::axes::product_index(i, &lens, &mut at);
                        // Each axis's name bound to its value's index.
                        let [$( $field ),+] = at;
                        $point { $( $field: self.$field[$field].clone() ),+ }
                    })
                    .collect()
            }
        }

        impl $point {
            /// The case's parameter columns, one per axis, in the declared order.
            pub fn params(&self) -> $crate::experiment::Params {
                let params = $crate::experiment::Params::default();
                $( let params = $crate::axes::AxisValue::columns(&self.$field, stringify!($field), params); )+
                params
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::product_index;

    #[test]
    fn the_first_axis_varies_fastest() {
        let lens = [2, 3];
        let mut at = [0; 2];
        let seen: Vec<[usize; 2]> = (0..6)
            .map(|i| {
                product_index(i, &lens, &mut at);
                at
            })
            .collect();
        assert_eq!(seen, [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2], [1, 2]]);
    }
}
