//! Generates the PTX parser from `grammar/ptx.lalrpop` into `$OUT_DIR/ptx.rs`
//! (included by `src/ptx/parser.rs`).
fn main() {
    lalrpop::Configuration::new()
        .emit_rerun_directives(true)
        .process_dir("grammar")
        .expect("lalrpop failed on grammar/ptx.lalrpop");
}
