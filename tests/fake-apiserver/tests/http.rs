//! Drives the fake server over real HTTP on 127.0.0.1.

mod support;

use std::thread;
use std::time::{Duration, Instant};

use fake_apiserver::{FakeApiServer, FakeHandle, Rule, configmaps, rollouts};
use serde_json::{Value, json};
use support::{GROUP, ROLLOUTS, call, get, rollout, rv};

fn kruise() -> FakeHandle {
    FakeApiServer::builder().kruise_and_istio().object(rollout("demo")).start()
}

fn demo_path() -> String {
    format!("{ROLLOUTS}/demo")
}

#[test]
fn discovery_documents() {
    let server = kruise();
    let version = get(&server, "/version");
    assert_eq!(version.body["gitVersion"], "v1.32.4");
    assert_eq!(version.content_type, "application/json");

    assert_eq!(get(&server, "/api").body["versions"], json!(["v1"]));
    let core = get(&server, "/api/v1").body;
    assert_eq!(core["groupVersion"], "v1");
    assert_eq!(core["resources"][0]["name"], "configmaps");
    assert_eq!(core["resources"][0]["shortNames"], json!(["cm"]));

    // kubectl asks for aggregated discovery first; plain JSON makes it fall back.
    let groups = call(&server, "GET", "/apis")
        .header("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json")
        .send();
    assert_eq!(groups.content_type, "application/json");
    assert_eq!(groups.body["kind"], "APIGroupList");
    let kruise = groups.body["groups"].as_array().unwrap().iter().find(|g| g["name"] == GROUP).unwrap().clone();
    assert_eq!(kruise["preferredVersion"]["groupVersion"], "rollouts.kruise.io/v1beta1");
    assert_eq!(kruise["versions"].as_array().unwrap().len(), 2);

    let v1beta1 = get(&server, "/apis/rollouts.kruise.io/v1beta1").body;
    assert_eq!(v1beta1["kind"], "APIResourceList");
    assert_eq!(
        v1beta1["resources"],
        json!([
            {
                "name": "rollouts", "singularName": "rollout", "namespaced": true, "kind": "Rollout",
                "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
            },
            {
                "name": "rollouts/status", "singularName": "", "namespaced": true, "kind": "Rollout",
                "verbs": ["get", "patch", "update"],
            },
        ])
    );
    let v1alpha1 = get(&server, "/apis/rollouts.kruise.io/v1alpha1").body;
    let names: Vec<&str> =
        v1alpha1["resources"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["rollouts", "rollouts/status", "trafficroutings", "trafficroutings/status"]);
    let istio = get(&server, "/apis/networking.istio.io/v1alpha3").body;
    assert_eq!(istio["resources"][0]["shortNames"], json!(["vs"]));
    let authz = get(&server, "/apis/authorization.k8s.io/v1").body;
    assert_eq!(authz["resources"][0]["name"], "selfsubjectaccessreviews");
    assert_eq!(get(&server, "/apis/rollouts.kruise.io").body["kind"], "APIGroup");

    for path in ["/apis/example.com/v1", "/openapi/v3", "/apis/rollouts.kruise.io/v1beta1/widgets"] {
        let missing = get(&server, path);
        assert_eq!(missing.status, 404, "{path}");
        assert_eq!(missing.body["kind"], "Status");
        assert_eq!(missing.body["reason"], "NotFound");
    }
}

