//! The model of HPF programs: symbols, mappings, loops, access ranges,
//! optimal alignment triples and transfer patterns.

pub mod transfer;
