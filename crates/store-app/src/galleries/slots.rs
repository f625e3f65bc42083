//! The media jobs' semaphore: image work (decode, resize, encode) runs
//! on the blocking pool, a few at a time, and who waits is counted.

use std::sync::{Condvar, Mutex};

/// Image jobs (decode, resize, encode) running at once. Each may hold a
/// 50 MP image (200 MB of pixels) at its peak; two keep the worst case
/// well inside a small machine.
pub const MEDIA_JOBS_MAX: usize = 2;

/// A counting semaphore for the blocking pool, which also counts who
/// waits (the media jobs an operator sees queued).
#[derive(Debug)]
pub struct Slots {
    state: Mutex<SlotState>,
    freed: Condvar,
}

#[derive(Debug)]
struct SlotState {
    free: usize,
    size: usize,
    waiting: usize,
}

impl Slots {
    pub fn new(n: usize) -> Self {
        let size = n.max(1);
        Self {
            state: Mutex::new(SlotState {
                free: size,
                size,
                waiting: 0,
            }),
            freed: Condvar::new(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Jobs running and jobs waiting, now.
    pub fn load(&self) -> (u64, u64) {
        let st = self.state();
        ((st.size - st.free) as u64, st.waiting as u64)
    }

    pub(super) fn run<T>(&self, f: impl FnOnce() -> T) -> T {
        {
            let mut st = self.state();
            st.waiting += 1;
            while st.free == 0 {
                st = self.freed.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            st.waiting -= 1;
            st.free -= 1;
        }
        // Give the slot back even if the job panics.
        struct Release<'a>(&'a Slots);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                self.0.state().free += 1;
                self.0.freed.notify_one();
            }
        }
        let _release = Release(self);
        f()
    }
}

#[cfg(test)]
mod tests {
    use super::Slots;
    use std::sync::mpsc;
    use std::sync::Arc;

    /// Waits (a bounded while) until `slots` shows `load`.
    fn wait_for(slots: &Slots, load: (u64, u64)) {
        for _ in 0..500 {
            if slots.load() == load {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        assert_eq!(slots.load(), load);
    }

    #[test]
    fn slots_count_running_and_waiting_jobs() {
        let slots = Arc::new(Slots::new(1));
        assert_eq!(slots.load(), (0, 0));
        let (release, held) = mpsc::channel::<()>();
        let first = {
            let slots = Arc::clone(&slots);
            std::thread::spawn(move || slots.run(|| held.recv().unwrap()))
        };
        wait_for(&slots, (1, 0));
        let second = {
            let slots = Arc::clone(&slots);
            std::thread::spawn(move || slots.run(|| ()))
        };
        wait_for(&slots, (1, 1));
        release.send(()).unwrap();
        first.join().unwrap();
        second.join().unwrap();
        assert_eq!(slots.load(), (0, 0));
    }
}
