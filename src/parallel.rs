//! Planning many Rollouts at once: each Rollout's Lua evaluations are independent, so they run
//! on every core, in one pool of threads that lives as long as the process, so that work can
//! be made ready on those threads while the API server answers (see `on_each_thread`).

use rayon::prelude::*;
use std::sync::Once;

/// Runs `work` on every item, spread over the available cores, keeping the items' order.
pub fn map<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    start();
    items.par_iter().map(work).collect()
}

/// Starts `work` on each thread `map` uses, without waiting for it: to get those threads ready
/// while the API server answers. `work` is told how many threads there are.
pub fn on_each_thread(work: impl Fn(usize) + Send + Sync + 'static) {
    start();
    rayon::spawn_broadcast(move |context| work(context.num_threads()));
}

/// Builds the pool: a thread per core this process may use, each kept on its own core. Left
/// to itself, the scheduler wakes a second worker on the core of the one that woke it and
/// takes milliseconds to move it, so the first milliseconds of a plan ran on one core.
fn start() {
    static POOL: Once = Once::new();
    POOL.call_once(|| {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let cores = affinity::allowed_cores();
        // Only when the pool has every core this process may use: a pool sized by a CPU quota
        // below that leaves the choice of cores to the scheduler.
        let pinned = cores.len() == threads;
        // Fails only when a pool exists already; then that one serves.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .start_handler(move |index| {
                if pinned {
                    affinity::pin_to(cores[index]);
                }
            })
            .build_global();
    });
}

/// Lets a program started from a pool thread run on every core the process may use, not only
/// on that thread's.
pub fn unpinned(command: &mut std::process::Command) -> &mut std::process::Command {
    affinity::free_child(command);
    command
}

#[cfg(target_os = "linux")]
mod affinity {
    use std::mem::{size_of, zeroed};
    use std::os::unix::process::CommandExt;
    use std::sync::OnceLock;

    /// The process's cores, as the pool found them before pinning its threads.
    static ALLOWED: OnceLock<libc::cpu_set_t> = OnceLock::new();

    /// The cores this process may run on.
    pub fn allowed_cores() -> Vec<usize> {
        // SAFETY: a zeroed cpu_set_t is an empty set, and sched_getaffinity writes at most
        // size_of::<cpu_set_t>() bytes into it.
        unsafe {
            let mut allowed: libc::cpu_set_t = zeroed();
            if libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut allowed) != 0 {
                return Vec::new();
            }
            let _ = ALLOWED.set(allowed);
            (0..libc::CPU_SETSIZE as usize).filter(|&core| libc::CPU_ISSET(core, &allowed)).collect()
        }
    }

    /// Gives the child the process's cores back between fork and exec.
    pub fn free_child(command: &mut std::process::Command) {
        let Some(&allowed) = ALLOWED.get() else { return };
        // SAFETY: the hook makes one system call (async-signal-safe) on a set copied beforehand;
        // it allocates nothing. A failure leaves the child on the thread's core.
        unsafe {
            command.pre_exec(move || {
                libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &allowed);
                Ok(())
            });
        }
    }

    /// Keeps the calling thread on `core` (best effort: a failure leaves it free to move).
    pub fn pin_to(core: usize) {
        // SAFETY: as above; sched_setaffinity only reads the set.
        unsafe {
            let mut one: libc::cpu_set_t = zeroed();
            libc::CPU_SET(core, &mut one);
            libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &one);
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod affinity {
    /// Unknown here: the pool is not pinned.
    pub fn allowed_cores() -> Vec<usize> {
        Vec::new()
    }

    pub fn pin_to(_core: usize) {}

    pub fn free_child(_command: &mut std::process::Command) {}
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_the_order() {
        let items: Vec<u32> = (0..100).collect();
        assert_eq!(super::map(&items, |i| i * 2), items.iter().map(|i| i * 2).collect::<Vec<_>>());
        assert_eq!(super::map(&[] as &[u32], |i| *i), Vec::<u32>::new());
    }

    #[test]
    fn work_reaches_every_thread_of_the_pool() {
        let (sender, receiver) = std::sync::mpsc::channel();
        let sender = std::sync::Mutex::new(sender);
        super::on_each_thread(move |threads| {
            let _ = sender.lock().unwrap().send((rayon::current_thread_index(), threads));
        });
        let threads = rayon::current_num_threads();
        let mut seen: Vec<_> = (0..threads).map(|_| receiver.recv().unwrap()).collect();
        seen.sort();
        assert_eq!(seen, (0..threads).map(|i| (Some(i), threads)).collect::<Vec<_>>());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn each_thread_keeps_to_its_own_core_when_the_pool_has_them_all() {
        let cores = super::affinity::allowed_cores();
        super::start();
        let mut kept: Vec<Vec<usize>> = rayon::broadcast(|_| super::affinity::allowed_cores());
        if cores.len() != rayon::current_num_threads() {
            return; // a CPU quota below the cores: the scheduler places the threads
        }
        kept.sort();
        assert_eq!(kept, cores.iter().map(|&core| vec![core]).collect::<Vec<_>>());
        // A program started from a pinned thread gets every core back.
        let allowed = |command: &mut std::process::Command| {
            let out = command.args(["-c", "grep Cpus_allowed_list /proc/self/status"]).output().unwrap();
            String::from_utf8(out.stdout).unwrap()
        };
        let here = allowed(&mut std::process::Command::new("sh"));
        let from_pool: Vec<String> =
            rayon::broadcast(|_| allowed(super::unpinned(&mut std::process::Command::new("sh"))));
        assert!(from_pool.iter().all(|listed| *listed == here), "{here} vs {from_pool:?}");
    }
}
