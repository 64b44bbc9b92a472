//! Getting a thread's heap ready for work that is about to come. The first write to each new
//! page of memory is a page fault (about 6 µs each on the machines measured), and planning 20
//! Rollouts took about 14 of them per Rollout on the critical path; touching the memory while
//! the API server answers moves those faults into the wait.

/// Touches `bytes` of this thread's heap and hands them back to the allocator, which keeps them
/// for the allocations that follow. glibc only: other allocators were not measured, and
/// nothing is done there.
pub fn warm(bytes: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    glibc::warm(bytes);
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = bytes;
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod glibc {
    use std::sync::Once;

    /// Below glibc's mmap threshold (128 KiB), so the thread's heap serves each block.
    const BLOCK: usize = 64 << 10;

    pub fn warm(bytes: usize) {
        keep_freed_memory();
        // Written to, not zeroed: fresh memory from calloc may never be touched.
        let blocks: Vec<Vec<u8>> = (0..bytes.div_ceil(BLOCK)).map(|_| std::hint::black_box(vec![1u8; BLOCK])).collect();
        // Freed in order, the blocks merge into the top of the heap.
        drop(std::hint::black_box(blocks));
    }

    /// glibc gives the free memory at the top of a heap back to the kernel once more than
    /// 128 KiB are free there, which would undo the warming; set once for the process, which
    /// then keeps what it freed (`plan` is short-lived). Setting it also fixes glibc's mmap
    /// threshold at 128 KiB (it no longer grows with freed blocks): a larger block is mapped
    /// afresh each time, as before the first such block is freed.
    fn keep_freed_memory() {
        static KEEP: Once = Once::new();
        // SAFETY: mallopt only sets an allocator parameter; it is thread-safe.
        KEEP.call_once(|| unsafe {
            libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
        });
    }

    #[cfg(test)]
    mod tests {
        /// Page faults of the calling thread so far.
        fn faults() -> i64 {
            // SAFETY: getrusage writes one rusage struct, zeroed here first.
            unsafe {
                let mut usage: libc::rusage = std::mem::zeroed();
                libc::getrusage(libc::RUSAGE_THREAD, &mut usage);
                usage.ru_minflt
            }
        }

        #[test]
        fn allocations_after_warming_reuse_touched_memory() {
            // On a thread of its own (its own heap); 8 MiB is more than any other test frees.
            let faulted = std::thread::spawn(|| {
                super::warm(8 << 20);
                let before = faults();
                let blocks: Vec<Vec<u8>> = (0..192).map(|_| std::hint::black_box(vec![1u8; 32 << 10])).collect();
                let faulted = faults() - before;
                drop(blocks);
                faulted
            })
            .join()
            .unwrap();
            // 6 MiB written: 1536 pages, each a fault on memory never touched before.
            assert!(faulted < 100, "{faulted} page faults");
        }
    }
}
