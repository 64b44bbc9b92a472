fn main() {
    std::process::exit(rollout_lua::cli::run(std::env::args_os()));
}
