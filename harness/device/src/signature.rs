//! A kernel's parameter list, read from its source when the kernel is taken from its module, and
//! the check of every launch's arguments against it: a wrong count or type is an error naming
//! the kernel and the parameter, on every backend (so PoCL in CI catches it), never a silent
//! misread of bytes on the device.

use crate::Precision;

/// What the host must pass for one parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// A `GLOBAL` pointer: [`Arg::Buf`].
    Buffer,
    U32,
    I32,
    /// `idx_t`.
    I64,
    F32,
    F64,
}

impl Param {
    fn as_str(self) -> &'static str {
        match self {
            Param::Buffer => "buffer",
            Param::U32 => "uint",
            Param::I32 => "int",
            Param::I64 => "idx_t",
            Param::F32 => "float",
            Param::F64 => "double",
        }
    }

    /// The field type of an argument struct (`kernel_args!`) that passes it.
    fn field(self) -> &'static str {
        match self {
            Param::Buffer => "&Buffer",
            Param::U32 => "u32",
            Param::I32 => "i32",
            Param::I64 => "i64",
            Param::F32 => "f32 (or RealArg for `real`)",
            Param::F64 => "f64 (or RealArg for `real`)",
        }
    }
}

/// A kernel's parameters, named, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub params: Vec<(String, Param)>,
}

impl Signature {
    /// The kinds of one launch's arguments against the parameters: count, then each kind;
    /// what differs first, in words.
    pub fn check(&self, args: impl ExactSizeIterator<Item = Param>) -> Result<(), String> {
        if args.len() != self.params.len() {
            let names: Vec<&str> = self.params.iter().map(|(n, _)| n.as_str()).collect();
            return Err(format!("takes {} arguments ({}), given {}", self.params.len(), names.join(", "), args.len()));
        }
        for (i, ((name, want), got)) in self.params.iter().zip(args).enumerate() {
            if got != *want {
                return Err(format!(
                    "argument {i} (`{name}`) is `{}` in the kernel, but the argument struct passes `{}`: make that field `{}`",
                    want.as_str(),
                    got.as_str(),
                    want.field()
                ));
            }
        }
        Ok(())
    }
}

/// The source with its comments blanked (so that a commented-out signature is never read):
/// what [`parse_code`] reads.
pub fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('/') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("/*") {
            rest = tail.find("*/").map_or("", |e| &tail[e + 2..]);
            out.push(' ');
        } else if tail.starts_with("//") {
            rest = tail.find('\n').map_or("", |e| &tail[e..]);
        } else {
            out.push('/');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

/// One parameter's declaration (`const GLOBAL real *RESTRICT x`, `idx_t n`), with the precision
/// that `real` stands for.
fn parse_param(decl: &str, real: Precision) -> Result<(String, Param), String> {
    let words: Vec<&str> = decl
        .split(|c: char| c.is_whitespace() || c == '*')
        .filter(|w| !w.is_empty() && !matches!(*w, "const" | "RESTRICT" | "restrict" | "volatile" | "GLOBAL"))
        .collect();
    let [ty, name] = words[..] else { return Err(format!("cannot read the parameter `{}`", decl.trim())) };
    if decl.contains('*') {
        if ty == "LOCAL" || decl.contains("LOCAL") {
            return Err(format!("`{name}` is a LOCAL pointer, which no launch argument can pass"));
        }
        return Ok((name.into(), Param::Buffer));
    }
    let param = match ty {
        "uint" => Param::U32,
        "int" => Param::I32,
        "idx_t" => Param::I64,
        "float" => Param::F32,
        "double" => Param::F64,
        "real" => match real {
            Precision::F32 => Param::F32,
            Precision::F64 => Param::F64,
        },
        other => return Err(format!("`{name}` has the type `{other}`, which no launch argument passes")),
    };
    Ok((name.into(), param))
}

/// The parameter list text of every definition `void <kernel>(...) {` in the source.
fn definitions<'a>(text: &'a str, kernel: &str) -> Vec<&'a str> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(kernel).map(|i| from + i) {
        from = at + kernel.len();
        let before = text[..at].trim_end();
        let boundary = !text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        let after = text[from..].trim_start();
        if !boundary || !before.ends_with("void") || !after.starts_with('(') {
            continue;
        }
        let open = text.len() - after.len();
        let Some(close) = text[open..].find(')').map(|i| open + i) else { continue };
        if text[close + 1..].trim_start().starts_with('{') {
            found.push(&text[open + 1..close]);
        }
    }
    found
}