#[test]
fn create_get_list_update_delete() {
    let server = FakeApiServer::builder().kruise_and_istio().start();
    let created = call(&server, "POST", ROLLOUTS).json(&rollout("web")).send();
    assert_eq!(created.status, 201);
    let metadata = &created.body["metadata"];
    assert_eq!(metadata["generation"], 1);
    assert!(metadata["uid"].is_string() && metadata["creationTimestamp"].is_string());
    // The status subresource makes create drop .status.
    assert!(created.body.get("status").is_none());

    let again = call(&server, "POST", ROLLOUTS).json(&rollout("web")).send();
    assert_eq!(again.status, 409);
    assert_eq!(again.body["reason"], "AlreadyExists");
    assert_eq!(again.body["message"], "rollouts.rollouts.kruise.io \"web\" already exists");

    // Versions share storage; a GET at another version relabels the object.
    let old_version = get(&server, "/apis/rollouts.kruise.io/v1alpha1/namespaces/demo/rollouts/web");
    assert_eq!(old_version.body["apiVersion"], "rollouts.kruise.io/v1alpha1");
    assert_eq!(old_version.body["spec"], created.body["spec"]);

    call(&server, "POST", ROLLOUTS).json(&rollout("api")).send();
    let mut other = rollout("api");
    other["metadata"]["namespace"] = "prod".into();
    let prod = call(&server, "POST", "/apis/rollouts.kruise.io/v1beta1/namespaces/prod/rollouts").json(&other).send();
    assert_eq!(prod.status, 201);

    let list = get(&server, ROLLOUTS);
    assert_eq!(list.body["kind"], "RolloutList");
    assert_eq!(list.body["metadata"]["resourceVersion"], server.resource_version());
    assert_eq!(list.body["items"].as_array().unwrap().len(), 2);
    let selected = get(&server, &format!("{ROLLOUTS}?labelSelector=app%20in%20(web,x)"));
    assert_eq!(selected.body["items"][0]["metadata"]["name"], "web");
    assert_eq!(selected.body["items"].as_array().unwrap().len(), 1);
    let by_name = get(&server, &format!("{ROLLOUTS}?fieldSelector=metadata.name%3Dapi"));
    assert_eq!(by_name.body["items"][0]["metadata"]["name"], "api");
    let everywhere = get(&server, "/apis/rollouts.kruise.io/v1beta1/rollouts");
    assert_eq!(everywhere.body["items"].as_array().unwrap().len(), 3);
    assert_eq!(get(&server, &format!("{ROLLOUTS}?labelSelector=a%20b")).status, 400);

    let mut update = created.body.clone();
    update["spec"]["workloadRef"]["name"] = "web-v2".into();
    let updated = call(&server, "PUT", &format!("{ROLLOUTS}/web")).json(&update).send();
    assert_eq!(updated.status, 200);
    assert_eq!(updated.body["metadata"]["generation"], 2);
    assert_ne!(rv(&updated.body), rv(&created.body));

    // Stale resourceVersion.
    let stale = call(&server, "PUT", &format!("{ROLLOUTS}/web")).json(&update).send();
    assert_eq!(stale.status, 409);
    assert_eq!(
        stale.body,
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "Operation cannot be fulfilled on rollouts.rollouts.kruise.io \"web\": the object has been modified; please apply your changes to the latest version and try again",
            "reason": "Conflict",
            "details": { "name": "web", "group": "rollouts.kruise.io", "kind": "rollouts" },
            "code": 409,
        })
    );
    // Custom resources refuse updates without a resourceVersion.
    let mut unconditional = update.clone();
    unconditional["metadata"].as_object_mut().unwrap().remove("resourceVersion");
    let invalid = call(&server, "PUT", &format!("{ROLLOUTS}/web")).json(&unconditional).send();
    assert_eq!(invalid.status, 422);
    assert_eq!(
        invalid.body["message"],
        "Rollout.rollouts.kruise.io \"web\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
    );
    let renamed = call(&server, "PUT", &format!("{ROLLOUTS}/api")).json(&updated.body).send();
    assert_eq!(renamed.status, 400);
    assert_eq!(renamed.body["message"], "the name of the object (web) does not match the name on the URL (api)");
    let missing = call(&server, "PUT", &format!("{ROLLOUTS}/nope"))
        .json(&json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": { "name": "nope", "resourceVersion": "1" },
        }))
        .send();
    assert_eq!(missing.status, 404);

    let deleted = call(&server, "DELETE", &format!("{ROLLOUTS}/web")).send();
    assert_eq!(deleted.status, 200);
    assert_eq!(deleted.body["status"], "Success");
    assert_eq!(deleted.body["details"]["uid"], created.body["metadata"]["uid"]);
    let gone = get(&server, &format!("{ROLLOUTS}/web"));
    assert_eq!(gone.status, 404);
    assert_eq!(
        gone.body,
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "rollouts.rollouts.kruise.io \"web\" not found", "reason": "NotFound",
            "details": { "name": "web", "group": "rollouts.kruise.io", "kind": "rollouts" },
            "code": 404,
        })
    );
    assert!(server.object(GROUP, "*", "rollouts", "demo", "web").is_none());
}

#[test]
fn list_paging_with_limit_and_continue() {
    let mut builder = FakeApiServer::builder().kruise_and_istio();
    for name in ["a", "b", "c"] {
        builder = builder.object(rollout(name));
    }
    let server = builder.start();
    let first = get(&server, &format!("{ROLLOUTS}?limit=2")).body;
    assert_eq!(first["items"].as_array().unwrap().len(), 2);
    assert_eq!(first["metadata"]["remainingItemCount"], 1);
    let token = first["metadata"]["continue"].as_str().unwrap();
    let rest = get(&server, &format!("{ROLLOUTS}?limit=2&continue={token}")).body;
    assert_eq!(rest["items"][0]["metadata"]["name"], "c");
    assert!(rest["metadata"].get("continue").is_none());

    // Across namespaces, paging follows (namespace, name) order: "a" < "a-b".
    let mut builder = FakeApiServer::builder().kruise_and_istio();
    for (namespace, name) in [("a", "z"), ("a-b", "c")] {
        let mut object = rollout(name);
        object["metadata"]["namespace"] = namespace.into();
        builder = builder.object(object);
    }
    let server = builder.start();
    let all = "/apis/rollouts.kruise.io/v1beta1/rollouts";
    let first = get(&server, &format!("{all}?limit=1")).body;
    assert_eq!(first["items"][0]["metadata"]["name"], "z");
    let token = first["metadata"]["continue"].as_str().unwrap();
    let second = get(&server, &format!("{all}?limit=1&continue={token}")).body;
    assert_eq!(second["items"][0]["metadata"]["name"], "c");
}

