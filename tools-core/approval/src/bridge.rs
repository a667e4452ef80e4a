//! The async bridge: drive a future to completion from any thread.
//!
//! Works from a plain thread (no runtime: a shared background runtime runs it), from a
//! multi-thread tokio worker (`block_in_place`), and from a current-thread runtime (the
//! future runs on the shared runtime while a scoped helper thread waits), so no caller
//! ever hits tokio's "cannot start a runtime from within a runtime" panic.

use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::{Handle, Runtime, RuntimeFlavor};

/// The shared runtime could not be started.
#[derive(Debug, thiserror::Error)]
#[error("could not start the async runtime: {0}")]
pub struct BridgeError(String);

static SHARED: OnceLock<Result<Runtime, String>> = OnceLock::new();

/// The process-wide background runtime (two workers, started on first use).
pub fn shared_runtime() -> Result<&'static Runtime, BridgeError> {
    SHARED
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("toolhost-bridge")
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| BridgeError(e.clone()))
}

/// Run `fut` to completion on the current thread, whatever runtime context it is in.
pub fn block_on<F>(fut: F) -> Result<F::Output, BridgeError>
where
    F: Future + Send,
    F::Output: Send,
{
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            Ok(tokio::task::block_in_place(|| handle.block_on(fut)))
        }
        Ok(_) => {
            // A current-thread runtime cannot block in place: hand the future to the
            // shared runtime from a helper thread.
            let runtime = shared_runtime()?;
            std::thread::scope(|scope| {
                scope
                    .spawn(|| runtime.block_on(fut))
                    .join()
                    .map_err(|_| BridgeError("bridged future panicked".into()))
            })
        }
        Err(_) => Ok(shared_runtime()?.block_on(fut)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn answer() -> u32 {
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        42
    }

    #[test]
    fn from_plain_thread() {
        assert_eq!(block_on(answer()).unwrap(), 42);
    }

    #[test]
    fn from_multi_thread_runtime() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        let got = rt.block_on(async {
            tokio::spawn(async { block_on(answer()).unwrap() })
                .await
                .unwrap()
        });
        assert_eq!(got, 42);
    }

    #[test]
    fn from_current_thread_runtime() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        assert_eq!(rt.block_on(async { block_on(answer()).unwrap() }), 42);
    }

    #[test]
    fn from_many_threads() {
        let handles: Vec<_> = (0..16)
            .map(|_| std::thread::spawn(|| block_on(answer()).unwrap()))
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), 42);
        }
    }
}
