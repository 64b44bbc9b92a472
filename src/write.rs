//! The writer: applies changes (`change::Change`) in a [`Mode`], for `approve` and `restore`.
//! Under a claim on each Rollout (`claim`), every write is backed up locally first and
//! conditional on the resourceVersion this run last saw. A conflict is retried only when
//! nobody changed what the change is about; otherwise it is refused, showing the other edit.
//! A write whose reply is lost, garbled, timed out or a server error (5xx) is resolved by
//! reading the object again, and reported as what became of its reply (`ApiFailure::unheard`).
//! A rollback undoes exactly what this run wrote, and only where nobody changed it since.
//! Signals (`interrupt`: SIGINT, SIGTERM, SIGHUP) stop the run before its next write; a second
//! one stops it at once. A question renews the claims while it waits, and one asked after the
//! confirmation ends at the run's `deadline` (`approve --timeout`).

mod claim;
mod deadline;
mod interrupt;

use claim::Attempt;
pub use claim::{Claim, LEASE_DURATION, lease_key, lease_resource, release_shown, view as claim_view};
pub use deadline::{Deadline, within};
pub use interrupt::Interrupt;

use crate::change::{self, Change, Landed, Request, resource_version_of, without_server_fields};
use crate::data;
use crate::error::{ApiFailure, Error, Signal};
use crate::model::{self, ObjectKey, Permission};
use crate::output;
use crate::rbac;
use crate::source::cluster::{Cluster, Resource};
use crate::source::files::{self, Existing};
use crate::stderr;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

/// What a writing command says when the first signal arrives.
pub const STOPPING: &str = "no new write of the plan starts; the one in flight is finished, what the run wrote is rolled back (or kept where approved, or where that write was the run's last), then the run stops";

/// How often a question asked after the confirmation looks whether the claims are due for
/// renewal (`Claim::keep` sends a request only when one is).
const CLAIMS_CHECKED_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// How often one write is sent again after a conflict that nobody's edit explains (the server's
/// bookkeeping, the controller's status updates).
const CONFLICT_RETRIES: usize = 3;

/// Where backups go: `$XDG_STATE_HOME/kubectl-rollout-lua/backups/<context>/<namespace>/<kind>/<name>/<time>.yaml`,
/// readable by their owner only (Unix: folders 0700, files 0600).
#[derive(Clone)]
pub struct Backups {
    /// `…/kubectl-rollout-lua/backups`.
    root: PathBuf,
    context: String,
    /// The API server's URL, written in each backup: contexts of one name (`kind-kind`,
    /// `kubernetes-admin@kubernetes`) may be other clusters' on other machines or at other times.
    server: String,
}

/// What a backup's first line starts with; the API server's URL follows.
const BACKUP_SERVER: &str = "# server: ";

/// What a backup's last line starts with; the SHA-256 of the text above it follows, so that
/// `restore --from-backup` tells a whole backup from one cut short (a full disk, a crash).
const BACKUP_END: &str = "# end of backup: sha256 ";

/// A backup file's text: the line naming the API server it was read from, the object's YAML,
/// then the end line.
pub fn backup_text(object: &Value, server: &str) -> String {
    let mut text = format!("{BACKUP_SERVER}{server}\n{}", crate::yaml::to_string(object));
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let sum = crate::scripts::sha256_hex(&text);
    format!("{text}{BACKUP_END}{sum}\n")
}

/// Why `text` is not a whole backup as `backup_text` writes them, if it is not.
pub fn backup_flaw(text: &str) -> Option<&'static str> {
    let last_line_at = text.strip_suffix('\n').and_then(|text| text.rfind('\n')).map_or(0, |at| at + 1);
    let (above, last_line) = text.split_at(last_line_at);
    match last_line.strip_prefix(BACKUP_END).and_then(|sum| sum.strip_suffix('\n')) {
        None if last_line.starts_with("# end of backup:") => Some(
            "has an end line this version does not read (it reads `# end of backup: sha256 …`): it was written by another version, or changed since",
        ),
        None => Some("has no end line (`# end of backup: sha256 …`): it was written by an older version, or cut short"),
        Some(sum) if sum != crate::scripts::sha256_hex(above) => Some(
            "does not match its end line (`# end of backup: sha256 …`): it was changed since it was written, or cut short",
        ),
        Some(_) => None,
    }
}

/// The API server a backup's text says it was read from (`None`: an older version's, which
/// did not say).
pub fn backup_server(text: &str) -> Option<&str> {
    text.lines().next()?.strip_prefix(BACKUP_SERVER)
}

/// The object the backup file at `path` holds, if it is the object with `uid` (any, when
/// `None`) read from `server` (or an older version's backup, which does not say).
fn backup_of(path: &std::path::Path, uid: Option<&str>, server: &str) -> Option<Value> {
    let text = files::read_text(path, files::OBJECT).ok()?;
    if backup_server(&text).is_some_and(|saved| saved != server) {
        return None;
    }
    let object = crate::yaml::parse_documents(&text, &path.display().to_string()).ok()?.into_iter().next()?.value;
    let saved = object["metadata"]["uid"].as_str();
    uid.is_none_or(|uid| saved == Some(uid)).then_some(object)
}

/// For a permission refused under the backups folder: the nearest folder above `path` that
/// exists and whose owner (`ls -ld` tells) may not be you: one made by a run as root that kept
/// your HOME (`sudo`), say.
fn not_yours(path: &std::path::Path, error: &std::io::Error) -> String {
    if error.kind() != std::io::ErrorKind::PermissionDenied {
        return String::new();
    }
    match path.ancestors().find(|folder| folder.is_dir()) {
        Some(folder) => format!(
            " ({} is not writable by you; a run as root that kept your HOME (sudo) makes such folders: `sudo chown -R \"$(id -un)\" {}` gives them back)",
            folder.display(),
            folder.display()
        ),
        None => String::new(),
    }
}

/// A name as one folder of the backups: `/` is `_`, and `.` and `..` (a context may be called
/// so) are `%2E` and `%2E%2E`, which lead nowhere else.
fn path_part(name: &str) -> String {
    match name {
        "." => "%2E".into(),
        ".." => "%2E%2E".into(),
        _ => name.replace('/', "_"),
    }
}

impl Backups {
    /// The backups of `context` under `state_home` (`$XDG_STATE_HOME`, else `$HOME/.local/state`,
    /// each only when absolute: `files::xdg_dir`, read by the caller); an error when there is
    /// none: never a folder others can read or make first, as a shared `/tmp` would be.
    pub fn new(context: &str, server: &str, state_home: Option<PathBuf>) -> Result<Backups, Error> {
        let state = state_home.ok_or_else(|| {
            Error::Input(
                "nothing was written: there is no folder for backups: neither XDG_STATE_HOME nor HOME is set (to an absolute path); set one (backups go to $XDG_STATE_HOME/kubectl-rollout-lua/backups, by default ~/.local/state/kubectl-rollout-lua/backups)".into(),
            )
        })?;
        let context = if context.is_empty() { "default" } else { context };
        Ok(Backups {
            root: state.join("kubectl-rollout-lua/backups"),
            context: path_part(context),
            server: server.into(),
        })
    }

    /// The backups of `cluster` (its context's, `Cluster::backup_folder`) in this user's state
    /// folder (`Backups::new`).
    pub fn of_cluster(cluster: &Cluster) -> Result<Backups, Error> {
        Backups::new(&cluster.backup_folder, &cluster.server, files::xdg_dir("XDG_STATE_HOME", ".local/state"))
    }

    /// Saves the object as read; the path is reported so `restore --from-backup` can use it.
    /// Written whole or not at all (`files::write_whole`): a failed save leaves nothing under a
    /// backup's name.
    pub fn save(&self, object: &Value) -> Result<PathBuf, Error> {
        let field = |name: &str| object["metadata"][name].as_str().unwrap_or("_");
        let dir = self.folder(field("namespace"), object["kind"].as_str().unwrap_or("Object"), field("name"));
        self.make_folder(&dir).map_err(|e| {
            Error::Input(format!("creating the backup folder {}: {e}{}", dir.display(), not_yours(&dir, &e)))
        })?;
        let text = backup_text(object, &self.server);
        // A file per save, never one written over: an object saved twice in one run (its state
        // before the run, then an edit this run overwrote) may be saved twice in a millisecond;
        // the next millisecond's name is then tried (a few times: the clock moves on).
        let mut tries = 10;
        loop {
            tries -= 1;
            let path = dir.join(format!("{}.yaml", crate::time::file_timestamp(SystemTime::now())));
            let saved = files::write_whole(&path, text.as_bytes(), Existing::Keep, files::OWNER_ONLY);
            match saved {
                Ok(()) => return Ok(path),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries > 0 => {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return Err(Error::Input(format!(
                        "writing the backup {}: backups of each of the last few milliseconds' names exist already (this host's clock went back?); backups are never written over: try again once the clock has passed them",
                        path.display()
                    )));
                }
                Err(e) => {
                    return Err(Error::Input(format!(
                        "writing the backup {}: {e}{}",
                        path.display(),
                        not_yours(&dir, &e)
                    )));
                }
            }
        }
    }

    /// The folder of the backups of `key`.
    pub fn folder_of(&self, key: &ObjectKey) -> PathBuf {
        self.folder(&key.namespace, &key.kind, &key.name)
    }

    /// The folder of an object's backups.
    fn folder(&self, namespace: &str, kind: &str, name: &str) -> PathBuf {
        self.root.join(&self.context).join(path_part(namespace)).join(path_part(kind)).join(path_part(name))
    }

    /// The oldest backup of `key` here (their names are times, which sort) that holds the object
    /// with `uid`, if there is one: the object before the first write a run of this tool made to
    /// it. A backup of an object of that name deleted since (another uid: `restore
    /// --from-backup` refuses it), one whose uid cannot be read, and one read from another API
    /// server (a context of the same name) are passed over.
    pub fn oldest_of(&self, key: &ObjectKey, uid: Option<&str>) -> Option<PathBuf> {
        self.files_of(key).into_iter().find(|path| backup_of(path, uid, &self.server).is_some())
    }

    /// The newest backup of `key` here that holds the object with `uid` without a stored
    /// original (`data::ORIGINAL_SPEC_ANNOTATION`): its state before the latest release this
    /// tool wrote it in, which an older one's would undo the edits made since.
    pub fn before_latest_release(&self, key: &ObjectKey, uid: Option<&str>) -> Option<PathBuf> {
        self.files_of(key).into_iter().rev().find(|path| {
            backup_of(path, uid, &self.server).is_some_and(|object| {
                object["metadata"]["annotations"][crate::data::ORIGINAL_SPEC_ANNOTATION].is_null()
            })
        })
    }

    /// The backup files of `key` here, oldest first (their names are times, which sort).
    fn files_of(&self, key: &ObjectKey) -> Vec<PathBuf> {
        let folder = self.folder_of(key);
        let Ok(entries) = std::fs::read_dir(&folder) else { return Vec::new() };
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|name| name.ends_with(".yaml") && !name.starts_with('.'))
            .collect();
        names.sort();
        names.into_iter().map(|name| folder.join(name)).collect()
    }

    /// Makes `dir` and the folders above it that are missing, for their owner only; the backups'
    /// own folder is closed too when an older version made it readable by others.
    fn make_folder(&self, dir: &std::path::Path) -> std::io::Result<()> {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
            builder.mode(0o700).create(dir)?;
            let mode = std::fs::metadata(&self.root)?.permissions().mode();
            if mode & 0o077 != 0 {
                std::fs::set_permissions(&self.root, std::fs::Permissions::from_mode(mode & 0o700))?;
            }
            Ok(())
        }
        #[cfg(not(unix))]
        builder.create(dir)
    }
}

/// How the writer treats changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Write them.
    Apply,
    /// Write nothing (`--dry-run=client`).
    ClientDryRun,
    /// Send each with `dryRun=All`: admission judges it, nothing is stored (`--dry-run=server`).
    ServerDryRun,
}

/// What became of an object this run wrote.
#[derive(Clone, Debug, PartialEq)]
enum Fate {
    Written,
    RolledBack,
    /// Left as this run wrote it, and why.
    Kept(String),
    /// Its rollback failed, or its outcome is unknown (`unsure`): the object is, or may be, as
    /// this run wrote it, and its backup puts it back (`FROM_BACKUP`).
    NotRolledBack {
        why: String,
        unsure: bool,
    },
}

/// The ways back after the report's lines: `FROM_BACKUP` when an object with a backup (`Some`
/// beside its fate) was left not rolled back, or its undo was out (`in_flight`) when a second
/// signal stopped the run; `MADE_LEFT` when an object this run made (no backup) was, or may
/// have been, left (its create out, or unheard: `made_unheard`). Not for one kept on purpose,
/// nor for one whose own line says its way back (one being deleted, held by its finalizers:
/// kept).
fn way_back<'a>(
    fates: impl IntoIterator<Item = (&'a Fate, Option<&'a PathBuf>)>,
    in_flight: Option<&InFlight>,
    made_unheard: bool,
) -> Vec<&'static str> {
    let (mut with_backup, mut made) = match in_flight {
        Some(out) if out.undoing => (out.backup.is_some(), out.backup.is_none()),
        Some(out) => (false, out.makes),
        None => (false, false),
    };
    made |= made_unheard;
    for (fate, backup) in fates {
        if matches!(fate, Fate::NotRolledBack { .. }) {
            with_backup |= backup.is_some();
            made |= backup.is_none();
        }
    }
    [(with_backup, FROM_BACKUP), (made, MADE_LEFT)].into_iter().filter(|(due, _)| *due).map(|(_, way)| way).collect()
}

