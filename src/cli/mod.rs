//! The command line: arguments, dispatch, and the one place exit codes are decided.

mod approve;
mod booleans;
mod claim;
mod cluster;
mod completion;
mod diff;
mod follow;
mod help;
mod offline;
mod record;
mod restore;
mod status;
mod units;
mod views;

use crate::error::{Error, Signal};
use crate::lua::Limits;
use crate::output;
use crate::scripts::DEFAULT_CONTROLLER_NAMESPACE;
use crate::source::cluster::ConnectionArgs;
use crate::source::overrides::Overrides;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;
use units::{RequestTimeout, parse_duration, parse_lua_memory, parse_lua_timeout, parse_request_timeout, parse_step};

const EXIT_CODES_SIMPLE: &str = "Exit codes:\n  0  done\n  1  error";

const PLAN_ABOUT: &str = "Show what a step does to the gateway objects, as a diff from their current content.\n\n\
    With ROLLOUT names (or -l; --all: every Rollout of the namespace; -A: of every namespace), reads the Rollouts \
    and their gateway objects from the cluster and plans the \
    current step (--step N, --next, --all-steps for others), from the stored original as the controller does. \
    With -f (or -k), plans from manifest files and needs no cluster; every step is planned unless --step is given. \
    An HTTPRoute (gateway.httpRouteName) has no script and no stored original: the controller rewrites its rules \
    from the route as it is, so each step is planned from the route the step before left. For an ingress ref, \
    the controller makes a canary Ingress <name>-canary next to the stable one (which it never writes): the plan \
    shows its creation, the merge patch of its annotations (the class's script run on the annotations the step \
    before left) and its deletion. \
    As with kubectl, -f DIR reads the directory's own files and -R its subdirectories too; documents that are \
    neither Rollouts, TrafficRoutings, the objects they route through nor the script ConfigMap are skipped \
    (-v lists them). Every input is read with a size limit (64 MiB of manifests in all; see the user guide).\n\n\
    The plan is what the controller does, which is not always what a step says: a partition step whose replicas \
    reach the workload's (read from the cluster, or the Deployment or CloneSet among the files) is not routed, and a \
    disabled Rollout runs no step. While a release is ending (finalising, rolled back, disabled, being deleted), the \
    controller's next routing write is the restore, not the step the status still names: without a stage flag no \
    step is planned, and a note points to restore --dry-run=client; a Healthy Rollout is not in a release (step 1 \
    is shown). Once the controller has routed the current step (past StepTrafficRouting), its plan should write \
    nothing: an object it would change gets a note, as in status. A Rollout the controller's admission webhook \
    or the CRD's schema would refuse (its limits, and its rules for matches and header changes) is an error with \
    -f, and a warning otherwise.";

const APPROVE_ABOUT: &str = "Make the gateway objects match the current step, then approve the step.\n\n\
    At a partition step the controller does not route (its replicas reach the workload's) no routing is \
    written, as the controller writes none there. \
    The Rollout is claimed first (a Lease rollout-lua.<rollout>: a second approve or restore refuses), and \
    read after the claim (with -l, a Rollout that starts to match in between is not claimed, and refused: run \
    again). Guards run before anything is written: the step must be StepPaused (--traffic-only: \
    any step state of a release in progress, with a warning before its canary pods are ready, in BeforeStepUpgrade \
    or StepUpgrade), the release must not be ending (finalising, rolled back, disabled, being deleted: the \
    controller restores the original routing, and restore does that now) or over (phase Healthy, or Progressing \
    reason Completed), the phase must be Progressing, and the controller must be about to run that step: not \
    initializing again, not jumping elsewhere (a patched nextStepIndex), not a blue-green release stopped by a new \
    version, not behind the Rollout's latest spec (metadata.generation past the status's observedGeneration), \
    --expect-step must match, a permission check (SelfSubjectAccessReview) covers every \
    write, and a stored original that holds no spec, an object the controller would stick on at the step \
    (its own Istio script fails on it), or an object another Rollout in a release (or a \
    TrafficRouting in a release that the Rollout does not link) routes (the namespace's Rollouts and \
    TrafficRoutings are listed for that; without list, a warning), is refused without --force; a timed \
    pause not run out is approved with a warning that this ends it now. The plan is shown and \
    confirmed (--yes to skip; without a terminal --yes is required). An object without the original-spec \
    annotation gets it first, in the controller's format; every write is conditional on the resourceVersion \
    read and backed up locally first (under $XDG_STATE_HOME/kubectl-rollout-lua/backups, default \
    ~/.local/state/…, readable by their owner only; with neither XDG_STATE_HOME nor HOME set the run refuses \
    before its first write). Someone else's edit is never overwritten: it is shown and refused (on a \
    terminal: asked). A write whose reply is lost, garbled or timed out, or a server error (5xx), is resolved by reading the object again. A Rollout paused by spec.strategy.paused is approved with a warning: the controller acts on \
    the approval only once it is resumed. A failure rolls back \
    what the run wrote, except the routing of an approved Rollout (or of one whose approval may still land). Two \
    selected Rollouts that write one object are refused, and so is a Rollout whose own trafficRoutings and \
    TrafficRouting route one object (the controller would rewrite it in turn forever). The approval is a merge patch of the status \
    subresource (currentStepState StepReady, as kubectl-kruise's), which also names the step index and carries the \
    Rollout's resourceVersion, so that it approves only the step guarded. Ctrl-C, SIGTERM or SIGHUP stops the run before \
    its next write (a second one at once).\n\n\
    --until-step and --to-end follow the Rollouts as status -w does: a request that fails on the way is tried \
    again until --timeout, and a Rollout that fails, is deleted or is deleted and made again, is edited, goes \
    back to an earlier step or begins a new release (a new version pushed) stops the sequence (exit 1). A gateway object someone edited after the confirmation (at no step's plan when a later \
    pause comes) is not overwritten unasked: on a terminal (without --yes) the run asks, and backs their edit up; \
    otherwise it stops before that step (exit 3, their edit kept).";

const RESTORE_ABOUT: &str = "Put gateway objects back to their stored original (spec, labels, annotations; the \
    original-spec annotation goes away), as the controller does when a release ends. An HTTPRoute a release \
    touched gets the controller's restore of its rules: canary backendRefs removed, the stable weight set to 1, \
    and every rule left without a backendRef (a redirect, too) deleted, shown in the diff; one with no backendRef \
    to the canary Service (with canary = stable: whose Rollout has no release in progress) is already restored \
    and not written, and a note says what the controller's own restore would still delete. A canary Ingress the controller made \
    is deleted (the stable Ingress is never written). The objects of a TrafficRouting another Rollout still holds \
    (its finalizer progressing.rollouts.kruise.io/<rollout>) are left as they are, as the controller leaves them \
    until no Rollout holds it; a note says so.\n\n\
    The Rollouts are claimed first, as approve does (with --ref or --from-backup: those of the namespace that \
    route the objects named; a Rollout of the namespace that cannot be loaded is left out, named, unless it may \
    route them: then, as when the Rollouts cannot be read, nothing is written without --force). If an object differs from what the current step should \
    have written, someone edited it during the release: the edits are shown, and --force (or a confirmation on \
    a terminal) is needed to discard them; --ref objects are checked against the Rollouts that route them. A \
    stored original that holds no spec is refused without --force. --from-backup FILE puts back a gateway object \
    saved by an earlier write (a custom ref, an Ingress or an HTTPRoute; never a Rollout), making it again, \
    without the server's fields, when it no longer exists; a backup that is not whole (its last line, the \
    SHA-256 of the text above it, missing or not matching), holds no spec where the live object has one, is of \
    an object deleted and made again since (another uid), or would make one again whose owner Rollout is gone or \
    made again (the garbage collector would delete it) is refused without --force.\n\n\
    Backups are saved under $XDG_STATE_HOME/kubectl-rollout-lua/backups (default ~/.local/state/…), readable by \
    their owner only, each written whole or not at all; with neither XDG_STATE_HOME nor HOME set, a run that \
    writes refuses before its first write.";

