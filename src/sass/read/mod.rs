//! Reading SASS listings back: as text for the hazard checker ([`text`], ptx2sass's own
//! output and `sass-ctrl.py`'s nvdisasm output) and as a whole [`crate::sass::program::Program`]
//! the simulator can run ([`listing`], `ptx2sass run --sass`).

pub mod listing;
pub mod text;
