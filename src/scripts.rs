//! Which script runs for a gateway object, in the controller's order after the user's own:
//! `--script`, `--lua-dir`, the built-in scripts (compiled in), then the ConfigMap
//! `kruise-rollout-configuration`. For an Ingress class the controller reads the ConfigMap
//! before its built-in script (docs/controller-semantics.md §5.1).

use crate::lua::{Script, WrittenAt};
use crate::model::ObjectRef;
use ring::digest;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// A script shipped in the binary, from `lua_configuration/<group>/<Kind>/trafficRouting.lua`.
pub struct BuiltinScript {
    pub group: &'static str,
    pub kind: &'static str,
    pub code: &'static str,
    /// `testdata/` cases: (file name, contents).
    pub testdata: &'static [(&'static str, &'static str)],
}

impl BuiltinScript {
    pub fn path(&self) -> String {
        format!("lua_configuration/{}/{}/trafficRouting.lua", self.group, self.kind)
    }
}

include!(concat!(env!("OUT_DIR"), "/builtin_scripts.rs"));

/// An Ingress script shipped in the binary, from `lua_configuration/trafficrouting_ingress/<classType>.lua`.
pub struct BuiltinIngressScript {
    pub class_type: &'static str,
    pub code: &'static str,
    /// `testdata/<classType>/` cases: (file name, contents).
    pub testdata: &'static [(&'static str, &'static str)],
}

impl BuiltinIngressScript {
    pub fn path(&self) -> String {
        format!("lua_configuration/trafficrouting_ingress/{}.lua", self.class_type)
    }
}

include!(concat!(env!("OUT_DIR"), "/builtin_ingress_scripts.rs"));

/// The largest script read from a file or a ConfigMap: a ConfigMap holds 1 MiB at most, so no
/// larger script can reach the controller.
pub const MAX_SCRIPT_BYTES: usize = 1 << 20;

/// The ConfigMap the controller reads scripts from, and its key for a kind.
pub const CONFIGMAP_NAME: &str = "kruise-rollout-configuration";
pub const DEFAULT_CONTROLLER_NAMESPACE: &str = "kruise-rollout";

pub fn configmap_key(kind: &str, group: &str) -> String {
    format!("lua.traffic.routing.{kind}.{group}")
}

/// The ConfigMap key of an Ingress class's script.
pub fn ingress_configmap_key(class_type: &str) -> String {
    format!("lua.traffic.routing.ingress.{class_type}")
}

/// (group, Kind) as the controller's script lookup names it; an Ingress class is filed as
/// (classType, `ingress`), which `--script ingress.<classType>=FILE` parses to.
pub type ScriptKey = (String, String);

/// The kind part of an Ingress class's script key.
const INGRESS_KIND: &str = "ingress";

pub fn ingress_key(class_type: &str) -> ScriptKey {
    (class_type.to_string(), INGRESS_KIND.to_string())
}