const RELEASE_CLAIM_ABOUT: &str = "Release the claim an approve or restore holds on Rollouts.\n\n\
    approve and restore claim each Rollout before writing (a Lease named rollout-lua.<rollout> in its namespace), so \
    that a second approve or restore refuses instead of racing it. The claim is released at the end, also after a \
    failure or an interrupt; one left by a killed process expires 2 minutes after its last renewal (within the \
    hour after that, an approve or restore takes it over once it has seen it unrenewed for 60s). This command \
    shows each claim's holder, asks, and deletes at once the claim it showed, whoever holds it: use it only when \
    its holder is gone (status shows the holder). A name that is neither claimed nor a Rollout is not found \
    (exit 1, after the others); a claim left on a Rollout since deleted is released, and said to be of no Rollout. \
    A claim renewed or taken over after it was shown is not \
    released: the refusal names its holder now (exit 3). The other claims are released all the same, also after \
    a delete that fails; every refusal and failure is reported, and a failure exits 1. A first SIGINT, SIGTERM or \
    SIGHUP stops the run once the delete in flight is answered, a second one at once; either way the claims not \
    released are named.";

const TEST_ABOUT: &str = "Run scripts' test cases (the controller's testdata format) with the controller's \
    test-harness semantics.\n\n\
    Each case is read as the controller's own go test reads it: a Rollout as v1beta1, without the conversion (a \
    v1alpha1 weight is ignored), matches without the CRD's defaults (a match without type has none, where plan \
    fills in Exact or PathPrefix), the canary Service always <service>-canary, every step run. A note on the case \
    says when go test gives the script what the controller would not (a v1alpha1 weight ignored, \
    <service>-canary despite disableGenerateCanaryService, an empty matches table for a TrafficRouting without \
    matches), would pass a step this tool fails (a script \
    returning no table, which the controller fails too), or cannot run it (a blue-green case; an original or expected object \
    without kind, which go test cannot read). Warnings name what go test passes over: a case file's second YAML \
    document (only the first is a case), a step the API server would refuse (traffic 150%, a match type outside the \
    CRD's enum; the case runs all the same), an unknown key or field.";

const STATUS_ABOUT: &str = "Show Rollouts' progress: phase, strategy, the current step and what it does (while \
    the release is ending or over: what the controller does to the routing instead), the step state (and spec.strategy.paused, as plan's header says it: the controller acts on nothing, an approval included, until the Rollout is resumed, but for a release's end), the controller's message, canary and stable replicas, and for a timed pause the time left; and for every gateway \
    object whether it is at step k (planning step k from it writes nothing), at its original (an HTTPRoute: no \
    backendRef to the canary Service; a canary Ingress: absent; an object not found: absent, with a note, unless the current step routes it, which fails), drifted (neither), or contested (at a step of \
    one of two routings that write it, a Rollout's own and its TrafficRouting's, and not of the other), with the \
    script used (an object still at a step while the Rollout is not in a release, left by a controller or restore \
    that did not finish, gets a note: restore puts the routing before the release back; the exit stays 0); and \
    who claims the Rollout (an approve or restore running, or a claim left to expire), also in -o json|yaml \
    (claim).\n\n\
    Without ROLLOUT names or -l, every Rollout of the namespace is shown (-A: of every namespace), as kubectl get \
    does; a Rollout named and not found does not hide the others: its error comes after them (exit 1).\n\n\
    -w follows the Rollouts until they complete (exit 0), fail or --timeout passes (exit 1); --until-paused exits \
    0 as soon as they wait for approval. A Rollout whose spec the controller has not acted on yet \
    (metadata.generation past the status's observedGeneration) is waited for, whatever its status says. A Rollout followed that is deleted, or deleted and made again (another \
    uid), ends it with an error, and so does a first read that finds none (no matching resources found). It \
    watches the Rollouts as kubectl get -w does (resumed from the last resourceVersion when the connection drops; \
    read every 2s where watching them is forbidden), and the kinds of gateway objects they route through (one \
    watch per kind and namespace; where forbidden, they are read every 30s), and reads a Rollout and its objects \
    again on each change of either, and everything every 30s. \
    After the first read, a request that gets no answer, or a busy server's 429 or 5xx, is tried again (after \
    1s, doubling up to 30s, with a warning) until it works, --timeout passes or a signal; any other answer ends \
    it. On a terminal it is a live view on stderr, written only when it \
    changes: a line per Rollout with a spinner while the controller moves it on (4 turns a second), the step as a \
    progress bar and the traffic split, and a timed pause's countdown; otherwise a timestamped line per change.";

const EVAL_EXIT_CODES: &str = "Exit codes:\n  0  done\n  1  error (bad input, script failure)";

const TEST_EXIT_CODES: &str = "Exit codes:\n  0  every case passed\n  1  a case failed, or an error";

