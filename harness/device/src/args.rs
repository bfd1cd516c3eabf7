//! Typed kernel arguments: each kernel's parameters are one struct, declared once with
//! [`kernel_args!`](crate::kernel_args) next to the host code that launches it, its fields named
//! and typed as the kernel's parameters. The struct knows its kernel's name and the kinds of its
//! parameters, so that
//!
//! - taking the kernel from its compiled module ([`Kernel::accepts`]) checks the struct against
//!   the signature read from the source, and a wrong count or kind fails there, on every
//!   backend (PoCL in CI);
//! - every declared struct is also checked against its kernel file without compiling anything
//!   ([`Declared::check`]), for both precisions of `real`, by a unit test of each crate;
//! - a launch ([`DeviceExt::launch_with`](crate::DeviceExt::launch_with)) passes the struct, not
//!   a positional list, and is refused if the struct is another kernel's.
//!
//! What stays the caller's contract (as with cudarc's `launch`): every buffer is as large as the
//! indices the kernel derives from the other arguments.

use crate::api::{Arg, Buffer, DeviceError, DeviceResult, Kernel};
use crate::kernels::KernelSource;
use crate::signature::Param;
use crate::Precision;

/// The most parameters a kernel may take (the longest today has 17).
pub const MAX_ARGS: usize = 24;

/// One launch's arguments, in order, held on the stack: making them inside a timed body
/// allocates nothing.
#[derive(Clone, Copy)]
pub struct ArgList<'a> {
    items: [Arg<'a>; MAX_ARGS],
    len: usize,
}

impl<'a> ArgList<'a> {
    pub fn new() -> Self {
        ArgList { items: [Arg::U32(0); MAX_ARGS], len: 0 }
    }
    /// Appends one argument. Panics above [`MAX_ARGS`], which a unit test rules out for every
    /// kernel file.
    pub fn push(&mut self, arg: Arg<'a>) {
        assert!(self.len < MAX_ARGS, "a kernel with more than {MAX_ARGS} parameters");
        self.items[self.len] = arg;
        self.len += 1;
    }
}

impl Default for ArgList<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> std::ops::Deref for ArgList<'a> {
    type Target = [Arg<'a>];
    fn deref(&self) -> &[Arg<'a>] {
        &self.items[..self.len]
    }
}

/// A field type of an argument struct: the parameters it fills (one, or a group that several
/// kernels share: [`arg_group!`](crate::arg_group)) and their values.
pub trait ArgField {
    /// The kinds of its parameters, where `real` is the precision the module is compiled for.
    fn params(real: Precision, out: &mut Vec<Param>);
    /// Its values, in order.
    fn push<'s>(&'s self, out: &mut ArgList<'s>);
}

impl ArgField for &Buffer {
    fn params(_: Precision, out: &mut Vec<Param>) {
        out.push(Param::Buffer)
    }
    fn push<'s>(&'s self, out: &mut ArgList<'s>) {
        out.push(Arg::Buf(self))
    }
}

macro_rules! scalar_field {
    ($($ty:ty => $param:ident),*) => {$(
        impl ArgField for $ty {
            fn params(_: Precision, out: &mut Vec<Param>) {
                out.push(Param::$param)
            }
            fn push<'s>(&'s self, out: &mut ArgList<'s>) {
                out.push(Arg::$param(*self))
            }
        }
    )*};
}
scalar_field!(u32 => U32, i32 => I32, i64 => I64, f32 => F32, f64 => F64);

/// A `real` parameter: a float or a double, as the module is compiled.
#[derive(Clone, Copy)]
pub struct RealArg(Arg<'static>);

impl RealArg {
    pub fn new(precision: Precision, value: f64) -> Self {
        RealArg(Arg::real(precision, value))
    }
}

impl ArgField for RealArg {
    fn params(real: Precision, out: &mut Vec<Param>) {
        out.push(match real {
            Precision::F32 => Param::F32,
            Precision::F64 => Param::F64,
        })
    }
    fn push<'s>(&'s self, out: &mut ArgList<'s>) {
        out.push(self.0)
    }
}

/// The arguments of one kernel, as a struct (made by [`kernel_args!`](crate::kernel_args)).
pub trait KernelArgs {
    /// The kernel's name in its source.
    const KERNEL: &'static str;
    /// The kinds of its parameters, in order, for a module whose `real` is `real`.
    fn params(real: Precision) -> Vec<Param>;
    /// The values, in order.
    fn args(&self) -> ArgList<'_>;
}

