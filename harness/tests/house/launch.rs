//! The argument-struct rule, read on calls: a kernel launched with positional arguments, a
//! positional value built by hand, or a kernel taken by name alone from the module cache. A
//! private helper named `launch` or `args` is no launch.

use std::path::Path;

use super::crate_code;

/// Whether line `line` of `code` takes a kernel from the module cache by name (`modules.kernel(`).
fn on_modules(code: &str, line: usize) -> bool {
    code.lines().nth(line - 1).is_some_and(|t| t.split_whitespace().collect::<String>().contains("modules.kernel("))
}

/// The calls of method `name` (`.name(..)` or `.name::<..>(..)`, whitespace allowed), each as its
/// line and the text of its arguments, read on code whose comments and strings are blanked: a
/// call, not a word (`launch_with` is not `launch`, and a field named `launch` is no call).
fn method_calls<'c>(code: &'c str, name: &str) -> Vec<(usize, &'c str)> {
    let mut calls = Vec::new();
    for (at, _) in code.match_indices(&format!(".{name}")) {
        let after = at + 1 + name.len();
        if code[after..].starts_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let Some(open) = code[after..].find('(').map(|o| after + o) else { continue };
        let between = code[after..open].trim();
        if !(between.is_empty() || between.starts_with("::<")) {
            continue;
        }
        let mut depth = 0;
        let close = code[open..].char_indices().find_map(|(i, c)| {
            depth += (c == '(') as i32 - (c == ')') as i32;
            (depth == 0).then_some(open + i)
        });
        calls.push((code[..at].matches('\n').count() + 1, &code[open + 1..close.unwrap_or(code.len())]));
    }
    calls
}

/// Whether a launch call's arguments pass positional values: a slice literal, a struct's
/// `args()` list, or `Arg` values.
fn positional(args: &str) -> bool {
    args.contains("&[") || args.contains(".args()") || args.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|w| w == "Arg")
}

#[test]
fn kernels_are_launched_through_their_argument_structs() {
    let launch_layer = ["api.rs", "args.rs", "ext.rs", "cuda.rs", "opencl.rs", "nccl.rs"].map(|f| Path::new("device/src").join(f));
    let mut found = Vec::new();
    for (rel, code) in crate_code().into_iter().filter(|(rel, _)| !launch_layer.contains(rel)) {
        let at = |line: usize, what: &str, fix: &str| format!("{}:{line}: {what}; {fix}", rel.display());
        for (line, _) in method_calls(&code, "launch").into_iter().filter(|(_, args)| positional(args)) {
            found.push(at(
                line,
                "a launch with positional arguments",
                "declare the kernel's arguments once with `kernel_args!` in the paper's kernel.rs and launch with that struct: `dev.launch_with(&kernel, Launch::cover(n, 256), &MyArgs { .. })`",
            ));
        }
        for (i, l) in code.lines().enumerate() {
            // A positional value built by hand (`Arg::Buf(..)`), whatever launches it later.
            if l.match_indices("Arg::").any(|(at, _)| !l[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_')) {
                found.push(at(
                    i + 1,
                    "a positional argument value (`Arg::..`)",
                    "put the value in the kernel's argument struct (`kernel_args!`)",
                ));
            }
        }
        for (line, _) in method_calls(&code, "kernel").into_iter().filter(|&(l, _)| on_modules(&code, l)) {
            found.push(at(
                line,
                "a kernel looked up by name alone",
                "take it for its argument struct, `ctx.modules.kernel_for::<MyArgs>(dev, &SOURCE, &defines)`, which checks the struct against the kernel's signature",
            ));
        }
    }
    assert!(found.is_empty(), "kernels are launched through their argument structs:\n{}", found.join("\n"));
}

#[test]
fn the_launch_rule_reads_calls_not_words() {
    let code =
        "fn args(&self) -> u32 { 1 }\nlet a = self.args();\ndev.launch_with(&k, l, &A { x })?;\ndev.launch (&k, l, &[Arg::U32(1)])?;\n\
                self.launch(r, beside, kernel, Launch { groups: 1 });\nlet l = x.launch_kind;\nq.launch::<T>(&k, l, &a.args());\n";
    let launches = method_calls(code, "launch");
    assert_eq!(launches.iter().map(|c| c.0).collect::<Vec<_>>(), [4, 5, 7], "launch_with and a field are no launch calls");
    let flagged: Vec<usize> = launches.iter().filter(|c| positional(c.1)).map(|c| c.0).collect();
    assert_eq!(flagged, [4, 7], "a private helper named launch, and one named args, pass: only positional arguments are flagged");
    assert!(on_modules("let k = ctx.modules . kernel(dev, &S, &d, name)?;", 1));
    assert!(!on_modules("dev.kernel(&self.modules[&key], name)", 1), "the cache's own look-up is no name-only take");
}
