//! The `raysift` binary: parse the command line, run, map the outcome to an exit code.
//! A closed pipe (`raysift timeline … | head`) ends the program quietly.

use std::process::ExitCode;

use clap::Parser;
use raysift::cli::{run, Cli};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(failure) if failure.broken_pipe => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("raysift: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}
