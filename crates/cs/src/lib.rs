//! NVMe computational storage, the standard way: the Computational Programs (CSI 4) and
//! Subsystem Local Memory (CSI 3) command sets as a layer over the NVMe front end and the
//! modelled drive.

pub mod ebpf;
