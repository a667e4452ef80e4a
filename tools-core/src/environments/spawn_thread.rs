//! Starting processes from one long-lived thread. `bwrap --die-with-parent` ends the
//! sandbox when the *thread* that started it exits (the parent-death signal follows
//! the thread, not the process), and tool calls run on pool threads that come and go.
//! A sandbox that must outlive the call starting it (the persistent shell) is started
//! here instead.

use std::sync::mpsc;
use std::sync::{Mutex, OnceLock, PoisonError};

type Job = Box<dyn FnOnce() + Send>;

fn spawner() -> Option<mpsc::Sender<Job>> {
    static SENDER: OnceLock<Option<Mutex<mpsc::Sender<Job>>>> = OnceLock::new();
    SENDER
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("toolhost-spawner".into())
                .spawn(move || {
                    for job in rx {
                        job();
                    }
                })
                .ok()
                .map(|_| Mutex::new(tx))
        })
        .as_ref()
        .map(|tx| tx.lock().unwrap_or_else(PoisonError::into_inner).clone())
}

/// Run `start` on the long-lived spawner thread and return its result.
pub fn on_spawner_thread<T: Send + 'static>(
    start: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> std::io::Result<T> {
    let gone = || std::io::Error::other("the spawner thread is gone");
    let tx = spawner().ok_or_else(gone)?;
    let (reply_tx, reply_rx) = mpsc::channel();
    tx.send(Box::new(move || {
        let _ = reply_tx.send(start());
    }))
    .map_err(|_| gone())?;
    reply_rx.recv().map_err(|_| gone())?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_run_on_one_thread_that_outlives_the_caller() {
        let first = std::thread::spawn(|| on_spawner_thread(|| Ok(std::thread::current().id())))
            .join()
            .unwrap()
            .unwrap();
        let second = on_spawner_thread(|| Ok(std::thread::current().id())).unwrap();
        assert_eq!(first, second);
        assert_ne!(second, std::thread::current().id());
    }
}
