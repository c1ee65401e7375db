//! The crate's one error type: every failure a caller can cause or observe is a typed value
//! with a message that names the kernel, array, microblock or value involved.

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Error)]
pub enum KernelError {
    #[error("unknown kernel `{name}`; known kernels: {known}")]
    UnknownKernel { name: String, known: String },

    #[error(
        "unknown dataset `{name}`; expected one of: mini, small, medium, large, extralarge, paper"
    )]
    UnknownDataset { name: String },

    #[error("kernel {kernel}: microblock `{phase}` would have zero screens ({reason})")]
    ZeroScreens {
        kernel: String,
        phase: String,
        reason: String,
    },

    #[error("kernel {kernel}: microblock {microblock} does not exist (the kernel has {count})")]
    NoSuchMicroblock {
        kernel: String,
        microblock: usize,
        count: usize,
    },

    #[error("kernel {kernel}: microblock {microblock} has {screens} screens; screen {screen} does not exist")]
    NoSuchScreen {
        kernel: String,
        microblock: usize,
        screen: u32,
        screens: u32,
    },

    #[error("kernel {kernel}: microblock {microblock} is serial; call run_serial, not run_screen")]
    NotScreened { kernel: String, microblock: usize },

    #[error(
        "kernel {kernel}: microblock {microblock} has screens; call run_screen, not run_serial"
    )]
    NotSerial { kernel: String, microblock: usize },

    #[error("kernel {kernel}: live-out array `{array}` is missing from the {side} state")]
    MissingArray {
        kernel: String,
        array: String,
        side: &'static str,
    },

    #[error("kernel {kernel}: array `{array}` has {got} elements, the reference has {expected}")]
    ShapeMismatch {
        kernel: String,
        array: String,
        got: usize,
        expected: usize,
    },

    #[error(
        "kernel {kernel}: {array}[{index}] = {got}, expected {expected} (allowed error {allowed})"
    )]
    Mismatch {
        kernel: String,
        array: String,
        index: usize,
        got: f64,
        expected: f64,
        allowed: f64,
    },

    #[error("{path}: {message}")]
    Io { path: String, message: String },
}