const EXIT_CODES: &str = "\
Exit codes:
  0    done (with --detailed-exitcode: done, no changes)
  1    error (bad input, script failure, API error, timeout)
  2    changes pending (only with --detailed-exitcode)
  3    refused (approve: step state, expected step; approve and restore: edits made during
       the release, permissions, a claim, someone else's edit, no terminal to confirm)
  130  interrupted by SIGINT; 143 by SIGTERM; 129 by SIGHUP";

const PLAN_EXIT_CODES: &str = "\
Exit codes:
  0  done (with --detailed-exitcode: done, no changes)
  1  error (bad input, script failure, API error, a server dry-run rejection); the other
     Rollouts are still planned and shown
  2  changes pending (only with --detailed-exitcode; also when the output is closed early)";

/// What `approve` refuses with exit code 3 (see [`write_exit_codes`]).
const APPROVE_REFUSALS: &str = "\
not StepPaused, not progressing or ending, a spec the controller has not acted on,
       --expect-step or --until-step not met, permissions, another run's claim, a Rollout
       selected after the claims were taken, someone else's edit, a stored original that does
       not parse or holds no spec, or none stored while the object routes to the canary
       already, an object the controller would stick on at the step (its own Istio script
       fails on it) (without --force), annotations past the API server's 256 KiB with the
       stored original, two Rollouts (or a
       Rollout's own routing and its TrafficRouting) writing one object, an object a Rollout's
       customNetworkRefs name twice, an Ingress named
       <name>-canary the Rollout did not make, an HTTPRoute write that leaves the stable
       Service without a rule, edits made after the routing, a step whose routing the API
       server would not admit now or that hangs on a workload's replica count not read
       (without --force), a script changed since the confirmation (a later step of
       --until-step/--to-end), no terminal to confirm";

/// What `restore` refuses with exit code 3 (see [`write_exit_codes`]).
const RESTORE_REFUSALS: &str = "\
edits made during the release, or steps that do not plan (so edits cannot be
       checked), Rollouts that cannot be read, a --from-backup file that is not whole, holds no
       spec where the object has one or is of an object made again since, an HTTPRoute restore
       that leaves the stable Service without a rule, or an Ingress named <name>-canary the
       Rollout did not make (left as it is), without --force; permissions,
       another run's claim, someone else's edit, a stored original that does not parse, is
       empty or holds no spec, a --ref or a backup that is not a gateway object (or a --ref
       of an HTTPRoute), no terminal to confirm";

/// The exit codes of a command that writes (approve, restore), with what it refuses.
fn write_exit_codes(refusals: &str) -> String {
    format!(
        "\
Exit codes:
  0    done
  1    error (bad input, script failure, API error, timeout); what was written is rolled back,
       unless the report says it is kept (a write's outcome unknown, then someone else's edit)
  3    refused ({refusals})
  130  interrupted by SIGINT (143: SIGTERM, 129: SIGHUP): stopped before the next write, the step in
       flight rolled back or finished; a signal ignored at start (nohup) stays ignored"
    )
}

const RELEASE_CLAIM_EXIT_CODES: &str = "\
Exit codes:
  0    done (the claims were released, or none was held)
  1    error (bad input, no Rollout matches the selector, API error, timeout); a delete that
       fails stops nothing: the other claims are released all the same, and a refusal (3) is
       reported with the error
  3    refused (no terminal to confirm and no --yes, or the answer was not yes; or no
       permission to delete the Leases): nothing was released; or a claim changed after it was
       shown (renewed or taken over): that claim was not released
  130  interrupted by SIGINT (143: SIGTERM, 129: SIGHUP): no claim is released after the delete
       in flight (a second signal: at once, that delete out); the claims not released are named
       with the other failures; a signal ignored at start (nohup) stays ignored";

const STATUS_EXIT_CODES: &str = "\
Exit codes:
  0    done; with -w: the Rollouts completed (or, with --until-paused, wait for approval)
  1    error; with -w: a Rollout failed (rolled back, or disabled), was deleted or made again,
       none was found, or --timeout passed
  130  with -w: Ctrl-C (143: SIGTERM, 129: SIGHUP); a signal ignored at start (nohup) stays
       ignored";

#[derive(Parser, Debug)]
#[command(
    name = "kubectl-rollout_lua",
    bin_name = "kubectl rollout-lua",
    version = crate::VERSION,
    about = "Plan, approve, restore, follow and test the traffic routing of OpenKruise Rollouts",
    long_about = "Plan, approve, restore, follow and test the traffic routing of OpenKruise Rollouts.\n\n\
        At each step the Kruise Rollout controller rewrites the gateway objects of a Rollout: custom refs \
        (Istio VirtualService and DestinationRule, any CRD) with a Lua script per object, a canary \
        Ingress (nginx, aliyun-alb, higress, mse) with a Lua script per class, and a Gateway API \
        HTTPRoute's rules in Go. This plugin computes each step's input exactly as the controller does, \
        runs the same scripts locally in a sandbox (and the HTTPRoute's rewrite as the controller's code \
        does), and shows what the controller would write; approve and restore write it, under your own \
        credentials.",
    after_help = format!("{}\n\n{}", help::after(help::ROOT_EXAMPLES, EXIT_CODES), help::ENVIRONMENT_AND_FILES),
    // Help is laid out for 100 columns whatever the terminal, as kubectl's is: wrapped to a
    // narrower one, an example's tail would start a line as a command does, and a pasted example
    // run the wrong thing. A narrow terminal folds the long lines instead, and copies them whole.
    term_width = 100
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// The flags every command takes, before or after its name.
#[derive(Args, Debug, Clone)]
pub struct GlobalArgs {
    /// Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more,
    /// as kubectl's: each request to the API server, with its answer's status and time
    #[arg(short = 'v', long, alias = "v", value_name = "LEVEL", num_args = 0..=1, require_equals = true,
          default_missing_value = "1", default_value = "0", hide_default_value = true, global = true,
          help_heading = help::GLOBAL)]
    pub verbose: u8,
    /// Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)
    #[arg(long, global = true, help_heading = help::GLOBAL)]
    pub no_color: bool,
}

/// The limits of one script evaluation, for the commands that run scripts.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = help::SCRIPTS)]
pub struct LuaLimits {
    /// Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller's is 1s)
    #[arg(long, default_value = "1s", value_parser = parse_lua_timeout, allow_hyphen_values = true, value_name = "DURATION")]
    pub lua_timeout: Duration,
    /// Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)
    #[arg(long, default_value = "64Mi", value_parser = parse_lua_memory, allow_hyphen_values = true, value_name = "SIZE")]
    pub lua_memory: usize,
}

impl LuaLimits {
    pub fn limits(&self) -> Limits {
        Limits { timeout: self.lua_timeout, memory: self.lua_memory }
    }
}

impl Default for LuaLimits {
    /// The flags' defaults.
    fn default() -> Self {
        let Limits { timeout, memory } = Limits::default();
        LuaLimits { lua_timeout: timeout, lua_memory: memory }
    }
}

