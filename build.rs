//! Compiles the pattern library and the message catalogue into the binary: every
//! `patterns/*.toml` and `patterns/known/*.toml` (the known issues) becomes a `(path under
//! patterns/, contents)` entry of `BUILTIN_PATTERNS`; the catalogue's extracted
//! `patterns/messages/*.jsonl` and judged `patterns/messages/classified/*.toml` become
//! `EXTRACTED` and `CLASSIFIED`.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let mut patterns: Vec<String> = ["", "known/"]
        .iter()
        .flat_map(|sub| {
            files(&format!("patterns/{sub}"), ".toml")
                .into_iter()
                .map(move |n| format!("{sub}{n}"))
        })
        .collect();
    patterns.sort();
    let mut code = String::new();
    table(&mut code, "BUILTIN_PATTERNS", "patterns", &patterns);
    write("patterns.rs", &code);

    let mut code = String::new();
    for (name, dir, ext) in [
        ("EXTRACTED", "patterns/messages", ".jsonl"),
        ("CLASSIFIED", "patterns/messages/classified", ".toml"),
    ] {
        table(&mut code, name, dir, &files(dir, ext));
    }
    write("messages.rs", &code);
}

/// The sorted names of the files of `dir` whose names end in `ext`; cargo reruns the script
/// when the folder changes.
fn files(dir: &str, ext: &str) -> Vec<String> {
    println!("cargo:rerun-if-changed={dir}");
    let mut names: Vec<String> = std::fs::read_dir(Path::new(dir))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(ext))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// `pub static NAME: &[(&str, &str)]` of each file's name (under `dir`) and contents.
fn table(code: &mut String, name: &str, dir: &str, names: &[String]) {
    let _ = writeln!(code, "pub static {name}: &[(&str, &str)] = &[");
    for n in names {
        println!("cargo:rerun-if-changed={dir}/{n}");
        let _ = writeln!(
            code,
            "    ({n:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/{dir}/{n}\"))),"
        );
    }
    code.push_str("];\n");
}

fn write(file: &str, code: &str) {
    let out = std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into());
    let _ = std::fs::write(Path::new(&out).join(file), code);
}
