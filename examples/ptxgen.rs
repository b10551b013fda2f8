//! Prints a synthetic benchmark kernel (`benches/common/ptxgen.rs`) to standard output.
//!
//!     cargo run --release --example ptxgen -- SHAPE LINES
//!
//! SHAPE is one of the names `--list` prints; LINES the approximate size in PTX lines.

#[path = "../benches/common/ptxgen.rs"]
mod ptxgen;

use ptxgen::Shape;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--list") {
        for s in Shape::ALL {
            println!("{}", s.name());
        }
        return ExitCode::SUCCESS;
    }
    let (Some(shape), Some(lines)) =
        (args.first().and_then(|s| Shape::from_name(s)), args.get(1).and_then(|n| n.parse::<usize>().ok()))
    else {
        eprintln!("usage: ptxgen SHAPE LINES   (ptxgen --list for the shapes)");
        return ExitCode::from(2);
    };
    print!("{}", ptxgen::generate(shape, lines));
    ExitCode::SUCCESS
}
