//! The command line: arguments, dispatch, and the one place exit codes are decided.

mod offline;

use crate::error::Error;
use crate::lua::Limits;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

const EXIT_CODES: &str = "\
Exit codes:
  0  done (with --detailed-exitcode: done, no changes)
  1  error (bad input, script failure, API error)
  2  changes pending (only with --detailed-exitcode)
  3  refused by a guard (step state, expected step, drift, permissions, no terminal to confirm)";

#[derive(Parser, Debug)]
#[command(
    name = "kubectl-rollout_lua",
    bin_name = "kubectl rollout-lua",
    version = crate::VERSION,
    about = "Plan, test, apply, approve and restore the Lua traffic routing of OpenKruise Rollouts",
    long_about = "Plan, test, apply, approve and restore the Lua traffic routing of OpenKruise Rollouts.\n\n\
        For gateway objects the controller has no Go code for (Istio VirtualService and DestinationRule, \
        any CRD), the Kruise Rollout controller runs a Lua script per object and step. This plugin computes \
        each step's input exactly as the controller does, runs the same script locally in a sandbox, and \
        shows what the controller would write.",
    after_help = EXIT_CODES
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Debug, Clone)]
pub struct GlobalArgs {
    /// Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)
    #[arg(long, global = true)]
    pub no_color: bool,
    /// Time limit for one script evaluation (the controller's is 1s)
    #[arg(long, global = true, default_value = "1s", value_parser = parse_duration, value_name = "DURATION")]
    pub lua_timeout: Duration,
    /// Memory limit for one script evaluation (e.g. 64Mi, 1Gi)
    #[arg(long, global = true, default_value = "64Mi", value_parser = parse_size, value_name = "SIZE")]
    pub lua_memory: usize,
}

impl GlobalArgs {
    pub fn limits(&self) -> Limits {
        Limits { timeout: self.lua_timeout, memory: self.lua_memory }
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Show what each step does to the gateway objects, as a diff from their current content
    #[command(after_help = EXIT_CODES)]
    Plan(PlanArgs),
    /// Run scripts' test cases (the controller's testdata format) with the controller's test-harness semantics
    #[command(after_help = EXIT_CODES)]
    Test(TestArgs),
    /// Run one script on one obj and print the result as canonical JSON
    Eval(EvalArgs),
    /// Write the obj of every step of a test case as a Lua file, for debugging a script
    LuaObj(LuaObjArgs),
}

#[derive(Args, Debug, Clone, Default)]
pub struct ScriptArgs {
    /// Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE (repeatable)
    #[arg(long = "script", value_name = "KIND.GROUP=FILE")]
    pub scripts: Vec<String>,
    /// Look for DIR/<group>/<Kind>/trafficRouting.lua before the built-in scripts
    #[arg(long, value_name = "DIR")]
    pub lua_dir: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Yaml,
    Json,
}

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// Rollouts to plan (all Rollouts in the input when none are named)
    #[arg(value_name = "ROLLOUT")]
    pub rollouts: Vec<String>,
    /// Files or directories of manifests (YAML or JSON, multi-document; - for stdin): Rollouts,
    /// TrafficRoutings, gateway objects and optionally the kruise-rollout-configuration ConfigMap
    #[arg(short = 'f', long = "filename", value_name = "PATH", required = true)]
    pub files: Vec<String>,
    /// Plan only this step (1-based); default: every step in order
    #[arg(long, value_name = "N")]
    pub step: Option<usize>,
    /// Namespace for objects that name none
    #[arg(short = 'n', long, default_value = "default")]
    pub namespace: String,
    /// Print the planned objects and a summary instead of diffs
    #[arg(short = 'o', long = "output", value_enum)]
    pub output: Option<Format>,
    /// Exit 0 when nothing would change, 2 when something would, 1 on error
    #[arg(long)]
    pub detailed_exitcode: bool,
    #[command(flatten)]
    pub scripts: ScriptArgs,
}

