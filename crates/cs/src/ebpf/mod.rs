//! eBPF programs: the code out of a `clang -target bpf` object (`elf`), checked by rbpf's
//! verifier and run in the budgeted, bounds-checked machine (`vm`).

pub mod elf;
mod ops;
pub mod vm;