/// kubectl's connection flags, on the commands that talk to a cluster. Each takes its last value
/// when given twice, as kubectl's (pflag) do: aliases and wrappers add their own before the
/// user's. (Other flags given twice are refused: a guard such as `--expect-step` must not lose
/// one of its values without a word.)
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = help::CLUSTER)]
pub struct ConnectionFlags {
    /// Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)
    #[arg(long, value_name = "FILE", value_hint = clap::ValueHint::FilePath, overrides_with = "kubeconfig")]
    pub kubeconfig: Option<String>,
    /// The kubeconfig context to use
    #[arg(long, value_name = "NAME", overrides_with = "context")]
    pub context: Option<String>,
    /// The namespace (default: the context's; offline: objects without one are in "default")
    #[arg(short = 'n', long, value_name = "NAMESPACE", overrides_with = "namespace")]
    pub namespace: Option<String>,
    /// The kubeconfig cluster to use, instead of the context's
    #[arg(long, value_name = "NAME", overrides_with = "cluster")]
    pub cluster: Option<String>,
    /// The kubeconfig user to use, instead of the context's
    #[arg(long, value_name = "NAME", overrides_with = "user")]
    pub user: Option<String>,
    /// The API server's URL, instead of the cluster's (its certificate-authority still applies)
    #[arg(short = 's', long, value_name = "URL", overrides_with = "server")]
    pub server: Option<String>,
    /// A CA certificate file, instead of the cluster's certificate-authority
    #[arg(long, value_name = "FILE", value_hint = clap::ValueHint::FilePath, overrides_with = "certificate_authority")]
    pub certificate_authority: Option<String>,
    /// Do not verify the server's certificate (clears the cluster's certificate-authority)
    #[arg(long, overrides_with = "insecure_skip_tls_verify")]
    pub insecure_skip_tls_verify: bool,
    /// The name to verify the server's certificate against, instead of the server's host
    #[arg(long, value_name = "NAME", overrides_with = "tls_server_name")]
    pub tls_server_name: Option<String>,
    /// Bearer token to authenticate with, instead of the user's (a user's tokenFile is still read
    /// first, as in kubectl)
    #[arg(long, value_name = "TOKEN", overrides_with = "token")]
    pub token: Option<String>,
    /// Username for basic authentication, instead of the user's
    #[arg(long, value_name = "USERNAME", overrides_with = "username")]
    pub username: Option<String>,
    /// Password for basic authentication, instead of the user's
    #[arg(long, value_name = "PASSWORD", overrides_with = "password")]
    pub password: Option<String>,
    /// A client certificate file, instead of the user's
    #[arg(long, value_name = "FILE", value_hint = clap::ValueHint::FilePath, overrides_with = "client_certificate")]
    pub client_certificate: Option<String>,
    /// The client certificate's key file, instead of the user's
    #[arg(long, value_name = "FILE", value_hint = clap::ValueHint::FilePath, overrides_with = "client_key")]
    pub client_key: Option<String>,
    /// Username to impersonate for the operation (default: the kubeconfig user's as)
    #[arg(long = "as", value_name = "USER", overrides_with = "as_user")]
    pub as_user: Option<String>,
    /// UID to impersonate for the operation (needs a user to impersonate: --as, or the user's as)
    #[arg(long = "as-uid", value_name = "UID", overrides_with = "as_uid")]
    pub as_uid: Option<String>,
    /// Group to impersonate for the operation (repeatable; needs a user to impersonate: --as, or
    /// the user's as)
    #[arg(long = "as-group", value_name = "GROUP")]
    pub as_groups: Vec<String>,
    /// Time limit for each request to the API server (to connect, send it and read its whole
    /// answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default:
    /// 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)
    #[arg(long, value_parser = parse_request_timeout, allow_hyphen_values = true, value_name = "DURATION",
          overrides_with = "request_timeout")]
    pub request_timeout: Option<RequestTimeout>,
}

impl ConnectionFlags {
    pub fn connection(&self) -> ConnectionArgs {
        ConnectionArgs {
            kubeconfig: given(&self.kubeconfig).map(PathBuf::from),
            context: given(&self.context),
            namespace: self.namespace(),
            as_user: given(&self.as_user),
            as_uid: given(&self.as_uid),
            as_groups: self.as_groups.clone(),
            overrides: Overrides {
                cluster: given(&self.cluster),
                user: given(&self.user),
                server: given(&self.server),
                certificate_authority: given(&self.certificate_authority),
                insecure_skip_tls_verify: self.insecure_skip_tls_verify,
                tls_server_name: given(&self.tls_server_name),
                token: given(&self.token),
                username: given(&self.username),
                password: given(&self.password),
                client_certificate: given(&self.client_certificate),
                client_key: given(&self.client_key),
            },
            request_timeout: self.request_timeout.and_then(|RequestTimeout(timeout)| timeout),
            plugin_terminal: Default::default(),
        }
    }

    /// `-n`, unless empty: kubectl takes `-n ""` (say `-n "$NS"` with NS unset) as not given.
    pub fn namespace(&self) -> Option<String> {
        given(&self.namespace)
    }
}

/// A flag's value, `None` when empty, as kubectl takes an empty `--kubeconfig`, `--context`,
/// `-n`, `--as`, `--server`, `--token`…
fn given(value: &Option<String>) -> Option<String> {
    value.clone().filter(|v| !v.is_empty())
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Show what a step does to the gateway objects, as a diff from their current content
    #[command(after_help = help::after(help::PLAN_EXAMPLES, PLAN_EXIT_CODES), long_about = PLAN_ABOUT)]
    Plan(PlanArgs),
    /// Make the gateway objects match the current step, then approve the step (StepPaused -> StepReady)
    #[command(after_help = help::after(help::APPROVE_EXAMPLES, &write_exit_codes(APPROVE_REFUSALS)), long_about = APPROVE_ABOUT)]
    Approve(ApproveArgs),
    /// Put gateway objects back to their stored original (as the controller does when a release ends)
    #[command(after_help = help::after(help::RESTORE_EXAMPLES, &write_exit_codes(RESTORE_REFUSALS)), long_about = RESTORE_ABOUT)]
    Restore(RestoreArgs),
    /// Show Rollouts' progress and where each gateway object stands; -w follows it
    #[command(after_help = help::after(help::STATUS_EXAMPLES, STATUS_EXIT_CODES), long_about = STATUS_ABOUT)]
    Status(StatusArgs),
    /// Release the claim an approve or restore left on Rollouts (when its holder is gone)
    #[command(
        name = "release-claim",
        after_help = help::after(help::RELEASE_CLAIM_EXAMPLES, RELEASE_CLAIM_EXIT_CODES),
        long_about = RELEASE_CLAIM_ABOUT
    )]
    ReleaseClaim(ReleaseClaimArgs),
    /// Write a live Rollout and its gateway objects' originals as a test case, every step's plan as expected
    #[command(after_help = help::after(help::RECORD_EXAMPLES, EXIT_CODES_SIMPLE))]
    Record(RecordArgs),
    /// Run scripts' test cases (the controller's testdata format) with the controller's test-harness semantics
    #[command(after_help = help::after(help::TEST_EXAMPLES, TEST_EXIT_CODES), long_about = TEST_ABOUT)]
    Test(TestArgs),
    /// Run one script on one obj and print the result as canonical JSON
    #[command(after_help = help::after(help::EVAL_EXAMPLES, EVAL_EXIT_CODES))]
    Eval(EvalArgs),
    /// Write the obj of every step of a test case as a Lua file, for debugging a script
    #[command(after_help = help::after(help::LUA_OBJ_EXAMPLES, EXIT_CODES_SIMPLE))]
    LuaObj(LuaObjArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish, nushell)
    // `completion` as kubectl spells it.
    #[command(alias = "completion", after_help = help::after(help::COMPLETIONS_EXAMPLES, EXIT_CODES_SIMPLE))]
    Completions(CompletionsArgs),
    /// Completion candidates in kubectl's plugin-completion protocol (run by kubectl_complete-rollout_lua)
    #[command(name = "__complete", hide = true)]
    Complete(CompleteArgs),
}

/// Which scripts run, and their limits.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = help::SCRIPTS)]
pub struct ScriptArgs {
    /// Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE, or
    /// ingress.CLASSTYPE=FILE for an Ingress class (repeatable)
    #[arg(long = "script", value_name = "KIND.GROUP=FILE")]
    pub scripts: Vec<String>,
    /// Look for DIR/<group>/<Kind>/trafficRouting.lua and DIR/trafficrouting_ingress/<classType>.lua
    /// before the built-in scripts and the ConfigMap
    #[arg(long, value_name = "DIR")]
    pub lua_dir: Option<PathBuf>,
    /// Namespace of the controller's kruise-rollout-configuration ConfigMap (read only when a kind has no other script)
    #[arg(long, default_value = DEFAULT_CONTROLLER_NAMESPACE, value_name = "NAMESPACE")]
    pub controller_namespace: String,
    #[command(flatten)]
    pub lua: LuaLimits,
}