/// A write whose outcome was unknown that a fresh read resolved.
#[derive(Clone, Debug)]
struct Resolved {
    /// What the read showed: `Applied` or `MovedOn` for a write that landed (read again before
    /// a rollback, also one kept as someone else's since).
    landed: Landed,
    /// What became of its reply (`ApiFailure::unheard`).
    reply: String,
}

/// A request out for an object (a write, the read that resolves one, or a rollback), or one
/// whose outcome is still open: what the object may be.
struct InFlight {
    key: ObjectKey,
    /// Its state before this run.
    backup: Option<PathBuf>,
    /// What a request out for it may have done (`may_be`), the same for a rollback, or what an
    /// unheard write may be (`Unheard::out`).
    may_be: String,
    /// The request makes the object (it did not exist before this run).
    makes: bool,
    /// The request is a rollback's undo: the object may be left as this run wrote it.
    undoing: bool,
}

/// A write whose outcome was unknown (no answer, a 5xx) and that was not seen applied: a fresh
/// read showed it not applied, or failed. The server may still apply it (a 504 says it "may
/// still be processing"), even after this run's next request.
struct Unheard {
    key: ObjectKey,
    /// Its state before this run.
    backup: Option<PathBuf>,
    how: MayLand,
    change: Change,
    resource: Resource,
    /// The object as this run last saw it when it sent the write (its precondition).
    sent_over: Option<Value>,
    /// What became of its reply (`ApiFailure::unheard`).
    reply: String,
}

impl Unheard {
    /// Whether `fresh` (None: not found) is this write, landed.
    fn landed_as(&self, fresh: Option<&Value>) -> bool {
        self.change.landed(self.sent_over.as_ref(), fresh) == Landed::Applied
    }

    /// What the object may be, as a request out for it.
    fn out(&self) -> InFlight {
        let reply = &self.reply;
        let may_be = match self.how {
            MayLand::ReadBackUnapplied => {
                format!("not applied when read back ({reply}; the server may still apply it)")
            }
            MayLand::Unread => {
                may_be(&self.change, &format!("{reply}; it could not be read again; the server may still apply it"))
            }
        };
        let makes = matches!(self.change, Change::Create { .. });
        InFlight { key: self.key.clone(), backup: self.backup.clone(), may_be, makes, undoing: false }
    }
}

/// Where a line of the report names an object's state before this run (or, at a later step of
/// a follow run, before that step), in one form on every line: ` (its state before this run:
/// FILE)` (`backup` says what it holds), ` (it did not exist before this run)` for one the run
/// made, or nothing (neither: a Rollout's approval); with `theirs` (`; …` for each edit of
/// someone else's the run overwrote, or may have) inside.
fn state_before(backup: Option<(&str, &PathBuf)>, made: bool, theirs: &str) -> String {
    match backup {
        Some((holds, backup)) => format!(" ({holds}: {}{theirs})", backup.display()),
        None if made => format!(" (it did not exist before this run{theirs})"),
        None => theirs.strip_prefix("; ").map(|theirs| format!(" ({theirs})")).unwrap_or_default(),
    }
}

/// What became of the object of a write that landed, in the report: one this run `made` is said
/// to be made, whatever wrote it last (a canary Ingress's patch after its create).
fn done_by(change: &Change, made: bool) -> &'static str {
    match change {
        Change::Delete { .. } => "deleted",
        _ if made => "made",
        Change::Create { .. } => "made",
        _ => "written",
    }
}

/// What the object of a write whose outcome is unknown may be, and why (a request lands whole
/// or not at all).
fn may_be(change: &Change, why: &str) -> String {
    let what = match change {
        Change::Create { .. } => "may or may not have been made",
        Change::Delete { .. } => "may or may not be deleted",
        _ => "may or may not be written",
    };
    format!("{what} ({why})")
}

/// Why a write's outcome is unknown while its request is out.
const OUT: &str = "its request was out";
/// An undo that failed: the object stays as this run wrote it.
const COULD_NOT: &str = "could NOT roll back";
/// After a report that names an object not rolled back that has a backup.
const FROM_BACKUP: &str =
    "  `kubectl rollout-lua restore --from-backup FILE` puts an object not rolled back as its backup FILE holds it";
/// After a report that names an object this run made that is, or may be, left.
const MADE_LEFT: &str =
    "  `kubectl delete` removes an object this run made (`it did not exist before this run`) that is, or may be, left";
const ROLLBACK_UNSURE: &str = "may or may not be rolled back";
const ROLLBACK_OUT: &str = "may or may not be rolled back (its rollback was out)";
/// After a report that names a request whose outcome is unknown.
const UNSURE: &str = "`kubectl rollout-lua status` shows where each object now stands against its Rollout's steps";
/// A write whose outcome was unknown, and a fresh read showed someone else's change.
const LANDED_THEN_CHANGED: &str = "may have been written by this run before someone else changed it";
/// The same for a create: the object may as well be theirs from the start.
const MADE_THEN_CHANGED: &str = "may have been made by this run and changed by someone else since, or made by them";
const SOMEONE_CHANGED_IT: &str = "NOT rolled back: someone changed it since this run wrote it";
const SOMEONE_DELETED_IT: &str = "NOT rolled back: someone deleted it since this run wrote it";
/// This run's delete landed (its reply unheard), and someone made the object again since.
const MADE_AGAIN: &str = "deleted by this run, then made again by someone else: theirs, left alone";
const ROLLED_BACK_MADE_AGAIN: &str = "rolled back (deleted), then made again by someone else: theirs, left alone";

/// What a write whose outcome was unknown may have been, once a fresh read shows someone else's
/// change.
fn landed_then_changed(change: &Change) -> &'static str {
    match change {
        Change::Create { .. } => MADE_THEN_CHANGED,
        _ => LANDED_THEN_CHANGED,
    }
}

/// How a write the server may still apply was left (`Writer::may_land`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MayLand {
    /// A fresh read showed it not applied.
    ReadBackUnapplied,
    /// Reading it again failed too.
    Unread,
}

/// Whether a failed renewal of the claims stops the writer's next request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Renewal {
    /// It does: the run's own writes.
    Required,
    /// It does not: the rollback's requests. Each undo is conditional on this run's own write,
    /// so it never lands over anyone's, claim or not.
    BestEffort,
    /// One failed during the rollback, which goes on without renewing.
    GivenUp,
}

/// `  the claim on Rollout NS/NAME {what} left to expire …, or release-claim releases it`.
fn claim_left(namespace: &str, rollout: &str, what: &str) -> String {
    format!(
        "  the claim on Rollout {namespace}/{rollout} {what} left to expire ({}s after its last renewal), or `kubectl rollout-lua release-claim {}` releases it",
        LEASE_DURATION.as_secs(),
        model::rollout_args(namespace, rollout),
    )
}

/// `; it expires within …s, or release-claim releases it`: the end of a warning about a claim of
/// this run's that is not released.
fn expires_or_release(namespace: &str, rollout: &str) -> String {
    format!(
        "; it expires within {}s, or `kubectl rollout-lua release-claim {}` releases it",
        LEASE_DURATION.as_secs(),
        model::rollout_args(namespace, rollout)
    )
}

/// One write this run made.
struct Written {
    change: Change,
    resource: Resource,
    /// The object as the server stored it (None after a delete).
    stored: Option<Value>,
    backup: Option<PathBuf>,
    /// Its outcome was unknown; a fresh read showed it landed.
    resolved: Option<Resolved>,
    fate: Fate,
    /// How many times the command had read the objects again before it: the step of a
    /// sequence (`approve --until-step`) it was written at.
    round: usize,
}

/// A question the writer may ask on a terminal (the command's `confirm`); None: never ask.
pub type Ask = fn(&str) -> Result<(), Error>;

pub struct Writer<'a> {
    cluster: &'a Cluster,
    mode: Mode,
    /// Where the run saves its backups; None in a dry run, which saves none (and needs no
    /// place for them).
    backups: Option<Backups>,
    interrupt: Interrupt,
    ask: Option<Ask>,
    claims: Vec<Claim>,
    /// The Rollout (namespace, name) whose claim is being taken: a second signal may stop the
    /// run after the Lease was created, before this run heard of it.
    claiming: Option<(String, String)>,
    /// The Rollout whose claim's release was out when a second signal stopped the run: it may
    /// have been released.
    releasing: Option<(String, String)>,
    /// Whether the release left a claim (warned of above the report): a restore, the way back,
    /// waits for it.
    unreleased: bool,
    /// The backups of objects this run wrote nothing to whose removal was out when a second
    /// signal stopped the run: they may be left.
    unremoved: Vec<(ObjectKey, PathBuf)>,
    /// The object whose backup is being saved: a second signal may stop the run while the save
    /// goes on, and the file is then left.
    saving: Option<ObjectKey>,
    written: Vec<Written>,
    /// How many times the command read the objects again (`read_again`): the writes of earlier
    /// rounds are an earlier step's (`approve --until-step`).
    rounds: usize,
    /// Whether the claims are renewed before the next request whenever they were last: a later
    /// step's first write comes after a wait in which someone may have released one, or taken
    /// it over (a renewal every 20s would find that after the step's writes).
    confirm_claims: bool,
    /// Each object as this run last read or wrote it: the resourceVersion of its next write.
    seen: BTreeMap<ObjectKey, Value>,
    /// `--dry-run=server`: each object's verdict.
    verdicts: BTreeMap<ObjectKey, Result<(), String>>,
    /// `--dry-run=server`: the objects a creation of this run would have made.
    made: BTreeSet<ObjectKey>,
    /// The object a request is out for.
    in_flight: Option<InFlight>,
    /// Backups of the edits someone else made that this run overwrote, as asked
    /// (`Overwrite their change?`): the backup of an object holds its state before this run.
    overwritten: Vec<(ObjectKey, PathBuf)>,
    /// Every backup this run saved, of which object.
    saved: Vec<(ObjectKey, PathBuf)>,
    /// Writes whose outcome is still unknown: the server may still apply them.
    may_land: Vec<Unheard>,
    /// Objects a delete of this step found gone (404): someone else, or the controller,
    /// deleted them meanwhile, as this run meant to. Emptied when the objects are read again.
    already_gone: Vec<ObjectKey>,
    renewal: Renewal,
    /// A second signal stopped the run at once: nothing more is sent, not even a rollback or the
    /// release of a claim.
    stopped: Option<Signal>,
    /// When the run gives up waiting (`approve --timeout`, from the confirmation on): a question
    /// asked after it ends then.
    deadline: Option<Deadline>,
}

