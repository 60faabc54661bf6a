//! The `bidtb` command: a thin shell over the library's command-line module.
fn main() -> std::process::ExitCode {
    bidtb::cli::main()
}