/// `--dry-run`: `client` writes nothing; `server` sends the writes with dryRun=All so admission
/// webhooks judge them, and nothing is stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum DryRun {
    #[default]
    None,
    Client,
    Server,
}

/// `plan --dry-run`: only the server can judge a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ServerDryRun {
    Server,
}

/// Which Rollouts: names or a label selector.
#[derive(Args, Debug, Clone, Default)]
pub struct RolloutSelection {
    /// Rollouts, as NAME or rollout/NAME
    #[arg(value_name = "ROLLOUT", value_parser = crate::source::live::rollout_argument)]
    pub rollouts: Vec<String>,
    /// Select Rollouts by label (e.g. app=shop)
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR", conflicts_with = "rollouts")]
    pub selector: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Yaml,
    Json,
}

/// kubectl's `--validate`, for fields the Rollout and TrafficRouting CRDs do not define.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Validate {
    /// Refuse the input
    #[value(alias = "true")]
    Strict,
    /// Warn in the plan
    Warn,
    /// Say nothing
    #[value(alias = "false")]
    Ignore,
}

#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("manifests").args(["files", "kustomize"])))]
pub struct PlanArgs {
    #[command(flatten)]
    pub selection: RolloutSelection,
    /// Every Rollout of the namespace, as kubectl's --all
    #[arg(long, conflicts_with_all = ["rollouts", "selector", "files", "kustomize"])]
    pub all: bool,
    /// Every namespace's Rollouts (with -l: those it selects), as kubectl get -A
    #[arg(short = 'A', long, conflicts_with_all = ["rollouts", "files", "kustomize"])]
    pub all_namespaces: bool,
    /// Plan from files instead of the cluster: files or directories of manifests (YAML or JSON,
    /// multi-document; - for stdin) with Rollouts, TrafficRoutings, gateway objects and optionally
    /// the kruise-rollout-configuration ConfigMap. Other documents are skipped (-v lists them);
    /// a directory's .yaml, .yml and .json files are read, not its subdirectories (see -R) nor
    /// hidden files
    #[arg(short = 'f', long = "filename", value_name = "PATH")]
    pub files: Vec<String>,
    /// With -f: read the subdirectories of directories too, as kubectl's -R
    #[arg(short = 'R', long, requires = "files")]
    pub recursive: bool,
    /// Plan from the manifests `kubectl kustomize DIR` builds (as kubectl's -k; needs kubectl on PATH)
    #[arg(short = 'k', long, value_name = "DIR", conflicts_with_all = ["files", "recursive"])]
    pub kustomize: Option<PathBuf>,
    /// With -f or -k: fields the Rollout and TrafficRouting CRDs do not define (misspelt ones)
    #[arg(long, value_enum, value_name = "MODE", default_value = "warn", requires = "manifests")]
    pub validate: Validate,
    /// With -f or -k: print the obj each script gets, per step and object, as JSON (or YAML with
    /// -o yaml) instead of diffs; one entry's obj is input for `eval --obj`. A kind or Ingress
    /// class without a script yet is shown too, with a note on stderr
    #[arg(long, requires = "manifests", conflicts_with = "detailed_exitcode")]
    pub show_obj: bool,
    /// Plan this step (1-based); default: the current step, none while the release is ending
    /// (offline: every step)
    #[arg(long, value_name = "N", value_parser = parse_step, allow_hyphen_values = true, conflicts_with_all = ["next", "all_steps"])]
    pub step: Option<usize>,
    /// Plan the step after the current one (the step the status's nextStepIndex names, when
    /// patched to jump)
    #[arg(long, conflicts_with = "all_steps")]
    pub next: bool,
    /// Plan every step in order
    #[arg(long)]
    pub all_steps: bool,
    /// Also send the planned objects to the API server with dryRun=All, so admission webhooks
    /// (e.g. Istio's validation) judge them
    #[arg(long, value_enum, value_name = "MODE")]
    pub dry_run: Option<ServerDryRun>,
    /// Print the planned objects and a summary instead of diffs
    #[arg(short = 'o', long = "output", overrides_with = "output", value_enum)]
    pub output: Option<Format>,
    /// A line per step and object (what is written, and the traffic split) instead of diffs
    #[arg(long, conflicts_with_all = ["output", "show_obj"])]
    pub summary: bool,
    /// Show the stored original (the original-spec annotation) in full in diffs, not as
    /// `stored (sha256 …, N bytes)`
    #[arg(long, conflicts_with_all = ["summary", "output", "show_obj"])]
    pub show_stored_original: bool,
    /// Exit 0 when nothing would change, 2 when something would, 1 on error (a Rollout not in
    /// a release, whose plan by default previews its next release's step 1, changes nothing
    /// now; a step asked for with --step, --next or --all-steps counts as asked, changes and all)
    #[arg(long)]
    pub detailed_exitcode: bool,
    #[command(flatten)]
    pub scripts: ScriptArgs,
    #[command(flatten)]
    pub cluster: ConnectionFlags,
}

#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("follow").args(["until_step", "to_end"])))]
pub struct ApproveArgs {
    #[command(flatten)]
    pub selection: RolloutSelection,
    /// Do not ask for confirmation (required when stdin is not a terminal)
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Refuse unless the current step is N (1 or more); a release past step N's approval (or at
    /// it, approved) is said to be approved already, exit 0, nothing written (not with
    /// --until-step or --to-end)
    #[arg(long, value_name = "N", value_parser = parse_step, allow_hyphen_values = true)]
    pub expect_step: Option<usize>,
    /// Only make the gateway objects match the current step; do not approve (allowed in any
    /// step state of a release in progress; warns in BeforeStepUpgrade and StepUpgrade, before
    /// the step's canary pods are ready)
    #[arg(long)]
    pub traffic_only: bool,
    /// Write all the same where a guard refuses: an object edited after it was routed (the edit
    /// is written over); a stored original that holds no spec (`{}`, `null`, an empty spec:
    /// writing from it wipes the object's routing); a custom ref without a stored original that
    /// routes to the canary already (the controller stores that routing as the original); a
    /// `<name>-canary` Ingress that someone else made (its controller owner is not the
    /// Rollout); an object that another Rollout in a release, or a TrafficRouting in a release
    /// that the Rollout does not link, routes; an HTTPRoute write that leaves the stable Service
    /// without a rule; a step the API server would not admit now, or whose routing hangs on a
    /// workload's replica count not read; a step the controller would stick at (its own Istio
    /// script fails on an object). An edit made during this run is still refused (on a
    /// terminal: asked), and so are annotations past the API server's 256 KiB
    #[arg(long)]
    pub force: bool,
    /// client: show what would be written; server: send every write with dryRun=All
    #[arg(long, value_enum, value_name = "MODE", default_value = "none")]
    pub dry_run: DryRun,
    /// After approving, follow the Rollout and approve each later pause up to step N (1 or
    /// more, at most the Rollout's steps)
    #[arg(long, value_name = "N", value_parser = parse_step, allow_hyphen_values = true,
          conflicts_with_all = ["to_end", "traffic_only", "dry_run"])]
    pub until_step: Option<usize>,
    /// After approving, follow the Rollout and approve every later pause until it completes
    #[arg(long, conflicts_with_all = ["traffic_only", "dry_run"])]
    pub to_end: bool,
    /// With --until-step or --to-end: give up waiting this long after the confirmation (e.g.
    /// 30m; 0 for never)
    ///
    /// It ends following the Rollouts, a renewal of the claim meanwhile, and a question at a
    /// later step; a step's writes, once started, are not cut off: the run stops after them.
    #[arg(long, value_parser = parse_duration, allow_hyphen_values = true, value_name = "DURATION", default_value = "0", requires = "follow")]
    pub timeout: Duration,
    /// Show the stored original (the original-spec annotation) in full in diffs, not as
    /// `stored (sha256 …, N bytes)`
    #[arg(long)]
    pub show_stored_original: bool,
    #[command(flatten)]
    pub scripts: ScriptArgs,
    #[command(flatten)]
    pub cluster: ConnectionFlags,
}