impl<'a> Writer<'a> {
    /// A writer in `mode`; an error, before anything is written, when a run that writes has no
    /// place for its backups.
    pub fn new(cluster: &'a Cluster, mode: Mode, interrupt: Interrupt, ask: Option<Ask>) -> Result<Writer<'a>, Error> {
        let backups = match mode {
            Mode::Apply => Some(Backups::of_cluster(cluster)?),
            Mode::ClientDryRun | Mode::ServerDryRun => None,
        };
        Ok(Writer {
            cluster,
            mode,
            backups,
            interrupt,
            ask,
            claims: Vec::new(),
            claiming: None,
            releasing: None,
            unreleased: false,
            unremoved: Vec::new(),
            saving: None,
            written: Vec::new(),
            rounds: 0,
            confirm_claims: false,
            seen: BTreeMap::new(),
            verdicts: BTreeMap::new(),
            made: BTreeSet::new(),
            in_flight: None,
            overwritten: Vec::new(),
            saved: Vec::new(),
            may_land: Vec::new(),
            already_gone: Vec::new(),
            renewal: Renewal::Required,
            stopped: None,
            deadline: None,
        })
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn interrupt(&self) -> &Interrupt {
        &self.interrupt
    }

    /// Bounds the run's waiting from now on (see `deadline`).
    pub fn give_up_at(&mut self, deadline: Option<Deadline>) {
        self.deadline = deadline;
    }

    pub fn deadline(&self) -> Option<Deadline> {
        self.deadline
    }

    /// Claims Rollout `namespace/rollout` for this run (nothing to claim in a dry run). A signal
    /// that came before or while it was taken stops the run here, before anything is read or
    /// planned under it.
    pub async fn claim(&mut self, namespace: &str, rollout: &str, command: &str) -> Result<(), Error> {
        if self.mode != Mode::Apply {
            return Ok(());
        }
        self.check_interrupt().await?;
        self.claiming = Some((namespace.into(), rollout.into()));
        let claim = match Claim::take(self.cluster, namespace, rollout, command).await {
            Ok(Attempt::Taken(claim)) => Ok(claim),
            Ok(Attempt::ExpiredLately(held)) => {
                let watched = tokio::select! {
                    watched = Claim::watch_unrenewed(self.cluster, namespace, rollout, held) => watched,
                    signal = self.interrupt.wait_for(1) => {
                        Err(Error::Interrupted { signal, report: "no new write was started".into() })
                    }
                };
                match watched {
                    Ok(held) => Claim::take_over(self.cluster, namespace, rollout, command, held).await,
                    Err(e) => Err(e),
                }
            }
            Err(e) => Err(e),
        };
        self.claiming = None;
        match claim {
            Ok(claim) => self.claims.push(claim),
            // The Lease's create may still be applied (a 504, no answer), and then hold the
            // Rollout until it expires.
            Err(Error::Api { doing, failure }) if failure.outcome_unknown() => {
                let may_hold = "may still be taken (the server may still apply its request); if so, it is";
                return Err(Error::Api { doing, failure }.with_report(&claim_left(namespace, rollout, may_hold)));
            }
            Err(error) => return Err(error),
        }
        self.check_interrupt().await
    }

    /// Whether this run holds the claim on Rollout `namespace/rollout`.
    pub fn holds_claim(&self, namespace: &str, rollout: &str) -> bool {
        self.claims.iter().any(|claim| claim.rollout() == (namespace, rollout))
    }

    /// Renews the claims that need it (before each write, and while a long run waits); after a
    /// later step's `read_again`, each, whatever its age.
    pub async fn keep_claims(&mut self) -> Result<(), Error> {
        let confirm = std::mem::take(&mut self.confirm_claims);
        for claim in &mut self.claims {
            match confirm {
                true => claim.confirm(self.cluster).await?,
                false => claim.keep(self.cluster).await?,
            }
        }
        Ok(())
    }

    /// Releases every claim, unless a second signal stops it (the claims left stay in
    /// `claims`); returns a warning per claim that could not be released. Once the API
    /// server stopped answering (`Cluster::answering`), none is sent: the release (a delete,
    /// and a read when that is not answered either) would wait out the request timeout twice
    /// per claim, and a claim expires by itself.
    async fn release_claims(&mut self) -> Vec<String> {
        if !self.cluster.answering() {
            let left = std::mem::take(&mut self.claims);
            self.unreleased = !left.is_empty();
            return left.iter().map(|claim| {
                let (namespace, rollout) = claim.rollout();
                format!(
                    "warning: the claim on Rollout {namespace}/{rollout} was not released, as the API server did not answer the run's last requests{}",
                    expires_or_release(namespace, rollout)
                )
            }).collect();
        }
        let mut warnings = Vec::new();
        while self.stopped.is_none()
            && let Some(claim) = self.claims.last()
        {
            let released = match self.interrupt.unless_second(claim.release(self.cluster)).await {
                Ok(released) => released,
                Err(signal) => {
                    self.stopped = Some(signal);
                    let (namespace, rollout) = claim.rollout();
                    self.releasing = Some((namespace.to_string(), rollout.to_string()));
                    self.claims.pop();
                    break;
                }
            };
            let claim = self.claims.pop().expect("the last claim");
            if let Err(e) = released {
                let (namespace, rollout) = claim.rollout();
                // A claim taken over is someone else's: it does not expire as this run's would.
                let expires = match e {
                    Error::Conflict(_) => String::new(),
                    _ => expires_or_release(namespace, rollout),
                };
                warnings.push(format!(
                    "warning: could not release the claim on Rollout {namespace}/{rollout} ({e}){expires}"
                ));
                self.unreleased = true;
            }
        }
        warnings
    }

    /// Saves `object`, `key` as it is now, as a backup (only a run that writes saves one, and it
    /// has a place for them), and notes it as this run's (`remove_unused_backups`). On a thread
    /// of its own (`on_own_thread`).
    async fn back_up(&mut self, key: &ObjectKey, object: &Value) -> Result<PathBuf, Error> {
        let backups = self.backups.clone().expect("a run that writes has a place for backups");
        let object = object.clone();
        self.saving = Some(key.clone());
        let saved = on_own_thread(move || backups.save(&object)).await;
        self.saving = None;
        let saved = saved?;
        self.saved.push((key.clone(), saved.clone()));
        Ok(saved)
    }

    /// Removes the backups this run saved of objects it then wrote nothing to (a write refused,
    /// their edit not overwritten, a write the server kept as it was): the object is still as
    /// they hold it, and a file left would pass for the state before a write. Only the files
    /// this run made; older backups of the object stay. Not after a second signal (the run
    /// stopped at once, with a request out).
    async fn remove_unused_backups(&mut self) {
        let (written, may_land) = (&self.written, &self.may_land);
        let wrote = |key: &ObjectKey| {
            written.iter().any(|w| w.change.key() == key) || may_land.iter().any(|unheard| &unheard.key == key)
        };
        self.overwritten.retain(|(key, _)| wrote(key));
        // Per file: a later step's backup of an object written at an earlier step is unused
        // when nothing was written after it; their edit's, when nothing was written over it.
        let overwritten = &self.overwritten;
        let used = |file: &PathBuf| {
            written.iter().any(|w| w.backup.as_ref() == Some(file))
                || may_land.iter().any(|unheard| unheard.backup.as_ref() == Some(file))
                || overwritten.iter().any(|(_, theirs)| theirs == file)
        };
        let (unused, kept): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.saved).into_iter().partition(|(_, file)| !used(file));
        self.saved = kept;
        if unused.is_empty() {
            return;
        }
        let files = unused.clone();
        let removing = on_own_thread(move || {
            let failed =
                unused.into_iter().filter_map(|(_, file)| std::fs::remove_file(&file).err().map(|e| (file, e)));
            failed.map(|(file, e)| format!("warning: could not remove {}, a backup of this run's that nothing was written after ({e}); it holds the object as it still is", file.display())).collect::<Vec<_>>()
        });
        let Some(warnings) = self.unless_stopped(self.interrupt.clone().unless_second(removing).await) else {
            self.unremoved = files;
            return;
        };
        for warning in warnings {
            stderr::line(&warning);
        }
    }

    /// Stops before a new write when a signal came.
    async fn check_interrupt(&self) -> Result<(), Error> {
        match self.interrupt.received().await {
            Some(signal) => Err(Error::Interrupted { signal, report: "no new write was started".into() }),
            None => Ok(()),
        }
    }

    /// A second signal came while the command worked: the run stops at once (the command
    /// dropped its work). Nothing more is sent, not even a rollback or the claims' release.
    pub fn stop_at_once(&mut self, signal: Signal) -> Error {
        self.stopped = Some(signal);
        // What the run wrote stays as written, with nothing approved: said so, with the way back.
        let made: Vec<bool> = self.written.iter().map(|w| self.made(w.change.key())).collect();
        for (entry, made) in self.written.iter_mut().zip(made).filter(|(w, _)| w.fate == Fate::Written) {
            let why = format!(
                "{} and NOT rolled back (the second signal stopped the run first)",
                done_by(&entry.change, made)
            );
            entry.fate = Fate::NotRolledBack { why, unsure: false };
        }
        self.stopped_error(signal, "")
    }

    /// The error of a run a second signal stopped at once (`during`: what it was doing, if not
    /// the command's own work): each object this run wrote or had a request out for, what it
    /// may be and its backup, the claims left to expire, and the backups whose removal was out.
    fn stopped_error(&self, signal: Signal, during: &str) -> Error {
        let taking = self.claiming.as_ref().map(|(namespace, rollout)| {
            claim_left(namespace, rollout, "may have been taken (its request was out); if so, it is")
        });
        let left: Vec<String> = self
            .claims
            .iter()
            .map(|claim| claim_left(claim.rollout().0, claim.rollout().1, "is"))
            .chain(taking)
            .chain(self.releasing.as_ref().map(|(namespace, rollout)| {
                claim_left(namespace, rollout, "may have been released (its delete was out); if not, it is")
            }))
            .chain(self.unremoved.iter().map(|(key, file)| {
                format!(
                    "  {}, a backup of {key} this run then wrote nothing to, may be left (its removal was out): it holds the object as it still is",
                    file.display()
                )
            }))
            .chain(self.saving.iter().zip(&self.backups).map(|(key, backups)| {
                format!(
                    "  a backup of {key} may be left in {} (it was being saved): it holds the object as it still is",
                    backups.folder_of(key).display()
                )
            }))
            .collect();
        Error::Interrupted {
            signal,
            report: format!(
                "stopped at once by a second signal{during}\n{}",
                self.report_with(self.in_flight.as_ref(), left)
            ),
        }
    }

    /// The output of a request of the rollback, awaited unless a second signal came first
    /// (`Interrupt::unless_second`): then the run is stopped at once (None).
    fn unless_stopped<T>(&mut self, outcome: Result<T, Signal>) -> Option<T> {
        match outcome {
            Ok(output) => Some(output),
            Err(signal) => {
                self.stopped = Some(signal);
                None
            }
        }
    }

    /// Applies one change to an object of `resource`; returns the object as stored (None when
    /// nothing was stored: a dry run, a delete, a Keep).
    pub async fn apply(&mut self, resource: &Resource, change: &Change) -> Result<Option<Value>, Error> {
        if !change.writes() || self.mode == Mode::ClientDryRun {
            return Ok(None);
        }
        let key = change.key().clone();
        if self.mode == Mode::ServerDryRun {
            // Nothing a dry run sends is stored: a later change to an object it created (a
            // canary Ingress made, then patched) is judged as the creation of what it leaves.
            let change = match change {
                Change::Create { .. } => change.clone(),
                _ if self.made.contains(&key) => match change.after() {
                    Some(object) => Change::Create { key: key.clone(), object },
                    None => return Ok(None),
                },
                _ => change.clone(),
            };
            if let Change::Create { .. } = change {
                self.made.insert(key.clone());
            }
            let request = change.request(None).expect("a write sends a request");
            let verdict = match self.cluster.send(resource, &key, &request, true).await {
                Ok(_) => Ok(()),
                Err(Error::Api { failure, .. }) => Err(failure.to_string()),
                Err(other) => return Err(other),
            };
            // An object written twice (its original stored first) is rejected if either is.
            let entry = self.verdicts.entry(key).or_insert(Ok(()));
            if entry.is_ok() {
                *entry = verdict;
            }
            return Ok(None);
        }
        // Renewed before the check, so that a signal that comes while the claim is renewed
        // stops this write too.
        self.renew_claims().await?;
        self.check_interrupt().await?;
        // One backup per object and step: its state before the step's first write to it (a
        // later step of a follow run backs it up again: an earlier step's write is kept with
        // its approval, and the way back of this step's goes only to where that step left
        // it). Not for a status patch (the approval): `restore --from-backup` of a Rollout
        // would put an old spec over the live one, and the status is the controller's.
        let first_write = !self.written.iter().any(|w| w.change.key() == &key);
        let first_of_step = !self.this_step().iter().any(|w| w.change.key() == &key);
        let backup = match change.before().filter(|_| first_of_step && change.subresource().is_none()) {
            Some(before) => {
                let saved = self.back_up(&key, before).await?;
                // A signal that came while it was saved (a slow disk) stops this write too.
                self.check_interrupt().await?;
                Some(saved)
            }
            None => None,
        };
        // A replace planned from the first read, after this run wrote the object already (its
        // original stored first), goes over the object as that write stored it: what else changed
        // meanwhile (their finalizer, taken in at a conflict) stays.
        let mut change = match (self.seen.get(&key), change) {
            (Some(stored), Change::Replace { .. }) if !first_write => change.rebased(stored),
            _ => change.clone(),
        };
        let mut attempt = 0;
        loop {
            let seen = self.seen.get(&key).cloned();
            let version = seen.as_ref().and_then(resource_version_of);
            let request = change.request(version.as_deref()).expect("a write sends a request");
            let makes = matches!(change, Change::Create { .. });
            let out = || InFlight {
                key: key.clone(),
                backup: backup.clone(),
                may_be: may_be(&change, OUT),
                makes,
                undoing: false,
            };
            self.in_flight = Some(out());
            let sent = self.send(resource, &key, &request).await;
            self.in_flight = None;
            match sent {
                Ok(stored) => return self.record(resource, &change, version, stored, backup, None),
                // Deleted meanwhile (the controller's finalise, say): what this delete meant to
                // do is done, and nothing of this run's was written.
                Err(Error::Api { failure, .. })
                    if failure.object_not_found(&key.name) && matches!(change, Change::Delete { .. }) =>
                {
                    self.already_gone.push(key);
                    return Ok(None);
                }
                // Deleted meanwhile, under this update or patch: as a conflict would find it.
                Err(Error::Api { failure, .. })
                    if failure.object_not_found(&key.name)
                        && matches!(change, Change::Replace { .. } | Change::MergePatch { .. }) =>
                {
                    self.theirs_since(&key, "deleted by someone else");
                    return Err(Error::Conflict(format!("{key} was deleted by someone else while this run wrote it")));
                }
                Err(Error::Api { failure, .. }) if failure.is_conflict() && attempt < CONFLICT_RETRIES => {
                    attempt += 1;
                    change = self.after_conflict(resource, &change, &format!("conflict on {key}")).await?;
                    self.check_interrupt().await?;
                }
                Err(Error::Api { failure, doing }) if failure.is_conflict() => {
                    return Err(Error::Input(format!(
                        "{doing}: {failure}; the object changed again at each of {} tries, each time not in what this write is about (a controller writing it often?): this write was not stored; run again",
                        CONFLICT_RETRIES + 1
                    )));
                }
                Err(Error::Api { failure, doing }) if failure.outcome_unknown() => {
                    let reply = self.reply_of(&failure);
                    self.in_flight = Some(out());
                    // Renewed apart from the read: a renewal that fails never read the object.
                    let fresh = match self.renew_claims().await {
                        Ok(()) => self
                            .cluster
                            .get(resource, &key.namespace, &key.name)
                            .await
                            .map_err(|e| format!("reading it again to tell whether it landed failed too: {e}")),
                        Err(e) => Err(format!("it was not read again to tell whether it landed: {e}")),
                    };
                    self.in_flight = None;
                    let unheard = |how| Unheard {
                        key: key.clone(),
                        backup: backup.clone(),
                        how,
                        change: change.clone(),
                        resource: resource.clone(),
                        sent_over: seen.clone(),
                        reply: reply.clone(),
                    };
                    let fresh = match fresh {
                        Ok(fresh) => fresh,
                        Err(why) => {
                            self.may_land.push(unheard(MayLand::Unread));
                            return Err(Error::Input(format!("{doing}: {failure}; {why}")));
                        }
                    };
                    let landed = change.landed(seen.as_ref(), fresh.as_ref());
                    if landed == Landed::Outdated && attempt < CONFLICT_RETRIES {
                        attempt += 1;
                        stderr::line(&format!(
                            "{key}: {reply}; a fresh read shows this write not applied, and only the object's status changed meanwhile"
                        ));
                        change = self.after_conflict(resource, &change, &key.to_string()).await?;
                        self.check_interrupt().await?;
                        continue;
                    }
                    return match landed {
                        landed @ (Landed::Applied | Landed::MovedOn) => {
                            self.record(resource, &change, version, fresh, backup, Some(Resolved { landed, reply }))
                        }
                        Landed::NotApplied => {
                            // Not "not written": the server may still be at it (slow admission, a
                            // slow etcd), and store it after this read.
                            self.may_land.push(unheard(MayLand::ReadBackUnapplied));
                            Err(Error::Api { doing, failure })
                        }
                        // Not written, at each of the tries.
                        Landed::Outdated => Err(Error::Api { doing, failure }),
                        Landed::MadeAgain => {
                            // Theirs, as an object of the name made before the delete would be
                            // (then the delete's precondition refuses it): shown, and never
                            // undone, as that would delete or clash with theirs.
                            let diff = self.edit_diff(&change, fresh.as_ref(), "made again by someone else");
                            self.record_kept(change, resource, None, backup, MADE_AGAIN);
                            Err(Error::Conflict(format!(
                                "{doing}: {failure}; a fresh read shows {key} deleted, then made again by someone else (another uid):\n{diff}It is theirs, and left alone: review it"
                            )))
                        }
                        // An approval someone else overtook is refused as their edit: where the
                        // Rollout stands is for `approve` to say.
                        Landed::ChangedBySomeoneElse if change.subresource().is_some() => Err(self.other_edit(
                            &change,
                            fresh.as_ref(),
                            &format!("{doing}: {failure}; a fresh read shows someone else changed {key} meanwhile"),
                        )),
                        Landed::ChangedBySomeoneElse => {
                            // This run's write may have landed before their edit (the window is
                            // as long as the request timeout): the object is kept as it is and
                            // named, with its state before this run, never rolled back over them.
                            let diff =
                                self.edit_diff(&change, fresh.as_ref(), "this run's write and theirs, as it is now");
                            // A create's object may be theirs from the start, and has no state
                            // before this run to compare with.
                            let (shows, decide) = match change {
                                Change::Create { .. } => (
                                    format!(
                                        "{key} made or changed by someone else meanwhile, perhaps after this run's create landed"
                                    ),
                                    "It did not exist before this run: see whose it is now and decide",
                                ),
                                _ => (
                                    format!(
                                        "someone else changed {key} meanwhile, perhaps after this run's write landed"
                                    ),
                                    "Compare it with its state before this run (named below) and decide",
                                ),
                            };
                            let why = landed_then_changed(&change);
                            self.keep(&key, why);
                            self.record_kept(change, resource, fresh, backup, why);
                            Err(Error::Input(format!(
                                "{doing}: {failure}; a fresh read shows {shows}; it is left as it is:\n{diff}{decide}"
                            )))
                        }
                    };
                }
                Err(other) => return Err(other),
            }
        }
    }

    /// Records a write whose outcome was unknown and that a fresh read leaves to someone else's
    /// doing: kept as it is (never rolled back), `why` in the report.
    fn record_kept(
        &mut self,
        change: Change,
        resource: &Resource,
        stored: Option<Value>,
        backup: Option<PathBuf>,
        why: &str,
    ) {
        let fate = Fate::Kept(why.into());
        let round = self.rounds;
        self.written.push(Written { change, resource: resource.clone(), stored, backup, resolved: None, fate, round });
    }

    /// Sends `request` for `key`, renewing the claims first: one change may take several
    /// requests (conflicts retried, the read that resolves a lost reply, a question between
    /// them), and a rollback several more, each up to the request timeout.
    async fn send(&mut self, resource: &Resource, key: &ObjectKey, request: &Request) -> Result<Option<Value>, Error> {
        self.renew_claims().await?;
        self.cluster.send(resource, key, request, false).await
    }

    /// What became of the reply of a write whose outcome `failure` leaves unknown, for the report.
    fn reply_of(&self, failure: &ApiFailure) -> String {
        failure.unheard(self.cluster.request_limit())
    }

    /// Reads `key` again, renewing the claims first (see `send`).
    async fn read(&mut self, resource: &Resource, key: &ObjectKey) -> Result<Option<Value>, Error> {
        self.renew_claims().await?;
        self.cluster.get(resource, &key.namespace, &key.name).await
    }

    /// `keep_claims` before a request of the writer's (see `renewal_failed`); in a rollback, a
    /// failed renewal is said and the rollback goes on (`Renewal`), and none is sent while the
    /// API server is not answering (`Cluster::answering`): it would only wait out the request
    /// timeout before each undo, which holds without it.
    async fn renew_claims(&mut self) -> Result<(), Error> {
        let silent = self.renewal == Renewal::BestEffort && !self.cluster.answering();
        if self.renewal == Renewal::GivenUp || silent {
            return Ok(());
        }
        match self.keep_claims().await.map_err(renewal_failed) {
            Err(error) if self.renewal == Renewal::BestEffort => {
                self.renewal = Renewal::GivenUp;
                stderr::line(&format!(
                    "warning: {error}; rolling back all the same (each undo is conditional on this run's own write)"
                ));
                Ok(())
            }
            renewed => renewed,
        }
    }

    /// Asks `question` on the terminal (the confirmation, or someone else's edit after it): the
    /// claims are renewed while it waits (a renewal cut short by the answer is found by the next
    /// one), so that a run left at its question keeps them, and the deadline, if any, ends it.
    pub async fn ask(&mut self, question: &str, ask: Ask) -> Result<(), Error> {
        let wrote = !self.written.is_empty();
        let Writer { cluster, interrupt, claims, deadline, .. } = self;
        let renewing = async {
            loop {
                tokio::time::sleep(CLAIMS_CHECKED_EVERY).await;
                for claim in claims.iter_mut() {
                    if let Err(error) = claim.keep(cluster).await {
                        return renewal_failed(error);
                    }
                }
            }
        };
        let waiting = format!("waiting for an answer to \"{question}\"");
        let end = async {
            tokio::select! {
                error = renewing => error,
                deadline = deadline::passed(*deadline) => deadline.timed_out(&waiting),
            }
        };
        // Not a yes: the command's refusal says nothing was written, which after a write of this
        // run's is not so (the report that follows says what was).
        let ask = move |question: &str| match ask(question) {
            Err(Error::Refused(_)) if wrote => {
                Err(Error::Refused("their edit is not overwritten: not confirmed".into()))
            }
            answered => answered,
        };
        interrupt.confirm_until(question, ask, end).await
    }

    /// Before a later step of a sequence (`approve --to-end`) writes objects that someone else
    /// edited since the run's confirmation (`edited`: each with its state now, which the diff
    /// shown starts from; a custom ref's undoes their edit, an HTTPRoute's may keep it; null for
    /// one deleted, which the step makes again): on a terminal, asks whether to overwrite their
    /// edits, and backs each one up; otherwise refuses, before anything of the step is written,
    /// saying how to `review` it.
    pub async fn overwrite_edits(
        &mut self,
        edited: &[(ObjectKey, Arc<Value>)],
        step: &str,
        review: &str,
    ) -> Result<(), Error> {
        let names = |deleted: bool| {
            let keys = edited.iter().filter(|(_, now)| now.is_null() == deleted).map(|(key, _)| key.to_string());
            keys.collect::<Vec<_>>().join(", ")
        };
        let (changed, deleted) = (names(false), names(true));
        let mut said = Vec::new();
        if !changed.is_empty() {
            said.push(format!(
                "{changed} changed by someone else since this run's confirmation: at no step's plan now, and the diff above for {step} shows what writing it does to their edit"
            ));
        }
        if !deleted.is_empty() {
            said.push(format!(
                "{deleted} deleted by someone else since this run's confirmation (this run wrote it at an earlier step): the diff above for {step} shows it made again"
            ));
        }
        if said.is_empty() {
            return Ok(());
        }
        let message = said.join("; ");
        let answer = match self.ask {
            None => Err(Error::Conflict(format!(
                "{message}; not overwriting their edit, and {step} is not approved. Review it (`{review}`) and approve again"
            ))),
            Some(ask) => {
                stderr::line(&message);
                self.ask("Overwrite their change?", ask).await
            }
        };
        if let Err(refused) = answer {
            for (key, now) in edited {
                self.theirs_since(
                    key,
                    if now.is_null() { "deleted by someone else" } else { "changed by someone else" },
                );
            }
            return Err(refused);
        }
        for (key, now) in edited.iter().filter(|(_, now)| !now.is_null()) {
            let saved = self.back_up(key, now).await?;
            self.overwritten.push((key.clone(), saved));
        }
        Ok(())
    }

    /// The writes of the steps before the current one (rounds before the objects were last read
    /// again), and those of the current one.
    fn earlier_steps(&self) -> &[Written] {
        &self.written[..self.written.partition_point(|w| w.round < self.rounds)]
    }

    fn this_step(&self) -> &[Written] {
        &self.written[self.earlier_steps().len()..]
    }

    /// Whether this run's last write of `key` left the object there: it wrote it, and did not
    /// delete it.
    pub fn left_in_place(&self, key: &ObjectKey) -> bool {
        let last = self.written.iter().rfind(|written| written.change.key() == key);
        last.is_some_and(|written| !matches!(written.change, Change::Delete { .. }))
    }

    /// After a 409 (or a write known not applied whose object moved on, `Landed::Outdated`;
    /// `what` begins the line that says it is made again): read the object again. Nobody
    /// changed what the change is about: the change is made again over the object as it is
    /// now. Someone did: refuse, showing their edit, or on a terminal show it and ask whether
    /// to overwrite it (never for a status patch or a create).
    async fn after_conflict(&mut self, resource: &Resource, change: &Change, what: &str) -> Result<Change, Error> {
        let key = change.key();
        let fresh = self.read(resource, key).await?;
        let seen = self.seen.get(key).or(change.before()).cloned().unwrap_or(Value::Null);
        let Some(fresh) = fresh else {
            self.theirs_since(key, "deleted by someone else");
            return Err(Error::Conflict(format!("{key} was deleted by someone else while this run wrote it")));
        };
        if !change.someone_else_changed(&seen, &fresh) {
            stderr::line(&format!(
                "{what}: nobody changed what this write is about; writing it again at the new resourceVersion"
            ));
        } else {
            let uid = |object: &Value| object["metadata"]["uid"].clone();
            let (message, done) = match change {
                Change::Create { .. } => {
                    (format!("{key} was made by someone else while this run made it"), "made by someone else")
                }
                // Their object may hold what the old one held: the diff may show nothing.
                _ if uid(&seen).is_string() && uid(&seen) != uid(&fresh) => (
                    format!("{key} was deleted, then made again by someone else (another uid) while this run wrote it"),
                    "deleted, then made again by someone else",
                ),
                _ => (format!("{key} was changed by someone else while this run wrote it"), "changed by someone else"),
            };
            let overwritable =
                !matches!(change, Change::MergePatch { subresource: Some(_), .. } | Change::Create { .. });
            let answer = match self.ask.filter(|_| overwritable) {
                Some(ask) => {
                    // Their edit, with the question that follows it (not the refusal's words).
                    let diff = self.edit_diff(change, Some(&fresh), "now");
                    stderr::line(format!("{message}:\n{diff}").trim_end());
                    self.ask("Overwrite their change?", ask).await
                }
                None => Err(self.other_edit(change, Some(&fresh), &message)),
            };
            if let Err(refused) = answer {
                // A Rollout's status changes under the controller all along: not worth a word.
                if change.subresource().is_none() {
                    self.theirs_since(key, done);
                }
                return Err(refused);
            }
            let saved = self.back_up(key, &fresh).await?;
            self.overwritten.push((key.clone(), saved));
        }
        let rebased = change.rebased(&fresh);
        self.seen.insert(key.clone(), fresh);
        Ok(rebased)
    }

    /// A refusal showing someone else's edit of the object `change` writes (`edit_diff`).
    fn other_edit(&self, change: &Change, fresh: Option<&Value>, message: &str) -> Error {
        let diff = self.edit_diff(change, fresh, "now");
        // Routing can be written again over an edit, planned anew; a Rollout's status is the
        // controller's, and a restore or approve after someone else moved it on could undo live
        // routing; an object someone else made is theirs until they say otherwise.
        let (theirs, advice) = match change {
            Change::MergePatch { subresource: Some(_), .. } => (
                "their edit",
                format!(
                    "Look at where it stands now (`kubectl rollout-lua status {}`) before running anything again",
                    model::rollout_args(&change.key().namespace, &change.key().name)
                ),
            ),
            Change::Create { .. } => (
                "it",
                "It did not exist when this run planned it: see whose it is now before running anything again".into(),
            ),
            _ => (
                "their edit",
                "Review it and run again: the run then shows anew what writing does to their edit".into(),
            ),
        };
        Error::Conflict(format!("{message}; not overwriting {theirs}:\n{diff}{advice}"))
    }

    /// The object `change` writes as this run last saw it and as it is now (`fresh`, labelled
    /// `now`), as a diff (for a status patch: of the spec and status).
    fn edit_diff(&self, change: &Change, fresh: Option<&Value>, now: &str) -> String {
        let key = change.key();
        let seen = self.seen.get(key).or(change.before()).cloned().unwrap_or(Value::Null);
        let (seen_header, now_header) = (format!("{key} (as this run saw it)"), format!("{key} ({now})"));
        match fresh {
            // A status patch is about the status and the spec (its generation): show those.
            Some(fresh) if matches!(change, Change::MergePatch { subresource: Some(_), .. }) => {
                let shown = |object: &Value| {
                    crate::yaml::to_string(&serde_json::json!({
                        "metadata": {"generation": object["metadata"]["generation"]},
                        "spec": object["spec"],
                        "status": object["status"],
                    }))
                };
                output::unified_diff(&shown(&seen), &shown(fresh), &seen_header, &now_header)
            }
            // Someone else's edit in full, their stored original and what they changed beside
            // the routing (finalizers, owner references) included: it is theirs to review.
            Some(fresh) => {
                let shown = |object: &Value| match object {
                    Value::Null => String::new(),
                    object => crate::yaml::to_string(&without_server_fields(object)),
                };
                output::unified_diff(&shown(&seen), &shown(fresh), &seen_header, &now_header)
            }
            None => format!("{key} no longer exists\n"),
        }
    }

    /// Records a write that landed. A replace the server kept at the resourceVersion it was
    /// sent with wrote nothing, and is never rolled back.
    fn record(
        &mut self,
        resource: &Resource,
        change: &Change,
        sent_version: Option<String>,
        stored: Option<Value>,
        backup: Option<PathBuf>,
        resolved: Option<Resolved>,
    ) -> Result<Option<Value>, Error> {
        let key = change.key().clone();
        let version = change.before().and_then(resource_version_of);
        let unchanged = stored.as_ref().is_some_and(|s| {
            resource_version_of(s).is_some_and(|v| Some(&v) == sent_version.as_ref().or(version.as_ref()))
        });
        self.saw(&key, stored.clone());
        if !unchanged {
            self.written.push(Written {
                change: change.clone(),
                resource: resource.clone(),
                stored: stored.clone(),
                backup,
                resolved,
                fate: Fate::Written,
                round: self.rounds,
            });
        }
        // What the server stored is what counts: a mutating admission webhook may have changed
        // it, and the controller would then see routing it did not plan.
        if let (Change::Replace { after, .. }, Some(stored)) = (change, &stored)
            && !data::stored_as_planned(stored, after)
        {
            return Err(Error::Input(format!(
                "{key} was stored with other spec, labels or annotations than planned (a mutating admission webhook changed it?)"
            )));
        }
        Ok(stored)
    }

    /// After the command read the objects again (a later step of `approve --until-step`): the
    /// changes it plans now carry the versions of that read, newer than any this run wrote.
    pub fn read_again(&mut self) {
        self.seen.clear();
        self.already_gone.clear();
        self.rounds += 1;
        // Not at the first read: the claims were just taken.
        self.confirm_claims = self.rounds > 1;
    }

    /// `VirtualService shop/demo updated (backup FILE)` when this run wrote `key` (`done` says
    /// how), noting a write whose outcome was unknown (`unheard_reply`); an object this run made
    /// has no backup. A backup is taken at each step's first write of the object; a step that
    /// wrote it without one (it made it again) names the earlier one by what it holds.
    pub fn written_line(&self, key: &ObjectKey, done: &str) -> Option<String> {
        let this_step = self.this_step();
        if self.already_gone.contains(key) && !this_step.iter().any(|w| w.change.key() == key) {
            return Some(format!(
                "{key} was deleted meanwhile (by someone else, or the controller): nothing to delete\n"
            ));
        }
        if !self.written.iter().any(|w| w.change.key() == key && w.fate == Fate::Written) {
            return None;
        }
        let backed_up = self.written.iter().rposition(|w| w.change.key() == key && w.backup.is_some());
        let backup = match self.backup_of(key) {
            // This step made it again (a backup is of an earlier step's write).
            Some(_) if backed_up.is_some_and(|latest| latest < self.earlier_steps().len()) => {
                "it did not exist before this step".into()
            }
            Some(backup) => format!("backup {}", backup.display()),
            // Made by this run (at an earlier step of a follow run, when `done` is an update).
            None => "it did not exist before this run".into(),
        };
        let unheard = self.unheard_reply(key).map(|unheard| format!("; {unheard}")).unwrap_or_default();
        let held = self.held_by_finalizers(key).map(|held| format!("; {held}")).unwrap_or_default();
        Some(format!("{key} {done} ({backup}{}{unheard}{held})\n", self.overwritten_note(key)))
    }

    /// `it is being deleted: its finalizers (F) hold it …` when this run's last write of `key`
    /// deleted an object that finalizers hold.
    fn held_by_finalizers(&self, key: &ObjectKey) -> Option<String> {
        let last = self.written.iter().rfind(|w| w.change.key() == key)?;
        let held = last.stored.as_ref().filter(|_| matches!(last.change, Change::Delete { .. }))?;
        Some(format!(
            "it is being deleted: its finalizers ({}) hold it until whoever set them removes them",
            change::finalizers(held)
        ))
    }

    /// `; their edit it overwrote: FILE` for each edit of `key` this run overwrote, as asked.
    fn overwritten_note(&self, key: &ObjectKey) -> String {
        let saved = self.overwritten.iter().filter(|(overwritten, _)| overwritten == key);
        saved.map(|(_, file)| format!("; their edit it overwrote: {}", file.display())).collect()
    }

    /// Where the backup of `key` is that the way back puts back: of the first write of the
    /// latest step that wrote it (in a run of one step, of the run's first write).
    pub fn backup_of(&self, key: &ObjectKey) -> Option<&PathBuf> {
        self.written.iter().rev().filter(|w| w.change.key() == key).find_map(|w| w.backup.as_ref())
    }

    /// What `backup`, of `key`, holds: `its state before this run`, or, where this run wrote it
    /// at an earlier step (kept with that step's approval), `its state before this step`.
    fn backup_holds(&self, key: &ObjectKey, backup: &PathBuf) -> &'static str {
        let at = self.written.iter().position(|w| w.backup.as_ref() == Some(backup)).unwrap_or(self.written.len());
        match self.written[..at].iter().any(|w| w.change.key() == key) {
            true => "its state before this step",
            false => "its state before this run",
        }
    }