/// An argument struct as its crate declares it: the kernel file, the kernel, and the kinds it
/// passes.
#[derive(Clone, Copy)]
pub struct Declared {
    pub source: KernelSource,
    pub kernel: &'static str,
    pub params: fn(Precision) -> Vec<Param>,
}

impl Declared {
    /// The struct against the kernel's signature in its file, for both precisions of `real`.
    pub fn check(&self) -> Result<(), String> {
        for real in [Precision::F32, Precision::F64] {
            let signature =
                crate::signature::parse(self.source.text, self.kernel, real).map_err(|e| format!("{}: {e}", self.source.file))?;
            signature
                .check((self.params)(real).into_iter())
                .map_err(|e| format!("{} in {} ({real:?}): the argument struct {e}", self.kernel, self.source.file))?;
        }
        Ok(())
    }
}

impl Declared {
    /// Kernel `kernel` of `source`, declared to take the argument struct `A` of another kernel
    /// with the same parameters (a variant of a shipped kernel needs no struct of its own).
    pub const fn same_as<A: KernelArgs>(source: KernelSource, kernel: &'static str) -> Declared {
        Declared { source, kernel, params: A::params }
    }
}

impl Kernel {
    /// Refuses the argument struct `A` if it is another kernel's.
    pub fn takes<A: KernelArgs>(&self) -> DeviceResult<()> {
        if self.args_of != A::KERNEL {
            return Err(DeviceError::BadArgument {
                kernel: self.name.clone(),
                detail: format!("given the argument struct of {}; take the kernel for its own struct (`kernel_for`)", A::KERNEL),
            });
        }
        Ok(())
    }

    /// This kernel, taking the argument struct `A` of another kernel with the same parameters:
    /// refused where its signature differs from `A`'s in count or kind.
    pub fn with_arguments_of<A: KernelArgs>(mut self) -> DeviceResult<Kernel> {
        self.signature.check(A::params(self.real).into_iter()).map_err(|detail| DeviceError::BadArgument {
            kernel: self.name.clone(),
            detail: format!("does not take the arguments of {}: {detail}", A::KERNEL),
        })?;
        self.args_of = A::KERNEL.to_string();
        Ok(self)
    }

    /// Refuses the argument struct `A` if it is another kernel's, or if its parameters differ
    /// from this kernel's signature in count or kind.
    pub fn accepts<A: KernelArgs>(&self) -> DeviceResult<()> {
        self.takes::<A>()?;
        self.signature
            .check(A::params(self.real).into_iter())
            .map_err(|detail| DeviceError::BadArgument { kernel: self.name.clone(), detail })
    }
}

