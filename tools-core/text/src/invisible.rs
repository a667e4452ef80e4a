//! Characters that hide text from a human reader: zero-width characters and
//! bidirectional controls. Prompt-injection scanners (memory entries, cron prompts,
//! skills) refuse or strip them; the list is Hermes' (`tools/threat_patterns.py`).

/// Zero-width and bidirectional-control characters used to hide instructions.
pub const INVISIBLE_CHARS: &[char] = &[
    '\u{200b}', '\u{200c}', '\u{200d}', '\u{2060}', '\u{2062}', '\u{2063}', '\u{2064}', '\u{feff}',
    '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}', '\u{2068}',
    '\u{2069}',
];
