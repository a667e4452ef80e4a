//! The `toolhost` binary: see `toolhost --help`.

fn main() -> std::process::ExitCode {
    toolhost::cli::main()
}
