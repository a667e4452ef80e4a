//! Streams handed to the first command of a script: the output of a command that an
//! output process substitution reads (`echo CMD > >(sh)`, `tee >(bash)`), and the stdin of
//! a shell whose `-c` payload reads it (`sh -c 'cat | sh' <<< CMD`). The analyser takes
//! the feed at the first command it analyses (`Analyzer::command_inner`).

use super::analyze::Analyzer;
use super::model::Source;

impl Analyzer {
    /// The stdin of the next script's first command (`sh -c 'cat | sh' <<< CMD`).
    pub(crate) fn set_feed(&mut self, source: Source) {
        self.feed = Some(source);
    }

    /// Forget an unused feed.
    pub(crate) fn set_feed_none(&mut self) {
        self.feed = None;
    }

    /// Analyse output process substitutions (`> >(sh)`): each reads `output`.
    pub(crate) fn feed_all(&mut self, feeds: &[String], output: &Source) {
        for text in feeds {
            self.feed = Some(match output {
                Source::Plain => Source::Produced,
                other => other.clone(),
            });
            self.script(text);
            self.feed = None;
        }
    }
}
