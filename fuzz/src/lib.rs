//! Shared parts of the fuzz targets (`fuzz_targets/*.rs`, docs/fuzzing.md): the limits
//! every executor run gets, the oracles that turn a wrong but non-panicking result into a
//! crash libFuzzer reports (internal errors, unbounded diagnostics, executor
//! disagreement), and the decoding of fuzz input into options.

use ptx2sass::diag::{Diag, SourceFile};
use ptx2sass::driver;

/// Step limit of every executor run (`run --max-steps`): a few thousand warps' worth, so
/// that one input runs in milliseconds and an endless loop ends with `StepLimit`.
pub const MAX_STEPS: u64 = 200_000;

/// Memory limit of every executor run (`run --max-memory`), bytes.
pub const MAX_MEMORY: u64 = 64 << 20;

/// Rendered diagnostics are bounded whatever the input: at most
/// [`ptx2sass::diag::MAX_RENDERED`] of them, each quoting a window of its lines. This is
/// generous for 50 diagnostics; more means the caps do not hold (issue 20: 151 MB of
/// diagnostics for a 10 KB line).
pub const MAX_RENDERED_BYTES: usize = 1 << 20;

/// The input as PTX or listing text: `None` unless it is UTF-8 (the compiler rejects
/// other bytes with a diagnostic at the first bad byte, checked here too).
pub fn text(data: &[u8]) -> Option<&str> {
    match driver::decode(data) {
        Ok(s) => Some(s),
        Err(d) => {
            let lossy = String::from_utf8_lossy(data);
            bounded(&lossy, std::slice::from_ref(&d));
            None
        }
    }
}

/// Renders `diags` against `src` as the command line does, and fails if the text is
/// larger than [`MAX_RENDERED_BYTES`].
pub fn bounded(src: &str, diags: &[Diag]) {
    let out = SourceFile::new("fuzz.ptx", src).render_all(diags);
    assert!(
        out.len() <= MAX_RENDERED_BYTES,
        "{} bytes of diagnostics for {} diagnostics on {} bytes of input",
        out.len(),
        diags.len(),
        src.len()
    );
}

/// True for a diagnostic that reports a compiler bug rather than bad input (verifier,
/// hazard checker, encoder, allocation failures): the driver words them "internal error".
pub fn is_internal(d: &Diag) -> bool {
    d.message.contains("internal error")
}

/// Fails on any internal error among `diags`, quoting them; `allowed` exempts the
/// documented limitations (README "Current limits").
pub fn no_internal_errors(src: &str, diags: &[Diag], allowed: impl Fn(&Diag) -> bool) {
    let bad: Vec<Diag> = diags.iter().filter(|d| is_internal(d) && !allowed(d)).cloned().collect();
    if !bad.is_empty() {
        panic!("internal error on valid input:\n{}", SourceFile::new("fuzz.ptx", src).render_all(&bad));
    }
}

/// The README's documented limitation: register budgets of 24 or fewer can fail for code
/// with many live 64/128-bit vectors, as an internal error naming register allocation.
pub fn tight_budget_failure(max_regs: u32, d: &Diag) -> bool {
    max_regs <= 24 && d.message.contains("register allocation")
}

/// The random-program generator of the differential tests (`tests/common/gen.rs` and its
/// instruction vocabulary `tests/common/inst.rs`), compiled into the fuzz crate from the
/// same files, so both use one generator. `generated` seeds its proptest strategy with
/// the fuzz input ([`program_from_bytes`]).
#[path = "../../tests/common/gen.rs"]
pub mod generator;
#[path = "../../tests/common/inst.rs"]
pub mod inst;

/// The generator's program drawn with a random source seeded by the bytes of `data`
/// (a 64-bit FNV-1a hash of them, expanded to a ChaCha seed): every input decodes to a
/// well-defined program, equal inputs to equal programs, and libFuzzer keeps the inputs
/// whose programs reach new code. `carry` selects the strategy with carry chains.
///
/// The bytes are not fed to the generator as its choices (proptest's `PassThrough`
/// source): proptest gives every union alternative it does not pick a lazily generated
/// tree with half of the remaining stream, so after some twenty nested choices the stream
/// is empty, the source gives zeros, and `rand`'s uniform sampling rejects zero words
/// forever (the `generated` target's first timeouts, on a 6-byte input with 64 KiB and
/// with 1 MiB of padding alike).
pub fn program_from_bytes(data: &[u8], carry: bool) -> Option<generator::Program> {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let hash = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    let mut rng = ptx2sass::exec::Rng::new(hash);
    let seed: Vec<u8> = (0..4).flat_map(|_| rng.next_u64().to_le_bytes()).collect();
    let config = Config { failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed));
    if carry {
        generator::carry_program().new_tree(&mut runner).ok().map(|t| t.current())
    } else {
        generator::program().new_tree(&mut runner).ok().map(|t| t.current())
    }
}