#[derive(Args, Debug)]
pub struct TestArgs {
    /// Script folders (<group>/<Kind>/trafficRouting.lua with a testdata/ folder), searched
    /// recursively; default: the built-in scripts
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Print a JSON report instead of text
    #[arg(short = 'o', long = "output", value_enum)]
    pub output: Option<TestFormat>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TestFormat {
    Json,
}

#[derive(Args, Debug)]
pub struct EvalArgs {
    /// The Lua script
    #[arg(value_name = "SCRIPT")]
    pub script: PathBuf,
    /// The obj the script sees (JSON or YAML)
    #[arg(long, value_name = "FILE")]
    pub obj: PathBuf,
}

#[derive(Args, Debug)]
pub struct LuaObjArgs {
    /// A test case (rollout or trafficRouting, original, expected)
    #[arg(value_name = "CASE")]
    pub case: PathBuf,
    /// Write to FILE instead of stdout
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// What a command achieved, for the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Done,
    /// Changes are pending; exit 2 under --detailed-exitcode.
    Changes {
        detailed_exitcode: bool,
    },
    /// Some checks failed (test failures): exit 1 without an error message of its own.
    Failed,
}

/// Runs the command line and returns the process exit code.
pub fn run(args: impl IntoIterator<Item = OsString>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 1 } else { 0 };
        }
    };
    if cli.global.no_color {
        anstream::ColorChoice::Never.write_global();
    }
    let result = match &cli.command {
        Command::Plan(args) => offline::plan(&cli.global, args),
        Command::Test(args) => offline::test(&cli.global, args),
        Command::Eval(args) => offline::eval(&cli.global, args),
        Command::LuaObj(args) => offline::lua_obj(args),
    };
    exit_code(result)
}

/// The one place outcomes and errors become exit codes.
fn exit_code(result: anyhow::Result<Outcome>) -> i32 {
    match result {
        Ok(Outcome::Done) | Ok(Outcome::Changes { detailed_exitcode: false }) => 0,
        Ok(Outcome::Changes { detailed_exitcode: true }) => 2,
        Ok(Outcome::Failed) => 1,
        Err(error) => {
            // A closed pipe (`| head`) is not a failure.
            if error.chain().any(|e| {
                e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return 0;
            }
            let _ = writeln!(anstream::stderr(), "error: {error:#}");
            match error.downcast_ref::<Error>() {
                Some(Error::Refused(_)) => 3,
                _ => 1,
            }
        }
    }
}

/// Writes to stdout through anstream (colour stripped where off).
pub(crate) fn print(text: &str) -> std::io::Result<()> {
    let mut out = anstream::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    let (number, unit) = text.find(|c: char| !c.is_ascii_digit() && c != '.').map_or((text, "s"), |i| text.split_at(i));
    let value: f64 = number.parse().map_err(|_| format!("{text:?} is not a duration like 1s, 500ms or 2m"))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(format!("{text:?}: unknown unit {unit:?} (use ms, s, m or h)")),
    };
    Ok(Duration::from_secs_f64(seconds))
}

fn parse_size(text: &str) -> Result<usize, String> {
    let (number, unit) = text.find(|c: char| !c.is_ascii_digit()).map_or((text, ""), |i| text.split_at(i));
    let value: usize = number.parse().map_err(|_| format!("{text:?} is not a size like 64Mi or 1Gi"))?;
    let multiplier = match unit {
        "" | "B" => 1,
        "Ki" | "KiB" | "K" | "KB" => 1 << 10,
        "Mi" | "MiB" | "M" | "MB" => 1 << 20,
        "Gi" | "GiB" | "G" | "GB" => 1 << 30,
        _ => return Err(format!("{text:?}: unknown unit {unit:?} (use Ki, Mi or Gi)")),
    };
    Ok(value * multiplier)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn parses_durations_and_sizes() {
        assert_eq!(parse_duration("1s").unwrap(), Duration::from_secs(1));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
        assert!(parse_duration("1d").is_err());
        assert_eq!(parse_size("64Mi").unwrap(), 64 << 20);
        assert!(parse_size("lots").is_err());
    }
}
