//! Heap allocations per call on the in-process echo path (parse the request, write the echo into a reused
//! buffer: the server's work for a call without HTTP), counted by a counting global allocator on the test's own
//! thread after warm-up. Issue 29 asks for 0 per echoComplexTypeDoc call: the typed values borrow from the request
//! body and the thread's scratch arena, so every CXF operation now makes none.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use bench_proto::cxf;

/// The system allocator, counting the allocations (and reallocations) made on each thread.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: a thread's allocations after its thread-locals are torn down are not ours to count.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every call is passed to `System` unchanged; counting touches only a const-initialised thread-local
// `Cell`, which neither allocates nor has a destructor. (A global allocator cannot be written without
// `unsafe`: this test binary's only use of it.)
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations on this thread per call of `work`, over 100 calls after 10 of warm-up.
fn per_call(mut work: impl FnMut()) -> f64 {
    for _ in 0..10 {
        work();
    }
    let before = ALLOCATIONS.with(Cell::get);
    for _ in 0..100 {
        work();
    }
    (ALLOCATIONS.with(Cell::get) - before) as f64 / 100.0
}

/// The server's work for one CXF call of `req`, as bench-server's handler does it (`http::cxf_echo`: parse into
/// the thread's scratch arena, echo, write into `out`).
fn echo(req: &cxf::Request<'_>) -> impl FnMut() {
    let mut body = Vec::new();
    cxf::write_request(req, &mut body);
    let limits = bench_proto::soap::Limits::default();
    let mut out = Vec::with_capacity(8192);
    move || {
        out.clear();
        let op = bench_server::http::cxf_echo(&body, &limits, &mut out);
        assert!(op.is_some(), "{}", String::from_utf8_lossy(&out));
        std::hint::black_box(&out);
    }
}

/// The counter sees what it should: one `Vec` is one allocation, growing it is another.
#[test]
fn the_counter_counts_this_threads_allocations() {
    let n = per_call(|| {
        let mut v: Vec<u64> = Vec::with_capacity(1);
        v.extend([1, 2]);
        std::hint::black_box(&v);
    });
    assert_eq!(n, 2.0);
    assert_eq!(per_call(|| std::hint::black_box(())), 0.0);
}

/// No allocation per call on any CXF operation (issue 29 goal 1). Before the values borrowed, the echo made 8
/// (echoComplexTypeDoc: the item vector, two strings, a QName's two, the attribute, base64 and hex bytes) and 1
/// for each of the others; the owning parse, which copies them out of the arena, still does, which this checks
/// too, so that the count is seen to catch them.
#[test]
fn echo_makes_no_allocation_per_call() {
    for (name, req) in [
        (
            "echoComplexTypeDoc, 1 item",
            cxf::echo_complex_request(1, 7),
        ),
        ("echoBase64Doc", cxf::echo_base64_request()),
        ("echoStringDoc", cxf::echo_string_request(1)),
    ] {
        let n = per_call(echo(&req));
        eprintln!("{name}: {n} allocations per call");
        assert_eq!(n, 0.0, "{name}: {n} allocations per call");
    }
    let mut body = Vec::new();
    cxf::write_request(&cxf::echo_complex_request(1, 7), &mut body);
    let owning = per_call(|| {
        std::hint::black_box(cxf::parse_request(&body).expect("a valid request"));
    });
    assert!(owning >= 8.0, "the owning parse made {owning} allocations");
}
