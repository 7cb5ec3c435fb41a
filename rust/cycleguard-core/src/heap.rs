//! The bytes the core holds on its own heap, for the benchmarks: `tracemalloc` sees the
//! Python objects (a session's struct lives in its Python object), not what Rust allocates
//! beside them (the call ring, the tables). The allocator is the system one; while counting
//! is on (`_core.heap_counting(True)`) it adds the size of every allocation and subtracts the
//! size of every release, so `heap_bytes()` taken before and after says how much the heap
//! grew in between (what was allocated before and freed in between counts as a release, as
//! it should for a net figure). Off, the cost is one predictable branch per allocation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};

static COUNTING: AtomicBool = AtomicBool::new(false);
static NET: AtomicIsize = AtomicIsize::new(0);

/// The system allocator, counting while asked to.
pub struct Counting;

#[inline(always)]
fn note(delta: isize) {
    if COUNTING.load(Ordering::Relaxed) {
        NET.fetch_add(delta, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards its arguments unchanged to `System`, which upholds the
// `GlobalAlloc` contract; the counting beside it touches only two atomics (no allocation, no
// reentrancy), so the layouts and pointers the caller gets are exactly the system's.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's guarantees for `layout` are passed on as they are.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(-(layout.size() as isize));
        // SAFETY: `ptr` was allocated by `System` (through this allocator) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` and `layout` are the caller's, from this allocator (so `System`'s).
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            note(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// Turns counting on or off.
pub fn set_counting(on: bool) {
    COUNTING.store(on, Ordering::Relaxed);
}

/// The net bytes allocated while counting was on.
pub fn net_bytes() -> isize {
    NET.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_what_is_held_while_on() {
        set_counting(true);
        let before = net_bytes();
        // (black_box: an allocation nothing reads may be left out by the optimiser)
        let held: Vec<u8> = std::hint::black_box(Vec::with_capacity(1 << 20));
        let grown = net_bytes() - before;
        drop(held);
        let after = net_bytes() - before;
        set_counting(false);
        // other tests may allocate or free meanwhile (far less than this): bounds only
        assert!(grown >= 1 << 19, "{grown}");
        assert!(after <= grown - (1 << 19), "{after} {grown}");
    }
}
