//! Reproducers of what the fuzz targets (`fuzz/`, docs/fuzzing.md) found, one test each,
//! minimised by hand from the crashing input; each fails (panics) without its fix.

use ptx2sass::sass::text;
use ptx2sass::sched::check;

/// `fuzz/ check`: a listing whose last instruction falls through (a truncated listing)
/// made the hazard checker index past its last instruction (`block_end`).
#[test]
fn check_listing_ending_without_branch() {
    for listing in [
        "Function : f\n/*0008*/ MOV R0, R1 ?WAIT1 ;\n",
        "Function : f\n/*0008*/ S2R R0, SR_TID.X &wr0 ?WAIT1 ;\n/*0010*/ IADD R1, R0, R0 &req={0} ?WAIT6 ;\n",
        // Two functions, the first falling into the second's address range.
        "Function : f\n/*0008*/ MOV R0, R1 ?WAIT1 ;\nFunction : g\n/*0008*/ MOV R0, R1 ?WAIT1 ;\n",
    ] {
        let funcs = text::parse(listing).expect("the listing parses");
        // No panic; what it reports does not matter here.
        let _ = check::check(&funcs);
    }
}