#[derive(Args, Debug)]
pub struct StatusArgs {
    #[command(flatten)]
    pub selection: RolloutSelection,
    /// Every namespace's Rollouts (with -l: those it selects), as kubectl get -A
    #[arg(short = 'A', long, conflicts_with = "rollouts")]
    pub all_namespaces: bool,
    /// Follow the Rollouts (a watch) until they complete or fail: a live view on a terminal
    /// (stderr), a line per change otherwise
    #[arg(short = 'w', long)]
    pub watch: bool,
    /// With --watch: give up after this long (e.g. 10m; 0 for never)
    #[arg(long, value_parser = parse_duration, allow_hyphen_values = true, value_name = "DURATION", default_value = "0", requires = "watch")]
    pub timeout: Duration,
    /// With --watch: exit 0 as soon as every Rollout waits for approval (a gate for CI)
    #[arg(long, requires = "watch")]
    pub until_paused: bool,
    /// Print the status as YAML or JSON; with --watch, each Rollout's entry when it changes (the
    /// first read: each): JSON one compact document per line, YAML each after a `---`
    #[arg(short = 'o', long = "output", overrides_with = "output", value_enum)]
    pub output: Option<Format>,
    #[command(flatten)]
    pub scripts: ScriptArgs,
    #[command(flatten)]
    pub cluster: ConnectionFlags,
}

#[derive(Args, Debug)]
pub struct ReleaseClaimArgs {
    #[command(flatten)]
    pub selection: RolloutSelection,
    /// Do not ask for confirmation (required when stdin is not a terminal)
    #[arg(short = 'y', long)]
    pub yes: bool,
    #[command(flatten)]
    pub cluster: ConnectionFlags,
}

#[derive(Args, Debug)]
pub struct RecordArgs {
    /// The Rollout (NAME or rollout/NAME), or a TrafficRouting as trafficrouting/NAME (any
    /// spelling of the type that kubectl takes: TrafficRouting/NAME, trafficroutings/NAME,
    /// trafficrouting.rollouts.kruise.io/NAME, …)
    // Its id is `rollout`, for which completion offers the Rollouts' names.
    #[arg(id = "rollout", value_name = "ROLLOUT", value_parser = crate::source::live::record_argument)]
    pub subject: crate::source::live::RecordSubject,
    /// The test cases' format: YAML, the controller's testdata format (the only one)
    #[arg(short = 'o', long = "output", overrides_with = "output")]
    #[arg(value_enum, value_name = "FORMAT", default_value = "yaml")]
    pub output: RecordFormat,
    /// Write the test cases to FILE instead of stdout, as YAML documents (plan -f FILE replays
    /// them; test replays --dir)
    #[arg(long, value_name = "FILE", conflicts_with = "dir")]
    pub output_file: Option<PathBuf>,
    /// Write the test cases into DIR, laid out as lua_configuration/ (DIR/<group>/<Kind>/testdata/…,
    /// an Ingress case in DIR/trafficrouting_ingress/testdata/<classType>/, with the script next
    /// to them) so that `test DIR` replays them, and `plan -R -f DIR --lua-dir DIR` plans them with
    /// those scripts; a file holding the case of another Rollout or object (another namespace's),
    /// or no case, is never replaced
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub dir: Option<PathBuf>,
    #[command(flatten)]
    pub scripts: ScriptArgs,
    #[command(flatten)]
    pub cluster: ConnectionFlags,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RecordFormat {
    Yaml,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_enum)]
    pub shell: CompletionShell,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
    Powershell,
    Elvish,
    Nushell,
}

#[derive(Args, Debug)]
pub struct CompleteArgs {
    /// The words after `kubectl rollout-lua`, the last one being completed ("" for a new word)
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "WORD")]
    pub words: Vec<String>,
}

#[derive(Args, Debug)]
pub struct RestoreArgs {
    #[command(flatten)]
    pub selection: RolloutSelection,
    /// Restore this gateway object instead of a Rollout's: KIND.GROUP/NAME (KIND.VERSION.GROUP/NAME
    /// names the version), or KIND/NAME for VirtualService (vs), DestinationRule (dr) and Ingress
    /// (ing) (repeatable; one that is not
    /// there fails the run, exit 1, after the others); a custom ref or a canary Ingress, not an
    /// HTTPRoute (restore its Rollout)
    #[arg(long = "ref", value_name = "KIND[.GROUP]/NAME", conflicts_with_all = ["rollouts", "selector"])]
    pub refs: Vec<String>,
    /// Put back an object saved by an earlier write (a file under the backups folder); one that
    /// no longer exists is made again
    #[arg(long, value_name = "FILE", conflicts_with_all = ["rollouts", "selector", "refs"])]
    pub from_backup: Option<PathBuf>,
    /// Restore even when someone edited the objects after the controller (or approve) wrote
    /// them, when a stored original holds no spec (restoring it wipes the object's routing),
    /// (--ref, --from-backup) when the Rollouts that may route the objects cannot be read,
    /// (ROLLOUT, -l) when another Rollout in a release, or a TrafficRouting in a release that
    /// the Rollouts do not link, routes them, or
    /// (--from-backup) when the backup is not whole (no matching end line: cut short, changed,
    /// or an older version's), holds no spec where the live object has one, or is of an object
    /// deleted and made again since
    #[arg(long)]
    pub force: bool,
    /// Do not ask for confirmation (required when stdin is not a terminal)
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// client: show what would be written; server: send every write with dryRun=All
    #[arg(long, value_enum, value_name = "MODE", default_value = "none")]
    pub dry_run: DryRun,
    #[command(flatten)]
    pub scripts: ScriptArgs,
    #[command(flatten)]
    pub cluster: ConnectionFlags,
}

#[derive(Args, Debug)]
pub struct TestArgs {
    /// Script folders (<group>/<Kind>/trafficRouting.lua with a testdata/ folder, and
    /// trafficrouting_ingress/<classType>.lua with testdata/<classType>/) and HTTPRoute cases
    /// (gateway.networking.k8s.io/HTTPRoute/testdata/, run through the Gateway API routing),
    /// searched recursively, or a script file (.lua) with the testdata/ next to it (a testdata/
    /// folder's subfolders too, as go test reads them); default: the built-in scripts. A file of
    /// test cases (record --output-file) is refused: record with --dir DIR and run test DIR
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Print a JSON report instead of text
    #[arg(short = 'o', long = "output", overrides_with = "output", value_enum)]
    pub output: Option<TestFormat>,
    #[command(flatten)]
    pub lua: LuaLimits,
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
    /// The obj the script sees (JSON or YAML; - for stdin), as `plan -f … --show-obj` prints it
    #[arg(long, value_name = "FILE")]
    pub obj: PathBuf,
    /// Run an Ingress script (lua_configuration/trafficrouting_ingress/<classType>.lua): obj has
    /// annotations, weight (a string), matches, canaryService and requestHeaderModifier, and the
    /// returned annotations print as a JSON map with sorted keys (null for none)
    #[arg(long)]
    pub ingress: bool,
    #[command(flatten)]
    pub lua: LuaLimits,
}