    /// `the reply was lost; a fresh read shows …` (or what else became of the reply: it could
    /// not be read, the server answered 503, none came in time) when the outcome of a write of
    /// `key` was unknown and a fresh read resolved it: a write of the latest step that wrote it
    /// (an earlier step's line said its own).
    pub fn unheard_reply(&self, key: &ObjectKey) -> Option<String> {
        let of_key = || self.written.iter().filter(|w| w.change.key() == key);
        let latest = of_key().map(|w| w.round).max()?;
        let resolved = of_key().filter(|w| w.round == latest).find_map(|w| w.resolved.as_ref())?;
        let reply = &resolved.reply;
        Some(match resolved.landed {
            Landed::MovedOn => format!("{reply}; a fresh read shows the {} has since moved on", key.kind),
            _ => format!("{reply}; a fresh read shows the write"),
        })
    }

    /// Whether a write of `key` had an unknown outcome and was not seen applied (read back
    /// unapplied, or not read back): the server may still apply it, and how.
    pub fn may_land(&self, key: &ObjectKey) -> Option<MayLand> {
        self.may_land.iter().find(|unheard| &unheard.key == key).map(|unheard| unheard.how)
    }

    /// Forgets a write of this run's to the object `inverse` undoes whose outcome was unknown,
    /// when `fresh` shows it landed (late, or its reply lost), and says whether one did: the
    /// rollback then undoes it too, rather than take it for someone else's edit. Only an undo
    /// that puts back the whole routing (a replace, or the delete of an object this run made)
    /// undoes a later write as well; an undo patch sets back only its own patch's fields.
    fn own_unheard_write(&mut self, inverse: &Change, fresh: &Value) -> bool {
        if !matches!(inverse, Change::Replace { .. } | Change::Delete { .. }) {
            return false;
        }
        let key = inverse.key();
        let landed = self.may_land.iter().position(|unheard| &unheard.key == key && unheard.landed_as(Some(fresh)));
        landed.map(|at| self.may_land.remove(at)).is_some()
    }

