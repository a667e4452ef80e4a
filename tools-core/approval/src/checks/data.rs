//! Data stores: SQL `DROP`, `TRUNCATE`, `DELETE`/`UPDATE` without `WHERE` (any case, any
//! client, in arguments, heredocs or piped literal text), Redis `FLUSHALL`/`FLUSHDB`,
//! MongoDB drops. SQL is only looked for where a database client reads it, so
//! `echo "drop table x"` or a commit message saying so is data.

use super::super::analyze::Analyzer;
use super::super::model::{Arg, Source};
use super::super::rules::{self, Rule};

/// Command-line database clients whose arguments or stdin may be SQL.
pub(crate) fn is_sql_client(name: &str) -> bool {
    matches!(
        name,
        "psql"
            | "mysql"
            | "mariadb"
            | "sqlite3"
            | "sqlite"
            | "duckdb"
            | "clickhouse-client"
            | "clickhouse"
            | "cockroach"
            | "sqlcmd"
            | "usql"
            | "pgcli"
            | "mycli"
            | "litecli"
            | "snowsql"
            | "bq"
            | "trino"
            | "presto"
            | "cqlsh"
            | "mssql-cli"
            | "isql"
            | "sqlplus"
            | "spark-sql"
    )
}

/// A SQL client: every literal argument and literal stdin is scanned.
pub(crate) fn sql(az: &mut Analyzer, args: &[Arg<'_>], stdin: &Source) {
    for a in &args[1..] {
        let text = a.as_str();
        // `--command=...`, `--execute=...`, `--query=...`
        let text = text
            .split_once('=')
            .filter(|(k, _)| k.starts_with("--"))
            .map_or(text, |(_, v)| v);
        for rule in scan_sql(text) {
            az.flag_rule(rule);
        }
    }
    if let Source::Literal(text) = stdin {
        for rule in scan_sql(text) {
            az.flag_rule(rule);
        }
    }
}

/// The destructive statements in `text`.
pub(crate) fn scan_sql(text: &str) -> Vec<&'static Rule> {
    let mut found = Vec::new();
    if !text
        .bytes()
        .any(|b| matches!(b | 0x20, b'd' | b't' | b'u' | b'a'))
    {
        return found;
    }
    for statement in statements(text) {
        let words: Vec<String> = statement
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$'))
            .filter(|w| !w.is_empty())
            .map(|w| w.to_ascii_uppercase())
            .collect();
        let Some(first) = words.first() else { continue };
        let has_where = words.iter().any(|w| w == "WHERE");
        let rule = match first.as_str() {
            "DROP" if words.len() >= 2 => Some(&rules::SQL_DROP),
            "ALTER" if words.iter().any(|w| w == "DROP") => Some(&rules::SQL_DROP),
            "TRUNCATE" if words.len() >= 2 => Some(&rules::SQL_TRUNCATE),
            "DELETE" if words.get(1).is_some_and(|w| w == "FROM") && !has_where => {
                Some(&rules::SQL_DELETE)
            }
            "UPDATE" if words.iter().any(|w| w == "SET") && !has_where => Some(&rules::SQL_UPDATE),
            _ => None,
        };
        if let Some(rule) = rule
            && !found.contains(&rule)
        {
            found.push(rule);
        }
    }
    found
}