pub fn key_of(reference: &ObjectRef) -> ScriptKey {
    (reference.script_group().to_string(), reference.kind.clone())
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScriptSource {
    Flag {
        path: String,
    },
    LuaDir {
        path: String,
    },
    BuiltIn {
        path: String,
    },
    ConfigMap {
        namespace: String,
        key: String,
    },
    /// No script was found; `plan --show-obj` shows the obj all the same, with a stand-in that
    /// changes nothing, and says `note`: where the script was looked for, and what the obj is.
    Placeholder {
        note: String,
    },
}

impl fmt::Display for ScriptSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScriptSource::Flag { path } => write!(f, "--script {path}"),
            ScriptSource::LuaDir { path } => write!(f, "--lua-dir {path}"),
            ScriptSource::BuiltIn { path } => write!(f, "built-in {path}"),
            ScriptSource::ConfigMap { namespace, key } => write!(f, "ConfigMap {namespace}/{CONFIGMAP_NAME} key {key}"),
            ScriptSource::Placeholder { .. } => write!(f, "none (a placeholder that changes nothing)"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct ResolvedScript {
    pub source: ScriptSource,
    pub script: Script,
    /// Hex SHA-256 of the script text.
    pub sha256: String,
}

impl ResolvedScript {
    fn new(source: ScriptSource, name: String, code: String) -> ResolvedScript {
        let sha256 = sha256_hex(&code);
        ResolvedScript { source, script: Script::new(name, code), sha256 }
    }

    /// The first 12 hex digits, as shown in plans (`sha256sum FILE | cut -c1-12`).
    pub fn short_hash(&self) -> &str {
        &self.sha256[..12]
    }
}

/// Hex SHA-256 of `text`.
pub fn sha256_hex(text: &str) -> String {
    digest::digest(&digest::SHA256, text.as_bytes()).as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Scripts loaded from a ConfigMap's data.
#[derive(Clone, Debug, Default)]
pub struct ConfigMapScripts {
    pub namespace: String,
    pub data: BTreeMap<String, String>,
    /// Where each key's script is written, for a ConfigMap read from a file.
    pub written: BTreeMap<String, WrittenAt>,
}

impl ConfigMapScripts {
    /// The scripts of a ConfigMap object (its string `data` entries).
    pub fn from_object(namespace: &str, configmap: &serde_json::Value) -> ConfigMapScripts {
        let data = crate::data::string_map(&configmap["data"]);
        ConfigMapScripts { namespace: namespace.to_string(), data, written: BTreeMap::new() }
    }

    /// The script under `key`, named by it.
    fn script(&self, key: &str, code: &str) -> ResolvedScript {
        let source = ScriptSource::ConfigMap { namespace: self.namespace.clone(), key: key.to_string() };
        let mut resolved = ResolvedScript::new(source, format!("{CONFIGMAP_NAME}[{key}]"), code.to_string());
        if let Some(written) = self.written.get(key) {
            resolved.script = resolved.script.written_at(written.clone());
        }
        resolved
    }

    /// A warning for each key of a kind with a built-in script: the controller's local
    /// `lua_configuration/` file comes first (docs/controller-semantics.md §4.5), so it never
    /// reads the key, and a script shipped there is silently ignored. (An Ingress class's key
    /// comes before its built-in script: it is read.)
    pub fn unused_keys(&self) -> Vec<String> {
        BUILTIN_SCRIPTS
            .iter()
            .map(|builtin| (builtin, configmap_key(builtin.kind, builtin.group)))
            .filter(|(_, key)| self.data.contains_key(key))
            .map(|(builtin, key)| {
                let (kind, group) = (builtin.kind, builtin.group);
                format!(
                    "ConfigMap {}/{CONFIGMAP_NAME} key {key} is never used: the controller's built-in script for {kind} comes first ({} in its image; it reads the ConfigMap only for kinds without one), and this plan runs that one too; a script of your own for {kind} reaches the controller only in its image, in place of that file (plan with it: --script {kind}.{group}=FILE)",
                    self.namespace,
                    builtin.path()
                )
            })
            .collect()
    }
}

/// Where the ConfigMap was looked for, said when a script is found nowhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigMapPlace {
    /// The cluster, in the controller's namespace (`--controller-namespace`).
    Cluster { namespace: String },
    /// The files `plan -f` reads; the controller would read it from `controller_namespace`.
    Files { controller_namespace: String },
}

impl Default for ConfigMapPlace {
    fn default() -> ConfigMapPlace {
        ConfigMapPlace::Cluster { namespace: DEFAULT_CONTROLLER_NAMESPACE.into() }
    }
}

/// Every place a script can come from, already read into memory.
#[derive(Clone, Debug, Default)]
pub struct ScriptCatalog {
    /// `--script Kind.group=FILE`: key -> (path, code).
    pub overrides: BTreeMap<ScriptKey, (String, String)>,
    /// `--lua-dir DIR`: key -> (path, code).
    pub lua_dir: BTreeMap<ScriptKey, (String, String)>,
    pub configmap: Option<ConfigMapScripts>,
    /// Where `configmap` was read from (or found missing).
    pub configmap_place: ConfigMapPlace,
    /// A kind or Ingress class without a script gets a placeholder that changes nothing (it
    /// returns `obj.data`, or an Ingress's `obj.annotations`), instead of an error: for `plan
    /// --show-obj`, which shows a script's input, before there is a script.
    pub placeholder: bool,
}

impl ScriptCatalog {
    pub fn resolve(&self, reference: &ObjectRef) -> Result<ResolvedScript, String> {
        self.resolve_kind(&key_of(reference))
    }

    /// The script filed under `key`: a kind's, or an Ingress class's.
    pub fn resolve_key(&self, key: &ScriptKey) -> Result<ResolvedScript, String> {
        match key.1 == INGRESS_KIND {
            true => self.resolve_ingress(&key.0),
            false => self.resolve_kind(key),
        }
    }

    fn resolve_kind(&self, key: &ScriptKey) -> Result<ResolvedScript, String> {
        let (group, kind) = key;
        if let Some((path, code)) = self.overrides.get(key) {
            return Ok(ResolvedScript::new(ScriptSource::Flag { path: path.clone() }, path.clone(), code.clone()));
        }
        if let Some((path, code)) = self.lua_dir.get(key) {
            return Ok(ResolvedScript::new(ScriptSource::LuaDir { path: path.clone() }, path.clone(), code.clone()));
        }
        if let Some(builtin) = builtin(key) {
            let path = builtin.path();
            return Ok(ResolvedScript::new(ScriptSource::BuiltIn { path: path.clone() }, path, builtin.code.into()));
        }
        let config_key = configmap_key(kind, group);
        if let Some(configmap) = &self.configmap
            && let Some(code) = configmap.data.get(&config_key)
        {
            if code.len() > MAX_SCRIPT_BYTES {
                let source = ScriptSource::ConfigMap { namespace: configmap.namespace.clone(), key: config_key };
                return Err(format!(
                    "{source}: the script passes {} MiB, the limit for a script",
                    MAX_SCRIPT_BYTES >> 20
                ));
            }
            return Ok(configmap.script(&config_key, code));
        }
        let missing = format!(
            "no Lua script for {kind}.{group}: none given with --script or --lua-dir, none built in, and {}",
            self.not_in_configmap(&config_key)
        );
        // The obj of a custom ref does not depend on its script.
        self.missing(missing, "return obj.data", "its obj is shown all the same")
    }

    /// The error `missing`, or with `placeholder` a stand-in running `code`, which changes
    /// nothing; `shown` says what `--show-obj` shows then.
    fn missing(&self, missing: String, code: &str, shown: &str) -> Result<ResolvedScript, String> {
        match self.placeholder {
            true => {
                let source = ScriptSource::Placeholder { note: format!("{missing}; {shown}") };
                Ok(ResolvedScript::new(source, "placeholder".into(), code.into()))
            }
            false => Err(missing),
        }
    }

    /// Whether resolving `reference` would reach the ConfigMap (so it must be read).
    pub fn needs_configmap(&self, reference: &ObjectRef) -> bool {
        let key = key_of(reference);
        !self.overrides.contains_key(&key) && !self.lua_dir.contains_key(&key) && builtin(&key).is_none()
    }

    /// The script of an Ingress class (already defaulted to `nginx`): `--script
    /// ingress.<classType>=FILE`, `--lua-dir` (`DIR/trafficrouting_ingress/<classType>.lua`), then
    /// as the controller: the ConfigMap key when present and non-empty, then the built-in script.
    pub fn resolve_ingress(&self, class_type: &str) -> Result<ResolvedScript, String> {
        let key = ingress_key(class_type);
        if let Some((path, code)) = self.overrides.get(&key) {
            return Ok(ResolvedScript::new(ScriptSource::Flag { path: path.clone() }, path.clone(), code.clone()));
        }
        if let Some((path, code)) = self.lua_dir.get(&key) {
            return Ok(ResolvedScript::new(ScriptSource::LuaDir { path: path.clone() }, path.clone(), code.clone()));
        }
        let config_key = ingress_configmap_key(class_type);
        if let Some(configmap) = &self.configmap
            && let Some(code) = configmap.data.get(&config_key).filter(|code| !code.is_empty())
        {
            return Ok(configmap.script(&config_key, code));
        }
        if let Some(builtin) = builtin_ingress(class_type) {
            let path = builtin.path();
            return Ok(ResolvedScript::new(ScriptSource::BuiltIn { path: path.clone() }, path, builtin.code.into()));
        }
        let built_in: Vec<&str> = BUILTIN_INGRESS_SCRIPTS.iter().map(|b| b.class_type).collect();
        let missing = format!(
            "no Lua script for Ingress class {class_type:?}: none given with --script ingress.{class_type}=FILE or \
             --lua-dir, none built in (only {}), and {}",
            built_in.join(", "),
            self.not_in_configmap(&config_key)
        );
        // The obj does not depend on the script, except the canary Ingress's annotations once it
        // is made: the script's result at the step before. (An empty table is no annotations.)
        let shown = "its obj is shown all the same, with the canary Ingress's annotations as they would be if the script changed none";
        self.missing(missing, "return obj.annotations or {}", shown)
    }

    /// Why the ConfigMap gives no script under `config_key`, where it was looked for, and what to
    /// add: the end of the error for a script found nowhere.
    fn not_in_configmap(&self, config_key: &str) -> String {
        let lacks = match (&self.configmap, &self.configmap_place) {
            // Only an Ingress class's empty key is skipped: a kind's resolves to the empty script.
            (Some(c), _) if c.data.contains_key(config_key) => format!(
                "the key {config_key} of ConfigMap {}/{CONFIGMAP_NAME} is empty (the controller skips it)",
                c.namespace
            ),
            (Some(c), _) => format!("ConfigMap {}/{CONFIGMAP_NAME} has no key {config_key}", c.namespace),
            (None, ConfigMapPlace::Cluster { namespace }) => format!(
                "there is no ConfigMap {CONFIGMAP_NAME} in namespace {namespace} (the controller's, --controller-namespace)"
            ),
            (None, ConfigMapPlace::Files { controller_namespace }) => format!(
                "the files have no ConfigMap {CONFIGMAP_NAME} (the controller reads it from its namespace, {controller_namespace}, --controller-namespace)"
            ),
        };
        format!("{lacks}; add the script under the key {config_key}")
    }

    /// Whether resolving an Ingress class's script needs the ConfigMap (so it must be read):
    /// unless the user gave one, the controller looks there first.
    pub fn needs_configmap_for_ingress(&self, class_type: &str) -> bool {
        let key = ingress_key(class_type);
        !self.overrides.contains_key(&key) && !self.lua_dir.contains_key(&key)
    }
}

/// What made the ConfigMap be read: the first script looked for there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigMapNeed {
    /// An Ingress class's script: the controller looks there before its built-in one.
    IngressClass(String),
    /// A custom ref's script, of a kind with none built in (the ConfigMap is all that is left),
    /// of the ref in `namespace`.
    Kind { reference: ObjectRef, namespace: String },
}

impl ConfigMapNeed {
    /// What a refused read of the ConfigMap adds: what needed it, where the controller looks for
    /// that script, and how to do without the read.
    pub fn when_forbidden(&self) -> String {
        let (needing, order, flag) = match self {
            ConfigMapNeed::IngressClass(class) => {
                let key = ingress_configmap_key(class);
                let order = match builtin_ingress(class) {
                    Some(_) => format!(
                        "the controller takes an Ingress class's script from its key {key} first, before the built-in one"
                    ),
                    None => format!("the class has no built-in script, so the controller takes it from the key {key}"),
                };
                (format!("Ingress class {class}"), order, format!("ingress.{class}=FILE"))
            }
            ConfigMapNeed::Kind { reference, namespace } => {
                let (group, kind) = key_of(reference);
                let order = format!(
                    "{kind}.{group} has no built-in script, so the controller takes it from the key {}",
                    configmap_key(&kind, &group)
                );
                (format!("{kind} {namespace}/{}", reference.name), order, format!("{kind}.{group}=FILE"))
            }
        };
        format!(
            "  {needing} needs it: {order}; grant get on it (the user guide's rollout-lua-scripts Role), or give the script with --script {flag} or --lua-dir"
        )
    }
}

pub fn builtin_ingress(class_type: &str) -> Option<&'static BuiltinIngressScript> {
    BUILTIN_INGRESS_SCRIPTS.iter().find(|b| b.class_type == class_type)
}