    /// Says of an object this run wrote and kept (an earlier step's routing) that someone else
    /// has `done` something to it since (deleted it, changed it): its line in the report says
    /// what this run left, which is then not where it stands.
    fn theirs_since(&mut self, key: &ObjectKey, done: &str) {
        let kept = self.written.iter_mut().rev().find(|w| w.change.key() == key && matches!(w.fate, Fate::Kept(_)));
        if let Some(Written { fate: Fate::Kept(why), .. }) = kept {
            why.push_str(&format!("; {done} since"));
        }
    }

    /// Marks the writes of `key` as kept (never rolled back), saying why.
    pub fn keep(&mut self, key: &ObjectKey, why: &str) {
        for entry in self.written.iter_mut().filter(|w| w.change.key() == key && w.fate == Fate::Written) {
            entry.fate = Fate::Kept(why.to_string());
        }
    }

    /// Undoes this run's writes, newest first, each conditional on this run's own last write.
    /// A conflict is met as a forward write meets it: the object read again, the undo made
    /// again over it when only what it leaves alone changed (a controller's status write), and
    /// an object someone changed left alone. Objects marked kept stay.
    async fn roll_back(&mut self) {
        if self.stopped.is_some() || self.mode != Mode::Apply {
            return;
        }
        let interrupt = self.interrupt.clone();
        self.renewal = Renewal::BestEffort;
        if !self.read_unheard_again(&interrupt).await {
            return;
        }
        for index in (0..self.written.len()).rev() {
            if self.written[index].fate != Fate::Written {
                continue;
            }
            let (resource, change, stored) = {
                let entry = &self.written[index];
                (entry.resource.clone(), entry.change.clone(), entry.stored.clone())
            };
            let key = change.key().clone();
            // A delete the object's finalizers hold cannot be undone: it is being deleted, and
            // cannot be made again until it is gone.
            if let (Change::Delete { .. }, Some(held)) = (&change, &stored) {
                let fate = Fate::Kept(format!(
                    "{COULD_NOT}: it is being deleted, held by its finalizers ({}); once it is gone, `kubectl rollout-lua restore --from-backup` of its state before this run makes it again",
                    change::finalizers(held)
                ));
                for entry in self.written.iter_mut().filter(|w| w.change.key() == &key && w.fate == Fate::Written) {
                    entry.fate = fate.clone();
                }
                continue;
            }
            let Some(inverse) = change.inverse(stored.as_ref()) else { continue };
            // Made over the object as this run last saw it: what a later write's rollback kept
            // (a finalizer someone added meanwhile) this one keeps too.
            let mut inverse = match self.seen.get(&key) {
                Some(seen) => inverse.rebased(seen),
                None => inverse,
            };
            let backup = self.backup_of(&key).cloned();
            let may_be = ROLLBACK_OUT.into();
            self.in_flight = Some(InFlight { key: key.clone(), backup, may_be, makes: false, undoing: true });
            let mut attempt = 0;
            let fate = loop {
                let seen = self.seen.get(&key).or(inverse.before()).cloned();
                let version = seen.as_ref().and_then(resource_version_of);
                let request = inverse.request(version.as_deref()).expect("an inverse sends a request");
                let sent = interrupt.unless_second(self.send(&resource, &key, &request)).await;
                let Some(sent) = self.unless_stopped(sent) else { return };
                let failure = match sent {
                    Ok(stored) => {
                        self.saw(&key, stored);
                        break Fate::RolledBack;
                    }
                    Err(Error::Api { failure, .. }) if failure.is_conflict() || failure.outcome_unknown() => failure,
                    // Someone deleted it: as it was before this run when this run made it (its
                    // older writes meet the same); else its backup would only make it again.
                    Err(Error::Api { failure, .. }) if failure.object_not_found(&key.name) => match self.made(&key) {
                        true => break Fate::RolledBack,
                        false => break Fate::Kept(format!("{SOMEONE_DELETED_IT} ({failure})")),
                    },
                    Err(e) => break Fate::NotRolledBack { why: format!("{COULD_NOT}: {e}"), unsure: false },
                };
                let fresh = interrupt.unless_second(self.read(&resource, &key)).await;
                let Some(fresh) = self.unless_stopped(fresh) else { return };
                let fresh = match fresh {
                    Ok(fresh) => fresh,
                    Err(e) if failure.is_conflict() => {
                        let why = format!("{COULD_NOT}: {failure}; reading it again: {e}");
                        break Fate::NotRolledBack { why, unsure: false };
                    }
                    Err(e) => {
                        // A server that stopped answering fails the read as it failed the undo;
                        // either is said in the words of a reply not heard (`ApiFailure::unheard`).
                        let undo = self.reply_of(&failure);
                        let again = match &e {
                            Error::Api { failure: read, .. } if read.outcome_unknown() => match self.reply_of(read) {
                                read if read == undo => " failed the same way".to_string(),
                                read => format!(": {read}"),
                            },
                            e => format!(": {e}"),
                        };
                        let why = format!("{ROLLBACK_UNSURE} ({undo}; reading it again{again})");
                        break Fate::NotRolledBack { why, unsure: true };
                    }
                };
                let own = fresh.as_ref().is_some_and(|fresh| self.own_unheard_write(&inverse, fresh));
                let landed = inverse.landed(seen.as_ref(), fresh.as_ref());
                let outdated = !failure.is_conflict() && landed == Landed::Outdated;
                if failure.is_conflict() || own || outdated {
                    let Some(fresh) = fresh else { break Fate::Kept(SOMEONE_CHANGED_IT.into()) };
                    if !own && inverse.someone_else_changed(seen.as_ref().unwrap_or(&Value::Null), &fresh) {
                        break Fate::Kept(SOMEONE_CHANGED_IT.into());
                    }
                    if attempt == CONFLICT_RETRIES {
                        break Fate::NotRolledBack { why: format!("{COULD_NOT}: {failure}"), unsure: false };
                    }
                    attempt += 1;
                    stderr::line(&if own {
                        format!(
                            "{key} while rolling back: a write of this run's that it did not hear of has landed; rolling it back too"
                        )
                    } else if outdated {
                        format!(
                            "{key} while rolling back: {}; a fresh read shows the rollback not applied, and only the object's status changed meanwhile; rolling it back again at the new resourceVersion",
                            self.reply_of(&failure)
                        )
                    } else {
                        format!(
                            "conflict on {key} while rolling back: nobody changed what this run wrote; rolling it back again at the new resourceVersion"
                        )
                    });
                    inverse = inverse.rebased(&fresh);
                    self.seen.insert(key.clone(), fresh);
                    continue;
                }
                break match landed {
                    Landed::Applied | Landed::MovedOn => {
                        // The next older write of the object is undone from here.
                        self.saw(&key, fresh);
                        Fate::RolledBack
                    }
                    Landed::MadeAgain => Fate::Kept(ROLLED_BACK_MADE_AGAIN.into()),
                    // The undo's outcome was unknown, and it was not seen applied: the server
                    // may still apply it, as it may a forward write.
                    Landed::NotApplied => Fate::NotRolledBack {
                        why: format!(
                            "NOT rolled back when read again, but the server may still apply the rollback ({})",
                            self.reply_of(&failure)
                        ),
                        unsure: true,
                    },
                    // (Outdated went the way of a conflict, above.)
                    Landed::ChangedBySomeoneElse | Landed::Outdated => Fate::Kept(SOMEONE_CHANGED_IT.into()),
                };
            };
            self.in_flight = None;
            // An object not rolled back at its newest write stays as it is: its earlier writes
            // are not undone under someone else's.
            if fate == Fate::RolledBack {
                // A later write of it that may still land was sent at the resourceVersion this
                // rollback replaced: should it arrive now, it fails its precondition.
                self.may_land.retain(|unheard| unheard.key != key);
                self.written[index].fate = fate;
            } else {
                for entry in self.written.iter_mut().filter(|w| w.change.key() == &key && w.fate == Fate::Written) {
                    entry.fate = fate.clone();
                }
            }
        }
    }

