//! Compiles the pattern library into the binary: every `patterns/*.toml` and
//! `patterns/known/*.toml` (the known issues) becomes a `(path under patterns/, contents)`
//! entry of `BUILTIN_PATTERNS`.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let mut names: Vec<String> = ["", "known/"]
        .iter()
        .flat_map(|sub| {
            println!("cargo:rerun-if-changed=patterns/{sub}");
            tomls(&Path::new("patterns").join(sub))
                .into_iter()
                .map(move |n| format!("{sub}{n}"))
        })
        .collect();
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

/// The names of the `.toml` files of a folder.
fn tomls(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".toml"))
                .collect()
        })
        .unwrap_or_default()
}