/// Declares argument structs, each for one kernel of one kernel file, and the list of them
/// (`Declared`) that a unit test checks against the file:
///
/// ```ignore
/// kernel_args! {
///     /// Every argument struct of scan.kern.
///     pub const SCAN_ARGS in SCAN;
///     /// Adds each block's offset.
///     pub struct ScanAdd<'a> = "scan_add" { out: &'a Buffer, sums: &'a Buffer, n: i64 }
/// }
/// ```
///
/// The fields are the kernel's parameters in order: `&Buffer` for a pointer, `u32`, `i32`,
/// `i64` (`idx_t`), `f32`, `f64`, and [`RealArg`] for `real`.
#[macro_export]
macro_rules! kernel_args {
    (
        $(#[$list_meta:meta])* $list_vis:vis const $list:ident in $source:expr;
        $(
            $(#[$meta:meta])*
            $vis:vis struct $name:ident $(<$lt:lifetime>)? = $kernel:literal {
                $( $field:ident : $ty:ty ),* $(,)?
            }
        )*
    ) => {
        $(
            $(#[$meta])*
            #[derive(Clone, Copy)]
            $vis struct $name $(<$lt>)? { $( pub $field: $ty ),* }

            impl $(<$lt>)? $crate::args::KernelArgs for $name $(<$lt>)? {
                const KERNEL: &'static str = $kernel;
                fn params(real: $crate::Precision) -> ::std::vec::Vec<$crate::signature::Param> {
                    let mut out = ::std::vec::Vec::new();
                    $( <$ty as $crate::args::ArgField>::params(real, &mut out); )*
                    let _ = real;
                    out
                }
                fn args(&self) -> $crate::args::ArgList<'_> {
                    let mut out = $crate::args::ArgList::new();
                    $( $crate::args::ArgField::push(&self.$field, &mut out); )*
                    out
                }
            }
        )*
        $(#[$list_meta])*
        $list_vis const $list: &[$crate::args::Declared] = &[
            $( $crate::args::Declared {
                source: $source,
                kernel: $kernel,
                params: <$name as $crate::args::KernelArgs>::params,
            } ),*
        ];
    };
}

/// Declares a group of parameters that several kernels take in the same order, as a struct
/// usable as one field of their argument structs ([`kernel_args!`](crate::kernel_args)):
///
/// ```ignore
/// arg_group! {
///     /// The sources a step adds.
///     pub struct Sources<'a> { dof: &'a Buffer, coef: &'a Buffer, count: u32 }
/// }
/// ```
#[macro_export]
macro_rules! arg_group {
    ($(#[$meta:meta])* $vis:vis struct $name:ident $(<$lt:lifetime>)? { $( $field:ident : $ty:ty ),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy)]
        $vis struct $name $(<$lt>)? { $( pub $field: $ty ),* }

        impl $(<$lt>)? $crate::args::ArgField for $name $(<$lt>)? {
            fn params(real: $crate::Precision, out: &mut ::std::vec::Vec<$crate::signature::Param>) {
                $( <$ty as $crate::args::ArgField>::params(real, out); )*
            }
            fn push<'s>(&'s self, out: &mut $crate::args::ArgList<'s>) {
                $( $crate::args::ArgField::push(&self.$field, out); )*
            }
        }
    };
}

/// The argument structs of the device crate's own kernel files (scan, cache flush, COO sum, radix
/// sort).
pub fn declared() -> Vec<Declared> {
    [crate::scan::SCAN_ARGS, crate::scan::CACHE_FLUSH_ARGS, crate::coo_sum::COO_SUM_ARGS, crate::radix_sort::RADIX_SORT_ARGS].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: KernelSource =
        KernelSource { file: "test.kern", text: "KERNEL void axpy(GLOBAL real *y, const GLOBAL real *x, real a, idx_t n) {}" };

    crate::kernel_args! {
        const GOOD in SOURCE;
        struct Axpy<'a> = "axpy" { y: &'a Buffer, x: &'a Buffer, a: RealArg, n: i64 }
    }
    crate::kernel_args! {
        const SWAPPED in SOURCE;
        struct AxpySwapped<'a> = "axpy" { y: &'a Buffer, x: &'a Buffer, n: i64, a: RealArg }
    }
    crate::kernel_args! {
        const SHORT in SOURCE;
        struct AxpyShort<'a> = "axpy" { y: &'a Buffer, x: &'a Buffer, a: RealArg }
    }
    crate::arg_group! {
        struct Scaled<'a> { x: &'a Buffer, a: RealArg }
    }
    crate::kernel_args! {
        const GROUPED in SOURCE;
        struct AxpyGrouped<'a> = "axpy" { y: &'a Buffer, scaled: Scaled<'a>, n: i64 }
    }
    crate::kernel_args! {
        const MISSING in SOURCE;
        struct Scale = "scale" { a: f32 }
    }

    #[test]
    fn every_argument_struct_of_the_device_crate_matches_its_kernel() {
        let all = declared();
        assert!(all.len() >= 14, "{} structs", all.len());
        for d in all {
            d.check().unwrap_or_else(|e| panic!("{e}"));
        }
    }

    #[test]
    fn a_struct_of_the_wrong_kinds_count_or_kernel_is_refused() {
        GOOD[0].check().unwrap();
        GROUPED[0].check().unwrap();
        let swapped = SWAPPED[0].check().unwrap_err();
        assert!(swapped.contains("argument 2 (`a`)"), "{swapped}");
        assert!(SHORT[0].check().unwrap_err().contains("takes 4 arguments"));
        assert!(MISSING[0].check().unwrap_err().contains("no definition"));
        assert_eq!(<Axpy as KernelArgs>::params(Precision::F64)[2], Param::F64);
        assert_eq!(<Scale as KernelArgs>::params(Precision::F64), [Param::F32]);
    }
}
