//! The binary's allocator: the system allocator, with transparent huge pages asked for on
//! large blocks.
//!
//! The simulated devices keep per-page tables sized by the device (the FTL's mapping, Active
//! Flash's page versions and locations) that a run touches at random. With 4 KiB pages each
//! first touch of a table page is a page fault and each run's end unmaps them all: `perf`
//! put 38 % of `reproduce active-flash`'s CPU time in the kernel (faults under
//! `Mapping::map` and the foreground's writes, `munmap`). Where the kernel's THP mode is
//! `madvise` (the default of many distributions) a block of at least [`HUGE_BYTES`] is
//! advised `MADV_HUGEPAGE`, so such a table faults in 2 MiB at a time. Memory placement
//! only: nothing simulated reads an address, so every output is unchanged.

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks at least this large are advised (a few 2 MiB huge pages at least: smaller blocks
/// would gain little and could share a huge page with unrelated data).
const HUGE_BYTES: usize = 8 << 20;

pub struct HugePages;

#[cfg(target_os = "linux")]
fn advise(ptr: *mut u8, size: usize) {
    if ptr.is_null() || size < HUGE_BYTES {
        return;
    }
    const PAGE: usize = 4096;
    let start = (ptr as usize).next_multiple_of(PAGE);
    let end = (ptr as usize + size) / PAGE * PAGE;
    if end > start {
        // SAFETY: `[start, end)` lies inside the block just allocated (page-aligned inward),
        // which this process owns; MADV_HUGEPAGE only changes how the kernel backs it and
        // never its contents. A failure (THP not built in) leaves 4 KiB pages: ignored.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_ptr: *mut u8, _size: usize) {}

// SAFETY: every call is passed to `System` unchanged; `advise` only adds a hint on the block
// `System` returned.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        advise(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        advise(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if new_size > layout.size() {
            advise(p, new_size);
        }
        p
    }
}