    /// Before a rollback: a write not seen applied, to an object with no other write of this
    /// run's to undo (`own_unheard_write` finds it there), is read once more. Landed meanwhile,
    /// it is recorded as written, to be rolled back with the rest (not an approval: whether its
    /// routing stays is for `approve` to say); a delete whose object someone made again, or an
    /// object someone else changed since, is kept and said so. False when a second signal
    /// stopped the run.
    async fn read_unheard_again(&mut self, interrupt: &Interrupt) -> bool {
        let mut at = 0;
        while at < self.may_land.len() {
            let unheard = &self.may_land[at];
            let key = unheard.key.clone();
            let undone_with_the_rest = self.written.iter().any(|w| w.change.key() == &key && w.fate == Fate::Written);
            if unheard.change.subresource().is_some() || undone_with_the_rest {
                at += 1;
                continue;
            }
            let resource = unheard.resource.clone();
            self.in_flight = Some(unheard.out());
            let fresh = interrupt.unless_second(self.read(&resource, &key)).await;
            self.in_flight = None;
            let Some(fresh) = self.unless_stopped(fresh) else { return false };
            let Ok(fresh) = fresh else {
                at += 1;
                continue;
            };
            let unheard = &self.may_land[at];
            let landed = unheard.change.landed(unheard.sent_over.as_ref(), fresh.as_ref());
            let fate = match landed {
                Landed::Applied => Fate::Written,
                Landed::MadeAgain => Fate::Kept(MADE_AGAIN.into()),
                // Their change moved the version the write was sent at: it can no longer land.
                Landed::ChangedBySomeoneElse => Fate::Kept(landed_then_changed(&unheard.change).into()),
                Landed::NotApplied | Landed::MovedOn => {
                    self.may_land[at].how = MayLand::ReadBackUnapplied;
                    at += 1;
                    continue;
                }
                // Not written, and sent at a version the object has left: it can never land.
                Landed::Outdated => {
                    self.may_land.remove(at);
                    self.saw(&key, fresh);
                    continue;
                }
            };
            let unheard = self.may_land.remove(at);
            self.saw(&key, fresh.clone());
            self.written.push(Written {
                change: unheard.change,
                resource,
                stored: fresh,
                backup: unheard.backup,
                resolved: Some(Resolved { landed, reply: unheard.reply }),
                fate,
                round: self.rounds,
            });
        }
        true
    }

    /// Notes `object` (None: deleted) as this run last saw `key`.
    fn saw(&mut self, key: &ObjectKey, object: Option<Value>) {
        match object {
            Some(object) => self.seen.insert(key.clone(), object),
            None => self.seen.remove(key),
        };
    }

    /// What this run wrote and what became of it, a line per object; `nothing was written`
    /// when nothing was.
    pub fn report(&self) -> String {
        self.report_with(None, Vec::new())
    }

    /// The report, with the object a request is out for (`in_flight`) said to be as it may be,
    /// and `claims_left` (a line each) after the objects: the way to find out where the objects
    /// stand comes last, as the thing to do next.
    fn report_with(&self, in_flight: Option<&InFlight>, claims_left: Vec<String>) -> String {
        // In the order the objects were (to be) written: those written, then those whose write
        // may still land (the run stopped at it), then the one a request is out for.
        let written = self.written.iter().map(|w| w.change.key());
        let unheard = self.may_land.iter().map(|unheard| &unheard.key);
        let mut keys: Vec<&ObjectKey> = Vec::new();
        for key in written.chain(unheard).chain(in_flight.map(|out| &out.key)) {
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        let mut lines: Vec<String> = keys.into_iter().map(|key| self.object_line(key, in_flight)).collect();
        lines.push(if lines.is_empty() { "  nothing was written" } else { "  nothing else was written" }.into());
        // A restore refuses while this run's claim is left: the way back waits for its release.
        let once_released = match claims_left.is_empty() && !self.unreleased {
            true => "",
            false => ", once the claim above is released",
        };
        lines.extend(claims_left);
        let fates = self.written.iter().map(|w| (&w.fate, self.backup_of(w.change.key())));
        let made_unheard = self.may_land.iter().any(|unheard| matches!(unheard.change, Change::Create { .. }));
        for way in way_back(fates, in_flight, made_unheard) {
            // Only a restore waits for the claim.
            let after = if way == FROM_BACKUP { once_released } else { "" };
            lines.push(format!("{way}{after}"));
        }
        let rollback_unsure = self.written.iter().any(|w| matches!(w.fate, Fate::NotRolledBack { unsure: true, .. }));
        let left_written = self.stopped.is_some() && !self.written.is_empty();
        if in_flight.is_some() || !self.may_land.is_empty() || rollback_unsure || left_written {
            // `status` asks the same server: while it does not answer, neither does `status`.
            let until = if self.cluster.answering() { "" } else { "once the API server answers again, " };
            lines.push(format!("  {until}{UNSURE}"));
        }
        lines.join("\n")
    }

    /// The report's line for `key`: what it may be when a request for it is out (`in_flight`),
    /// else what became of this run's writes of it.
    fn object_line(&self, key: &ObjectKey, in_flight: Option<&InFlight>) -> String {
        let out = in_flight.filter(|out| &out.key == key);
        // Written (kept with an earlier step's approval, not yet rolled back, or left so by a
        // second signal) before the request out.
        let written = self.written.iter().any(|w| {
            w.change.key() == key && matches!(w.fate, Fate::Written | Fate::Kept(_) | Fate::NotRolledBack { .. })
        });
        // An undo out, or the object's first write: the request says all that is known of it.
        if let Some(out) = out.filter(|out| out.undoing || !written) {
            return self.may_be_line(out);
        }
        let unheard = self.may_land.iter().find(|unheard| &unheard.key == key).map(Unheard::out);
        let mut of_key = self.written.iter().filter(|w| w.change.key() == key).peekable();
        let Some(&first) = of_key.peek() else {
            return self.may_be_line(&unheard.expect("an object of the report was written or may be"));
        };
        let unheard_reply = self.unheard_reply(key).map(|reply| format!(" ({reply})")).unwrap_or_default();
        // Kept writes (earlier steps': the last of them said) and a rolled back later one
        // (this step's): both said.
        let later_rolled_back = of_key.clone().any(|w| w.fate == Fate::RolledBack);
        let later = if later_rolled_back { "; a later write of it was rolled back" } else { "" };
        let shown = of_key.rfind(|w| w.fate != Fate::RolledBack).unwrap_or(first);
        // A write of it after those, whose outcome is unknown (the run's last, or the one out):
        // one line says all that is known of the object.
        let later_out = out.or(unheard.as_ref());
        // Kept at an earlier step (approved), the object is as that step left it: its state
        // before this run is said, or, with a later write whose outcome is unknown, that write's
        // backup (its state before this step), the way back to where the approved step left it.
        // Else the backup the way back puts back: of this step's write.
        let earlier = self.earlier_steps();
        let backup = match (earlier.iter().any(|w| std::ptr::eq(w, shown)), later_out) {
            (true, Some(later)) => later.backup.as_ref().or(self.backup_of(key)),
            (true, None) => earlier.iter().filter(|w| w.change.key() == key).find_map(|w| w.backup.as_ref()),
            (false, _) => self.backup_of(key),
        };
        let backup = backup.map(|backup| (self.backup_holds(key, backup), backup));
        let backup = state_before(backup, self.made(key), &self.overwritten_note(key));
        let unheard = later_out.map(|u| format!("; a later write of it {}", u.may_be)).unwrap_or_default();
        // An earlier step's write kept with its approval, before a later one not rolled back:
        // both said, as the way back goes only to where that step left it.
        let kept = self.written.iter().filter(|w| w.change.key() == key).find_map(|w| match &w.fate {
            Fate::Kept(why) => Some(format!("{why}; a later write of it: ")),
            _ => None,
        });
        let kept = kept.unwrap_or_default();
        match &shown.fate {
            Fate::Written => {
                format!("  {key}: {}{unheard_reply}{unheard}{backup}", done_by(&shown.change, self.made(key)))
            }
            Fate::RolledBack => format!("  {key}: rolled back{unheard}"),
            Fate::NotRolledBack { why, unsure: true } => {
                let made = self.made_stands(key, &shown.fate);
                format!("  {key}: {kept}{made}{why}{later}{unheard}{backup}")
            }
            Fate::NotRolledBack { why, .. } => format!("  {key}: {kept}{why}{later}{unheard}{backup}"),
            Fate::Kept(why) => format!("  {key}: {why}{later}{unheard}{backup}"),
        }
    }

    /// Before what an undo of a later write of `key` may have done, when this run made it: its
    /// create stands whatever became of that undo (a canary Ingress's annotation patch, undone
    /// before its delete), and `may or may not be rolled back` beside `it did not exist before
    /// this run` would read as the object perhaps gone. `fate`: that of its writes not undone.
    fn made_stands(&self, key: &ObjectKey, fate: &Fate) -> &'static str {
        let mut standing = self.written.iter().filter(|w| w.change.key() == key && &w.fate == fate);
        match (standing.next(), standing.next()) {
            (Some(first), Some(_)) if matches!(first.change, Change::Create { .. }) => {
                "made, not rolled back; a later write of it: "
            }
            _ => "",
        }
    }

