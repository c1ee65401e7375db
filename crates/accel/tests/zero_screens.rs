//! A kernel whose description holds a microblock with zero screens is rejected when its plan
//! is built, with an error naming the kernel and microblock (the kernels crate already refuses
//! to build one; this guards descriptions from elsewhere).

use nearflash_accel::plan::KernelPlan;
use nearflash_accel::{AccelConfig, AccelError};
use nearflash_kernels::desc::DescBuilder;
use nearflash_kernels::{Cost, Dataset, Extent, Kernel, KernelDesc, State};

struct Empty(KernelDesc);

impl Kernel for Empty {
    fn desc(&self) -> &KernelDesc {
        &self.0
    }
    fn init(&self) -> State {
        State::new()
    }
    fn compute_screen(&self, _: usize, _: u32, _: &mut State) {}
    fn compute_serial(&self, _: usize, _: &mut State) {}
    fn screen_cost(&self, _: usize, _: u32) -> Cost {
        Cost::default()
    }
    fn screen_io(&self, _: usize, _: u32) -> Vec<Extent> {
        Vec::new()
    }
    fn reference(&self, _: &State) -> State {
        State::new()
    }
}

#[test]
fn a_zero_screen_microblock_is_an_error() {
    let mut b = DescBuilder::new(&[("p", false)]);
    b.push(0, 0, 0);
    let k = Empty(b.finish("empty", Dataset::Mini, String::new(), vec![], vec![]));
    let e = KernelPlan::new(&k, &AccelConfig::default(), 65536).unwrap_err();
    assert_eq!(
        e,
        AccelError::ZeroScreens {
            kernel: "empty".into(),
            microblock: 0
        }
    );
    assert!(e.to_string().contains("zero screens"));
}