/// The signature of `kernel` in `text` (a kernel file or a whole translation unit), `real` being
/// the precision the module is compiled for. Every definition of the kernel (one per `#if`
/// branch) must take the same parameters.
pub fn parse(text: &str, kernel: &str, real: Precision) -> Result<Signature, String> {
    parse_code(&without_comments(text), kernel, real)
}

/// [`parse`] on a source whose comments are already blanked ([`without_comments`]), as a
/// module keeps its own, so that taking each kernel does not blank the whole unit again.
pub fn parse_code(code: &str, kernel: &str, real: Precision) -> Result<Signature, String> {
    let lists = definitions(code, kernel);
    let mut signatures = lists.iter().map(|list| {
        if list.contains('#') {
            return Err(format!("{kernel}'s parameter list holds a preprocessor line"));
        }
        let params = match list.trim() {
            "" | "void" => Vec::new(),
            l => l.split(',').map(|d| parse_param(d, real)).collect::<Result<_, _>>()?,
        };
        Ok(Signature { params })
    });
    let first = signatures.next().ok_or_else(|| format!("no definition `void {kernel}(...) {{` in the source"))??;
    for other in signatures {
        if other? != first {
            return Err(format!("{kernel} is defined twice with different parameters"));
        }
    }
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "/* KERNEL void step(int wrong) {} */\n\
        DEVICE_FN real helper(real a) { return a; }\n\
        #if MIN_BLOCKS > 0\nKERNEL_BOUNDS(256, 2)\n#else\nKERNEL\n#endif\n\
        void step(const GLOBAL real *RESTRICT u, GLOBAL uint *map, // the map\n idx_t n, real amp, int it) {\n}\n\
        KERNEL void step_rows(GLOBAL real *u) {}\n";

    #[test]
    fn a_signature_is_read_through_qualifiers_comments_and_bounds() {
        let s = parse(SOURCE, "step", Precision::F64).unwrap();
        let kinds: Vec<Param> = s.params.iter().map(|p| p.1).collect();
        assert_eq!(kinds, [Param::Buffer, Param::Buffer, Param::I64, Param::F64, Param::I32]);
        assert_eq!(s.params[3].0, "amp");
        assert_eq!(parse(SOURCE, "step", Precision::F32).unwrap().params[3].1, Param::F32);
        assert_eq!(parse(SOURCE, "step_rows", Precision::F32).unwrap().params.len(), 1);
        assert!(parse(SOURCE, "missing", Precision::F32).unwrap_err().contains("no definition"));
        assert!(parse("KERNEL void k(LOCAL real *s) {}", "k", Precision::F32).unwrap_err().contains("LOCAL"));
        assert!(parse("KERNEL void k(ushort s) {}", "k", Precision::F32).unwrap_err().contains("ushort"));
    }

    #[test]
    fn a_wrong_count_or_kind_of_argument_is_refused() {
        let s = parse(SOURCE, "step", Precision::F32).unwrap();
        let good = [Param::Buffer, Param::Buffer, Param::I64, Param::F32, Param::I32];
        s.check(good.into_iter()).unwrap();
        s.check([].into_iter()).unwrap_err();
        let short = s.check(good[..4].iter().copied()).unwrap_err();
        assert!(short.contains("takes 5 arguments") && short.contains("given 4"), "{short}");
        let mut swapped = good;
        swapped[2] = Param::U32;
        let wrong = s.check(swapped.into_iter()).unwrap_err();
        assert!(
            wrong.contains("argument 2 (`n`) is `idx_t` in the kernel, but the argument struct passes `uint`: make that field `i64`"),
            "{wrong}"
        );
        swapped = good;
        swapped[3] = Param::F64;
        assert!(s.check(swapped.into_iter()).is_err(), "a double where the f32 build takes a float");
    }

    /// The kernels defined in a source: the names after `void` that follow a KERNEL marker.
    fn kernel_names(text: &str) -> Vec<String> {
        let text = without_comments(text);
        let mut names = Vec::new();
        for (i, _) in text.match_indices("KERNEL") {
            let rest = &text[i..];
            let Some(v) = rest.find("void") else { continue };
            let name: String = rest[v + 4..].trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    #[test]
    fn every_kernel_of_every_kernel_file_has_a_readable_signature() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernels");
        let mut kernels = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "kern") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for name in kernel_names(&text) {
                for real in [Precision::F32, Precision::F64] {
                    let s = parse(&text, &name, real).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                    assert!(s.params.len() <= crate::args::MAX_ARGS, "{name} takes {} parameters", s.params.len());
                }
                kernels += 1;
            }
        }
        assert!(kernels > 60, "only {kernels} kernels found in {}", dir.display());
    }
}