#[derive(Args, Debug)]
pub struct LuaObjArgs {
    /// A test case (rollout or trafficRouting, original, expected)
    #[arg(value_name = "CASE")]
    pub case: PathBuf,
    /// lua: a Lua file setting steps.step_1, steps.step_2, …; json or yaml: a list of
    /// {case, step, obj}, one entry of which `eval --obj` reads
    #[arg(short = 'o', long = "output", overrides_with = "output")]
    #[arg(value_enum, value_name = "FORMAT", default_value = "lua")]
    pub output: LuaObjFormat,
    /// Write to FILE instead of stdout
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LuaObjFormat {
    Lua,
    Json,
    Yaml,
}

/// What a command achieved, for the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Done,
    /// Changes are pending; exit 2 under --detailed-exitcode.
    Changes {
        detailed_exitcode: bool,
    },
    /// A failure the command has reported itself (test failures; `restore --ref` of an object
    /// not found, after the others were restored): exit 1, with nothing more said or undone.
    Failed,
}

/// Runs the command line and returns the process exit code.
pub fn run(args: impl IntoIterator<Item = OsString>) -> i32 {
    let mut command = Cli::command();
    let args = match booleans::respelled(&mut command, args.into_iter().collect()) {
        Ok(args) => args,
        Err(e) => {
            let _ = e.print();
            return exit_code(&Ok(Outcome::Failed));
        }
    };
    let parsed = command.try_get_matches_from_mut(&args);
    let cli = match parsed.and_then(|mut matches| Cli::from_arg_matches_mut(&mut matches)) {
        Ok(cli) => cli,
        Err(e) => {
            let e = help::explain(e, &args);
            let _ = e.print();
            // --help and --version succeed; a usage error fails, as kubectl's do (1, not clap's 2).
            return exit_code(&Ok(if e.use_stderr() { Outcome::Failed } else { Outcome::Done }));
        }
    };
    if cli.global.no_color || dumb_terminal() {
        anstream::ColorChoice::Never.write_global();
    }
    if cli.global.verbose >= 6 {
        crate::source::request_log::enable();
    }
    let result = match &cli.command {
        Command::Plan(args) if !args.files.is_empty() || args.kustomize.is_some() => offline::plan(&cli.global, args),
        Command::Plan(args) => cluster::plan(args),
        Command::Approve(args) => approve::approve(args),
        Command::Restore(args) => restore::restore(args),
        Command::Status(args) => status::status(args),
        Command::ReleaseClaim(args) => claim::release_claim(args),
        Command::Record(args) => record::record(args),
        Command::Completions(args) => completion::completions(args),
        Command::Complete(args) => completion::complete(args),
        Command::Test(args) => offline::test(args),
        Command::Eval(args) => offline::eval(args),
        Command::LuaObj(args) => offline::lua_obj(args),
    };
    if let Err(error) = &result
        && !closed_pipe(error)
    {
        show_error(&format!("{error:#}"));
    }
    exit_code(&result)
}

/// An error as the run's last words: `error: MESSAGE` on stderr.
pub(crate) fn show_error(message: &str) {
    crate::stderr::line(&format!("error: {message}"));
}

/// The one place outcomes and errors become exit codes: 0; 2 for changes pending under
/// `--detailed-exitcode`; 1 for errors and failed checks; 3 for a refusal or someone else's edit
/// (nothing of theirs was overwritten); 130, 143 and 129 after SIGINT, SIGTERM and SIGHUP (128 +
/// the signal, as shells report them).
fn exit_code(result: &anyhow::Result<Outcome>) -> i32 {
    match result {
        Ok(Outcome::Done | Outcome::Changes { detailed_exitcode: false }) => 0,
        Ok(Outcome::Changes { detailed_exitcode: true }) => 2,
        Ok(Outcome::Failed) => 1,
        Err(error) if closed_pipe(error) => 0,
        Err(error) => match error.downcast_ref::<Error>() {
            Some(Error::Conflict(_) | Error::Refused(_)) => 3,
            Some(Error::Interrupted { signal: Signal::Interrupt, .. }) => 130,
            Some(Error::Interrupted { signal: Signal::Terminate, .. }) => 143,
            Some(Error::Interrupted { signal: Signal::Hangup, .. }) => 129,
            _ => 1,
        },
    }
}

/// A closed pipe (`| head`) is not a failure.
fn closed_pipe(error: &anyhow::Error) -> bool {
    let broken = |io: &std::io::Error| io.kind() == std::io::ErrorKind::BrokenPipe;
    error.chain().any(|e| {
        e.downcast_ref::<std::io::Error>().is_some_and(broken)
            || matches!(e.downcast_ref::<Error>(), Some(Error::Output(io)) if broken(io))
    })
}

/// TERM=dumb: a terminal that understands no escape sequences, neither colour nor cursor moves.
pub(crate) fn term_is_dumb() -> bool {
    std::env::var_os("TERM").is_some_and(|term| term == "dumb")
}

/// Colour off for a dumb terminal, which anstream would still colour when `CI` or `CLICOLOR` is
/// set; `CLICOLOR_FORCE` still wins, by anstream's own reading of it.
fn dumb_terminal() -> bool {
    term_is_dumb() && !anstyle_query::clicolor_force()
}

/// Writes text for people to stdout, made terminal-safe (`output::terminal_safe`), with its
/// colour codes dropped where colour is off (not a terminal, NO_COLOR, TERM=dumb,
/// --no-color), in one write.
pub(crate) fn print(text: &str) -> std::io::Result<()> {
    let colour = anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never;
    print_raw(&output::terminal_safe(text, colour))
}

/// A warning on stderr (above a live view), in yellow where colour is on; a stderr that cannot
/// be written is no reason to fail.
pub(crate) fn warn(text: &str) {
    crate::stderr::line(&crate::output::paint(crate::output::YELLOW, text));
}

/// Warns, once per run, of the keys of the script ConfigMap (when it was read) that the
/// controller never uses (`ConfigMapScripts::unused_keys`). `said` holds the warnings already
/// given: `plan -A` loads each namespace's Rollouts with the one ConfigMap read for them all.
pub(crate) fn warn_unused_configmap_keys(
    configmap: Option<&crate::scripts::ConfigMapScripts>,
    said: &mut std::collections::BTreeSet<String>,
) {
    for warning in configmap.into_iter().flat_map(crate::scripts::ConfigMapScripts::unused_keys) {
        if said.insert(warning.clone()) {
            warn(&format!("warning: {warning}"));
        }
    }
}

