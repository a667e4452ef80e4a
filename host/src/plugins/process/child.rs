//! The child side: `toolhost plugin-host`, which loads one plugin library with the
//! host's own loader and checks and serves its tools, checks and hooks over the framed
//! protocol ([`super::protocol`]).
//!
//! Before the library is loaded the channel is moved off the standard descriptors: the
//! protocol keeps private duplicates of stdin and stdout, stdin becomes `/dev/null` and
//! stdout becomes stderr, so whatever the plugin prints can never corrupt a frame. The
//! address-space limit (`RLIMIT_AS`) is set first too, and the child asks the kernel to
//! kill it when the host dies. Requests are served one at a time, in order; a plugin
//! that crashes takes only this process with it. With `TOOLHOST_PLUGIN_CPU` set, the
//! loop waits for and answers requests on that CPU, where the host's calling thread
//! holds itself for the request, and runs them with its full mask (`colocate` in
//! tools-core says why).

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::os::fd::AsFd;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use abi_stable::std_types::RResult;
use toolhost_plugin_api::abi::{FfiError, PluginObjectBox};
use tools_core::code_exec::colocate::Colocation;

use super::launch::CPU_ENV;
use super::protocol::{
    Answer, FrameError, Op, Request, Response, WireError, read_frame, write_frame,
};
use crate::plugins::loader;

/// Why the plugin host could not serve.
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    /// Moving the channel off the standard descriptors failed.
    #[error("cannot set up the channel: {0}")]
    Setup(#[from] std::io::Error),
    /// The channel broke.
    #[error(transparent)]
    Frame(#[from] FrameError),
}

/// The channel, once moved off fds 0 and 1.
struct Channel {
    input: BufReader<File>,
    output: BufWriter<File>,
}

/// Duplicate stdin/stdout for the protocol; point fd 0 at `/dev/null` and fd 1 at
/// stderr.
fn take_channel() -> Result<Channel, std::io::Error> {
    let input = rustix::io::dup(std::io::stdin().as_fd())?;
    let output = rustix::io::dup(std::io::stdout().as_fd())?;
    let null = File::open("/dev/null")?;
    rustix::stdio::dup2_stdin(&null)?;
    rustix::stdio::dup2_stdout(std::io::stderr().as_fd())?;
    Ok(Channel {
        input: BufReader::new(File::from(input)),
        output: BufWriter::new(File::from(output)),
    })
}

/// Cap the address space at `bytes` (0 = no cap).
fn limit_memory(bytes: u64) -> Result<(), std::io::Error> {
    if bytes == 0 {
        return Ok(());
    }
    let limit = rustix::process::Rlimit {
        current: Some(bytes),
        maximum: Some(bytes),
    };
    rustix::process::setrlimit(rustix::process::Resource::As, limit)?;
    Ok(())
}

fn wire_error(err: FfiError) -> WireError {
    WireError {
        kind: err.kind.into_string(),
        message: err.message.into_string(),
        detail: None,
    }
}

fn run(object: &PluginObjectBox, op: Op) -> Answer {
    let result = match op {
        Op::Call {
            index,
            args,
            context,
        } => {
            let cancel = AtomicBool::new(false);
            object.call_tool(
                index,
                args.as_str().into(),
                context.as_str().into(),
                &cancel,
            )
        }
        Op::Check { index } => match object.check_tool(index) {
            RResult::ROk(()) => RResult::ROk(Default::default()),
            RResult::RErr(err) => RResult::RErr(err),
        },
        Op::Hook { kind, event } => object.run_hook(kind.as_str().into(), event.as_str().into()),
    };
    match result {
        RResult::ROk(text) => Answer::Ok(text.into_string()),
        RResult::RErr(err) => Answer::Err(wire_error(err)),
    }
}

/// Serve plugin `name` from `library` until the host closes the channel.
pub fn serve(
    library: &Path,
    name: &str,
    host_info: &str,
    memory_bytes: u64,
) -> Result<(), ChildError> {
    let mut channel = take_channel()?;
    // Best effort: without it the child still exits when the channel closes.
    let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
    limit_memory(memory_bytes)?;
    let loaded = match loader::load(library, name, host_info) {
        Ok(loaded) => loaded,
        Err(err) => {
            let answer = Answer::Err(WireError {
                kind: "load".into(),
                message: err.to_string(),
                detail: Some(err.detail()),
            });
            write_frame(
                &mut channel.output,
                &Response {
                    id: 0,
                    result: answer,
                },
            )?;
            return Ok(());
        }
    };
    let declaration = serde_json::to_string(&loaded.declaration).map_err(FrameError::Json)?;
    write_frame(
        &mut channel.output,
        &Response {
            id: 0,
            result: Answer::Ok(declaration),
        },
    )?;
    // Requests are waited for and answered on the host's CPU, and run with the
    // thread's full mask (what a handler starts must not inherit one CPU).
    let colocation = std::env::var(CPU_ENV)
        .ok()
        .and_then(|cpu| cpu.parse().ok())
        .and_then(Colocation::on);
    let colocation = colocation.as_ref();
    colocation.inspect(|c| c.pin());
    loop {
        let request: Request = match read_frame(&mut channel.input) {
            Ok(request) => request,
            Err(FrameError::Closed) => return Ok(()),
            Err(err) => return Err(err.into()),
        };
        colocation.inspect(|c| c.unpin());
        let result = run(&loaded.object, request.op);
        colocation.inspect(|c| c.pin());
        write_frame(
            &mut channel.output,
            &Response {
                id: request.id,
                result,
            },
        )?;
    }
}
