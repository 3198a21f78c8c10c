//! Compiles the pattern library into the binary: every `patterns/*.toml` becomes an
//! `(file name, contents)` entry of `BUILTIN_PATTERNS`.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
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
