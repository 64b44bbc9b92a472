//! kubectl's connection flags that override the kubeconfig (`--cluster`, `--user`, `--server`,
//! `--token`, …), applied as clientcmd applies its `ConfigOverrides`: to the fields of the
//! selected cluster and user entries, before kube's `Config` is built from them, so that every
//! check and bound of `super::kubeconfig` holds for a value given by flag as for one in the file.

use crate::error::Error;
use kube::config::{AuthInfo, Cluster, Context, Kubeconfig, NamedAuthInfo, NamedCluster, NamedContext};

/// The flags, each `None` (or false) when not given; an empty value is not given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `--cluster`: the kubeconfig cluster to use instead of the context's.
    pub cluster: Option<String>,
    /// `--user`: the kubeconfig user to use instead of the context's.
    pub user: Option<String>,
    pub server: Option<String>,
    pub certificate_authority: Option<String>,
    /// `--insecure-skip-tls-verify`; `=false` is not given, as clientcmd merges it.
    pub insecure_skip_tls_verify: bool,
    pub tls_server_name: Option<String>,
    pub token: Option<String>,
    pub username: Option<String>,
    pub password: Option<String>,
    pub client_certificate: Option<String>,
    pub client_key: Option<String>,
}

/// The cluster and user a run uses: the context's, or those `--cluster` and `--user` name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selected {
    /// `None` when there is no context to take it from (kube then names what is missing).
    pub cluster: Option<String>,
    /// Empty when the context names none.
    pub user: String,
}

impl Overrides {
    fn overrides_user(&self) -> bool {
        [&self.token, &self.username, &self.password, &self.client_certificate, &self.client_key]
            .iter()
            .any(|value| value.is_some())
    }

    /// Applies the flags to `kubeconfig` for context `context` (`given` when by `--context`),
    /// and returns the entries selected. As in kubectl: `--cluster` and `--user` must name
    /// entries the kubeconfig defines; without a context (none current, or no kubeconfig at all)
    /// `--server` or `--cluster` make one; a context's missing cluster is made by `--server`,
    /// and its missing user by a credential flag.
    pub fn apply(&self, kubeconfig: &mut Kubeconfig, context: &str, given: bool) -> Result<Selected, Error> {
        check_defined("cluster", self.cluster.as_deref(), kubeconfig.clusters.iter().map(|c| &c.name))?;
        check_defined("user", self.user.as_deref(), kubeconfig.auth_infos.iter().map(|u| &u.name))?;
        let named = kubeconfig.contexts.iter().find(|c| c.name == context).and_then(|c| c.context.clone());
        let named = match named {
            Some(named) => named,
            // kube says that the context asked for does not exist, as kubectl does.
            None if given => return Ok(Selected::default()),
            None if self.server.is_none() && self.cluster.is_none() => return Ok(Selected::default()),
            None => {
                let made = Context {
                    cluster: self.cluster.clone().unwrap_or_default(),
                    user: self.user.clone(),
                    ..Default::default()
                };
                let entry =
                    NamedContext { name: context.to_string(), context: Some(made.clone()), other: Default::default() };
                kubeconfig.contexts.retain(|c| c.name != context);
                kubeconfig.contexts.push(entry);
                kubeconfig.current_context = Some(context.to_string());
                made
            }
        };
        let cluster = self.cluster.clone().unwrap_or(named.cluster);
        let user = self.user.clone().or(named.user).unwrap_or_default();
        if self.server.is_some() && !kubeconfig.clusters.iter().any(|c| c.name == cluster) {
            let entry = NamedCluster { name: cluster.clone(), cluster: None, other: Default::default() };
            kubeconfig.clusters.push(entry);
        }
        if let Some(entry) = kubeconfig.clusters.iter_mut().find(|c| c.name == cluster) {
            self.override_cluster(entry.cluster.get_or_insert_with(Default::default));
        }
        if self.overrides_user() && !kubeconfig.auth_infos.iter().any(|u| u.name == user) {
            let entry = NamedAuthInfo { name: user.clone(), auth_info: None, other: Default::default() };
            kubeconfig.auth_infos.push(entry);
        }
        if let Some(entry) = kubeconfig.auth_infos.iter_mut().find(|u| u.name == user) {
            self.override_user(entry.auth_info.get_or_insert_with(Default::default));
        }
        Ok(Selected { cluster: Some(cluster), user })
    }

    /// clientcmd's `getCluster`: a CA or `--insecure-skip-tls-verify` replaces the entry's CA,
    /// its data and its insecure setting together (else a kubeconfig's CA beside the flag would be
    /// refused, or its data would win over the flag's file); `--server` clears the entry's
    /// tls-server-name, which was for the other server, unless `--tls-server-name` gives one.
    fn override_cluster(&self, cluster: &mut Cluster) {
        if let Some(server) = &self.server {
            cluster.server = Some(server.clone());
        }
        if self.insecure_skip_tls_verify || self.certificate_authority.is_some() {
            cluster.insecure_skip_tls_verify = Some(self.insecure_skip_tls_verify);
            cluster.certificate_authority = self.certificate_authority.clone();
            cluster.certificate_authority_data = None;
        }
        if self.server.is_some() || self.tls_server_name.is_some() {
            cluster.tls_server_name = self.tls_server_name.clone();
        }
    }