/// Split on `;` outside quotes, dropping comments.
fn statements(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' | '`' => {
                // Quoted literal or identifier: keep a placeholder, skip the content.
                current.push(' ');
                current.push('x');
                current.push(' ');
                for d in chars.by_ref() {
                    if d == c {
                        break;
                    }
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        break;
                    }
                }
                current.push(' ');
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = ' ';
                for d in chars.by_ref() {
                    if prev == '*' && d == '/' {
                        break;
                    }
                    prev = d;
                }
                current.push(' ');
            }
            ';' => out.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    out.push(current);
    out
}

/// `redis-cli FLUSHALL`, `echo flushdb | redis-cli`.
pub(crate) fn redis(az: &mut Analyzer, args: &[Arg<'_>], stdin: &Source) {
    let is_flush =
        |w: &str| w.eq_ignore_ascii_case("flushall") || w.eq_ignore_ascii_case("flushdb");
    let in_stdin = match stdin {
        Source::Literal(text) => text.split_whitespace().any(is_flush),
        _ => false,
    };
    // The command is the first word after the connection options (`GET flushall` reads
    // a key named flushall).
    let mut words = args[1..].iter().map(|a| a.as_str());
    let mut command = None;
    while let Some(w) = words.next() {
        if matches!(
            w,
            "-h" | "-p" | "-a" | "-n" | "-u" | "-s" | "--user" | "--pass" | "-r" | "-i"
        ) {
            words.next();
        } else if !w.starts_with('-') {
            command = Some(w);
            break;
        }
    }
    if in_stdin || command.is_some_and(is_flush) {
        az.flag_rule(&rules::REDIS_FLUSH);
    }
    let is_delete = |w: &str| w.eq_ignore_ascii_case("del") || w.eq_ignore_ascii_case("unlink");
    let deletes_in_stdin = match stdin {
        Source::Literal(text) => text
            .lines()
            .any(|l| l.split_whitespace().next().is_some_and(is_delete)),
        _ => false,
    };
    if deletes_in_stdin || command.is_some_and(is_delete) {
        az.flag_rule(&rules::REDIS_DELETE);
    }
}

/// `dropdb NAME`, `mysqladmin drop NAME`, `mongo ... --eval` is in [`mongo`].
pub(crate) fn admin_drop(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    let words: Vec<&str> = args[1..].iter().map(|a| a.as_str()).collect();
    if words
        .iter()
        .any(|w| matches!(*w, "--help" | "-?" | "--version" | "-V"))
    {
        return;
    }
    let drops = match name {
        "dropdb" | "dropuser" => words.iter().any(|w| !w.starts_with('-')),
        _ => words.iter().any(|w| w.eq_ignore_ascii_case("drop")),
    };
    if drops {
        az.flag_rule(&rules::DB_ADMIN_DROP);
    }
}

/// `mongosh --eval "db.dropDatabase()"` and friends.
pub(crate) fn mongo(az: &mut Analyzer, args: &[Arg<'_>], stdin: &Source) {
    let bad = |t: &str| {
        let compact: String = t.chars().filter(|c| !c.is_whitespace()).collect();
        compact.contains("dropDatabase(")
            || compact.contains(".drop(")
            || compact.contains("deleteMany({})")
            || compact.contains("remove({})")
    };
    let in_stdin = matches!(stdin, Source::Literal(t) if bad(t));
    if in_stdin || args[1..].iter().any(|a| bad(a.as_str())) {
        az.flag_rule(&rules::MONGO_DROP);
    }
}

/// `etcdctl del KEY --prefix|--from-key`, `consul kv delete -recurse`: many keys at once.
pub(crate) fn kv_delete(az: &mut Analyzer, name: &str, args: &[Arg<'_>]) {
    let words: Vec<&str> = args[1..].iter().map(|a| a.as_str()).collect();
    let deletes = match name {
        "etcdctl" => {
            words.iter().any(|w| matches!(*w, "del" | "rm" | "delete"))
                && words
                    .iter()
                    .any(|w| matches!(*w, "--prefix" | "--from-key" | "--prefix=true"))
        }
        _ => {
            words.windows(2).any(|w| w == ["kv", "delete"])
                && words.iter().any(|w| w.trim_start_matches('-') == "recurse")
        }
    };
    if deletes {
        az.flag_rule(&rules::KV_DELETE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_statements() {
        let cases: &[(&str, &[&str])] = &[
            ("DROP TABLE users", &["db.sql_drop"]),
            ("drop database prod;", &["db.sql_drop"]),
            ("Drop Table x", &["db.sql_drop"]),
            ("TRUNCATE TABLE events", &["db.sql_truncate"]),
            ("truncate events", &["db.sql_truncate"]),
            ("DELETE FROM sessions", &["db.sql_delete_without_where"]),
            ("delete from sessions;", &["db.sql_delete_without_where"]),
            ("DELETE FROM s WHERE id = 1", &[]),
            ("delete from s\nwhere id = 1", &[]),
            (
                "UPDATE users SET admin = true",
                &["db.sql_update_without_where"],
            ),
            ("UPDATE users SET admin = true WHERE id = 3", &[]),
            ("SELECT * FROM t WHERE note = 'drop table x'", &[]),
            ("select 1; -- drop table x", &[]),
            ("ALTER TABLE t DROP COLUMN c", &["db.sql_drop"]),
            ("SELECT 'delete from x'", &[]),
        ];
        for (sql, want) in cases {
            let got: Vec<&str> = scan_sql(sql).iter().map(|r| r.key).collect();
            assert_eq!(&got, want, "{sql}");
        }
    }
}
