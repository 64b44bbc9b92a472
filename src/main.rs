fn main() {
    std::process::exit(rollout_lua::run(std::env::args_os()));
}
