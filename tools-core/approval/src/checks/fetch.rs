//! Downloads that land in a file: `curl -o f URL`, `curl -O URL`, `wget URL`, `wget -O f`.
//! The file is remembered as remote content, so running it later in the same command
//! (`&& bash f`, `; . ./f`, `; chmod +x f; ./f`, `; python3 f`) is judged as running
//! downloaded code (`exec.download_then_run`), not as running code that already existed.

use super::super::analyze::Analyzer;
use super::super::model::{Arg, Source};
use super::super::options::{self, Item, OptSpec};

const CURL: OptSpec = OptSpec {
    short_with_value: "oXHdFuAeEmrTwxyzbcCKDPQtUY",
    long_with_value: &[
        "output",
        "output-dir",
        "request",
        "header",
        "data",
        "data-raw",
        "data-binary",
        "data-urlencode",
        "form",
        "user",
        "user-agent",
        "referer",
        "max-time",
        "connect-timeout",
        "retry",
        "upload-file",
        "write-out",
        "proxy",
        "cookie",
        "cookie-jar",
        "config",
        "dump-header",
        "cert",
        "key",
        "cacert",
        "range",
        "url",
    ],
    stop_at_operand: false,
};

const WGET: OptSpec = OptSpec {
    short_with_value: "OoaPtTUeiBwQY",
    long_with_value: &[
        "output-document",
        "output-file",
        "append-output",
        "directory-prefix",
        "tries",
        "timeout",
        "user-agent",
        "execute",
        "input-file",
        "base",
        "wait",
        "quota",
        "header",
        "post-data",
        "post-file",
        "user",
        "password",
    ],
    stop_at_operand: false,
};

/// The last path component of a URL (what `curl -O` / `wget` name the file).
fn url_name(url: &str) -> Option<&str> {
    let url = url.split(['?', '#']).next().unwrap_or(url);
    let after_scheme = url.split_once("://").map_or(url, |(_, r)| r);
    let (_, path) = after_scheme.split_once('/')?;
    let name = path.rsplit('/').next().unwrap_or(path);
    (!name.is_empty()).then_some(name)
}

/// Record the files a downloader writes.
pub(crate) fn record(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    let rest = &args[1..];
    let curl = matches!(name, "curl");
    let wget = matches!(name, "wget" | "wget2");
    if !curl && !wget {
        return;
    }
    let items = options::parse(rest, if curl { &CURL } else { &WGET });
    let mut dir: Option<&str> = None;
    let mut outputs: Vec<(String, bool)> = Vec::new();
    let mut remote_name = false;
    for item in &items {
        match (curl, item) {
            (true, Item::Short('o', Some(f)) | Item::Long("output", Some(f)))
            | (false, Item::Short('O', Some(f)) | Item::Long("output-document", Some(f))) => {
                outputs.push(((*f).to_string(), false))
            }
            (true, Item::Short('O', _) | Item::Long("remote-name" | "remote-name-all", _)) => {
                remote_name = true
            }
            (true, Item::Long("output-dir", Some(d)))
            | (false, Item::Short('P', Some(d)) | Item::Long("directory-prefix", Some(d))) => {
                dir = Some(d)
            }
            _ => {}
        }
    }
    if wget && outputs.is_empty() {
        remote_name = true;
    }
    if remote_name {
        for i in options::operands(&items) {
            if let Some(file) = url_name(rest[i].as_str()) {
                outputs.push((file.to_string(), rest[i].dynamic));
            }
        }
    }
    for (file, dynamic) in outputs {
        if file == "-" {
            continue;
        }
        let path = match dir {
            Some(d) if !file.starts_with('/') => format!("{}/{file}", d.trim_end_matches('/')),
            _ => file,
        };
        let path = az.resolve(&Arg::literal(path));
        az.wrote(path.as_str(), dynamic, &Source::Remote);
    }
}

#[cfg(test)]
mod tests {
    use super::url_name;

    #[test]
    fn url_names() {
        assert_eq!(
            url_name("https://x.example/a/install.sh"),
            Some("install.sh")
        );
        assert_eq!(url_name("https://x.example/i.sh?v=1"), Some("i.sh"));
        assert_eq!(url_name("https://x.example/"), None);
        assert_eq!(url_name("https://x.example"), None);
    }
}