/// A `--script` key that no gateway object of the plan uses is a mistake (a typo, the wrong case,
/// a version): the user would believe their script ran while another did. `used` are the keys of
/// the objects the plan routes through.
pub fn check_overrides<T>(overrides: &BTreeMap<ScriptKey, T>, used: &BTreeSet<ScriptKey>) -> Result<(), String> {
    let Some((group, kind)) = overrides.keys().find(|key| !used.contains(*key)) else { return Ok(()) };
    let flag = |(group, kind): &ScriptKey| format!("{kind}.{group}");
    let unversioned = |group: &str| group.split('/').next().unwrap_or_default().to_ascii_lowercase();
    let near = used.iter().find(|(g, k)| k.eq_ignore_ascii_case(kind) && unversioned(g) == unversioned(group));
    let ingress = kind == INGRESS_KIND;
    let hint = match near {
        Some(key) if ingress => {
            format!(" Did you mean {}? The key is ingress.CLASSTYPE, as the classType is written.", flag(key))
        }
        Some(key) => {
            format!(" Did you mean {}? The key is KIND.GROUP, as the kind is written, without a version.", flag(key))
        }
        None => String::new(),
    };
    let keys: Vec<String> = used.iter().map(flag).collect();
    let keys = if keys.is_empty() { "none (no gateway object)".to_string() } else { keys.join(", ") };
    let missing = match ingress {
        true => format!("no ingress ref of the plan has classType {group}"),
        false => format!("no object in the plan is a {kind} of {group}"),
    };
    Err(format!(
        "--script {}: {missing}, so the script would not run. The keys this plan uses: {keys}.{hint}",
        flag(&(group.clone(), kind.clone()))
    ))
}