    /// The line for an object a request may have changed: what it may be, and its backup.
    fn may_be_line(&self, out: &InFlight) -> String {
        let backup = out.backup.as_ref().or(self.backup_of(&out.key));
        let backup = backup.map(|backup| (self.backup_holds(&out.key, backup), backup));
        // A rollback puts their edit back (the undone write was made over it).
        let theirs = self.overwritten.iter().filter(|(overwritten, _)| overwritten == &out.key && !out.undoing);
        let theirs: String =
            theirs.map(|(_, file)| format!("; their edit, which it may overwrite: {}", file.display())).collect();
        let before = state_before(backup, out.makes || self.made(&out.key), &theirs);
        let made = if out.undoing { self.made_stands(&out.key, &Fate::Written) } else { "" };
        format!("  {}: {made}{}{before}", out.key, out.may_be)
    }

    /// Whether this run made `key` (it did not exist before this run).
    fn made(&self, key: &ObjectKey) -> bool {
        self.written.iter().any(|w| w.change.key() == key && matches!(w.change, Change::Create { .. }))
    }

    /// `--dry-run=server`: one line per object accepted, or the rejections as an error.
    pub fn verdicts(&self) -> Result<Vec<String>, Error> {
        let rejected: Vec<String> = self
            .verdicts
            .iter()
            .filter_map(|(key, verdict)| verdict.as_ref().err().map(|message| format!("{key}: {message}")))
            .collect();
        if !rejected.is_empty() {
            return Err(Error::Input(format!("the API server rejected:\n  {}", rejected.join("\n  "))));
        }
        Ok(self.verdicts.keys().map(|key| format!("server dry-run accepted {key}")).collect())
    }

    /// Ends a run: on an error, rolls back what it wrote (unless kept; not for an output error
    /// after the writes) and adds the report; removes the backups it did not need; releases the
    /// claims (not once stopped, nor once the server stopped answering). A run a signal came
    /// to, which finished all the same (the signal came during its last write, or the release),
    /// still ends as interrupted. A second signal during any of these stops it at once, with
    /// the report of what may be half done and the claims left.
    pub async fn finish<T>(&mut self, result: Result<T, Error>) -> Result<T, Error> {
        if self.stopped.is_some() {
            // Stopped at once during the command's work: the error says what may be half done.
            return result;
        }
        // A guard's refusal after this run's writes (at a later step of `approve --to-end`)
        // stopped what came next; the report below it says what was written before.
        let result = match result {
            Err(Error::Refused(message)) if !self.written.is_empty() => {
                Err(Error::Refused(refused_after_writes(message)))
            }
            other => other,
        };
        // Output that fails once something was written (stdout closed by `| head`) is no reason
        // to undo the writes: they stand.
        let output_failed = matches!(result, Err(Error::Output(_))) && !self.written.is_empty();
        // A signal before the rollback came while the run worked (not while it rolled back).
        let signalled_at_work = self.interrupt.received().await;
        // What the run was doing when a second signal stopped it, for the report.
        let mut doing = "rolling back";
        if result.is_err() && !output_failed {
            self.roll_back().await;
        }
        if self.stopped.is_none() {
            doing = "removing the backups it saved of objects it then wrote nothing to";
            self.remove_unused_backups().await;
        }
        let mut warnings = Vec::new();
        if self.stopped.is_none() {
            doing = "releasing the claims";
            warnings = self.release_claims().await;
        }
        if let Some(signal) = self.stopped {
            let after = match &result {
                Err(Error::Interrupted { signal, report }) => format!(" after {signal}: {report}"),
                Err(error) => format!(" after: {error}"),
                Ok(_) => String::new(),
            };
            return Err(self.stopped_error(signal, &format!(" while {doing}{after}")));
        }
        for warning in warnings {
            stderr::line(&warning);
        }
        // A signal that came while the run finished its writes (a hang-up also makes the output
        // fail), or once they were all done, still ends it as interrupted.
        let finished_anyway = |signal| {
            let when = match signalled_at_work {
                Some(_) => "during the last write, which was finished: the run's writes were all done, and are kept",
                None => "once every write was done, while the run finished (releasing its claim)",
            };
            Error::Interrupted { signal, report: format!("it came {when}\n{}", self.report()) }
        };
        let signal = self.interrupt.received().await;
        match (result, signal, signalled_at_work) {
            (Err(Error::Output(_)), Some(signal), _) if output_failed => Err(finished_anyway(signal)),
            // A closed pipe is not a failure (`cli::exit_code`); another output error is, and
            // what was written is said on stderr.
            (Err(Error::Output(error)), None, _) if output_failed => match error.kind() {
                std::io::ErrorKind::BrokenPipe => Err(Error::Output(error)),
                _ => Err(Error::Output(error).with_report(&format!("the writes stand:\n{}", self.report()))),
            },
            // A guard's refusal before any write says so itself; after a signal (a hang-up may
            // end the question as a refusal), as the signal's.
            (Err(error @ Error::Refused(_)), _, signal) if self.written.is_empty() => match signal {
                Some(signal) => Err(Error::Interrupted { signal, report: format!("{error}\n{}", self.report()) }),
                None => Err(error),
            },
            (Err(error @ Error::Interrupted { .. }), ..) => Err(error.with_report(&self.report())),
            // The write in flight when the signal came failed: the run ends as interrupted all
            // the same (its exit status the signal's), the failure said.
            (Err(error), _, Some(signal)) => {
                Err(Error::Interrupted { signal, report: format!("{error}\n{}", self.report()) })
            }
            (Err(error), ..) => Err(error.with_report(&self.report())),
            (Ok(_), Some(signal), _) => Err(finished_anyway(signal)),
            (Ok(value), None, _) => Ok(value),
        }
    }
}

/// A guard's refusal, which says `nothing was written: …` as it comes before any write, when it
/// came after this run's writes: `nothing more was written: …`.
fn refused_after_writes(message: String) -> String {
    match message.strip_prefix("nothing was written: ") {
        Some(why) => format!("nothing more was written: {why}"),
        None => message,
    }
}

/// `job`'s output, the job run on a thread of its own: a backup's save or removal that blocks (a
/// stalled network home) must leave the runtime's one thread free, so that a second signal still
/// stops the run at once. Not `spawn_blocking`: the runtime waits for those tasks when dropped,
/// and a run so stopped would wait for the stalled file, its report unsaid; this thread is left
/// behind and ends with the process.
async fn on_own_thread<T: Send + 'static>(job: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, output) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let _ = sender.send(job());
    });
    output.await.expect("a backup's save or removal does not panic")
}

/// A failed renewal of the claims, before a request of the writer's or while it asks: its own
/// outcome says nothing about the object the request is for, so it fails as input, not as that
/// request's failure.
fn renewal_failed(error: Error) -> Error {
    match error {
        Error::Api { .. } => Error::Input(format!("renewing the claim: {error}")),
        other => other,
    }
}

/// Sends `change` with `dryRun=All` (for `plan --dry-run=server`): admission judges it,
/// nothing is stored. Returns the server's rejection, if any.
pub async fn server_dry_run(cluster: &Cluster, resource: &Resource, change: &Change) -> Result<(), DryRunRefusal> {
    let Some(request) = change.request(None) else { return Ok(()) };
    match cluster.send(resource, change.key(), &request, true).await {
        Ok(_) => Ok(()),
        Err(Error::Api { failure, .. }) => {
            Err(DryRunRefusal { forbidden: failure.rbac_forbidden(), message: failure.to_string() })
        }
        Err(other) => Err(DryRunRefusal { forbidden: false, message: other.to_string() }),
    }
}

/// Why a server dry run did not accept a write: RBAC forbade it (`forbidden`), or admission (a
/// webhook, the schema) or anything else refused it, said in `message`.
pub struct DryRunRefusal {
    pub forbidden: bool,
    pub message: String,
}

/// Asks the API server about every permission before anything is written; refuses, naming
/// what is missing and a Role that would grant it, when any is denied, then what `advice` says
/// of the missing ones (a way to do without them).
pub async fn preflight(
    cluster: &Cluster,
    permissions: Vec<Permission>,
    advice: impl FnOnce(&[Permission]) -> Option<String>,
) -> Result<(), Error> {
    let missing = missing(cluster, permissions).await?;
    if missing.is_empty() {
        return Ok(());
    }
    let refusal = Error::Refused(format!("nothing was written: {}", not_allowed(cluster, &missing).await));
    Err(refusal.with_report(&advice(&missing).unwrap_or_default()))
}

/// `you may not` and the `missing` permissions a line each, then a Role and RoleBinding that
/// would grant them.
async fn not_allowed(cluster: &Cluster, missing: &[Permission]) -> String {
    let lines: Vec<String> = missing.iter().map(|p| format!("  {p}")).collect();
    format!("{} may not\n{}\n{}", who(cluster), lines.join("\n"), role_granting(cluster, missing).await)
}

/// `A Role and RoleBinding that would grant it` (`them`, for several) and the two, bound to the
/// user the API server takes this client for (asked only now that a refusal shows them).
async fn role_granting(cluster: &Cluster, missing: &[Permission]) -> String {
    let user = cluster.whoami().await;
    format!(
        "A Role and RoleBinding that would grant {}:\n\n{}",
        if missing.len() == 1 { "it" } else { "them" },
        output::paint(output::DIM, &rbac::grant(missing, user.as_deref()))
    )
}

/// Asks for `update` on the `finalizers` of the owners that creating the objects of the changes
/// (or making them again to undo a deletion) needs where the API server enforces owner-reference
/// permissions (OpenShift does; Kubernetes does not by default), and says which are missing: a
/// note, not a refusal, as whether a server enforces them cannot be asked.
pub async fn owner_reference_note(
    cluster: &Cluster,
    permissions: Vec<(Permission, &Change)>,
) -> Result<Option<String>, Error> {
    let asked: Vec<Permission> = permissions.iter().map(|(p, _)| p.clone()).collect();
    let missing = missing(cluster, asked).await?;
    if missing.is_empty() {
        return Ok(None);
    }
    let needing = needing_owner_permissions(&permissions, &missing);
    let lines: Vec<String> = missing.iter().map(|p| format!("  {p}")).collect();
    Ok(Some(format!(
        "note: {} may not\n{}\nwhich {} needs where the API server enforces owner-reference permissions (the OwnerReferencesPermissionEnforcement admission plugin, on in OpenShift), as its owner reference blocks the owner's deletion. There the create is refused, and the run stops and reports what it wrote. {}",
        who(cluster),
        lines.join("\n"),
        needing.join(", "),
        role_granting(cluster, &missing).await
    )))
}

/// What needs the `missing` ones of `permissions` (each asked for a change): the changes, each
/// named once, in the order of `permissions`.
fn needing_owner_permissions(permissions: &[(Permission, &Change)], missing: &[Permission]) -> Vec<String> {
    let mut needing = Vec::new();
    for (_, change) in permissions.iter().filter(|(p, _)| missing.contains(p)) {
        let what = match change {
            Change::Delete { key, .. } => format!("making {key} again to undo its deletion"),
            change => format!("creating {}", change.key()),
        };
        // Not `dedup`: a change's permissions need not be next to each other.
        if !needing.contains(&what) {
            needing.push(what);
        }
    }
    needing
}

/// Those of `permissions` the API server says the user lacks, each asked once.
async fn missing(cluster: &Cluster, mut permissions: Vec<Permission>) -> Result<Vec<Permission>, Error> {
    permissions.sort();
    permissions.dedup();
    let answers = futures::future::try_join_all(permissions.iter().map(|p| cluster.can_i(p))).await?;
    Ok(permissions.into_iter().zip(answers).filter(|(_, allowed)| !allowed).map(|(p, _)| p).collect())
}

fn who(cluster: &Cluster) -> String {
    cluster.user.as_deref().map_or("you".to_string(), |u| format!("user {u}"))
}

