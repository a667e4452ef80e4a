//! The logging and panic bridge: a plugin's `tracing` events and panic messages go to
//! the host's subscriber.
//!
//! A plugin library carries its own copy of `tracing` and of std: without this bridge
//! its events would reach no subscriber and its panic messages would be printed raw to
//! stderr by its own default panic hook. `init` (called by the host before `register`)
//! installs a minimal subscriber and a panic hook that forward to the host's logger.

use std::fmt::Write as _;
use std::sync::OnceLock;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

use crate::abi::{HostLogger, level};

static LOGGER: OnceLock<HostLogger> = OnceLock::new();

fn level_code(lvl: &Level) -> u8 {
    match *lvl {
        Level::ERROR => level::ERROR,
        Level::WARN => level::WARN,
        Level::INFO => level::INFO,
        Level::DEBUG => level::DEBUG,
        Level::TRACE => level::TRACE,
    }
}

/// Send one message to the host (no-op before `init` or above the host's level).
pub(crate) fn emit(lvl: u8, target: &str, message: &str) {
    if let Some(logger) = LOGGER.get()
        && lvl <= logger.max_level
    {
        (logger.log)(logger.plugin_id, lvl, target.into(), message.into());
    }
}

/// Install the bridge. Later calls (the same library loaded again) change nothing.
pub(crate) fn install(logger: HostLogger) {
    if LOGGER.set(logger).is_err() {
        return;
    }
    // Fails only if the plugin installed its own subscriber first; then it keeps it.
    let _ = tracing::subscriber::set_global_default(Bridge {
        max_level: logger.max_level,
    });
    std::panic::set_hook(Box::new(|info| {
        let message = crate::ffi::panic_text(info.payload());
        let text = match info.location() {
            Some(at) => format!(
                "panicked at {}:{}:{}: {message}",
                at.file(),
                at.line(),
                at.column()
            ),
            None => format!("panicked: {message}"),
        };
        emit(level::ERROR, "panic", &text);
    }));
}

/// A subscriber that formats each event and forwards it; spans are ignored.
struct Bridge {
    max_level: u8,
}

struct Fields {
    message: String,
    rest: String,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.rest, " {}={value:?}", field.name());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.rest, " {}={value:?}", field.name());
        }
    }
}

impl Subscriber for Bridge {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        level_code(metadata.level()) <= self.max_level
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(match self.max_level {
            0 => tracing::level_filters::LevelFilter::OFF,
            level::ERROR => tracing::level_filters::LevelFilter::ERROR,
            level::WARN => tracing::level_filters::LevelFilter::WARN,
            level::INFO => tracing::level_filters::LevelFilter::INFO,
            level::DEBUG => tracing::level_filters::LevelFilter::DEBUG,
            _ => tracing::level_filters::LevelFilter::TRACE,
        })
    }

    fn new_span(&self, _span: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields {
            message: String::new(),
            rest: String::new(),
        };
        event.record(&mut fields);
        fields.message.push_str(&fields.rest);
        let metadata = event.metadata();
        emit(
            level_code(metadata.level()),
            metadata.target(),
            &fields.message,
        );
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}