/// A `--lua-dir` script filed under a key that differs only in case from one an object of the
/// plan uses (`networking.istio.io/virtualservice/`) is a mistake: another script would run in
/// its place (unless `--script`, `overrides`, gives that key's). `lua_dir` maps keys to (path,
/// code).
pub fn check_lua_dir<T>(
    lua_dir: &BTreeMap<ScriptKey, (String, String)>,
    overrides: &BTreeMap<ScriptKey, T>,
    used: &BTreeSet<ScriptKey>,
) -> Result<(), String> {
    let same_but_case =
        |(g, k): &ScriptKey, (group, kind): &ScriptKey| g.eq_ignore_ascii_case(group) && k.eq_ignore_ascii_case(kind);
    for wanted in used.iter().filter(|key| !lua_dir.contains_key(*key) && !overrides.contains_key(*key)) {
        if let Some(((group, kind), (path, _))) = lua_dir.iter().find(|(key, _)| same_but_case(key, wanted)) {
            let (is, should) = match kind == INGRESS_KIND {
                true => (format!("classType {group}"), format!("classType {}", wanted.0)),
                false => (format!("{kind}.{group}"), format!("{}.{}", wanted.1, wanted.0)),
            };
            return Err(format!(
                "--lua-dir: {path} is filed under {is}, but the plan's object is {should}: the folder and file names are case-sensitive, as the controller's keys are; rename it, or another script runs in its place"
            ));
        }
    }
    Ok(())
}

