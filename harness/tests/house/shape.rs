//! The shape of the Rust sources, read from their text: each function's length and parameter
//! count, and the `use` lines. Comments, strings and character literals are blanked first, so
//! that a brace or `fn` inside them is never read as code.

/// One function of a source file.
#[derive(Debug)]
pub struct Function {
    pub name: String,
    /// 1-based line of `fn`.
    pub line: usize,
    /// From the `fn` line to the closing brace, both counted; 0 for a declaration without body.
    pub lines: usize,
    /// Parameters, `self` counted (as clippy's `too_many_arguments` does).
    pub params: usize,
}

/// Where a raw string opened at `i` (`r"`, `r#"`, `br##"` ...) ends, if one opens there.
fn raw_string_end(b: &[u8], i: usize) -> Option<usize> {
    let start = if b[i] == b'b' && b.get(i + 1) == Some(&b'r') {
        i + 2
    } else if b[i] == b'r' {
        i + 1
    } else {
        return None;
    };
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return None;
    }
    let hashes = b[start..].iter().take_while(|&&c| c == b'#').count();
    if b.get(start + hashes) != Some(&b'"') {
        return None;
    }
    let close: Vec<u8> = std::iter::once(b'"').chain(std::iter::repeat_n(b'#', hashes)).collect();
    let body = start + hashes + 1;
    b[body..].windows(close.len()).position(|w| w == close.as_slice()).map(|p| body + p + close.len())
}

/// Where a character literal opened at `i` ends (`'x'`, `'\n'`, `'{'`); None for a lifetime.
fn char_end(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i + 1) == Some(&b'\\') {
        return b[i + 2..].iter().position(|&c| c == b'\'').map(|p| i + 2 + p + 1);
    }
    // One character (UTF-8: up to 4 bytes) then the quote.
    (2..=5)
        .find(|&n| b.get(i + n) == Some(&b'\'') && std::str::from_utf8(&b[i + 1..i + n]).is_ok_and(|s| s.chars().count() == 1))
        .map(|n| i + n + 1)
}

/// The code with comments, strings and character literals replaced by spaces (newlines kept).
pub fn blank(code: &str) -> String {
    let b = code.as_bytes();
    let mut out = b.to_vec();
    let blank_range = |from: usize, to: usize, out: &mut Vec<u8>| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let end = if b[i..].starts_with(b"//") {
            Some(b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| i + p))
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            let mut j = i;
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            Some(j)
        } else if let Some(e) = raw_string_end(b, i) {
            Some(e)
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            Some((j + 1).min(b.len()))
        } else if b[i] == b'\'' {
            char_end(b, i)
        } else {
            None
        };
        match end {
            Some(e) => {
                blank_range(i, e, &mut out);
                i = e;
            }
            None => i += 1,
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The code before the first `#[cfg(test)]` at the start of a line (the test module, which this
/// repository keeps at the end of a file).
pub fn without_tests(code: &str) -> &str {
    code.find("\n#[cfg(test)]").map_or(code, |i| &code[..i + 1])
}

/// The index just past the bracket that closes the one at `open`, counting `open_c`/`close_c`
/// (a `>` of `->` is not a bracket).
fn close_of(b: &[u8], open: usize, open_c: u8, close_c: u8) -> Option<usize> {
    let mut depth = 0i32;
    for (j, &c) in b.iter().enumerate().skip(open) {
        if c == open_c {
            depth += 1;
        } else if c == close_c && !(c == b'>' && j > 0 && b[j - 1] == b'-') {
            depth -= 1;
            if depth == 0 {
                return Some(j + 1);
            }
        }
    }
    None
}

/// Top-level parameters of a parameter list's inside.
fn count_params(list: &[u8]) -> usize {
    let mut depth = 0i32;
    let mut count = 0;
    let mut filled = false;
    for (j, &c) in list.iter().enumerate() {
        match c {
            b'(' | b'[' | b'{' | b'<' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'>' if !(j > 0 && list[j - 1] == b'-') => depth -= 1,
            b',' if depth == 0 => {
                count += filled as usize;
                filled = false;
                continue;
            }
            _ => {}
        }
        filled |= !c.is_ascii_whitespace();
    }
    count + filled as usize
}

/// Every `fn` of already blanked code, nested ones included.
pub fn functions(blanked: &str) -> Vec<Function> {
    let b = blanked.as_bytes();
    let line_of = |i: usize| b[..i].iter().filter(|&&c| c == b'\n').count() + 1;
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = blanked[from..].find("fn ").map(|p| from + p) {
        from = at + 3;
        if at > 0 && word(b[at - 1]) {
            continue;
        }
        let name: String = blanked[from..].trim_start().chars().take_while(|&c| c.is_alphanumeric() || c == '_').collect();
        if name.is_empty() {
            continue;
        }
        let mut j = from + (blanked[from..].len() - blanked[from..].trim_start().len()) + name.len();
        if b.get(j) == Some(&b'<') {
            let Some(e) = close_of(b, j, b'<', b'>') else { continue };
            j = e;
        }
        let Some(open) = blanked[j..].find('(').map(|p| j + p) else { continue };
        let Some(close) = close_of(b, open, b'(', b')') else { continue };
        let params = count_params(&b[open + 1..close - 1]);
        let Some(body) = blanked[close..].find(['{', ';']).map(|p| close + p) else { continue };
        let lines = if b[body] == b'{' { close_of(b, body, b'{', b'}').map_or(0, |end| line_of(end - 1) - line_of(at) + 1) } else { 0 };
        found.push(Function { name, line: line_of(at), lines, params });
    }
    found
}

/// `use` lines that import every name of another module of the crate (`use super::spec::*;`,
/// `use crate::a::b::*;`), outside test modules. A crate root's re-export of its own child
/// (`pub use api::*;`) and an enum's variants in a function (`use Kind::*;`) are not that.
pub fn glob_imports(blanked: &str) -> Vec<(usize, String)> {
    without_tests(blanked)
        .lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let l = l.trim();
            let path = l.strip_prefix("pub(crate) use ").or_else(|| l.strip_prefix("pub use ")).or_else(|| l.strip_prefix("use "))?;
            let inner = path.strip_suffix("::*;")?;
            let local = inner.starts_with("crate::") || (inner.starts_with("super::") && inner != "super");
            local.then(|| (i + 1, l.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODE: &str = r##"
/// fn not_here() { in a comment }
fn one(a: u32, b: HashMap<u32, Vec<u8>>, f: impl Fn(u32, u32) -> u32) -> u32 {
    let s = "fn fake() {";
    let c = '{';
    let r = r#"}"#;
    fn inner<'a>(x: &'a str) {}
    a
}

trait T {
    fn declared(&self, x: u32);
}
"##;

    #[test]
    fn functions_are_read_through_strings_comments_and_generics() {
        let f = functions(&blank(CODE));
        let names: Vec<&str> = f.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["one", "inner", "declared"]);
        assert_eq!((f[0].line, f[0].lines, f[0].params), (3, 7, 3));
        assert_eq!((f[1].lines, f[1].params), (1, 1));
        assert_eq!((f[2].lines, f[2].params), (0, 2));
    }

    #[test]
    fn glob_imports_are_found_outside_tests_only() {
        let code = "use super::spec::*;\nuse rayon::prelude::*;\nuse a::{b, c};\npub use api::*;\nuse super::*;\n#[cfg(test)]\nmod tests {\n    use super::x::*;\n}\n";
        assert_eq!(glob_imports(&blank(code)), [(1, "use super::spec::*;".to_string())]);
    }
}
