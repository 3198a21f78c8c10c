//! Compiles the pattern library into the binary: every `patterns/*.toml` becomes an
//! `(file name, contents)` entry of `BUILTIN_PATTERNS`.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    patterns();
    messages();
}

/// Every `patterns/*.toml`, as `BUILTIN_PATTERNS`.
fn patterns() {
    let dir = Path::new("patterns");
    println!("cargo:rerun-if-changed=patterns");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".toml"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut code = String::from("pub static BUILTIN_PATTERNS: &[(&str, &str)] = &[\n");
    for n in &names {
        println!("cargo:rerun-if-changed=patterns/{n}");
        let _ = writeln!(
            code,
            "    ({n:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/patterns/{n}\"))),"
        );
    }
    code.push_str("];\n");
    let out = std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into());
    let _ = std::fs::write(Path::new(&out).join("patterns.rs"), code);
}

/// The message catalogue (`patterns/messages/`): its extracted `*.jsonl` files as
/// `EXTRACTED` and its hand-written `classified/*.toml` as `CLASSIFIED`.
fn messages() {
    let mut code = String::new();
    for (name, dir, ext) in [
        ("EXTRACTED", "patterns/messages", ".jsonl"),
        ("CLASSIFIED", "patterns/messages/classified", ".toml"),
    ] {
        println!("cargo:rerun-if-changed={dir}");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(ext))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        let _ = writeln!(code, "pub static {name}: &[(&str, &str)] = &[");
        for f in &files {
            println!("cargo:rerun-if-changed={dir}/{f}");
            let _ = writeln!(
                code,
                "    ({f:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/{dir}/{f}\"))),"
            );
        }
        code.push_str("];\n");
    }
    let out = std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into());
    let _ = std::fs::write(Path::new(&out).join("messages.rs"), code);
}