/// Whether `code` is one of the built-in scripts' (a kind's, or an Ingress class's).
pub fn is_builtin_code(code: &str) -> bool {
    BUILTIN_SCRIPTS.iter().any(|b| b.code == code) || BUILTIN_INGRESS_SCRIPTS.iter().any(|b| b.code == code)
}

/// The text of the built-in script filed under `key`: a kind's, or an Ingress class's.
pub fn builtin_code(key: &ScriptKey) -> Option<&'static str> {
    match key.1 == INGRESS_KIND {
        true => builtin_ingress(&key.0).map(|b| b.code),
        false => builtin(key).map(|b| b.code),
    }
}

pub fn builtin(key: &ScriptKey) -> Option<&'static BuiltinScript> {
    BUILTIN_SCRIPTS.iter().find(|b| b.group == key.0 && b.kind == key.1)
}

/// Parses `--script Kind.group=FILE` into the key and the file.
pub fn parse_script_flag(flag: &str) -> Result<(ScriptKey, String), String> {
    let (target, file) = flag.split_once('=').ok_or_else(|| format!("--script {flag:?}: expected Kind.group=FILE"))?;
    let (kind, group) = target.split_once('.').ok_or_else(|| {
        format!("--script {flag:?}: expected Kind.group=FILE, e.g. VirtualService.networking.istio.io=vs.lua")
    })?;
    if kind.is_empty() || group.is_empty() || file.is_empty() {
        return Err(format!("--script {flag:?}: expected Kind.group=FILE"));
    }
    Ok(((group.to_string(), kind.to_string()), file.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vs() -> ObjectRef {
        ObjectRef {
            api_version: "networking.istio.io/v1beta1".into(),
            kind: "VirtualService".into(),
            name: "vs".into(),
        }
    }

    #[test]
    fn the_built_in_scripts_are_told_by_their_code() {
        let vs = builtin_code(&("networking.istio.io".into(), "VirtualService".into())).unwrap();
        assert!(is_builtin_code(vs));
        assert!(is_builtin_code(builtin_ingress("nginx").unwrap().code));
        assert!(!is_builtin_code(&format!("{vs}\n-- mine")));
    }

    #[test]
    fn a_forbidden_configmap_names_what_needs_it_and_the_controllers_order() {
        let nginx = ConfigMapNeed::IngressClass("nginx".into()).when_forbidden();
        assert_eq!(
            nginx,
            "  Ingress class nginx needs it: the controller takes an Ingress class's script from its key lua.traffic.routing.ingress.nginx first, before the built-in one; grant get on it (the user guide's rollout-lua-scripts Role), or give the script with --script ingress.nginx=FILE or --lua-dir"
        );
        let traefik = ConfigMapNeed::IngressClass("traefik".into()).when_forbidden();
        assert!(traefik.starts_with("  Ingress class traefik needs it: the class has no built-in script, so the controller takes it from the key lua.traffic.routing.ingress.traefik; "), "{traefik}");
        let route = ObjectRef { api_version: "gateway.example.com/v1".into(), kind: "Route".into(), name: "r".into() };
        let kind = ConfigMapNeed::Kind { reference: route, namespace: "shop".into() }.when_forbidden();
        assert_eq!(
            kind,
            "  Route shop/r needs it: Route.gateway.example.com has no built-in script, so the controller takes it from the key lua.traffic.routing.Route.gateway.example.com; grant get on it (the user guide's rollout-lua-scripts Role), or give the script with --script Route.gateway.example.com=FILE or --lua-dir"
        );
    }

    #[test]
    fn resolution_order() {
        let mut catalog = ScriptCatalog::default();
        assert!(matches!(catalog.resolve(&vs()).unwrap().source, ScriptSource::BuiltIn { .. }));
        catalog.lua_dir.insert(key_of(&vs()), ("dir/x.lua".into(), "return {}".into()));
        assert!(matches!(catalog.resolve(&vs()).unwrap().source, ScriptSource::LuaDir { .. }));
        catalog.overrides.insert(key_of(&vs()), ("mine.lua".into(), "return {}".into()));
        let resolved = catalog.resolve(&vs()).unwrap();
        assert_eq!(resolved.source.to_string(), "--script mine.lua");
        assert_eq!(resolved.short_hash().len(), 12);
    }

    #[test]
    fn a_configmap_key_of_a_kind_with_a_built_in_script_is_never_used() {
        let configmap = |keys: &[&str]| ConfigMapScripts {
            namespace: "kruise-rollout".into(),
            data: keys.iter().map(|key| (key.to_string(), "return obj.data".to_string())).collect(),
            ..Default::default()
        };
        let shadowed = configmap(&[
            "lua.traffic.routing.VirtualService.networking.istio.io",
            "lua.traffic.routing.TrafficSplit.split.smi-spec.io",
            "lua.traffic.routing.ingress.nginx",
        ]);
        assert_eq!(
            shadowed.unused_keys(),
            [
                "ConfigMap kruise-rollout/kruise-rollout-configuration key lua.traffic.routing.VirtualService.networking.istio.io is never used: the controller's built-in script for VirtualService comes first (lua_configuration/networking.istio.io/VirtualService/trafficRouting.lua in its image; it reads the ConfigMap only for kinds without one), and this plan runs that one too; a script of your own for VirtualService reaches the controller only in its image, in place of that file (plan with it: --script VirtualService.networking.istio.io=FILE)"
            ]
        );
        let both = configmap(&[
            "lua.traffic.routing.DestinationRule.networking.istio.io",
            "lua.traffic.routing.VirtualService.networking.istio.io",
        ]);
        assert_eq!(both.unused_keys().len(), 2);
        // A kind without a built-in script, and an Ingress class (its key comes first), are read.
        let read =
            configmap(&["lua.traffic.routing.TrafficSplit.split.smi-spec.io", "lua.traffic.routing.ingress.nginx"]);
        assert!(read.unused_keys().is_empty());
    }

    #[test]
    fn configmap_comes_after_built_ins() {
        let gateway =
            ObjectRef { api_version: "gateway.example.com/v1".into(), kind: "Route".into(), name: "r".into() };
        let mut catalog = ScriptCatalog::default();
        assert!(catalog.needs_configmap(&gateway));
        assert!(!catalog.needs_configmap(&vs()));
        let err = catalog.resolve(&gateway).unwrap_err();
        assert_eq!(
            err,
            "no Lua script for Route.gateway.example.com: none given with --script or --lua-dir, none built in, \
             and there is no ConfigMap kruise-rollout-configuration in namespace kruise-rollout (the controller's, \
             --controller-namespace); add the script under the key lua.traffic.routing.Route.gateway.example.com"
        );
        let stand_in = ScriptCatalog { placeholder: true, ..catalog.clone() }.resolve(&gateway).unwrap();
        assert_eq!(
            stand_in.source,
            ScriptSource::Placeholder { note: format!("{err}; its obj is shown all the same") }
        );
        let data = [("lua.traffic.routing.Route.gateway.example.com".to_string(), "return {}".to_string())].into();
        catalog.configmap = Some(ConfigMapScripts { namespace: "kruise-rollout".into(), data, ..Default::default() });
        assert_eq!(
            catalog.resolve(&gateway).unwrap().source.to_string(),
            "ConfigMap kruise-rollout/kruise-rollout-configuration key lua.traffic.routing.Route.gateway.example.com"
        );
    }

    #[test]
    fn ingress_scripts_come_from_the_configmap_before_the_built_ins() {
        let mut catalog = ScriptCatalog::default();
        let nginx = catalog.resolve_ingress("nginx").unwrap();
        assert_eq!(nginx.source.to_string(), "built-in lua_configuration/trafficrouting_ingress/nginx.lua");
        assert!(catalog.needs_configmap_for_ingress("nginx"));
        let key = "lua.traffic.routing.ingress.nginx".to_string();
        let data = [(key.clone(), String::new()), ("lua.traffic.routing.ingress.apisix".into(), "return {}".into())];
        catalog.configmap =
            Some(ConfigMapScripts { namespace: "kruise-rollout".into(), data: data.into(), ..Default::default() });
        assert!(
            matches!(catalog.resolve_ingress("nginx").unwrap().source, ScriptSource::BuiltIn { .. }),
            "an empty key does not count"
        );
        catalog.configmap.as_mut().unwrap().data.insert(key.clone(), "return obj.annotations".into());
        assert_eq!(
            catalog.resolve_ingress("nginx").unwrap().source.to_string(),
            "ConfigMap kruise-rollout/kruise-rollout-configuration key lua.traffic.routing.ingress.nginx"
        );
        assert!(matches!(catalog.resolve_ingress("apisix").unwrap().source, ScriptSource::ConfigMap { .. }));
        catalog
            .lua_dir
            .insert(ingress_key("nginx"), ("dir/trafficrouting_ingress/nginx.lua".into(), "return {}".into()));
        assert!(matches!(catalog.resolve_ingress("nginx").unwrap().source, ScriptSource::LuaDir { .. }));
        assert!(!catalog.needs_configmap_for_ingress("nginx"));
        let (flag_key, file) = parse_script_flag("ingress.nginx=mine.lua").unwrap();
        assert_eq!(flag_key, ingress_key("nginx"));
        catalog.overrides.insert(flag_key, (file, "return {}".into()));
        assert_eq!(catalog.resolve_ingress("nginx").unwrap().source.to_string(), "--script mine.lua");
    }

    #[test]
    fn an_unknown_ingress_class_names_the_key_to_add() {
        let err = ScriptCatalog::default().resolve_ingress("traefik").unwrap_err();
        assert_eq!(
            err,
            "no Lua script for Ingress class \"traefik\": none given with --script ingress.traefik=FILE or --lua-dir, \
             none built in (only aliyun-alb, higress, mse, nginx), and there is no ConfigMap kruise-rollout-configuration \
             in namespace kruise-rollout (the controller's, --controller-namespace); \
             add the script under the key lua.traffic.routing.ingress.traefik"
        );
        // Offline, the ConfigMap is looked for in the files, whatever their namespace.
        let files = ConfigMapPlace::Files { controller_namespace: "ops".into() };
        let offline = ScriptCatalog { configmap_place: files, ..Default::default() };
        assert!(offline.resolve_ingress("traefik").unwrap_err().ends_with(
            "and the files have no ConfigMap kruise-rollout-configuration (the controller reads it from its namespace, \
             ops, --controller-namespace); add the script under the key lua.traffic.routing.ingress.traefik"
        ));
        for class in ["nginx", "aliyun-alb", "higress", "mse"] {
            assert!(builtin_ingress(class).is_some(), "{class}");
        }
        // A ConfigMap without the key, or with the key empty, which the controller skips.
        let key = ingress_configmap_key("traefik");
        let mut catalog = ScriptCatalog {
            configmap: Some(ConfigMapScripts { namespace: "kruise-rollout".into(), ..Default::default() }),
            ..Default::default()
        };
        assert!(catalog.resolve_ingress("traefik").unwrap_err().contains(&format!(
            "and ConfigMap kruise-rollout/kruise-rollout-configuration has no key {key}; add the script under the key {key}"
        )));
        catalog.configmap.as_mut().unwrap().data.insert(key.clone(), String::new());
        assert!(catalog.resolve_ingress("traefik").unwrap_err().contains(&format!(
            "and the key {key} of ConfigMap kruise-rollout/kruise-rollout-configuration is empty (the controller skips it); add the script"
        )));
        let stand_in = ScriptCatalog { placeholder: true, ..Default::default() }.resolve_ingress("traefik").unwrap();
        let ScriptSource::Placeholder { note } = stand_in.source else { panic!("{:?}", stand_in.source) };
        assert!(
            note.starts_with(&format!("{err}; its obj is shown all the same, with the canary Ingress's")),
            "{note}"
        );
        assert_eq!(stand_in.script.code(), "return obj.annotations or {}");
    }

    #[test]
    fn configmap_scripts_have_a_size_limit() {
        let gateway =
            ObjectRef { api_version: "gateway.example.com/v1".into(), kind: "Route".into(), name: "r".into() };
        let key = "lua.traffic.routing.Route.gateway.example.com".to_string();
        let data = [(key, "-".repeat(MAX_SCRIPT_BYTES + 1))].into();
        let catalog = ScriptCatalog {
            configmap: Some(ConfigMapScripts { namespace: "ns".into(), data, ..Default::default() }),
            ..Default::default()
        };
        let err = catalog.resolve(&gateway).unwrap_err();
        assert!(
            err.ends_with(
                "key lua.traffic.routing.Route.gateway.example.com: the script passes 1 MiB, the limit for a script"
            ),
            "{err}"
        );
    }

    #[test]
    fn a_lua_dir_script_filed_under_another_case_of_a_key_used_is_an_error() {
        let used: BTreeSet<ScriptKey> = [key_of(&vs()), ingress_key("nginx")].into();
        let check_lua_dir_without_flags = |lua_dir: &BTreeMap<ScriptKey, (String, String)>,
                                           used: &BTreeSet<ScriptKey>| {
            check_lua_dir(lua_dir, &BTreeMap::<ScriptKey, ()>::new(), used)
        };
        let filed = |key: ScriptKey| -> BTreeMap<ScriptKey, (String, String)> {
            [(key, ("d/x/trafficRouting.lua".to_string(), String::new()))].into()
        };
        let exact = filed(("networking.istio.io".into(), "VirtualService".into()));
        assert_eq!(check_lua_dir_without_flags(&exact, &used), Ok(()));
        // A library of scripts for kinds the plan does not use is fine.
        assert_eq!(check_lua_dir_without_flags(&filed(("example.com".into(), "Route".into())), &used), Ok(()));
        assert_eq!(
            check_lua_dir_without_flags(&filed(("networking.istio.io".into(), "virtualservice".into())), &used)
                .unwrap_err(),
            "--lua-dir: d/x/trafficRouting.lua is filed under virtualservice.networking.istio.io, but the plan's object is VirtualService.networking.istio.io: the folder and file names are case-sensitive, as the controller's keys are; rename it, or another script runs in its place"
        );
        let err = check_lua_dir_without_flags(&filed(ingress_key("Nginx")), &used).unwrap_err();
        assert!(err.contains("is filed under classType Nginx, but the plan's object is classType nginx"), "{err}");
        // --script gives that key's script: it runs, and nothing is amiss.
        let given: BTreeMap<ScriptKey, ()> = [(key_of(&vs()), ())].into();
        let lower = filed(("networking.istio.io".into(), "virtualservice".into()));
        assert_eq!(check_lua_dir(&lower, &given, &used), Ok(()));
    }

    #[test]
    fn script_keys_no_object_uses_are_errors() {
        let used: BTreeSet<ScriptKey> = [key_of(&vs())].into();
        let given = |flag: &str| -> BTreeMap<ScriptKey, ()> { [(parse_script_flag(flag).unwrap().0, ())].into() };
        assert_eq!(check_overrides(&given("VirtualService.networking.istio.io=x.lua"), &used), Ok(()));
        for typo in ["virtualservice.networking.istio.io=x.lua", "VirtualService.networking.istio.io/v1beta1=x.lua"] {
            let err = check_overrides(&given(typo), &used).unwrap_err();
            assert!(err.ends_with("so the script would not run. The keys this plan uses: VirtualService.networking.istio.io. Did you mean VirtualService.networking.istio.io? The key is KIND.GROUP, as the kind is written, without a version."), "{err}");
        }
        let err = check_overrides(&given("VirtualSvc.networking.istio.io=x.lua"), &used).unwrap_err();
        assert_eq!(
            err,
            "--script VirtualSvc.networking.istio.io: no object in the plan is a VirtualSvc of networking.istio.io, so the script would not run. The keys this plan uses: VirtualService.networking.istio.io."
        );
        let err = check_overrides(&given("VirtualSvc.networking.istio.io=x.lua"), &BTreeSet::new()).unwrap_err();
        assert!(err.ends_with("The keys this plan uses: none (no gateway object)."), "{err}");
        // An Ingress class's key.
        let used: BTreeSet<ScriptKey> = [key_of(&vs()), ingress_key("aliyun-alb")].into();
        assert_eq!(check_overrides(&given("ingress.aliyun-alb=x.lua"), &used), Ok(()));
        assert_eq!(
            check_overrides(&given("ingress.Aliyun-ALB=x.lua"), &used).unwrap_err(),
            "--script ingress.Aliyun-ALB: no ingress ref of the plan has classType Aliyun-ALB, so the script would not run. The keys this plan uses: ingress.aliyun-alb, VirtualService.networking.istio.io. Did you mean ingress.aliyun-alb? The key is ingress.CLASSTYPE, as the classType is written."
        );
    }

    #[test]
    fn script_flag_syntax() {
        assert_eq!(
            parse_script_flag("VirtualService.networking.istio.io=vs.lua").unwrap(),
            (("networking.istio.io".into(), "VirtualService".into()), "vs.lua".into())
        );
        for bad in [
            "vs.lua",
            "VirtualService",
            ".networking.istio.io=vs.lua",
            "VirtualService.=vs.lua",
            "VirtualService.networking.istio.io=",
        ] {
            assert_eq!(parse_script_flag(bad), Err(format!("--script {bad:?}: expected Kind.group=FILE")));
        }
        assert_eq!(
            parse_script_flag("VirtualService=vs.lua"),
            Err("--script \"VirtualService=vs.lua\": expected Kind.group=FILE, e.g. VirtualService.networking.istio.io=vs.lua".into())
        );
    }
}