/// What claiming `rollouts` in `namespace` needs: get, create, update and delete on their Leases.
pub fn claim_permissions(namespace: &str, rollouts: &[String]) -> Vec<Permission> {
    let verbs = ["get", "create", "update", "delete"];
    let on = |rollout: &String| {
        let lease = lease_key(namespace, rollout).name;
        verbs.map(|verb| lease_resource().permission(verb, None, namespace).on(&lease))
    };
    rollouts.iter().flat_map(on).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;
    use std::sync::Arc;

    #[test]
    fn a_refusal_after_this_runs_writes_says_nothing_more_was_written() {
        let refusal = "nothing was written: you may not patch rollouts/status".to_string();
        assert_eq!(refused_after_writes(refusal), "nothing more was written: you may not patch rollouts/status");
        let other = "their edit is not overwritten: not confirmed".to_string();
        assert_eq!(refused_after_writes(other.clone()), other);
    }

    #[test]
    fn backups_need_a_state_folder_and_go_under_it_by_context() {
        // Which values of XDG_STATE_HOME and HOME give none: tests/writes.rs
        // `without_a_home_for_backups_a_run_that_writes_refuses_before_its_first_write`.
        let Err(Error::Input(refusal)) = Backups::new("kind-dev", "https://k:6443/", None) else { panic!("refused") };
        assert_eq!(
            refusal,
            "nothing was written: there is no folder for backups: neither XDG_STATE_HOME nor HOME is set (to an absolute path); set one (backups go to $XDG_STATE_HOME/kubectl-rollout-lua/backups, by default ~/.local/state/kubectl-rollout-lua/backups)"
        );
        let backups = Backups::new("arn:aws:eks:eu/demo", "https://k:6443/", Some("/state".into())).unwrap();
        assert_eq!(
            (backups.root.as_path(), backups.context.as_str()),
            (Path::new("/state/kubectl-rollout-lua/backups"), "arn:aws:eks:eu_demo")
        );
        assert_eq!(Backups::new("", "https://k:6443/", Some("/state".into())).unwrap().context, "default");
        // A context called `..` or `.` stays a folder of its own (a security audit's L2).
        assert_eq!(Backups::new("..", "https://k:6443/", Some("/state".into())).unwrap().context, "%2E%2E");
        assert_eq!(Backups::new(".", "https://k:6443/", Some("/state".into())).unwrap().context, "%2E");
        let backups = Backups::new("..", "https://k:6443/", Some("/state".into())).unwrap();
        assert_eq!(
            backups.folder("..", "Kind", "."),
            Path::new("/state/kubectl-rollout-lua/backups/%2E%2E/%2E%2E/Kind/%2E")
        );
    }

    #[test]
    fn every_report_line_names_the_state_before_the_run_in_one_form() {
        let backup = PathBuf::from("/b/1.yaml");
        assert_eq!(
            state_before(Some(("its state before this run", &backup)), false, ""),
            " (its state before this run: /b/1.yaml)"
        );
        // A backup is the state before the run, even of an object the run made at an earlier step.
        assert_eq!(
            state_before(Some(("its state before this run", &backup)), true, ""),
            " (its state before this run: /b/1.yaml)"
        );
        assert_eq!(
            state_before(Some(("its state before this run", &backup)), false, "; their edit it overwrote: /b/2.yaml"),
            " (its state before this run: /b/1.yaml; their edit it overwrote: /b/2.yaml)"
        );
        // At a later step of a follow run, the backup of that step's first write.
        assert_eq!(
            state_before(Some(("its state before this step", &backup)), true, ""),
            " (its state before this step: /b/1.yaml)"
        );
        assert_eq!(state_before(None, true, ""), " (it did not exist before this run)");
        assert_eq!(
            state_before(None, true, "; their edit it overwrote: /b/2.yaml"),
            " (it did not exist before this run; their edit it overwrote: /b/2.yaml)"
        );
        assert_eq!(state_before(None, false, ""), "");
        assert_eq!(
            state_before(None, false, "; their edit it overwrote: /b/2.yaml"),
            " (their edit it overwrote: /b/2.yaml)"
        );
    }

    #[test]
    fn the_way_back_is_named_for_an_object_left_not_rolled_back_with_a_backup() {
        let backup = PathBuf::from("/b/1.yaml");
        let not_rolled_back = Fate::NotRolledBack { why: format!("{ROLLBACK_UNSURE} (…)"), unsure: true };
        let none: Vec<&str> = Vec::new();
        assert_eq!(way_back([(&not_rolled_back, Some(&backup))], None, false), [FROM_BACKUP]);
        assert_eq!(way_back([(&not_rolled_back, None)], None, false), [MADE_LEFT], "made by this run: no backup");
        // Whatever its words: kept on purpose (someone's edit), or with its own way back on its
        // line (held by its finalizers), an object gets none.
        for kept in [SOMEONE_CHANGED_IT.to_string(), format!("{COULD_NOT}: it is being deleted")] {
            assert_eq!(way_back([(&Fate::Kept(kept), Some(&backup))], None, false), none);
        }
        let done = [(&Fate::Written, Some(&backup)), (&Fate::RolledBack, Some(&backup))];
        assert_eq!(way_back(done, None, false), none);
        assert_eq!(way_back(done, None, true), [MADE_LEFT], "a create unheard may have made it");
        let fates = [(&Fate::RolledBack, Some(&backup)), (&not_rolled_back, Some(&backup)), (&not_rolled_back, None)];
        assert_eq!(way_back(fates, None, false), [FROM_BACKUP, MADE_LEFT], "each once for the report");
        // An undo out when a second signal came may not have landed; a forward write out is no
        // rollback left undone.
        let out = |undoing, backup: Option<&PathBuf>| InFlight {
            key: ObjectKey::new("networking.istio.io", "VirtualService", "shop", "demo"),
            backup: backup.cloned(),
            may_be: ROLLBACK_OUT.into(),
            makes: false,
            undoing,
        };
        assert_eq!(way_back(done, Some(&out(true, Some(&backup))), false), [FROM_BACKUP]);
        assert_eq!(way_back(done, Some(&out(true, None)), false), [MADE_LEFT], "made by this run");
        assert_eq!(way_back(done, Some(&out(false, Some(&backup))), false), none);
        let create_out = InFlight { makes: true, ..out(false, None) };
        assert_eq!(way_back(done, Some(&create_out), false), [MADE_LEFT], "a create out may have made it");
    }

    #[test]
    fn an_object_this_run_made_is_said_to_be_made_whatever_wrote_it_last() {
        let key = ObjectKey::new("networking.k8s.io", "Ingress", "shop", "web-canary");
        let object = Arc::new(serde_json::json!({}));
        let patch = Change::MergePatch {
            key: key.clone(),
            subresource: None,
            before: Arc::clone(&object),
            patch: serde_json::json!({}),
        };
        assert_eq!(done_by(&patch, true), "made");
        assert_eq!(done_by(&patch, false), "written");
        assert_eq!(done_by(&Change::Create { key: key.clone(), object: Arc::clone(&object) }, false), "made");
        assert_eq!(done_by(&Change::Delete { key, before: object }, true), "deleted");
    }

    #[test]
    fn a_write_then_someones_change_is_said_as_a_create_or_another_write() {
        let key = ObjectKey::new("networking.k8s.io", "Ingress", "shop", "web-canary");
        let object = Arc::new(json!({"kind": "Ingress"}));
        let create = Change::Create { key: key.clone(), object: object.clone() };
        assert_eq!(landed_then_changed(&create), MADE_THEN_CHANGED, "perhaps theirs from the start");
        let replace = Change::Replace { key, before: object.clone(), after: object };
        assert_eq!(landed_then_changed(&replace), LANDED_THEN_CHANGED);
    }

    #[test]
    fn the_oldest_backup_of_an_object_is_the_first_one_saved() {
        let state = std::env::temp_dir().join(format!("rollout-lua-oldest-{}", std::process::id()));
        let backups = Backups::new("ctx/1", "https://one:6443/", Some(state.clone())).unwrap();
        let key = ObjectKey::new("networking.k8s.io", "Ingress", "shop", "web-canary");
        assert_eq!(backups.oldest_of(&key, None), None, "no backup yet");
        let object =
            |uid: &str| json!({"kind": "Ingress", "metadata": {"namespace": "shop", "name": "web-canary", "uid": uid}});
        let first = backups.save(&object("u1")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let second = backups.save(&object("u2")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2));
        backups.save(&object("u2")).unwrap();
        // A save in progress (another run's temporary file) is not a backup.
        std::fs::write(first.with_file_name(".0.yaml.1.2.partial"), "").unwrap();
        assert_eq!(backups.oldest_of(&key, None), Some(first.clone()));
        assert_eq!(backups.oldest_of(&key, Some("u1")), Some(first.clone()));
        // The object made again since (another uid): its own oldest backup, not its namesake's.
        assert_eq!(backups.oldest_of(&key, Some("u2")), Some(second.clone()));
        assert_eq!(backups.oldest_of(&key, Some("u3")), None);
        let other = ObjectKey::new("networking.k8s.io", "Ingress", "shop", "web");
        assert_eq!(backups.oldest_of(&other, None), None);
        // The state before the latest release: the newest backup without a stored original.
        let stored = |uid: &str| {
            let mut routed = object(uid);
            routed["metadata"]["annotations"] = json!({crate::data::ORIGINAL_SPEC_ANNOTATION: "{}"});
            routed
        };
        std::thread::sleep(std::time::Duration::from_millis(2));
        let before_release = backups.save(&object("u2")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2));
        backups.save(&stored("u2")).unwrap();
        assert_eq!(backups.before_latest_release(&key, Some("u2")), Some(before_release));
        assert_eq!(backups.before_latest_release(&key, Some("u1")), Some(first.clone()));
        // Another cluster's context of the same name: its backups are not this one's.
        let elsewhere = Backups { server: "https://two:6443/".into(), ..backups.clone() };
        assert_eq!(elsewhere.oldest_of(&key, None), None);
        let theirs = elsewhere.save(&object("u2")).unwrap();
        assert_eq!(elsewhere.oldest_of(&key, Some("u2")), Some(theirs));
        assert_eq!(backups.oldest_of(&key, Some("u2")), Some(second.clone()));
        std::fs::remove_dir_all(state).unwrap();
    }

    #[test]
    fn the_owner_reference_note_names_each_change_needing_a_missing_permission_once() {
        let key = |kind: &str, name: &str| ObjectKey::new("networking.k8s.io", kind, "shop", name);
        let object = Arc::new(json!({"metadata": {"name": "x"}}));
        let create = |name: &str| Change::Create { key: key("Ingress", name), object: Arc::clone(&object) };
        let (a, b) = (create("a-canary"), create("b-canary"));
        let deleted = Change::Delete { key: key("Ingress", "c-canary"), before: Arc::clone(&object) };
        let replaced =
            Change::Replace { key: key("Ingress", "d"), before: Arc::clone(&object), after: Arc::clone(&object) };
        let finalizers = |resource: &str| Permission::new("update", "apps", resource, Some("finalizers"), "shop");
        let (deployments, replica_sets, stateful_sets) =
            (finalizers("deployments"), finalizers("replicasets"), finalizers("statefulsets"));
        // Ingress a has two owners, asked for after b's: a is named once, first, as it comes first.
        let permissions = [
            (deployments.clone(), &a),
            (deployments.clone(), &b),
            (replica_sets.clone(), &a),
            (stateful_sets.clone(), &replaced),
            (deployments.clone(), &deleted),
        ];
        assert_eq!(
            needing_owner_permissions(&permissions, &[deployments.clone(), replica_sets.clone()]),
            [
                "creating Ingress shop/a-canary",
                "creating Ingress shop/b-canary",
                "making Ingress shop/c-canary again to undo its deletion"
            ]
        );
        // Only the changes a missing permission was asked for are named.
        assert_eq!(needing_owner_permissions(&permissions, &[replica_sets]), ["creating Ingress shop/a-canary"]);
        assert_eq!(needing_owner_permissions(&permissions, &[]), Vec::<String>::new());
    }

    #[test]
    fn a_backup_folder_refused_to_you_is_named_with_how_to_take_it_back() {
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let root = std::env::temp_dir();
        let below = root.join("rollout-lua-no-such-folder/backups/ctx");
        assert_eq!(
            not_yours(&below, &denied),
            format!(
                " ({} is not writable by you; a run as root that kept your HOME (sudo) makes such folders: `sudo chown -R \"$(id -un)\" {}` gives them back)",
                root.display(),
                root.display()
            )
        );
        assert_eq!(not_yours(&below, &std::io::Error::from(std::io::ErrorKind::StorageFull)), "");
    }

    #[test]
    fn a_backup_ends_with_the_sum_of_what_precedes_it_and_any_cut_is_seen() {
        let object = json!({"apiVersion": "v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"a": [1, 2]}});
        let text = backup_text(&object, "https://k:6443/");
        let yaml = format!("# server: https://k:6443/\n{}", crate::yaml::to_string(&object));
        assert_eq!(text, format!("{yaml}# end of backup: sha256 {}\n", crate::scripts::sha256_hex(&yaml)));
        assert_eq!(backup_server(&text), Some("https://k:6443/"));
        assert_eq!(backup_server(&crate::yaml::to_string(&object)), None, "an older version's");
        assert_eq!(backup_flaw(&text), None);
        // Cut anywhere (a full disk, a crash): never taken for a whole backup.
        for cut in 0..text.len() {
            assert!(backup_flaw(&text[..cut]).is_some(), "cut at byte {cut}: {:?}", &text[..cut]);
        }
        assert_eq!(
            backup_flaw(&yaml),
            Some("has no end line (`# end of backup: sha256 …`): it was written by an older version, or cut short")
        );
        let changed = text.replace("name: w", "name: x");
        assert_eq!(
            backup_flaw(&changed),
            Some(
                "does not match its end line (`# end of backup: sha256 …`): it was changed since it was written, or cut short"
            )
        );
        let other_sum = text.replace("# end of backup: sha256 ", "# end of backup: sha512 ");
        assert!(backup_flaw(&other_sum).unwrap().starts_with("has an end line this version does not read"));
        // An end line with nothing above it is a whole backup of nothing, which the YAML read refuses.
        assert_eq!(backup_flaw(&format!("{BACKUP_END}{}\n", crate::scripts::sha256_hex(""))), None);
    }
}