    /// clientcmd's `getAuthInfo`: each flag replaces its field and no other (a user's tokenFile
    /// stays, and is still read before `--token`, as client-go reads it).
    fn override_user(&self, user: &mut AuthInfo) {
        let set = |field: &mut Option<String>, value: &Option<String>| {
            if value.is_some() {
                field.clone_from(value);
            }
        };
        set(&mut user.username, &self.username);
        set(&mut user.client_certificate, &self.client_certificate);
        set(&mut user.client_key, &self.client_key);
        if let Some(password) = &self.password {
            user.password = Some(password.clone().into());
        }
        if let Some(token) = &self.token {
            user.token = Some(token.clone().into());
        }
    }

    /// The flag that gave `field` of the user or cluster (`--client-key`), if one did: a file
    /// it names is the flag's, not the kubeconfig's.
    pub fn flag_of(&self, field: &str) -> Option<&'static str> {
        let (flag, given) = match field {
            "certificate-authority" => ("--certificate-authority", &self.certificate_authority),
            "client-certificate" => ("--client-certificate", &self.client_certificate),
            "client-key" => ("--client-key", &self.client_key),
            _ => return None,
        };
        given.is_some().then_some(flag)
    }
}

/// `--cluster NAME` (`kind` "cluster") or `--user NAME` must name an entry of the kubeconfig:
/// kubectl refuses one it does not define (`cluster "x" does not exist`).
fn check_defined<'a>(kind: &str, name: Option<&str>, names: impl Iterator<Item = &'a String>) -> Result<(), Error> {
    let Some(name) = name else { return Ok(()) };
    let names: Vec<&str> = names.map(String::as_str).collect();
    if names.contains(&name) {
        return Ok(());
    }
    let there = match names.is_empty() {
        true => format!("it defines no {kind}s"),
        false => format!("its {kind}s are: {}", names.join(", ")),
    };
    Err(Error::Input(format!("{kind} {name:?} (--{kind}) does not exist in the kubeconfig; {there}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use secrecy::ExposeSecret;

    const KUBECONFIG: &str = "current-context: ctx\n\
        contexts:\n- name: ctx\n  context: {cluster: c1, user: u1}\n\
        clusters:\n- name: c1\n  cluster: {server: 'https://one', certificate-authority-data: Q0E=, tls-server-name: one.example}\n\
        - name: c2\n  cluster: {server: 'https://two', insecure-skip-tls-verify: true}\n\
        users:\n- name: u1\n  user: {tokenFile: /token, username: jane, password: pw}\n- name: u2\n  user: {token: t2}\n";

    fn applied(overrides: &Overrides, context: &str, given: bool) -> (Kubeconfig, Result<Selected, String>) {
        let mut kubeconfig = Kubeconfig::from_yaml(KUBECONFIG).unwrap();
        let selected = overrides.apply(&mut kubeconfig, context, given).map_err(|e| e.to_string());
        (kubeconfig, selected)
    }

    fn cluster<'a>(kubeconfig: &'a Kubeconfig, name: &str) -> &'a Cluster {
        kubeconfig.clusters.iter().find(|c| c.name == name).unwrap().cluster.as_ref().unwrap()
    }

    fn user<'a>(kubeconfig: &'a Kubeconfig, name: &str) -> &'a AuthInfo {
        kubeconfig.auth_infos.iter().find(|u| u.name == name).unwrap().auth_info.as_ref().unwrap()
    }

    #[test]
    fn no_flags_change_nothing_and_select_the_contexts_entries() {
        let (kubeconfig, selected) = applied(&Overrides::default(), "ctx", false);
        assert_eq!(selected, Ok(Selected { cluster: Some("c1".into()), user: "u1".into() }));
        let json = |kubeconfig: &Kubeconfig| serde_json::to_value(kubeconfig).unwrap();
        assert_eq!(json(&kubeconfig), json(&Kubeconfig::from_yaml(KUBECONFIG).unwrap()));
    }

    #[test]
    fn cluster_and_user_select_other_entries_which_must_exist() {
        let overrides = Overrides { cluster: Some("c2".into()), user: Some("u2".into()), ..Default::default() };
        assert_eq!(applied(&overrides, "ctx", false).1, Ok(Selected { cluster: Some("c2".into()), user: "u2".into() }));
        let missing =
            Overrides { cluster: Some("nope".into()), server: Some("https://s".into()), ..Default::default() };
        assert_eq!(
            applied(&missing, "ctx", false).1,
            Err("cluster \"nope\" (--cluster) does not exist in the kubeconfig; its clusters are: c1, c2".into())
        );
        let missing = Overrides { user: Some("nope".into()), ..Default::default() };
        assert_eq!(
            applied(&missing, "ctx", false).1,
            Err("user \"nope\" (--user) does not exist in the kubeconfig; its users are: u1, u2".into())
        );
    }

    #[test]
    fn the_server_keeps_the_clusters_ca_and_clears_its_tls_server_name() {
        let overrides = Overrides { server: Some("https://other:6443".into()), ..Default::default() };
        let (kubeconfig, _) = applied(&overrides, "ctx", false);
        let c1 = cluster(&kubeconfig, "c1");
        assert_eq!(c1.server.as_deref(), Some("https://other:6443"));
        assert_eq!((c1.certificate_authority_data.as_deref(), c1.tls_server_name.as_deref()), (Some("Q0E="), None));
        let overrides = Overrides { tls_server_name: Some("kube.test".into()), ..overrides };
        assert_eq!(cluster(&applied(&overrides, "ctx", false).0, "c1").tls_server_name.as_deref(), Some("kube.test"));
    }

    #[test]
    fn insecure_or_a_ca_replaces_the_clusters_ca_and_insecure_setting() {
        let insecure = Overrides { insecure_skip_tls_verify: true, ..Default::default() };
        let (kubeconfig, _) = applied(&insecure, "ctx", false);
        let c1 = cluster(&kubeconfig, "c1");
        assert_eq!(c1.insecure_skip_tls_verify, Some(true));
        assert_eq!((c1.certificate_authority.as_deref(), c1.certificate_authority_data.as_deref()), (None, None));
        let ca = Overrides {
            cluster: Some("c2".into()),
            certificate_authority: Some("ca.pem".into()),
            ..Default::default()
        };
        let (kubeconfig, _) = applied(&ca, "ctx", false);
        let c2 = cluster(&kubeconfig, "c2");
        assert_eq!((c2.insecure_skip_tls_verify, c2.certificate_authority.as_deref()), (Some(false), Some("ca.pem")));
        // Both: the cluster skips verification and names a CA, which is refused later.
        let both = Overrides { insecure_skip_tls_verify: true, ..ca };
        let (kubeconfig, _) = applied(&both, "ctx", false);
        let c2 = cluster(&kubeconfig, "c2");
        assert_eq!((c2.insecure_skip_tls_verify, c2.certificate_authority.as_deref()), (Some(true), Some("ca.pem")));
    }

    #[test]
    fn each_credential_flag_replaces_its_field_only() {
        let overrides = Overrides {
            token: Some("flag-token".into()),
            username: Some("bob".into()),
            client_certificate: Some("crt.pem".into()),
            client_key: Some("key.pem".into()),
            ..Default::default()
        };
        let (kubeconfig, _) = applied(&overrides, "ctx", false);
        let u1 = user(&kubeconfig, "u1");
        assert_eq!(u1.token.as_ref().map(|t| t.expose_secret().to_string()), Some("flag-token".into()));
        assert_eq!(u1.token_file.as_deref(), Some("/token"), "read first, as client-go reads it");
        assert_eq!(u1.username.as_deref(), Some("bob"));
        assert_eq!(u1.password.as_ref().map(|p| p.expose_secret().to_string()), Some("pw".into()));
        assert_eq!((u1.client_certificate.as_deref(), u1.client_key.as_deref()), (Some("crt.pem"), Some("key.pem")));
        assert_eq!(user(&kubeconfig, "u2").token.as_ref().map(|t| t.expose_secret().to_string()), Some("t2".into()));
        assert_eq!(overrides.flag_of("client-key"), Some("--client-key"));
        assert_eq!(overrides.flag_of("certificate-authority"), None);
    }

    #[test]
    fn without_a_context_the_server_or_cluster_flag_makes_one() {
        let server = Overrides { server: Some("https://s".into()), token: Some("t".into()), ..Default::default() };
        let mut kubeconfig = Kubeconfig::default();
        let selected = server.apply(&mut kubeconfig, "", false).unwrap();
        assert_eq!(selected, Selected { cluster: Some(String::new()), user: String::new() });
        assert_eq!(kubeconfig.current_context.as_deref(), Some(""));
        assert_eq!(cluster(&kubeconfig, "").server.as_deref(), Some("https://s"));
        assert!(user(&kubeconfig, "").token.is_some());
        // A current-context that is missing, with --cluster and --user.
        let named = Overrides { cluster: Some("c2".into()), user: Some("u2".into()), ..Default::default() };
        let (kubeconfig, selected) = applied(&named, "gone", false);
        assert_eq!(selected, Ok(Selected { cluster: Some("c2".into()), user: "u2".into() }));
        let made = kubeconfig.contexts.iter().find(|c| c.name == "gone").unwrap().context.as_ref().unwrap();
        assert_eq!((made.cluster.as_str(), made.user.as_deref()), ("c2", Some("u2")));
        // A context asked for by --context is not made: kube says it does not exist.
        assert_eq!(applied(&server, "gone", true).1, Ok(Selected::default()));
        assert!(applied(&server, "gone", true).0.contexts.iter().all(|c| c.name != "gone"));
        // Nothing to reach a server by: left for kube to say.
        assert_eq!(
            applied(&Overrides { token: Some("t".into()), ..Default::default() }, "gone", false).1,
            Ok(Selected::default())
        );
    }
}