/// What scripts printed (`[script] …` lines), on stderr, made terminal-safe (the engine escapes
/// control characters; bytes that are not UTF-8 show as U+FFFD, bidirectional-text controls
/// escaped). Like the controller's log it never fails the run: not even when stderr is a closed
/// pipe (`… 2>&1 | head -1`).
pub(crate) fn show_printed(printed: &[u8]) {
    if !printed.is_empty() {
        let text = String::from_utf8_lossy(printed);
        crate::stderr::write(|| {
            let _ = std::io::stderr().lock().write_all(crate::output::terminal_safe(&text, true).as_bytes());
        });
    }
}

/// Writes machine output to stdout byte for byte (anstream would also strip control characters).
pub(crate) fn print_raw(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Plans as `plan` prints them: diffs, a line per step and object (`--summary`), or a YAML/JSON
/// document.
pub(crate) fn print_plans(plans: &[crate::plan::RoutingPlan], args: &PlanArgs) -> std::io::Result<()> {
    match args.output {
        None if args.summary => print(&output::plan_lines(plans)),
        None => {
            let style =
                output::DiffStyle { differ: &diff::differ(), stored: stored_original(args.show_stored_original) };
            print(&output::plan_text(plans, style).map_err(std::io::Error::other)?)
        }
        Some(format) => print_raw(&offline::render(&output::plan_document(plans), format)),
    }
}

/// A print whose reader is gone (a closed pipe: `| head`), taken as read: what the command found
/// before printing it stands (a plan's `--detailed-exitcode` answer, a Rollout that could not be
/// planned, a sequence that did all it was asked), where a closed pipe would end it with 0.
pub(crate) fn read_or_gone(printed: std::io::Result<()>) -> std::io::Result<()> {
    match printed {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        printed => printed,
    }
}

/// How diffs show the stored original: `--show-stored-original` in full, else as one short line.
pub(crate) fn stored_original(show: bool) -> output::StoredOriginal {
    if show { output::StoredOriginal::Full } else { output::StoredOriginal::Summary }
}

/// The question the writer may ask (whether to overwrite someone else's edit): only on a
/// terminal, and never with `--yes` (which covers only what was shown before).
pub(crate) fn terminal_question(yes: bool) -> Option<crate::write::Ask> {
    use std::io::IsTerminal;
    let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    (terminal && !yes).then_some(|question: &str| confirm(question, false))
}

/// Asks a yes/no question on the terminal; refuses without one unless `yes`.
pub(crate) fn confirm(question: &str, yes: bool) -> Result<(), Error> {
    use std::io::IsTerminal;
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return Err(Error::Refused(
            "nothing was written: there is no terminal to confirm on; pass --yes to go ahead without asking".into(),
        ));
    }
    let answer = dialoguer::Input::<String>::with_theme(&dialoguer::theme::SimpleTheme)
        .with_prompt(format!("{question} Only 'yes' goes ahead"))
        .allow_empty(true)
        .interact_text();
    match answer {
        Ok(answer) if answer.trim() == "yes" => Ok(()),
        Ok(_) => Err(Error::Refused("nothing was written: not confirmed".into())),
        // Ctrl-C: the keys are read with the terminal in raw mode, so it sent no SIGINT; the
        // prompt raised one itself, which the signal listener also sees.
        Err(dialoguer::Error::IO(e)) if e.kind() == std::io::ErrorKind::Interrupted => {
            Err(Error::Interrupted { signal: Signal::Interrupt, report: "stopped at the question".into() })
        }
        Err(e) => Err(Error::Input(format!("reading the answer: {e}"))),
    }
}

/// What the command modules' unit tests share: a command line parsed, a Rollout's status.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Cli, Command};
    use clap::Parser;
    use serde_json::{Value, json};

    /// The command `args` give (without the program's name), as the command line parses it.
    pub fn command(args: &[&str]) -> Command {
        Cli::try_parse_from(std::iter::once("kubectl-rollout_lua").chain(args.iter().copied())).unwrap().command
    }

    /// A Rollout status in phase `phase` at step `step` of `strategy` (`canary` or `blueGreen`)
    /// in `state`, with `extra` fields besides.
    pub fn status_at(strategy: &str, phase: &str, step: usize, state: &str, extra: Value) -> Value {
        let sub = if strategy == "blueGreen" { "blueGreenStatus" } else { "canaryStatus" };
        let mut status = json!({"phase": phase, sub: {"currentStepIndex": step, "currentStepState": state}});
        status.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        status
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    /// An exit-code text names only refusals its command can make: a flag it names is one of
    /// that command's, and restore (no step guard) names none of approve's step refusals.
    #[test]
    fn exit_code_texts_name_what_their_command_can_refuse() {
        let root = Cli::command();
        for command in root.get_subcommands() {
            let after = command.get_after_help().map(|h| h.to_string()).unwrap_or_default();
            let codes = after.split("\n\nExit codes:").nth(1).unwrap_or_default();
            for word in codes.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
                if let Some(flag) = word.strip_prefix("--") {
                    let known = command.get_arguments().chain(root.get_arguments()).any(|a| a.get_long() == Some(flag));
                    assert!(known, "{}'s exit codes name --{flag}, which it does not take", command.get_name());
                }
            }
        }
        let restore = write_exit_codes(RESTORE_REFUSALS);
        for approve_only in ["StepPaused", "step state", "expect"] {
            assert!(!restore.contains(approve_only), "restore's exit codes name {approve_only}:\n{restore}");
        }
        assert!(write_exit_codes(APPROVE_REFUSALS).contains("--expect-step"));
    }

    #[test]
    fn exit_codes_come_from_the_outcome_or_the_kind_of_failure() {
        let code = |error: Error| exit_code(&Err(error.into()));
        assert_eq!(exit_code(&Ok(Outcome::Done)), 0);
        assert_eq!(exit_code(&Ok(Outcome::Changes { detailed_exitcode: false })), 0);
        assert_eq!(exit_code(&Ok(Outcome::Changes { detailed_exitcode: true })), 2);
        assert_eq!(exit_code(&Ok(Outcome::Failed)), 1);
        assert_eq!(code(Error::Input("x".into())), 1);
        let failure = crate::error::ApiFailure { code: Some(500), reason: "X".into(), message: "m".into() };
        assert_eq!(code(Error::Api { doing: "d".into(), failure }), 1);
        assert_eq!(code(Error::TimedOut("t".into())), 1);
        assert_eq!(code(Error::Refused("r".into())), 3);
        assert_eq!(code(Error::Refused("r".into()).with_report("  rolled back X")), 3);
        assert_eq!(code(Error::Conflict("c".into())), 3);
        assert_eq!(code(Error::Interrupted { signal: Signal::Interrupt, report: String::new() }), 130);
        assert_eq!(code(Error::Interrupted { signal: Signal::Terminate, report: String::new() }), 143);
        assert_eq!(code(Error::Interrupted { signal: Signal::Hangup, report: String::new() }), 129);
        assert_eq!(code(Error::Output(std::io::ErrorKind::BrokenPipe.into())), 0);
        assert_eq!(code(Error::Output(std::io::ErrorKind::StorageFull.into())), 1);
        assert_eq!(exit_code(&Err(anyhow::anyhow!("not one of ours"))), 1);
    }
}