#[test]
fn status_subresource_is_isolated() {
    let server = kruise();
    let stored = server.object(GROUP, "v1beta1", "rollouts", "demo", "demo").unwrap();
    assert_eq!(stored["status"]["phase"], "Healthy");

    // A main-resource write cannot change .status ...
    let mut main = stored.clone();
    main["status"]["phase"] = "Hacked".into();
    main["metadata"]["labels"]["extra"] = "1".into();
    let updated = call(&server, "PUT", &demo_path()).json(&main).send().body;
    assert_eq!(updated["status"]["phase"], "Healthy");
    assert_eq!(updated["metadata"]["labels"]["extra"], "1");
    assert_eq!(updated["metadata"]["generation"], 1);

    // ... and a status write changes nothing but .status (nor the generation).
    let mut status = updated.clone();
    status["status"]["phase"] = "Progressing".into();
    status["spec"]["workloadRef"]["name"] = "ignored".into();
    let status_path = format!("{}/status", demo_path());
    let written = call(&server, "PUT", &status_path).json(&status).send().body;
    assert_eq!(written["status"]["phase"], "Progressing");
    assert_eq!(written["spec"]["workloadRef"]["name"], "demo");
    assert_eq!(written["metadata"]["generation"], 1);

    let patched = call(&server, "PATCH", &status_path)
        .body("application/merge-patch+json", r#"{"status":{"message":"hi"},"spec":null}"#)
        .send()
        .body;
    assert_eq!(patched["status"], json!({ "phase": "Progressing", "message": "hi" }));
    assert_eq!(patched["spec"]["workloadRef"]["name"], "demo");
    assert_eq!(get(&server, &status_path).body["status"]["message"], "hi");

    // Spec changes through the main resource move the generation.
    let spec = call(&server, "PATCH", &demo_path())
        .body("application/merge-patch+json", r#"{"spec":{"paused":true}}"#)
        .send()
        .body;
    assert_eq!(spec["metadata"]["generation"], 2);

    // ConfigMaps have no status subresource.
    let cms = FakeApiServer::builder().resource(configmaps()).start();
    assert_eq!(get(&cms, "/api/v1/namespaces/demo/configmaps/x/status").status, 404);
}

#[test]
fn merge_patch_resource_version_is_a_precondition() {
    let server = kruise();
    let current = server.object(GROUP, "*", "rollouts", "demo", "demo").unwrap();
    let stale = call(&server, "PATCH", &demo_path())
        .body("application/merge-patch+json", r#"{"metadata":{"resourceVersion":"1"},"spec":{"paused":true}}"#)
        .send();
    assert_eq!(stale.status, 409);
    assert_eq!(stale.body["reason"], "Conflict");

    let fresh = json!({ "metadata": { "resourceVersion": rv(&current) }, "spec": { "paused": true } });
    let ok = call(&server, "PATCH", &demo_path()).body("application/merge-patch+json", fresh.to_string()).send();
    assert_eq!(ok.status, 200);
    assert_eq!(ok.body["spec"]["paused"], true);
    assert_ne!(rv(&ok.body), rv(&current));
}

#[test]
fn json_patch_failed_test_is_422() {
    let server = kruise();
    let current = server.object(GROUP, "*", "rollouts", "demo", "demo").unwrap();
    let patch = |rv: &str| {
        json!([
            { "op": "test", "path": "/metadata/resourceVersion", "value": rv },
            { "op": "replace", "path": "/spec/workloadRef/name", "value": "v2" },
        ])
        .to_string()
    };
    let failed = call(&server, "PATCH", &demo_path()).body("application/json-patch+json", patch("1")).send();
    assert_eq!(failed.status, 422);
    assert_eq!(
        failed.body,
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "the server rejected our request due to an error in our request",
            "reason": "Invalid", "details": {}, "code": 422,
        })
    );
    let ok = call(&server, "PATCH", &demo_path()).body("application/json-patch+json", patch(rv(&current))).send();
    assert_eq!(ok.status, 200);
    assert_eq!(ok.body["spec"]["workloadRef"]["name"], "v2");
}

#[test]
fn annotations_past_256_kib_are_invalid_as_the_api_server_says() {
    let server = kruise();
    let annotate = |bytes: usize| {
        let patch = json!({"metadata": {"annotations": {"a": "x".repeat(bytes)}}});
        call(&server, "PATCH", &demo_path()).body("application/merge-patch+json", patch.to_string()).send()
    };
    let refused = annotate(256 << 10);
    assert_eq!(refused.status, 422);
    assert_eq!(
        refused.body["message"],
        "Rollout.rollouts.kruise.io \"demo\" is invalid: metadata.annotations: Too long: must have at most 262144 bytes"
    );
    // The key counts: 1 byte of it and 262143 of value is the most.
    assert_eq!(annotate((256 << 10) - 1).status, 200);
}

#[test]
fn strategic_merge_patch_is_refused_for_custom_resources() {
    let server = kruise();
    let refused =
        call(&server, "PATCH", &demo_path()).body("application/strategic-merge-patch+json", r#"{"spec":{}}"#).send();
    assert_eq!(refused.status, 415);
    assert_eq!(refused.body["reason"], "UnsupportedMediaType");
    assert_eq!(
        refused.body["message"],
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    );

    // Core types accept it (for ConfigMaps it is a merge patch).
    let cm = json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": "c", "namespace": "demo" }, "data": { "a": "1" } });
    let server = FakeApiServer::builder().resource(configmaps()).object(cm).start();
    let patched = call(&server, "PATCH", "/api/v1/namespaces/demo/configmaps/c")
        .body("application/strategic-merge-patch+json", r#"{"data":{"b":"2"}}"#)
        .send();
    assert_eq!(patched.status, 200);
    assert_eq!(patched.body["data"], json!({ "a": "1", "b": "2" }));
}

#[test]
fn server_side_apply_creates_and_merges() {
    let server = FakeApiServer::builder().kruise_and_istio().start();
    let path = "/apis/networking.istio.io/v1beta1/namespaces/demo/virtualservices/vs";
    let yaml =
        "apiVersion: networking.istio.io/v1beta1\nkind: VirtualService\nmetadata:\n  name: vs\nspec:\n  hosts: [a]\n";
    let no_manager = call(&server, "PATCH", path).body("application/apply-patch+yaml", yaml).send();
    assert_eq!(no_manager.status, 422);
    assert_eq!(
        no_manager.body["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    let apply_path = format!("{path}?fieldManager=test");
    let created = call(&server, "PATCH", &apply_path).body("application/apply-patch+yaml", yaml).send();
    assert_eq!(created.status, 201);
    assert_eq!(created.body["metadata"]["namespace"], "demo");
    let merged = call(&server, "PATCH", &apply_path)
        .body("application/apply-patch+yaml", r#"{"spec":{"gateways":["g"]}}"#)
        .send();
    assert_eq!(merged.status, 200);
    assert_eq!(merged.body["spec"], json!({ "hosts": ["a"], "gateways": ["g"] }));
}

#[test]
fn dry_run_persists_nothing() {
    let server = kruise();
    let before = server.resource_version();
    let stored = server.object(GROUP, "*", "rollouts", "demo", "demo").unwrap();

    let created = call(&server, "POST", &format!("{ROLLOUTS}?dryRun=All")).json(&rollout("new")).send();
    assert_eq!(created.status, 201);
    assert_eq!(created.body["metadata"]["name"], "new");

    let mut update = stored.clone();
    update["spec"]["paused"] = true.into();
    let updated = call(&server, "PUT", &format!("{}?dryRun=All", demo_path())).json(&update).send();
    assert_eq!(updated.status, 200);
    assert_eq!(updated.body["spec"]["paused"], true);
    assert_eq!(updated.body["metadata"]["generation"], 2);

    let patched = call(&server, "PATCH", &format!("{}?dryRun=All", demo_path()))
        .body("application/merge-patch+json", r#"{"spec":{"paused":true}}"#)
        .send();
    assert_eq!(patched.body["spec"]["paused"], true);

    let deleted = call(&server, "DELETE", &demo_path())
        .json(&json!({ "kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"] }))
        .send();
    assert_eq!(deleted.status, 200);

    // Preconditions are still checked on a dry run.
    let stale = call(&server, "PUT", &format!("{}?dryRun=All", demo_path()))
        .json(&json!({ "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
                       "metadata": { "name": "demo", "namespace": "demo", "resourceVersion": "1" } }))
        .send();
    assert_eq!(stale.status, 409);
    assert_eq!(call(&server, "PUT", &format!("{}?dryRun=Yes", demo_path())).json(&update).send().status, 400);

    assert_eq!(server.resource_version(), before);
    assert_eq!(server.object(GROUP, "*", "rollouts", "demo", "demo").unwrap(), stored);
    assert!(server.object(GROUP, "*", "rollouts", "demo", "new").is_none());
    assert!(server.writes().iter().take(4).all(|w| w.is_dry_run()));
}

#[test]
fn an_object_with_finalizers_is_marked_by_a_delete_and_goes_with_its_last_finalizer() {
    let server = kruise();
    let held = call(&server, "PATCH", &demo_path())
        .body("application/merge-patch+json", r#"{"metadata": {"finalizers": ["example.com/a"]}}"#)
        .send();
    // A dry run shows the mark and stores nothing.
    let tried = call(&server, "DELETE", &format!("{}?dryRun=All", demo_path())).send();
    assert!(tried.body["metadata"]["deletionTimestamp"].is_string(), "{}", tried.body);
    assert!(get(&server, &demo_path()).body["metadata"]["deletionTimestamp"].is_null());
    let deleted = call(&server, "DELETE", &demo_path()).send();
    assert_eq!(deleted.status, 200);
    assert_eq!(deleted.body["kind"], "Rollout", "the object, not a Status: {}", deleted.body);
    assert!(deleted.body["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(deleted.body["metadata"]["deletionGracePeriodSeconds"], 0);
    assert_ne!(rv(&deleted.body), rv(&held.body));
    let generation = |object: &Value| object["metadata"]["generation"].as_i64().unwrap();
    assert_eq!(generation(&deleted.body), generation(&held.body) + 1, "marked, a new generation");
    // No finalizer is added to it any more.
    let added = call(&server, "PATCH", &demo_path())
        .body("application/merge-patch+json", r#"{"metadata": {"finalizers": ["example.com/a", "example.com/b"]}}"#)
        .send();
    assert_eq!(added.status, 422, "{}", added.body);
    assert!(
        added.body["message"]
            .as_str()
            .unwrap()
            .contains("no new finalizers can be added if the object is being deleted")
    );
    // Deleted again: as it is.
    let again = call(&server, "DELETE", &demo_path()).send();
    assert_eq!(rv(&again.body), rv(&deleted.body));
    // An update cannot take the mark off, and removing the last finalizer removes the object.
    let mut unmarked = deleted.body.clone();
    unmarked["metadata"].as_object_mut().unwrap().remove("deletionTimestamp");
    unmarked["metadata"]["labels"] = json!({"x": "y"});
    let updated = call(&server, "PUT", &demo_path()).json(&unmarked).send();
    assert!(updated.body["metadata"]["deletionTimestamp"].is_string(), "{}", updated.body);
    let released = call(&server, "PATCH", &demo_path())
        .body("application/merge-patch+json", r#"{"metadata": {"finalizers": null}}"#)
        .send();
    assert_eq!(released.status, 200);
    assert_eq!(get(&server, &demo_path()).status, 404);
}

#[test]
fn no_op_writes_keep_the_resource_version() {
    let server = kruise();
    let stored = server.object(GROUP, "v1beta1", "rollouts", "demo", "demo").unwrap();
    let same = call(&server, "PUT", &demo_path()).json(&stored).send();
    assert_eq!(same.status, 200);
    assert_eq!(rv(&same.body), rv(&stored));
    let empty = call(&server, "PATCH", &demo_path()).body("application/merge-patch+json", "{}").send();
    assert_eq!(rv(&empty.body), rv(&stored));
}

#[test]
fn deny_rules_give_forbidden_and_matching_access_reviews() {
    let server = FakeApiServer::builder()
        .kruise_and_istio()
        .object(rollout("demo"))
        .deny(Rule::new(["patch"]).resources(["rollouts/status"]).namespaces(["demo"]))
        .deny(Rule::new(["delete"]).users(["bob"]))
        .deny(Rule::new(["impersonate"]).resources(["users"]).names(["mallory"]))
        .start();
    let status_path = format!("{}/status", demo_path());
    let forbidden =
        call(&server, "PATCH", &status_path).body("application/merge-patch+json", r#"{"status":{}}"#).send();
    assert_eq!(forbidden.status, 403);
    assert_eq!(
        forbidden.body.to_string(),
        r#"{"apiVersion":"v1","code":403,"details":{"group":"rollouts.kruise.io","kind":"rollouts","name":"demo"},"kind":"Status","message":"rollouts.rollouts.kruise.io \"demo\" is forbidden: User \"fake-user\" cannot patch resource \"rollouts/status\" in API group \"rollouts.kruise.io\" in the namespace \"demo\"","metadata":{},"reason":"Forbidden","status":"Failure"}"#
    );
    // The main resource is not covered by the rule.
    let main =
        call(&server, "PATCH", &demo_path()).body("application/merge-patch+json", r#"{"spec":{"paused":true}}"#).send();
    assert_eq!(main.status, 200);

    let review = |attributes: Value, user: Option<&str>| {
        let body = json!({
            "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": { "resourceAttributes": attributes },
        });
        let mut request = call(&server, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews").json(&body);
        if let Some(user) = user {
            request = request.header("Impersonate-User", user);
        }
        let response = request.send();
        assert_eq!(response.status, 201);
        assert_eq!(response.body["kind"], "SelfSubjectAccessReview");
        assert_eq!(response.body["spec"]["resourceAttributes"], attributes);
        response.body["status"]["allowed"].as_bool().unwrap()
    };
    let status_patch = json!({ "namespace": "demo", "verb": "patch", "group": GROUP,
                               "resource": "rollouts", "subresource": "status", "name": "demo" });
    assert!(!review(status_patch, None));
    let main_patch = json!({ "namespace": "demo", "verb": "patch", "group": GROUP, "resource": "rollouts" });
    assert!(review(main_patch, None));
    let delete = json!({ "namespace": "demo", "verb": "delete", "group": GROUP, "resource": "rollouts" });
    assert!(review(delete.clone(), None));
    assert!(!review(delete, Some("bob")));

    let as_bob = call(&server, "DELETE", &demo_path()).header("Impersonate-User", "bob").send();
    assert_eq!(as_bob.status, 403);
    assert_eq!(
        as_bob.body["message"],
        "rollouts.rollouts.kruise.io \"demo\" is forbidden: User \"bob\" cannot delete resource \"rollouts\" in API group \"rollouts.kruise.io\" in the namespace \"demo\""
    );
    let as_mallory = get(&server, ROLLOUTS);
    assert_eq!(as_mallory.status, 200);
    let impersonating = call(&server, "GET", ROLLOUTS).header("Impersonate-User", "mallory").send();
    assert_eq!(impersonating.status, 403);
    assert_eq!(
        impersonating.body["message"],
        "users \"mallory\" is forbidden: User \"fake-user\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
    );

    // Collection requests carry no name in the message.
    let server = FakeApiServer::builder().kruise_and_istio().deny(Rule::new(["list"])).start();
    let list = get(&server, "/apis/rollouts.kruise.io/v1beta1/rollouts");
    assert_eq!(
        list.body["message"],
        "rollouts.rollouts.kruise.io is forbidden: User \"fake-user\" cannot list resource \"rollouts\" in API group \"rollouts.kruise.io\" at the cluster scope"
    );
}

#[test]
fn self_subject_reviews_name_the_user_unless_denied_or_not_served() {
    const REVIEWS: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
    let body = json!({ "apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview" });
    let server = FakeApiServer::builder()
        .kruise_and_istio()
        .user("alice")
        .grant(Rule::new(["get"]))
        .grant(Rule::new(["impersonate"]).resources(["users"]))
        .deny(Rule::new(["create"]).resources(["selfsubjectreviews"]).users(["bob"]))
        .start();
    let review = call(&server, "POST", REVIEWS).json(&body).send();
    assert_eq!(review.status, 201);
    assert_eq!(review.body["kind"], "SelfSubjectReview");
    assert_eq!(review.body["status"]["userInfo"]["username"], "alice");
    // The configured user is who rules match and messages name; a grant is not needed to ask.
    let listed = get(&server, ROLLOUTS);
    assert_eq!(listed.status, 403);
    assert!(listed.body["message"].as_str().unwrap().contains("User \"alice\" cannot list"), "{}", listed.body);
    let as_jane = call(&server, "POST", REVIEWS).json(&body).header("Impersonate-User", "jane").send();
    assert_eq!(as_jane.body["status"]["userInfo"]["username"], "jane");
    let as_bob = call(&server, "POST", REVIEWS).json(&body).header("Impersonate-User", "bob").send();
    assert_eq!(as_bob.status, 403);
    assert_eq!(
        as_bob.body["message"],
        "selfsubjectreviews.authentication.k8s.io is forbidden: User \"bob\" cannot create resource \"selfsubjectreviews\" in API group \"authentication.k8s.io\" at the cluster scope"
    );
    assert!(server.writes().is_empty(), "a review is a question, not a write");

    let older = FakeApiServer::builder().kruise_and_istio().without_self_subject_reviews().start();
    assert_eq!(call(&older, "POST", REVIEWS).json(&body).send().status, 404);
}

#[test]
fn admission_hooks_reject_with_422_even_on_dry_run() {
    let server = FakeApiServer::builder()
        .kruise_and_istio()
        .admission("validation.istio.io", |req| {
            if req.plural == "virtualservices" && req.object["spec"]["hosts"].as_array().is_none_or(Vec::is_empty) {
                Err(format!("configuration is invalid: virtual service {} must have at least one host", req.name))
            } else {
                Ok(())
            }
        })
        .start();
    let path = "/apis/networking.istio.io/v1alpha3/namespaces/demo/virtualservices";
    let vs = |hosts: Value| {
        json!({
            "apiVersion": "networking.istio.io/v1alpha3", "kind": "VirtualService",
            "metadata": { "name": "vs" }, "spec": { "hosts": hosts },
        })
    };
    for query in ["", "?dryRun=All"] {
        let denied = call(&server, "POST", &format!("{path}{query}")).json(&vs(json!([]))).send();
        assert_eq!(denied.status, 422);
        assert_eq!(denied.body["reason"], "Invalid");
        assert_eq!(
            denied.body["message"],
            "admission webhook \"validation.istio.io\" denied the request: configuration is invalid: virtual service vs must have at least one host"
        );
    }
    assert_eq!(call(&server, "POST", path).json(&vs(json!(["a"]))).send().status, 201);
    let emptied = call(&server, "PATCH", &format!("{path}/vs"))
        .body("application/merge-patch+json", r#"{"spec":{"hosts":[]}}"#)
        .send();
    assert_eq!(emptied.status, 422);
    assert!(server.objects("networking.istio.io", "virtualservices")[0]["spec"]["hosts"] == json!(["a"]));
}

#[test]
fn mutating_hooks_change_what_is_stored_before_validation() {
    let server = FakeApiServer::builder()
        .kruise_and_istio()
        .mutation(|plural, object| {
            if plural == "virtualservices" {
                object["spec"]["gateways"] = json!(["mesh"]);
            }
        })
        .admission("validation.istio.io", |req| match req.object["spec"]["gateways"].is_array() {
            true => Ok(()),
            false => Err("validation ran before mutation".into()),
        })
        .start();
    let path = "/apis/networking.istio.io/v1alpha3/namespaces/demo/virtualservices";
    let vs = json!({
        "apiVersion": "networking.istio.io/v1alpha3", "kind": "VirtualService",
        "metadata": { "name": "vs" }, "spec": { "hosts": ["a"] },
    });
    let created = call(&server, "POST", path).json(&vs).send();
    assert_eq!((created.status, &created.body["spec"]["gateways"]), (201, &json!(["mesh"])));
    let mut replaced = created.body.clone();
    replaced["spec"] = json!({"hosts": ["b"]});
    let updated = call(&server, "PUT", &format!("{path}/vs")).json(&replaced).send();
    assert_eq!((updated.status, &updated.body["spec"]), (200, &json!({"hosts": ["b"], "gateways": ["mesh"]})));
    assert_eq!(server.objects("networking.istio.io", "virtualservices")[0]["spec"], updated.body["spec"]);
}

#[test]
fn latency_overlaps_for_concurrent_requests() {
    let latency = Duration::from_millis(300);
    let server = kruise();
    let slow = FakeApiServer::builder().kruise_and_istio().latency(latency).start();
    let started = Instant::now();
    thread::scope(|scope| {
        for _ in 0..16 {
            scope.spawn(|| assert_eq!(get(&slow, ROLLOUTS).status, 200));
        }
    });
    let elapsed = started.elapsed();
    assert!(elapsed >= latency, "{elapsed:?}");
    assert!(elapsed < latency * 3, "requests did not overlap: {elapsed:?}");
    assert_eq!(slow.round_trips(), 1);

    get(&slow, ROLLOUTS);
    get(&slow, ROLLOUTS);
    assert_eq!(slow.round_trips(), 3);
    let log = slow.requests();
    assert!(log.iter().all(|r| r.finished - r.started >= latency));

    // Without latency, sequential requests are sequential round trips too.
    for _ in 0..3 {
        get(&server, ROLLOUTS);
    }
    assert_eq!(server.round_trips(), 3);
}

#[test]
fn injected_conflicts() {
    let server = kruise();
    let stored = server.object(GROUP, "v1beta1", "rollouts", "demo", "demo").unwrap();
    let mut update = stored.clone();
    update["spec"]["paused"] = true.into();
    server.conflict_next_writes(2);
    for _ in 0..2 {
        let conflict = call(&server, "PUT", &demo_path()).json(&update).send();
        assert_eq!(conflict.status, 409);
        assert_eq!(conflict.body["reason"], "Conflict");
        assert!(conflict.body["message"].as_str().unwrap().contains("\"demo\": the object has been modified"));
    }
    assert_eq!(server.resource_version(), rv(&stored));
    assert_eq!(call(&server, "PUT", &demo_path()).json(&update).send().status, 200);
}

#[test]
fn before_write_makes_a_genuine_conflict() {
    let server = kruise();
    let stored = server.object(GROUP, "v1beta1", "rollouts", "demo", "demo").unwrap();
    get(&server, ROLLOUTS); // reads do not count as writes
    server.before_write(2, |store| {
        store.modify(GROUP, "rollouts", "demo", "demo", |o| {
            o["metadata"]["annotations"] = json!({ "other-actor": "was here" });
        });
    });
    let mut first = stored.clone();
    first["metadata"]["labels"]["first"] = "1".into();
    let first = call(&server, "PUT", &demo_path()).json(&first).send();
    assert_eq!(first.status, 200);

    let mut second = first.body.clone();
    second["metadata"]["labels"]["second"] = "2".into();
    let conflict = call(&server, "PUT", &demo_path()).json(&second).send();
    assert_eq!(conflict.status, 409);
    let current = server.object(GROUP, "v1beta1", "rollouts", "demo", "demo").unwrap();
    assert_eq!(current["metadata"]["annotations"]["other-actor"], "was here");
    assert!(current["metadata"]["labels"].get("second").is_none());
}

#[test]
fn injected_failures_and_dropped_connections() {
    let server = kruise();
    server.fail_next_writes(1, 500);
    let failed =
        call(&server, "PATCH", &demo_path()).body("application/merge-patch+json", r#"{"spec":{"paused":true}}"#).send();
    assert_eq!(failed.status, 500);
    assert_eq!(failed.body["kind"], "Status");
    assert_eq!(failed.body["reason"], "InternalError");
    assert!(server.object(GROUP, "*", "rollouts", "demo", "demo").unwrap()["spec"].get("paused").is_none());

    server.fail_request(2, 503);
    assert_eq!(get(&server, ROLLOUTS).status, 200);
    let unavailable = get(&server, ROLLOUTS);
    assert_eq!(unavailable.status, 503);
    assert_eq!(unavailable.body["reason"], "ServiceUnavailable");
    assert_eq!(get(&server, ROLLOUTS).status, 200);

    server.drop_connection_on_request(1);
    assert!(call(&server, "GET", ROLLOUTS).try_send().is_err());
    assert_eq!(get(&server, ROLLOUTS).status, 200);
    let log = server.requests();
    assert_eq!(log[log.len() - 2].status, None);
}

#[test]
fn request_log_records_what_was_sent() {
    let server = kruise();
    get(&server, &format!("{ROLLOUTS}?labelSelector=app%3Ddemo"));
    call(&server, "PATCH", &format!("{}?fieldManager=rollout-lua&dryRun=All", demo_path()))
        .body("application/merge-patch+json", r#"{"spec":{"paused":true}}"#)
        .header("Impersonate-User", "alice")
        .header("Impersonate-Group", "devs")
        .header("Impersonate-Group", "ops")
        .send();
    call(&server, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
        .json(&json!({ "spec": { "resourceAttributes": { "verb": "get" } } }))
        .send();
    call(&server, "PUT", &demo_path()).body("text/plain", "not json").send();

    let log = server.requests();
    assert_eq!(log.len(), 4);
    assert_eq!(log[0].method, "GET");
    assert_eq!(log[0].query, "labelSelector=app%3Ddemo");
    assert_eq!(log[0].query_param("labelSelector"), Some("app=demo"));
    assert_eq!(log[0].body, Value::Null);
    assert_eq!(log[0].authorization.as_deref(), Some("Bearer fake-token"));

    let patch = &log[1];
    assert_eq!(patch.path, demo_path());
    assert_eq!(patch.content_type.as_deref(), Some("application/merge-patch+json"));
    assert_eq!(patch.body, json!({ "spec": { "paused": true } }));
    assert_eq!(patch.status, Some(200));
    assert_eq!(patch.impersonate_user.as_deref(), Some("alice"));
    assert_eq!(patch.impersonate_groups, ["devs", "ops"]);
    assert!(patch.is_dry_run());
    assert!(patch.started <= patch.finished);
    assert!(log.windows(2).all(|w| w[0].started <= w[1].started));

    assert_eq!(log[3].body, Value::String("not json".into()));
    assert_eq!(log[3].status, Some(415));

    let writes = server.writes();
    assert_eq!(writes.len(), 2, "GETs and access reviews are not writes");
    assert_eq!(writes[0].method, "PATCH");

    server.clear_log();
    assert!(server.requests().is_empty());
    assert_eq!(server.round_trips(), 0);
}

#[test]
fn test_side_state_changes() {
    let server = FakeApiServer::builder()
        .resource(rollouts("v1alpha1"))
        .resource(rollouts("v1beta1"))
        .objects_from_yaml(
            "apiVersion: rollouts.kruise.io/v1alpha1\nkind: Rollout\nmetadata: {name: a, namespace: demo}\nspec: {}\n",
        )
        .start();
    let stored = server.object(GROUP, "*", "rollouts", "demo", "a").unwrap();
    assert_eq!(stored["apiVersion"], "rollouts.kruise.io/v1alpha1");
    let mut changed = stored.clone();
    changed["spec"]["paused"] = true.into();
    let put = server.put_object(changed);
    assert_eq!(put["metadata"]["generation"], 2);
    assert_eq!(put["metadata"]["uid"], stored["metadata"]["uid"]);
    assert_eq!(get(&server, &format!("{ROLLOUTS}/a")).body["spec"]["paused"], true);
    assert!(server.delete_object(GROUP, "rollouts", "demo", "a").is_some());
    assert!(server.objects(GROUP, "rollouts").is_empty());
}

#[test]
fn kubeconfig_points_at_the_server() {
    let server = kruise();
    let dir = std::env::temp_dir().join(format!("fake-apiserver-kubeconfig-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config");
    server.write_kubeconfig(&path, "demo").unwrap();
    let config: Value = serde_saphyr::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(config["clusters"][0]["cluster"]["server"], server.url());
    assert_eq!(config["current-context"], "fake");
    assert_eq!(config["contexts"][0]["context"]["namespace"], "demo");
    assert_eq!(config["contexts"][1]["name"], "other");
    assert_eq!(config["contexts"][1]["context"]["namespace"], "other");
    assert_eq!(config["users"][0]["name"], "fake-user");
    // No credentials: over plain HTTP a client sends none.
    assert_eq!(config["users"][0]["user"], json!({}));
}

#[test]
fn dropping_the_handle_stops_the_server() {
    let server = kruise();
    let address = server.address();
    drop(server);
    assert!(std::net::TcpStream::connect(address).is_err());
}

#[test]
fn cluster_scoped_resources_are_served_without_a_namespace() {
    let mut def = fake_apiserver::ApiResourceDef::new("networking.istio.io", "v1beta1", "MeshConfig", "meshconfigs");
    def.namespaced = false;
    let server = FakeApiServer::builder().resource(def).start();
    let path = "/apis/networking.istio.io/v1beta1/meshconfigs";
    let object = json!({"apiVersion": "networking.istio.io/v1beta1", "kind": "MeshConfig", "metadata": {"name": "mesh"}, "spec": {"a": 1}});
    let created = call(&server, "POST", path).json(&object).send();
    assert_eq!(created.status, 201, "{}", created.body);
    assert!(created.body["metadata"].get("namespace").is_none(), "{}", created.body);
    let mut changed = created.body.clone();
    changed["spec"]["a"] = json!(2);
    assert_eq!(call(&server, "PUT", &format!("{path}/mesh")).json(&changed).send().status, 200);
    assert_eq!(get(&server, &format!("{path}/mesh")).body["spec"]["a"], 2);
    assert_eq!(get(&server, path).body["items"].as_array().unwrap().len(), 1);
    // A namespaced path for it is not served.
    assert_eq!(get(&server, "/apis/networking.istio.io/v1beta1/namespaces/demo/meshconfigs/mesh").status, 404);
}

#[test]
fn the_binary_serves_fixtures_and_writes_a_kubeconfig() {
    use std::io::BufRead;
    let dir = std::env::temp_dir().join(format!("fake-apiserver-binary-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fixture = dir.join("rollout.json");
    std::fs::write(&fixture, rollout("demo").to_string()).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_fake-apiserver"))
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args(["--namespace", "demo"])
        // A deny rule as RBAC would give: this Rollout may not be read, others may.
        .args(["--deny", "get:rollouts:hidden"])
        .arg(&fixture)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut url = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut url).unwrap();
    let url = url.trim().to_string();
    let config = std::fs::read_to_string(&kubeconfig).unwrap();
    let served = get_over_tcp(&url, "/apis/rollouts.kruise.io/v1beta1/namespaces/demo/rollouts/demo");
    let denied = get_over_tcp(&url, "/apis/rollouts.kruise.io/v1beta1/namespaces/demo/rollouts/hidden");
    // Every kind the plugin uses: the claim's Leases, the workloads, the other routing kinds.
    let kinds: Vec<String> =
        ["coordination.k8s.io/v1", "apps/v1", "networking.k8s.io/v1", "gateway.networking.k8s.io/v1"]
            .iter()
            .map(|group_version| get_over_tcp(&url, &format!("/apis/{group_version}")))
            .collect();
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    assert!(config.contains(&format!("server: {url}")) && config.contains("demo"), "{config}");
    assert!(served.starts_with("HTTP/1.1 200") && served.contains("\"name\":\"demo\""), "{served}");
    assert!(denied.starts_with("HTTP/1.1 403") && denied.contains("\"reason\":\"Forbidden\""), "{denied}");
    for (served, kind) in kinds.iter().zip(["\"Lease\"", "\"Deployment\"", "\"Ingress\"", "\"HTTPRoute\""]) {
        assert!(served.starts_with("HTTP/1.1 200") && served.contains(kind), "{kind}: {served}");
    }
}

/// A GET over a plain TCP connection (the server under test is another process here).
fn get_over_tcp(url: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(url.trim_start_matches("http://")).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}
