//! Ingress scripts offline: `eval --ingress` and `test` on `trafficrouting_ingress/` folders.

use crate::support::{Test, repo};

const OBJ: &str = r#"{"annotations": {"a<": "x", "nginx.ingress.kubernetes.io/canary-by-header": "old"},
  "weight": "20", "canaryService": "web-canary",
  "matches": [{"headers": [{"type": "Exact", "name": "canary-by-cookie", "value": "beta"}]}]}"#;

#[test]
fn eval_ingress_prints_the_annotations_as_the_controller_decodes_them() {
    Test::new()
        .file("obj.json", OBJ)
        .arg("eval")
        .arg(repo("lua_configuration/trafficrouting_ingress/nginx.lua"))
        .args(["--ingress", "--obj"])
        .arg("obj.json")
        .run()
        .success()
        .stdout_is(concat!(
            r#"{"a\u003c":"x","nginx.ingress.kubernetes.io/canary":"true","#,
            r#""nginx.ingress.kubernetes.io/canary-by-cookie":"beta","nginx.ingress.kubernetes.io/canary-weight":"20"}"#,
            "\n"
        ));
    let test = Test::new().file("obj.json", OBJ).file("empty.lua", "return {}").file("number.lua", "return {a = 1}");
    test.run_args(["eval", "empty.lua", "--ingress", "--obj", "obj.json"]).success().stdout_is("null\n");
    test.run_args(["eval", "number.lua", "--ingress", "--obj", "obj.json"])
        .status(1)
        .stdout_is("")
        .stderr_has("script number.lua: json: cannot unmarshal number into Go value of type string");
}

#[test]
fn eval_ingress_reproduces_the_mse_script_failing_without_annotations() {
    Test::new()
        .file("obj.yaml", "weight: '0'\ncanaryService: web-canary\n")
        .arg("eval")
        .arg(repo("lua_configuration/trafficrouting_ingress/mse.lua"))
        .args(["--ingress", "--obj", "obj.yaml"])
        .run()
        .status(1)
        .stderr_has("mse.lua:8: attempt to index local 'annotations' (a nil value)");
}

#[test]
fn built_in_ingress_scripts_pass_their_test_cases() {
    Test::new()
        .arg("test")
        .run()
        .success()
        .stdout_has("ok   trafficrouting_ingress/nginx header_step_then_weight_then_finish.yaml (3 steps)")
        .stdout_has("ok   trafficrouting_ingress/aliyun-alb header_step_then_weight.yaml (2 steps)")
        .stdout_has("ok   trafficrouting_ingress/higress weight_steps_then_header.yaml (3 steps)")
        .stdout_has("ok   trafficrouting_ingress/mse query_and_header_keys_survive.yaml (2 steps)")
        .stdout_has("warning: step 1: matches[0]: the nginx Ingress script ignores header \"ignored\"");
}

#[test]
fn test_runs_ingress_cases_of_a_folder_and_reports_failures() {
    let case = std::fs::read_to_string(repo(
        "lua_configuration/trafficrouting_ingress/testdata/nginx/header_step_then_weight_then_finish.yaml",
    ))
    .unwrap();
    // A script that forgets the weight: the header step passes, the weight step differs.
    let script = std::fs::read_to_string(repo("lua_configuration/trafficrouting_ingress/nginx.lua"))
        .unwrap()
        .replace("annotations[\"nginx.ingress.kubernetes.io/canary-weight\"] = obj.weight", "");
    let test = Test::new()
        .file("lua/trafficrouting_ingress/nginx.lua", &script)
        .file("lua/trafficrouting_ingress/testdata/nginx/case.yaml", &case);
    test.run_args(["test", "lua"])
        .status(1)
        .stdout_has("FAIL trafficrouting_ingress/nginx case.yaml (3 steps)")
        .stdout_has("step 2: the result differs from expected (its entry 2)")
        .stdout_has("-  nginx.ingress.kubernetes.io/canary-weight: \"30\"\n")
        .stdout_has("0 passed, 1 failed\n");
    let json = test.run_args(["test", "lua/trafficrouting_ingress/nginx.lua", "-o", "json"]).status(1).json();
    let statuses: Vec<&str> =
        json["cases"][0]["steps"].as_array().unwrap().iter().map(|s| s["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["pass", "fail", "pass"]);
}

#[test]
fn test_warns_of_a_misspelt_field_or_key_of_an_ingress_case_at_its_line() {
    // A regression: `trafic:` made the step route nothing, the only sign a diff against {}.
    let case = std::fs::read_to_string(repo(
        "lua_configuration/trafficrouting_ingress/testdata/nginx/header_step_then_weight_then_finish.yaml",
    ))
    .unwrap()
    .replace("          traffic: \"30%\"", "          trafic: \"30%\"")
    .replace("\nexpected:", "\nexpeced: []\nexpected:");
    let test = Test::new().file("lua/trafficrouting_ingress/testdata/nginx/case.yaml", &case).file(
        "lua/trafficrouting_ingress/nginx.lua",
        &std::fs::read_to_string(repo("lua_configuration/trafficrouting_ingress/nginx.lua")).unwrap(),
    );
    test.run_args(["test", "lua"])
        .status(1)
        .stdout_has("warning: lua/trafficrouting_ingress/testdata/nginx/case.yaml:17: unknown field \"spec.strategy.canary.steps[1].trafic\"")
        .stdout_has("warning: lua/trafficrouting_ingress/testdata/nginx/case.yaml:44: unknown key \"expeced\": a case has rollout or trafficRouting, original, canary and expected (did you mean expected?)");
}

#[test]
fn every_built_in_ingress_case_plans_and_lua_obj_points_there() {
    // As `test` reads them: most cases' Ingresses leave out apiVersion and kind.
    let cases = std::fs::read_dir(repo("lua_configuration/trafficrouting_ingress/testdata"))
        .unwrap()
        .flat_map(|class| std::fs::read_dir(class.unwrap().path()).unwrap())
        .map(|case| case.unwrap().path());
    let mut planned = 0;
    for case in cases {
        Test::new().arg("plan").arg("-f").arg(&case).arg("--show-obj").run().success();
        planned += 1;
    }
    assert!(planned >= 8, "{planned} cases");
    // An Ingress case's own `canary` key is no unknown key to lua-obj's refusal.
    let case =
        repo("lua_configuration/trafficrouting_ingress/testdata/nginx/existing_canary_keeps_foreign_annotations.yaml");
    let out = Test::new().arg("lua-obj").arg(&case).run().status(1);
    assert!(!out.stderr.contains("unknown key"), "{}", out.stderr);
    out.stderr_has("--show-obj` prints what its script gets at each step");
}

fn nginx_example() -> Test {
    Test::new().args(["plan".as_ref(), "-f".as_ref(), repo("examples/nginx-canary").as_os_str()])
}

#[test]
fn plan_f_shows_the_canary_ingress_the_controller_creates_patches_and_deletes() {
    let out = nginx_example().args(["-o", "json"]).run().success().json();
    let objects: Vec<&serde_json::Value> =
        out["plans"][0]["stages"].as_array().unwrap().iter().map(|s| &s["objects"][0]).collect();
    let actions: Vec<Vec<&str>> = objects
        .iter()
        .map(|o| o["changes"].as_array().unwrap().iter().map(|c| c["action"].as_str().unwrap()).collect())
        .collect();
    assert_eq!(actions, [vec!["create", "patch"], vec!["patch"], vec!["delete"]]);
    assert_eq!(objects[0]["apiVersion"], "networking.k8s.io/v1");
    assert_eq!(
        objects[0]["planned"]["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"],
        "web-canary"
    );
    assert_eq!(
        objects[1]["changes"][0]["patch"]["metadata"]["annotations"]["nginx.ingress.kubernetes.io/canary-weight"],
        "30"
    );
    assert!(objects[2]["planned"].is_null());
    let text = nginx_example()
        .run()
        .success()
        .stdout_has("--- Ingress demo/web-canary (after step 1/3)")
        .stdout_has("Plan: 3 to change, 0 already as planned")
        // The creation's diff shows the owner reference that decides the canary's garbage
        // collection (the files' Rollout has no uid), and so does the deletion's at the end; the
        // patch's diff between them does not repeat it.
        .stdout_has(concat!(
            "+  namespace: demo\n+  ownerReferences:\n+  - apiVersion: rollouts.kruise.io/v1beta1\n",
            "+    blockOwnerDeletion: true\n+    controller: true\n+    kind: Rollout\n+    name: web\n+    uid: \"\"\n",
        ))
        .stdout;
    assert_eq!(text.matches("ownerReferences").count(), 2, "{text}");
    assert!(text.contains("-  ownerReferences:\n"), "{text}");
}

#[test]
fn a_weight_beside_matches_is_planned_as_the_script_writes_it_with_a_warning() {
    // The nginx example with 10% beside step 1's header match: the script writes both.
    let example = repo("examples/nginx-canary");
    let mut test = Test::new();
    for file in std::fs::read_dir(&example).unwrap().map(|e| e.unwrap().path()) {
        let text = std::fs::read_to_string(&file).unwrap();
        let text = text.replacen("        matches:\n", "        traffic: \"10%\"\n        matches:\n", 1);
        test = test.file(&format!("in/{}", file.file_name().unwrap().to_str().unwrap()), &text);
    }
    let input = test.path("in");
    let out = test.args(["plan".as_ref(), "--step".as_ref(), "1".as_ref(), "-f".as_ref(), input.as_os_str()]).run();
    out.success()
        .stdout_has("step 1/3: replicas 1, matches [header x-canary=true] and traffic 10% (canary 10 / stable 90 where a provider uses it), pause")
        .stdout_has("+    nginx.ingress.kubernetes.io/canary-weight: \"10\"\n")
        .stdout_has("warning: the step has matches and traffic 10%: the nginx Ingress script writes the weight as well as the matches, so 10% of the requests that do not match go to the canary too\n");
}

#[test]
fn an_ingress_script_of_ones_own_is_warned_that_a_matches_only_step_gives_it_weight_minus_one() {
    let builtin = std::fs::read_to_string(repo("lua_configuration/trafficrouting_ingress/nginx.lua")).unwrap();
    let plan_with = |script: &str| {
        nginx_example().file("s/trafficrouting_ingress/nginx.lua", script).args(["--lua-dir", "s"]).run().success()
    };
    let warning = "warning: Ingress/web-canary: step 1 has matches and no traffic, so the script gets weight \"-1\" there: the built-in scripts then write no weight annotation; one that writes obj.weight as it is gives the canary Ingress a weight of \"-1\"\n";
    // One that writes the weight whatever it is: said once, for the Rollout.
    let own = builtin.replace("if obj.weight ~= \"-1\" then", "if true then");
    assert_ne!(own, builtin);
    let out =
        plan_with(&own).stdout_has(warning).stdout_has("+    nginx.ingress.kubernetes.io/canary-weight: \"-1\"\n");
    assert_eq!(out.stdout.matches("gets weight \"-1\"").count(), 1, "{}", out.stdout);
    // The built-in script, and a copy of it (as `record --dir` writes it), skip the weight then.
    for plan in [nginx_example().run().success(), plan_with(&builtin)] {
        assert!(!plan.stdout.contains("gets weight"), "{}", plan.stdout);
    }
}

/// The audit's mse fixture (s26-providers #4): step 1 sets two headers and matches a header
/// with a regex query, then an exact query; step 2 sends 40%.
const MSE_ROLLOUT: &str = r#"
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: demo
  annotations: {mse.ingress.kubernetes.io/service-subset: ""}
spec:
  ingressClassName: mse
  rules:
  - http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
---
apiVersion: rollouts.kruise.io/v1beta1
kind: Rollout
metadata: {name: web, namespace: demo}
spec:
  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  strategy:
    canary:
      steps:
      - replicas: 1
        requestHeaderModifier:
          set: [{name: gray, value: blue}, {name: x, value: "y z"}]
        matches:
        - headers: [{type: Exact, name: a, value: "1"}]
          queryParams: [{type: RegularExpression, name: q, value: "v.*"}]
        - queryParams: [{type: Exact, name: q2, value: "2"}]
      - replicas: 2
        traffic: "40%"
      - replicas: "100%"
      trafficRoutings:
      - service: web
        ingress: {name: web, classType: mse}
"#;

#[test]
fn the_mse_scripts_leftovers_and_joined_header_update_are_warned() {
    let test = Test::new().file("mse.yaml", MSE_ROLLOUT);
    let input = test.path("mse.yaml");
    let out = test.args(["plan".as_ref(), "-f".as_ref(), input.as_os_str(), "-o".as_ref(), "json".as_ref()]).run();
    let out = out.success().json();
    let warnings = |step: usize| -> Vec<String> {
        let object = &out["plans"][0]["stages"][step]["objects"][0];
        object["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_string()).collect()
    };
    let step1 = warnings(0);
    assert!(step1.iter().any(|w| w.starts_with("the canary Ingress gets both nginx.ingress.kubernetes.io/canary-by-query-value: \"2\" and nginx.ingress.kubernetes.io/canary-by-query-pattern: \"v.*\", for the one query \"q2\"")), "{step1:?}");
    assert!(step1.iter().any(|w| w.starts_with("requestHeaderModifier.set has 2 headers, which the script writes into mse.ingress.kubernetes.io/request-header-control-update with no separator between them: \"gray bluex y z\"")), "{step1:?}");
    let step2 = warnings(1);
    assert!(step2.iter().any(|w| w.starts_with("the canary Ingress keeps nginx.ingress.kubernetes.io/canary-by-query: \"q2\", nginx.ingress.kubernetes.io/canary-by-query-pattern: \"v.*\", nginx.ingress.kubernetes.io/canary-by-query-value: \"2\", which this step's matches do not call for")), "{step2:?}");
    assert!(step2.iter().any(|w| w.starts_with("the canary Ingress keeps mse.ingress.kubernetes.io/request-header-control-update: \"gray bluex y z\", although this step has no requestHeaderModifier")), "{step2:?}");
    // The nginx example clears its header keys at its weight step: nothing is left to warn of.
    let nginx = nginx_example().args(["-o", "json"]).run().success().json();
    for stage in nginx["plans"][0]["stages"].as_array().unwrap() {
        assert_eq!(stage["objects"][0]["warnings"], serde_json::json!([]), "{stage}");
    }
}

#[test]
fn a_header_modifier_the_class_script_ignores_is_warned() {
    // The mse fixture's request headers, on nginx: its script never reads them.
    let test = Test::new().file("nginx.yaml", &MSE_ROLLOUT.replace("classType: mse", "classType: nginx"));
    let input = test.path("nginx.yaml");
    test.args(["plan".as_ref(), "-f".as_ref(), input.as_os_str(), "--step".as_ref(), "1".as_ref()])
        .run()
        .success()
        .stdout_has("request headers: set gray=blue, set x=y z")
        .stdout_has("  warning: the nginx Ingress script ignores requestHeaderModifier: requests to the canary are not modified\n");
}

#[test]
fn the_mse_script_is_warned_to_drop_added_and_removed_headers() {
    // Trial 11 #5: the heading lists add and remove, which the mse script never writes.
    let set = "          set: [{name: gray, value: blue}, {name: x, value: \"y z\"}]\n";
    let rollout = MSE_ROLLOUT
        .replace(set, &format!("{set}          add: [{{name: x-env, value: canary}}]\n          remove: [x-debug]\n"));
    assert_ne!(rollout, MSE_ROLLOUT);
    let test = Test::new().file("mse.yaml", &rollout);
    let input = test.path("mse.yaml");
    test.args(["plan".as_ref(), "-f".as_ref(), input.as_os_str(), "--step".as_ref(), "1".as_ref()])
        .run()
        .success()
        .stdout_has("request headers: set gray=blue, set x=y z, add x-env=canary, remove x-debug")
        .stdout_has("+    mse.ingress.kubernetes.io/request-header-control-update: gray bluex y z\n")
        .stdout_has("  warning: the mse Ingress script writes only requestHeaderModifier.set: add x-env=canary, remove x-debug are not applied to requests to the canary\n");
}

#[test]
fn the_mse_creation_pass_failing_is_explained_by_its_own_cause_only() {
    // Trial s56: a stable Ingress without annotations fails the mse script in the pass that
    // creates the canary Ingress (weight 0, no modifier), and the error also named the step's
    // requestHeaderModifier without set, which that pass does not run with.
    let set = "          set: [{name: gray, value: blue}, {name: x, value: \"y z\"}]\n";
    let rollout = MSE_ROLLOUT.replace(set, "          add: [{name: x-env, value: canary}]\n");
    let bare = rollout.replace("  annotations: {mse.ingress.kubernetes.io/service-subset: \"\"}\n", "");
    assert!(bare != rollout && rollout != MSE_ROLLOUT);
    let plan = |text: &str| {
        let test = Test::new().file("mse.yaml", text);
        let input = test.path("mse.yaml");
        test.args(["plan".as_ref(), "-f".as_ref(), input.as_os_str(), "--step".as_ref(), "1".as_ref()]).run()
    };
    let failed = plan(&bare).status(1).stderr_has("mse.lua:8: attempt to index local 'annotations' (a nil value) (the Ingress has no annotations: the controller's mse script fails on it (openkruise/rollouts#228)");
    assert!(!failed.stderr.contains("requestHeaderModifier has no set"), "{}", failed.stderr);
    // The step's own run, past the creation: its cause is named there.
    plan(&rollout).status(1).stderr_has(
        "(requestHeaderModifier has no set: the controller's mse script fails on it (it only writes the set headers)",
    );
}

/// A Rollout `web` whose step 1 is `step` (YAML flow), routing through Ingress `web` of
/// `class_type`, with `canary` (a `canary:` field or nothing).
fn ingress_rollout(class_type: &str, step: &str, canary: &str) -> String {
    format!(
        "apiVersion: rollouts.kruise.io/v1beta1\nkind: Rollout\nmetadata: {{name: web, namespace: demo}}\nspec:\n  workloadRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}\n  strategy:\n    canary:\n      enableExtraWorkloadForCanary: true\n      {canary}\n      steps: [{step}, {{replicas: 100%}}]\n      trafficRoutings: [{{service: web, ingress: {{name: web, classType: {class_type}}}}}]\n"
    )
}

#[test]
fn a_match_without_a_header_is_said_to_send_nothing_to_the_canary() {
    // Trial 11 #2: nginx skips a match without a header, so the canary gets none of it, and
    // here nothing at all; not "more traffic than the match describes".
    let step = "{replicas: 1, matches: [{path: {type: PathPrefix, value: /beta}}, {queryParams: [{type: Exact, name: canary, value: \"yes\"}]}]}";
    let out = Test::new()
        .file("m/rollout.yaml", &ingress_rollout("nginx", step, ""))
        .arg("plan")
        .args(["-f", "m", "-f"])
        .arg(repo("examples/nginx-canary/ingress.yaml"))
        .args(["--step", "1"])
        .run()
        .success()
        .stdout_has("  warning: matches[0] has path /beta but no header: the nginx Ingress script skips it, so the requests it describes are not sent to the canary\n")
        .stdout_has("  warning: matches[1] has query parameter \"canary\" but no header: the nginx Ingress script skips it, so the requests it describes are not sent to the canary\n")
        .stdout_has("  warning: the step's matches are not applied: the canary Ingress is left with no weight and no match key the nginx gateway reads, so no request reaches the new version, matched or not; give a match a header\n");
    assert!(!out.stdout.contains("more traffic"), "{}", out.stdout);
}

#[test]
fn plan_f_of_an_ingress_of_an_older_version_says_which_one_is_read() {
    // A review finding: a v1beta1 Ingress (`serviceName`/`servicePort`) was said to have a
    // resource backend.
    let old = "apiVersion: networking.k8s.io/v1beta1\nkind: Ingress\nmetadata: {name: web, namespace: demo}\nspec:\n  rules:\n  - http:\n      paths:\n      - path: /\n        backend: {serviceName: web, servicePort: 80}\n";
    let out = Test::new()
        .file("m/rollout.yaml", &ingress_rollout("nginx", "{replicas: 1, traffic: 10%}", ""))
        .file("m/ingress.yaml", old)
        .args(["plan", "-f", "m"])
        .run()
        .status(1)
        .stderr_has("Ingress demo/web is networking.k8s.io/v1beta1: the controller reads Ingresses as networking.k8s.io/v1, as the API server serves them");
    assert!(!out.stderr.contains("resource backend"), "{}", out.stderr);
}

#[test]
fn plan_f_warns_of_someone_elses_ingress_named_as_the_canary() {
    let bobs = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web-canary, namespace: demo, annotations: {owner: bob}}\nspec: {rules: [{host: bob.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: bob, port: {number: 80}}}}]}}]}\n";
    let test = Test::new().file("in/mse.yaml", MSE_ROLLOUT).file("in/bob.yaml", bobs);
    let input = test.path("in");
    test.args(["plan".as_ref(), "-f".as_ref(), input.as_os_str(), "--step".as_ref(), "1".as_ref()])
        .run()
        .success()
        .stdout_has("warning: Ingress demo/web-canary is not Rollout demo/web's canary Ingress (it has no controller owner; it routes to Service bob, not to the canary Service web-canary): the controller patches its annotations as if it were, and deletes it when the release ends\n");
}

#[test]
fn plan_f_of_a_canary_ingress_without_its_stable_ingress_says_a_release_cannot_start() {
    // A helper's review: the canary was patched without a word, while the controller's
    // Initialize, at the start of a release, fails without the stable Ingress.
    let example = |file: &str| std::fs::read_to_string(repo(&format!("examples/nginx-canary/{file}"))).unwrap();
    let canary = example("ingress.yaml").replacen("name: web\n", "name: web-canary\n", 1);
    assert_ne!(canary, example("ingress.yaml"));
    let test = Test::new()
        .file("in/rollout.yaml", &example("rollout.yaml"))
        .file("in/service.yaml", &example("service.yaml"))
        .file("in/canary.yaml", &canary);
    let input = test.path("in");
    test.args(["plan".as_ref(), "-f".as_ref(), input.as_os_str(), "--step".as_ref(), "1".as_ref()])
        .run()
        .success()
        .stdout_has("warning: Ingress demo/web, the stable Ingress, is not among the files: the controller reads it when a release starts (its Initialize) and fails there without it, so a release not started yet routes nothing; one in progress goes on patching the canary Ingress\n");
}

/// App `name` in namespace demo: its Rollout (20%, then 100%) through its aliyun-alb Ingress of
/// class `alb`, with `annotations` on that Ingress.
fn alb_app(name: &str, annotations: &str) -> String {
    format!(
        "apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {{name: {name}, namespace: demo, annotations: {annotations}}}
spec:
  ingressClassName: alb
  rules:
  - http:
      paths:
      - {{path: /, pathType: Prefix, backend: {{service: {{name: {name}, port: {{number: 80}}}}}}}}
---
apiVersion: rollouts.kruise.io/v1beta1
kind: Rollout
metadata: {{name: {name}, namespace: demo}}
spec:
  workloadRef: {{apiVersion: apps/v1, kind: Deployment, name: {name}}}
  strategy:
    canary:
      steps:
      - {{replicas: 1, traffic: 20%}}
      - {{replicas: 100%}}
      trafficRoutings:
      - service: {name}
        ingress: {{classType: aliyun-alb, name: {name}}}
"
    )
}

#[test]
fn plan_f_warns_of_two_planned_canary_ingresses_with_one_alb_order() {
    let test = Test::new().file("alb/shop.yaml", &alb_app("shop", "{}")).file("alb/cart.yaml", &alb_app("cart", "{}"));
    let mut out = test.run_args(["plan", "-f", "alb"]).success();
    for (plan, other) in [("cart", "shop"), ("shop", "cart")] {
        out = out.stdout_has(&format!(
            "warning: the canary Ingress gets alb.ingress.kubernetes.io/order: \"1\", which canary Ingress demo/{other}-canary of the same class gets too at step 1/2 of Rollout demo/{other} (not made yet: they clash while both releases run); ALB needs each forwarding rule's order to be unique among the Ingresses of its class (openkruise/rollouts#128): one script writes"
        ));
        let heading = format!("{plan}\n");
        let block =
            out.stdout.split("\nRollout demo/").find(|b| b.trim_start_matches("Rollout demo/").starts_with(&heading));
        let block = block.unwrap();
        assert_eq!(block.matches("openkruise/rollouts#128").count(), 1, "step 1 only: {block}");
    }
    // Orders of their own, from the stable Ingresses, through the guide's script: no warning.
    let guide = std::fs::read_to_string(repo("docs/script-authors-guide.md")).unwrap();
    let script = guide.split("<!-- file: lua/trafficrouting_ingress/aliyun-alb.lua -->\n```lua\n").nth(1).unwrap();
    let script = script.split("```").next().unwrap();
    let own = Test::new()
        .file("alb/shop.yaml", &alb_app("shop", "{example.com/canary-order: \"7\"}"))
        .file("alb/cart.yaml", &alb_app("cart", "{example.com/canary-order: \"8\"}"))
        .file("alb.lua", script);
    let out = own
        .run_args(["plan", "-f", "alb", "--script", "ingress.aliyun-alb=alb.lua"])
        .success()
        .stdout_has("+    alb.ingress.kubernetes.io/order: \"7\"")
        .stdout_has("+    alb.ingress.kubernetes.io/order: \"8\"");
    assert!(!out.stdout.contains("openkruise/rollouts#128"), "{}", out.stdout);
}

#[test]
fn an_ingress_classs_script_is_given_with_script_ingress_class() {
    let mine = "local a = obj.annotations or {} a['example.com/weight'] = obj.weight return a";
    nginx_example()
        .file("mine.lua", mine)
        .args(["--script", "ingress.nginx=mine.lua", "--step", "2"])
        .run()
        .success()
        .stdout_has("Ingress demo/web-canary: script --script mine.lua (sha256 ")
        .stdout_has("+    example.com/weight: \"30\"");
    nginx_example()
        .file("mine.lua", mine)
        .args(["--script", "ingress.nginy=mine.lua"])
        .run()
        .status(1)
        .stderr_has("error: --script ingress.nginy: no ingress ref of the plan has classType nginy, so the script would not run. The keys this plan uses: ingress.nginx.");
}

#[test]
fn an_ingress_script_that_reads_what_it_wrote_is_planned_where_it_settles() {
    // The controller runs it again on what it patched: the previous weight copied from the
    // current one takes a second patch, so step 2 ends with previous-weight 30, not 10.
    let previous = "local a = obj.annotations or {} a['example.com/previous'] = a['example.com/current'] a['example.com/current'] = obj.weight return a";
    nginx_example()
        .file("mine.lua", previous)
        .args(["--script", "ingress.nginx=mine.lua", "--step", "2"])
        .run()
        .success()
        .stdout_has("+    example.com/current: \"30\"\n+    example.com/previous: \"30\"\n")
        .stdout_has("warning: script mine.lua: run on the annotations it wrote, it gives others: the controller patches the canary Ingress 2 times at this stage before its result stays (the plan shows where it settles)\n");
    let growing = "local a = obj.annotations or {} a['example.com/seen'] = (a['example.com/seen'] or '') .. obj.weight .. ',' return a";
    nginx_example()
        .file("mine.lua", growing)
        .args(["--script", "ingress.nginx=mine.lua", "--step", "2"])
        .run()
        .success()
        .stdout_has("the controller patches the canary Ingress at every reconcile, and the step never completes; the plan shows its last write\n");
}

#[test]
fn show_obj_gives_the_ingress_scripts_obj_that_eval_ingress_runs() {
    let obj = nginx_example().args(["--step", "2", "--show-obj"]).run().success();
    let entries: serde_json::Value = serde_json::from_str(&obj.stdout).unwrap();
    assert_eq!(entries[0]["object"], "Ingress demo/web-canary");
    assert_eq!(entries[0]["obj"]["weight"], "30");
    assert_eq!(entries[0]["obj"]["annotations"]["nginx.ingress.kubernetes.io/canary-weight"], "0", "the made canary");
    Test::new()
        .stdin(&obj.stdout)
        .arg("eval")
        .arg(repo("lua_configuration/trafficrouting_ingress/nginx.lua"))
        .args(["--ingress", "--obj", "-"])
        .run()
        .success()
        .stdout_is(concat!(
            r#"{"nginx.ingress.kubernetes.io/canary":"true","nginx.ingress.kubernetes.io/canary-weight":"30","#,
            r#""nginx.ingress.kubernetes.io/proxy-body-size":"8m"}"#,
            "\n"
        ));
}

#[test]
fn show_obj_shows_the_obj_of_an_ingress_class_without_a_script_and_says_so() {
    let rollout = std::fs::read_to_string(repo("examples/nginx-canary/rollout.yaml")).unwrap();
    let test = Test::new()
        .file("m/rollout.yaml", &rollout.replace("classType: nginx", "classType: traefik"))
        .file("m/ingress.yaml", &std::fs::read_to_string(repo("examples/nginx-canary/ingress.yaml")).unwrap());
    let missing = "no Lua script for Ingress class \"traefik\": none given with --script ingress.traefik=FILE or --lua-dir, none built in (only aliyun-alb, higress, mse, nginx), and the files have no ConfigMap kruise-rollout-configuration (the controller reads it from its namespace, kruise-rollout, --controller-namespace); add the script under the key lua.traffic.routing.ingress.traefik";
    test.run_args(["plan", "-f", "m"]).status(1).stderr_has(missing);
    let out = test.run_args(["plan", "-f", "m", "--show-obj"]).success().stderr_has(&format!(
        "note: Ingress demo/web-canary: {missing}; its obj is shown all the same, with the canary Ingress's annotations as they would be if the script changed none\n"
    ));
    let entries = out.json();
    let shown: Vec<(&str, &serde_json::Value)> =
        entries.as_array().unwrap().iter().map(|e| (e["stage"].as_str().unwrap(), &e["obj"])).collect();
    let stable_annotations = serde_json::json!({"nginx.ingress.kubernetes.io/proxy-body-size": "8m"});
    assert_eq!(shown.len(), 2, "step 3 deletes the canary Ingress: no script runs\n{}", out.stdout);
    assert_eq!(shown[0].0, "step 1/3");
    assert_eq!(shown[0].1["annotations"], stable_annotations, "made from the stable Ingress");
    assert_eq!(
        (&shown[0].1["weight"], &shown[0].1["matches"][0]["headers"][0]["name"]),
        (&"-1".into(), &"x-canary".into())
    );
    assert_eq!((shown[1].0, &shown[1].1["weight"]), ("step 2/3", &"30".into()));
    assert_eq!(shown[1].1["annotations"], stable_annotations, "carried from step 1, which changed none");
    assert_eq!(shown[1].1["canaryService"], "web-canary");
}

#[test]
fn a_traffic_routing_with_an_ingress_ref_plans_offline_on_the_stable_service() {
    let tr = r#"
apiVersion: rollouts.kruise.io/v1alpha1
kind: TrafficRouting
metadata: {name: tr, namespace: demo}
spec:
  strategy:
    matches:
    - headers: [{type: Exact, name: x-canary, value: "true"}]
  objectRef:
  - service: web
    ingress: {name: web}
"#;
    let out = Test::new()
        .file("tr.yaml", tr)
        .arg("plan")
        .args(["-f", "tr.yaml", "-f"])
        .arg(repo("examples/nginx-canary/ingress.yaml"))
        .args(["-o", "json"])
        .run()
        .success()
        .json();
    let canary = &out["plans"][0]["stages"][0]["objects"][0]["planned"];
    assert_eq!(out["plans"][0]["owner"], "TrafficRouting demo/tr");
    assert_eq!(
        canary["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"], "web",
        "the stable Service"
    );
    assert_eq!(canary["metadata"]["ownerReferences"][0]["kind"], "TrafficRouting");
    assert_eq!(canary["metadata"]["annotations"]["nginx.ingress.kubernetes.io/canary-by-header"], "x-canary");
}

#[test]
fn a_canary_ingress_on_the_stable_service_is_warned_of_once_but_with_mse() {
    let tr = |class_type: &str| {
        format!(
            "apiVersion: rollouts.kruise.io/v1alpha1\nkind: TrafficRouting\nmetadata: {{name: web-tr, namespace: demo}}\nspec:\n  strategy:\n    matches:\n    - headers: [{{type: Exact, name: x-canary, value: \"true\"}}]\n  objectRef:\n  - service: web\n    ingress: {{name: web, classType: {class_type}}}\n"
        )
    };
    let rollout = r#"
apiVersion: rollouts.kruise.io/v1beta1
kind: Rollout
metadata:
  name: web
  namespace: demo
  annotations: {rollouts.kruise.io/trafficrouting: web-tr}
spec:
  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  strategy:
    canary:
      enableExtraWorkloadForCanary: true
      steps: [{replicas: 1}, {replicas: 2}, {replicas: 100%}]
"#;
    // With `script` (Some) the class's script comes from --lua-dir.
    let plan_with = |class_type: &str, script: Option<&str>| {
        let mut test = Test::new()
            .file("m/tr.yaml", &tr(class_type))
            .file("m/rollout.yaml", rollout)
            .arg("plan")
            .args(["-f", "m", "-f"])
            .arg(repo("examples/nginx-canary/ingress.yaml"));
        if let Some(script) = script {
            test = test.file(&format!("s/trafficrouting_ingress/{class_type}.lua"), script).args(["--lua-dir", "s"]);
        }
        test.run().success()
    };
    let plan = |class_type: &str| plan_with(class_type, None);
    let warning = "  warning: the canary Ingress routes to Service web itself (canary = stable: a TrafficRouting routes to the stable Service itself): the nginx gateway balances the requests it sends there (those the step matches or weighs) over every pod of web, stable and canary alike";
    let out = plan("nginx");
    // Said at step 1, where the canary Ingress is made, not at the steps that carry it on.
    let step_1 = &out.stdout[out.stdout.find("step 1/3").unwrap()..out.stdout.find("step 2/3").unwrap()];
    assert!(step_1.contains(warning), "{}", out.stdout);
    assert_eq!(out.stdout.matches("the canary Ingress routes to Service web itself").count(), 1, "{}", out.stdout);
    // mse balances too when the stable Ingress has no pod subset (this one has none).
    plan("mse").stdout_has("  warning: the canary Ingress routes to Service web itself (canary = stable: a TrafficRouting routes to the stable Service itself): without mse.ingress.kubernetes.io/service-subset on it");
    // A copy of the built-in script (as `record --dir` writes it) is the built-in; another text
    // is a script of one's own, whose gateway's doing cannot be told.
    let builtin = std::fs::read_to_string(repo("lua_configuration/trafficrouting_ingress/nginx.lua")).unwrap();
    plan_with("nginx", Some(&builtin))
        .stdout_has("script --lua-dir s/trafficrouting_ingress/nginx.lua")
        .stdout_has(warning);
    plan_with("nginx", Some(&format!("{builtin}\n-- mine\n"))).stdout_has(
        "  warning: the canary Ingress routes to Service web itself (canary = stable: a TrafficRouting routes to the stable Service itself): with a script of its own for class nginx, whether that gateway sends",
    );
}

#[test]
fn mse_with_canary_equal_to_stable_splits_traffic_only_with_a_pod_subset() {
    // Trial 11 #3: the mse script points the canary Ingress at the subset gray only when the
    // stable Ingress has mse.ingress.kubernetes.io/service-subset; without it the gateway
    // balances over every pod of the Service, as the other classes do.
    let plan = |annotations: &str| {
        let ingress = format!(
            "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {{name: web, namespace: demo, annotations: {annotations}}}\nspec:\n  rules:\n  - http: {{paths: [{{path: /, pathType: Prefix, backend: {{service: {{name: web, port: {{number: 80}}}}}}}}]}}\n"
        );
        let rollout = ingress_rollout("mse", "{replicas: 1, traffic: 10%}", "disableGenerateCanaryService: true");
        Test::new()
            .file("m/rollout.yaml", &rollout)
            .file("m/ingress.yaml", &ingress)
            .args(["plan", "-f", "m"])
            .run()
            .success()
    };
    let warning = "  warning: the canary Ingress routes to Service web itself (canary = stable: disableGenerateCanaryService): without mse.ingress.kubernetes.io/service-subset on it (the mse script sets it to gray only when the stable Ingress has it), the mse gateway balances the requests it sends there";
    plan("{team: web}")
        .stdout_has("step 1/2: replicas 1, traffic 10% (canary = stable Service: not split), ")
        .stdout_has(warning);
    let subset = plan("{mse.ingress.kubernetes.io/service-subset: \"\"}")
        .stdout_has("step 1/2: replicas 1, traffic 10% (canary 10 / stable 90), ")
        .stdout_has("+    mse.ingress.kubernetes.io/service-subset: gray\n");
    assert!(!subset.stdout.contains("routes to Service web itself"), "{}", subset.stdout);
}

/// Ingress routing against the fake API server: plan, approve, restore, status and record of a
/// Rollout that routes through an Ingress, and the writes' guarantees under faults.
mod cluster {
    use crate::support::cluster::*;
    use crate::support::{Output, Test};
    use fake_apiserver::{ApiResourceDef, FakeHandle, ReplyFault, Requests, Rule, Stage};
    use serde_json::{Value, json};
    use std::time::{Duration, Instant};

    const NGINX: &str = "nginx.ingress.kubernetes.io";
    const ALB: &str = "alb.ingress.kubernetes.io";
    /// The canary Ingress of Ingress `web`.
    const CANARY: Stored = Stored { group: "networking.k8s.io", plural: "ingresses", name: "web-canary" };

    /// Rollout `web` through Ingress `web` of `class`: step 1 matches a header, step 2 sends
    /// 30%, step 3 is replicas only (the canary Ingress goes).
    fn rollout(class: &str, step: i64, state: &str) -> Value {
        json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": {"name": "web", "namespace": NAMESPACE},
            "spec": {
                "workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "strategy": {"canary": {
                    "steps": [
                        {"replicas": 1, "matches": [{"headers": [{"type": "Exact", "name": "x-canary", "value": "true"}]}]},
                        {"replicas": "30%", "traffic": "30%"},
                        {"replicas": "100%"}
                    ],
                    "trafficRoutings": [{"service": "web", "ingress": {"name": "web", "classType": class}}]
                }}
            },
            "status": {
                "phase": "Progressing",
                "canaryStatus": {"currentStepIndex": step, "currentStepState": state, "canaryReplicas": 1, "canaryReadyReplicas": 1}
            }
        })
    }

    fn stable_ingress(class: &str) -> Value {
        json!({
            "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "web", "namespace": NAMESPACE, "labels": {"app": "web"},
                         "annotations": {"kubernetes.io/ingress.class": class}},
            "spec": {"rules": [{"host": "web.example.com", "http": {"paths": [
                {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}},
                {"path": "/static", "pathType": "Prefix", "backend": {"service": {"name": "cdn", "port": {"number": 80}}}}
            ]}}]}
        })
    }

    /// Kruise, Ingresses, Services, Deployments and Leases served; Rollout `web` of `class` at
    /// `step`/`state`, its stable Ingress, Services `web` and `web-canary`, and its workload.
    fn serving(class: &str, step: i64, state: &str) -> fake_apiserver::Builder {
        fake_apiserver::FakeApiServer::builder()
            .kruise_and_istio()
            .resource(fake_apiserver::ingresses())
            .resource(fake_apiserver::leases())
            .resource(fake_apiserver::services())
            .resource(ApiResourceDef::new("apps", "v1", "Deployment", "deployments"))
            .object(rollout(class, step, state))
            .object(stable_ingress(class))
            .object(service("web"))
            .object(service("web-canary"))
            .object(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": NAMESPACE},
                           "spec": {"replicas": 10}, "status": {"replicas": 10, "readyReplicas": 10}}))
    }

    fn ingress(server: &FakeHandle, name: &str) -> Option<Value> {
        server.object("networking.k8s.io", "*", "ingresses", NAMESPACE, name)
    }

    fn canary(server: &FakeHandle) -> Option<Value> {
        ingress(server, "web-canary")
    }

    fn annotations(object: &Value) -> Value {
        object["metadata"]["annotations"].clone()
    }

    /// Moves the Rollout to `step`, paused, as the controller would once its pods are ready.
    fn pause_at(server: &FakeHandle, step: i64) {
        let mut rollout = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "web").unwrap();
        rollout["status"]["canaryStatus"]["currentStepIndex"] = json!(step);
        rollout["status"]["canaryStatus"]["currentStepState"] = json!("StepPaused");
        server.put_object(rollout);
    }

    /// Makes step `step` of Rollout web one without traffic (the canary Ingress goes), the
    /// steps from it on one later.
    fn add_a_step_without_traffic(server: &FakeHandle, step: usize) {
        let mut rollout = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "web").unwrap();
        let steps = rollout["spec"]["strategy"]["canary"]["steps"].as_array_mut().unwrap();
        steps.insert(step - 1, json!({"replicas": "50%"}));
        server.put_object(rollout);
    }

    fn state(server: &FakeHandle) -> Value {
        server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "web").unwrap()["status"]["canaryStatus"]
            ["currentStepState"]
            .clone()
    }

    /// The writes other than the claim's.
    fn ingress_writes(server: &FakeHandle) -> Vec<String> {
        writes(server)
    }

    fn approve(server: &FakeHandle) -> Output {
        Test::new().kubeconfig(server).args(["approve", "web", "--yes"]).run()
    }

    #[test]
    fn plan_shows_the_canary_ingress_created_then_patched_and_carried_over_every_step() {
        let server = serving("nginx", 1, "StepPaused").start();
        let test = Test::new().kubeconfig(&server);
        let plan = test.run_args(["plan", "web", "--all-steps", "-o", "json"]).success().json();
        let stages = plan["plans"][0]["stages"].as_array().unwrap();
        let step = |i: usize| &stages[i]["objects"][0];
        assert_eq!(step(0)["kind"], "Ingress");
        assert_eq!(step(0)["name"], "web-canary");
        assert_eq!(step(0)["action"], "create");
        let changes: Vec<&Value> = step(0)["changes"].as_array().unwrap().iter().map(|c| &c["action"]).collect();
        assert_eq!(changes, ["create", "patch"]);
        assert_eq!(annotations(&step(0)["changes"][0]["object"])[format!("{NGINX}/canary-weight")], "0", "made at 0");
        assert_eq!(
            step(0)["changes"][1]["patch"],
            json!({"metadata": {"annotations": {format!("{NGINX}/canary-by-header"): "x-canary",
                   format!("{NGINX}/canary-by-header-value"): "true", format!("{NGINX}/canary-weight"): null}}})
        );
        // Step 2 starts from what step 1 left: one merge patch.
        assert_eq!(step(1)["action"], "patch");
        assert_eq!(
            step(1)["changes"][0]["patch"],
            json!({"metadata": {"annotations": {format!("{NGINX}/canary-by-header"): null,
                   format!("{NGINX}/canary-by-header-value"): null, format!("{NGINX}/canary-weight"): "30"}}})
        );
        assert_eq!(step(2)["action"], "delete");
        assert!(step(2)["planned"].is_null());
        assert!(step(0)["warnings"].as_array().unwrap().is_empty(), "{}", step(0)["warnings"]);
        // The text shows the requests and diffs from what the step before leaves.
        test.run_args(["plan", "web", "--all-steps"])
            .success()
            .stdout_has("  Ingress shop/web-canary: script built-in lua_configuration/trafficrouting_ingress/nginx.lua (sha256 ")
            .stdout_has(&format!("    POST, annotations {{\"kubernetes.io/ingress.class\":\"nginx\",\"{NGINX}/canary\":\"true\",\"{NGINX}/canary-weight\":\"0\"}}"))
            .stdout_has(&format!("    PATCH (merge) {{\"metadata\":{{\"annotations\":{{\"{NGINX}/canary-by-header\":null,"))
            .stdout_has("--- Ingress shop/web-canary (after step 1/3)")
            .stdout_has("  Ingress shop/web-canary: delete it, as the controller's finalise does (no traffic, no matches)\n    DELETE\n");
        assert_eq!(ingress_writes(&server), Vec::<String>::new(), "plan writes nothing");
    }

    #[test]
    fn approve_a_header_step_then_a_weight_step_then_restore_nginx() {
        let server = serving("nginx", 1, "StepPaused").start();
        let stable = ingress(&server, "web").unwrap();
        approve(&server)
            .success()
            .stdout_has("Ingress shop/web-canary created (it did not exist before this run)")
            .stdout_has("rollout.rollouts.kruise.io/web approved (step 1/3)");
        assert_eq!(
            ingress_writes(&server),
            [
                "POST /apis/networking.k8s.io/v1/namespaces/shop/ingresses",
                "PATCH /apis/networking.k8s.io/v1/namespaces/shop/ingresses/web-canary",
                "PATCH /apis/rollouts.kruise.io/v1beta1/namespaces/shop/rollouts/web/status",
            ]
        );
        let made = canary(&server).unwrap();
        assert_eq!(
            annotations(&made),
            json!({"kubernetes.io/ingress.class": "nginx", format!("{NGINX}/canary"): "true",
                   format!("{NGINX}/canary-by-header"): "x-canary", format!("{NGINX}/canary-by-header-value"): "true"})
        );
        assert_eq!(
            made["spec"]["rules"],
            json!([{"host": "web.example.com", "http": {"paths": [
                {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web-canary", "port": {"number": 80}}}}
            ]}}])
        );
        assert_eq!(made["metadata"]["ownerReferences"][0]["kind"], "Rollout");
        let owner = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "web").unwrap();
        assert_eq!(made["metadata"]["ownerReferences"][0]["uid"], owner["metadata"]["uid"]);
        let patch =
            &server.writes().into_iter().find(|w| w.method == "PATCH" && w.path.ends_with("/web-canary")).unwrap();
        assert_eq!(patch.content_type.as_deref(), Some("application/merge-patch+json"));
        assert!(patch.body["metadata"]["resourceVersion"].is_string(), "conditional: {}", patch.body);

        Test::new()
            .kubeconfig(&server)
            .args(["status", "web"])
            .run()
            .success()
            .stdout_has("Ingress shop/web-canary  at step 1");

        pause_at(&server, 2);
        server.clear_log();
        approve(&server).success().stdout_has("Ingress shop/web-canary updated (backup ");
        assert_eq!(
            ingress_writes(&server),
            [
                "PATCH /apis/networking.k8s.io/v1/namespaces/shop/ingresses/web-canary",
                "PATCH /apis/rollouts.kruise.io/v1beta1/namespaces/shop/rollouts/web/status",
            ]
        );
        assert_eq!(
            annotations(&canary(&server).unwrap()),
            json!({"kubernetes.io/ingress.class": "nginx", format!("{NGINX}/canary"): "true", format!("{NGINX}/canary-weight"): "30"})
        );
        Test::new()
            .kubeconfig(&server)
            .args(["status", "web"])
            .run()
            .success()
            .stdout_has("Ingress shop/web-canary  at step 2");

        server.clear_log();
        Test::new()
            .kubeconfig(&server)
            .args(["restore", "web", "--yes"])
            .run()
            .success()
            // The canary Ingress has no stored original: the controller makes it again.
            .stderr_has("Rollout web is in a release (step 2/3 StepReady): at the next step it routes, the controller makes its canary Ingress web-canary again\n")
            .stdout_has("Ingress shop/web-canary: delete it, as the controller's finalise does")
            .stdout_has("Ingress shop/web-canary deleted (backup ");
        assert_eq!(ingress_writes(&server), ["DELETE /apis/networking.k8s.io/v1/namespaces/shop/ingresses/web-canary"]);
        let delete =
            server.writes().into_iter().find(|w| w.method == "DELETE" && w.path.ends_with("/web-canary")).unwrap();
        assert!(delete.body["preconditions"]["uid"].is_string(), "{}", delete.body);
        assert!(canary(&server).is_none());
        assert_eq!(ingress(&server, "web").unwrap(), stable, "the stable Ingress is never written");
        Test::new()
            .kubeconfig(&server)
            .args(["status", "web"])
            .run()
            .success()
            .stdout_has("Ingress shop/web-canary  absent");
    }

    #[test]
    fn approve_a_header_step_then_a_weight_step_then_restore_aliyun_alb() {
        let server = serving("aliyun-alb", 1, "StepPaused").start();
        approve(&server).success();
        assert_eq!(
            annotations(&canary(&server).unwrap()),
            json!({"kubernetes.io/ingress.class": "aliyun-alb", format!("{ALB}/canary"): "true", format!("{ALB}/order"): "1",
                   format!("{ALB}/canary-by-header"): "x-canary", format!("{ALB}/canary-by-header-value"): "true"})
        );
        pause_at(&server, 2);
        approve(&server).success();
        assert_eq!(
            annotations(&canary(&server).unwrap()),
            json!({"kubernetes.io/ingress.class": "aliyun-alb", format!("{ALB}/canary"): "true", format!("{ALB}/order"): "1",
                   format!("{ALB}/canary-weight"): "30"})
        );
        Test::new().kubeconfig(&server).args(["restore", "web", "--yes"]).run().success();
        assert!(canary(&server).is_none());
        assert!(ingress(&server, "web").is_some());
    }

    /// Another canary Ingress of the same ALB, with the order the built-in script writes.
    fn cart_canary() -> Value {
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
               "metadata": {"name": "cart-canary", "namespace": NAMESPACE,
                            "annotations": {"kubernetes.io/ingress.class": "aliyun-alb", format!("{ALB}/canary"): "true", format!("{ALB}/order"): "1"}},
               "spec": {"rules": [{"http": {"paths": [{"path": "/cart", "pathType": "Prefix",
                        "backend": {"service": {"name": "cart-canary", "port": {"number": 80}}}}]}}]}})
    }

    #[test]
    fn an_alb_order_another_canary_ingress_has_is_named_and_a_script_of_ones_own_clears_it() {
        let server = serving("aliyun-alb", 1, "StepPaused").object(cart_canary()).start();
        let test = Test::new().kubeconfig(&server);
        test.run_args(["plan", "web"]).success().stdout_has(
            "warning: the canary Ingress gets alb.ingress.kubernetes.io/order: \"1\", which canary Ingress shop/cart-canary of the same class has too; ALB needs each forwarding rule's order to be unique among the Ingresses of its class (openkruise/rollouts#128): one script writes the order of every canary Ingress of the class, so another constant clashes again at the next release: give the class a script that takes each canary's order from an annotation of its stable Ingress (docs/script-authors-guide.md §10 has one), under the key lua.traffic.routing.ingress.aliyun-alb of the ConfigMap kruise-rollout-configuration",
        );
        let builtin =
            std::fs::read_to_string(crate::support::repo("lua_configuration/trafficrouting_ingress/aliyun-alb.lua"))
                .unwrap();
        let order2 = builtin.replace(
            r#"annotations["alb.ingress.kubernetes.io/order"] = "1""#,
            r#"annotations["alb.ingress.kubernetes.io/order"] = "2""#,
        );
        assert_ne!(order2, builtin);
        let out = test
            .file("alb.lua", &order2)
            .run_args(["plan", "web", "--script", "ingress.aliyun-alb=alb.lua"])
            .success()
            .stdout_has(&format!("+    {ALB}/order: \"2\""));
        assert!(!out.stdout.contains("openkruise/rollouts#128"), "{}", out.stdout);
        // Without permission to list Ingresses, the check is left out, saying so.
        let server = serving("aliyun-alb", 1, "StepPaused")
            .object(cart_canary())
            .deny(Rule::new(["list"]).resources(["ingresses"]))
            .start();
        Test::new()
            .kubeconfig(&server)
            .args(["plan", "web"])
            .run()
            .success()
            .stderr_has("warning: cannot list the Ingresses of namespace shop (")
            .stderr_has(
                "the aliyun-alb order clash with the other Ingresses of the class (openkruise/rollouts#128) is not checked; to allow that read, grant list ingresses (API group networking.k8s.io) in namespace shop\n",
            );
    }

    #[test]
    fn an_ordinary_ingress_of_the_class_with_the_alb_order_is_named_too() {
        let mut legacy = cart_canary();
        legacy["metadata"]["name"] = json!("legacy");
        legacy["metadata"]["annotations"].as_object_mut().unwrap().remove(&format!("{ALB}/canary"));
        let server = serving("aliyun-alb", 1, "StepPaused").object(legacy).start();
        Test::new().kubeconfig(&server).args(["plan", "web"]).run().success().stdout_has(
            "warning: the canary Ingress gets alb.ingress.kubernetes.io/order: \"1\", which Ingress shop/legacy of the same class has too; ALB needs each forwarding rule's order to be unique among the Ingresses of its class (openkruise/rollouts#128): give Ingress shop/legacy another order, or give the class a script",
        );
    }

    #[test]
    fn plan_and_approve_of_two_rollouts_warn_of_the_alb_order_both_canaries_get() {
        // Rollout cart: web's twin, through its own Ingress cart, neither canary made yet.
        let renamed =
            |object: Value| serde_json::from_str::<Value>(&object.to_string().replace("\"web", "\"cart")).unwrap();
        let server = serving("aliyun-alb", 1, "StepPaused")
            .object(renamed(rollout("aliyun-alb", 1, "StepPaused")))
            .object(renamed(stable_ingress("aliyun-alb")))
            .object(service("cart"))
            .object(service("cart-canary"))
            .start();
        let test = Test::new().kubeconfig(&server);
        let clash = |other: &str| {
            format!(
                "warning: the canary Ingress gets alb.ingress.kubernetes.io/order: \"1\", which canary Ingress shop/{other}-canary of the same class gets too at step 1/3 of Rollout shop/{other} (not made yet: they clash while both releases run)"
            )
        };
        test.run_args(["plan", "web", "cart"]).success().stdout_has(&clash("cart")).stdout_has(&clash("web"));
        test.run_args(["approve", "web", "cart", "--yes"])
            .success()
            .stdout_has(&clash("cart"))
            .stdout_has(&clash("web"));
        // Made: each is checked against the other as read.
        let out = test.run_args(["plan", "web"]).success();
        out.stdout_has("which canary Ingress shop/cart-canary of the same class has too;");
    }

    #[test]
    fn status_notes_a_live_canary_ingress_whose_alb_order_another_has() {
        let server = serving("aliyun-alb", 1, "StepPaused").object(cart_canary()).start();
        approve(&server).success();
        let test = Test::new().kubeconfig(&server);
        test.run_args(["status", "web"]).success().stdout_has("Ingress shop/web-canary  at step 1").stdout_has(
            "      note: the canary Ingress has alb.ingress.kubernetes.io/order: \"1\", which canary Ingress shop/cart-canary of the same class has too; ALB needs each forwarding rule's order to be unique",
        );
        let status = test.run_args(["status", "web", "-o", "json"]).success().json();
        let notes = &status[0]["objects"][0]["notes"];
        assert!(notes[0].as_str().unwrap().contains("shop/cart-canary"), "{notes}");
    }

    #[test]
    fn a_canary_ingress_left_at_a_step_after_the_release_is_noted_by_status_and_plan() {
        let server = serving("nginx", 1, "StepPaused").start();
        approve(&server).success();
        pause_at(&server, 2);
        approve(&server).success();
        // The release is over, but the canary was not deleted (a controller or restore that did
        // not finish).
        let mut over = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "web").unwrap();
        over["status"] = json!({"phase": "Healthy", "canaryStatus": null});
        server.put_object(over);
        let note = "the release is over (phase Healthy), but Ingress shop/web-canary still routes as step 2: the controller leaves it so until the next release; `kubectl rollout-lua restore web -n shop` puts the routing before the release back (it deletes the canary Ingress)";
        let test = Test::new().kubeconfig(&server);
        test.run_args(["status", "web"])
            .success()
            .stdout_has("  State:    -, not releasing\n")
            .stdout_has("Ingress shop/web-canary  at step 2")
            .stdout_has(&format!("      note: {note}\n"));
        let status = test.run_args(["status", "web", "-o", "json"]).success().json();
        assert_eq!(status[0]["objects"][0]["notes"], json!([note]), "{status}");
        // A warning, not a failure: following it ends at once, with exit 0.
        test.run_args(["status", "web", "-w", "--timeout", "5s"])
            .success()
            .stdout_has("; Ingress web-canary at step 2 (left routed, not restored)\n");
        test.run_args(["plan", "web"])
            .success()
            .stdout_has(&format!("  not in a release: showing what step 1 would do\n  {note}\n"));
        // Restored, it is absent, as after any release, and nothing more is said.
        test.run_args(["restore", "web", "--yes"]).success().stdout_has("Ingress shop/web-canary deleted (backup ");
        let out = test.run_args(["status", "web"]).success().stdout_has("Ingress shop/web-canary  absent");
        assert!(!out.stdout.contains("note:"), "{}", out.stdout);
        let out = test.run_args(["plan", "web"]).success();
        assert!(!out.stdout.contains("still routes"), "{}", out.stdout);
    }

    #[test]
    fn restore_ref_deletes_a_canary_ingress_the_controller_made_and_nothing_else() {
        let server = serving("nginx", 1, "StepPaused").start();
        approve(&server).success();
        let test = Test::new().kubeconfig(&server);
        // The stable Ingress: nothing writes it, so there is nothing to restore.
        test.run_args(["restore", "--ref", "Ingress.networking.k8s.io/web", "--yes"]).success().stderr_has(
            "Ingress shop/web: not a canary Ingress; approve and the controller write no other Ingress, nothing to restore",
        );
        server.clear_log();
        test.run_args(["restore", "--ref", "Ingress.networking.k8s.io/web-canary", "--yes"])
            .success()
            // The owner, which makes it the controller's to delete, is in the diff.
            .stdout_has("-  ownerReferences:\n-  - apiVersion: rollouts.kruise.io/v1beta1\n")
            .stdout_has("Ingress shop/web-canary deleted (backup ");
        assert_eq!(ingress_writes(&server), ["DELETE /apis/networking.k8s.io/v1/namespaces/shop/ingresses/web-canary"]);
        assert!(canary(&server).is_none() && ingress(&server, "web").is_some());
    }

    #[test]
    fn a_canary_deleted_by_the_controller_before_restores_delete_is_restored_all_the_same() {
        // A review's finding: the controller's finalise deleted the canary Ingress between the
        // restore's read and its delete, which met a 404 and failed the run (rolling back the
        // objects restored before it).
        let server = serving("nginx", 1, "StepPaused").start();
        approve(&server).success();
        let delete = Requests::Matching(Rule::new(["delete"]).resources(["ingresses"]));
        let held = server.pause(delete, 1, Stage::BeforeStore);
        let test = Test::new().kubeconfig(&server);
        let child = test.spawn(&["restore", "web", "--yes"]);
        assert!(held.wait_until_held(Duration::from_secs(30)), "the delete is sent");
        server.delete_object("networking.k8s.io", "ingresses", "shop", "web-canary").expect("the canary");
        held.release();
        child.finish().success().stdout_has(
            "Ingress shop/web-canary was deleted meanwhile (by someone else, or the controller): nothing to delete\n",
        );
        assert!(canary(&server).is_none());
        assert!(server.objects("coordination.k8s.io", "leases").is_empty(), "released");
        // Its backup, of an object this run then wrote nothing to, is removed.
        let folder = test.path("home/.local/state/kubectl-rollout-lua/backups/fake/shop/Ingress/web-canary");
        assert!(std::fs::read_dir(&folder).expect("the backup's folder").next().is_none(), "{folder:?}");
    }

    #[test]
    fn a_later_steps_delete_that_finds_the_canary_gone_says_so_and_leaves_no_backup() {
        // A review's finding: at a later step of a follow run the line was left out and the
        // step's backup kept, the object having been written (made) at an earlier step.
        let server = serving("nginx", 2, "StepPaused").start();
        // Step 3 has no traffic (the canary Ingress goes) and is not the last.
        add_a_step_without_traffic(&server, 3);
        let test = Test::new().kubeconfig(&server);
        let child = test.spawn(&["approve", "web", "--until-step", "3", "--yes", "--timeout", "60s"]);
        child.wait_for_stdout("approved (step 2/4)");
        let held =
            server.pause(Requests::Matching(Rule::new(["delete"]).resources(["ingresses"])), 1, Stage::BeforeStore);
        pause_at(&server, 3);
        assert!(held.wait_until_held(Duration::from_secs(30)), "step 3's delete is sent");
        server.delete_object("networking.k8s.io", "ingresses", "shop", "web-canary").expect("the canary");
        held.release();
        child.finish().success().stdout_has(
            "Ingress shop/web-canary was deleted meanwhile (by someone else, or the controller): nothing to delete\n",
        );
        let folder = test.path("home/.local/state/kubectl-rollout-lua/backups/fake/shop/Ingress/web-canary");
        assert!(std::fs::read_dir(&folder).expect("the backup's folder").next().is_none(), "{folder:?}");
    }

    #[test]
    fn a_later_step_does_not_make_again_a_canary_someone_deleted_since_the_confirmation() {
        // An Ingress and Gateway trial: the canary Ingress this run made at step 1, deleted by
        // an operator before step 2 (the quickest way to cut the canary's traffic), was made
        // again by step 2 without a word, exit 0.
        let server = serving("nginx", 1, "StepPaused").start();
        let test = Test::new().kubeconfig(&server);
        let child = test.spawn(&["approve", "web", "--until-step", "2", "--yes", "--timeout", "60s"]);
        child.wait_for_stdout("approved (step 1/3)");
        server.delete_object("networking.k8s.io", "ingresses", NAMESPACE, "web-canary").expect("made at step 1");
        server.clear_log();
        pause_at(&server, 2);
        child.finish().status(3).stderr_has(
            "Ingress shop/web-canary deleted by someone else since this run's confirmation (this run wrote it at an earlier step): the diff above for step 2/3 shows it made again; not overwriting their edit, and step 2/3 is not approved. Review it (`kubectl rollout-lua plan web -n shop`) and approve again",
        )
        // The report says what step 1 left, and that it is not where the object stands now.
        .stderr_has("  Ingress shop/web-canary: written and kept: Rollout web is approved with it (step 1/3); deleted by someone else since (it did not exist before this run)\n");
        assert!(canary(&server).is_none(), "their deletion stands");
        assert_eq!(ingress_writes(&server), Vec::<String>::new());
        assert_eq!(state(&server), "StepPaused", "step 2 not approved");
        // A run of its own shows the creation and makes it, as confirmed.
        test.run_args(["approve", "web", "--yes"]).success().stdout_has("Ingress shop/web-canary created");
        assert!(canary(&server).is_some());
    }

    #[test]
    fn a_later_step_makes_again_the_canary_an_earlier_step_of_the_run_deleted() {
        // Step 2 has no traffic (the canary Ingress goes), step 3 has: made again, as the
        // controller would, by a run that deleted it itself.
        let server = serving("nginx", 1, "StepPaused").start();
        add_a_step_without_traffic(&server, 2);
        let test = Test::new().kubeconfig(&server);
        let child = test.spawn(&["approve", "web", "--until-step", "3", "--yes", "--timeout", "60s"]);
        child.wait_for_stdout("approved (step 1/4)");
        pause_at(&server, 2);
        child.wait_for_stdout("approved (step 2/4)");
        assert!(canary(&server).is_none(), "step 2 deleted it");
        pause_at(&server, 3);
        child.finish().success().stdout_has("approved (step 3/4)");
        assert_eq!(annotations(&canary(&server).expect("made again"))[format!("{NGINX}/canary-weight")], "30");
    }

    #[test]
    fn a_canary_deleted_by_a_step_whose_approval_may_still_land_is_said_deleted_and_kept() {
        // An Ingress and Gateway trial: the report said `written and kept …, so its routing
        // stays` of the canary Ingress that step 3 (no traffic) had deleted.
        let server = serving("nginx", 2, "StepPaused").start();
        let test = Test::new().kubeconfig(&server);
        test.run_args(["approve", "web", "--yes"]).success();
        pause_at(&server, 3);
        // Not stored, and read back unapplied: it may still land, so the routing stays.
        server.storm(Requests::Matching(Rule::new(["patch"]).resources(["rollouts/status"])), Some(1), 503, None);
        test.run_args(["approve", "web", "--yes"])
            .status(1)
            .stderr_has("  Ingress shop/web-canary: deleted and kept: ")
            .stderr_has("  Rollout shop/web: ");
        assert!(canary(&server).is_none());
    }

    #[test]
    fn a_canary_deleted_by_someone_else_under_the_runs_patch_is_a_refusal_as_an_edit_is() {
        // An Ingress and Gateway trial: an edit there is a refusal (exit 3) with their diff, a
        // deletion was a failure (exit 1) with the API server's 404.
        let server = serving("nginx", 1, "StepPaused").start();
        let test = Test::new().kubeconfig(&server);
        test.run_args(["approve", "web", "--yes"]).success();
        pause_at(&server, 2);
        // The claim, then the canary's patch: deleted right before it.
        server.before_write(2, |store| {
            store.delete("networking.k8s.io", "ingresses", NAMESPACE, "web-canary").expect("made at step 1");
        });
        test.run_args(["approve", "web", "--yes"])
            .status(3)
            .stderr_has("error: Ingress shop/web-canary was deleted by someone else while this run wrote it\n");
        assert!(canary(&server).is_none(), "their deletion stands");
        assert_eq!(state(&server), "StepPaused");
        // Deleted and made again as it was (a GitOps tool's replace): their diff is empty, and
        // the message says what happened.
        let server = serving("nginx", 1, "StepPaused").start();
        test.kubeconfig(&server).run_args(["approve", "web", "--yes"]).success();
        pause_at(&server, 2);
        server.before_write(2, |store| {
            let mut old = store.delete("networking.k8s.io", "ingresses", NAMESPACE, "web-canary").expect("made");
            for field in ["uid", "resourceVersion", "creationTimestamp"] {
                old["metadata"].as_object_mut().unwrap().remove(field);
            }
            store.put(old);
        });
        Test::new().kubeconfig(&server).run_args(["approve", "web", "--yes"]).status(3).stderr_has(
            "error: Ingress shop/web-canary was deleted, then made again by someone else (another uid) while this run wrote it; not overwriting their edit:\n",
        );
        assert_eq!(state(&server), "StepPaused");
    }

    /// `approve web --until-step 2` of a canary Rollout at step 1, with `theirs` done to the
    /// canary Ingress (made at step 1) while step 2's patch of it is held: the run's output.
    fn their_edit_under_step_2s_patch(server: &FakeHandle, theirs: impl FnOnce(&FakeHandle)) -> Output {
        let test = Test::new().kubeconfig(server);
        let child = test.spawn(&["approve", "web", "--until-step", "2", "--yes", "--timeout", "60s"]);
        child.wait_for_stdout("approved (step 1/3)");
        let held =
            server.pause(Requests::Matching(Rule::new(["patch"]).resources(["ingresses"])), 1, Stage::BeforeStore);
        pause_at(server, 2);
        assert!(held.wait_until_held(Duration::from_secs(30)), "step 2's patch is sent");
        theirs(server);
        held.release();
        let out = child.finish().status(3);
        assert_eq!(state(server), "StepPaused", "step 2 not approved");
        out
    }

    #[test]
    fn a_canary_kept_at_an_earlier_step_and_deleted_under_a_later_steps_patch_is_said_deleted_since() {
        // The report said `written and kept` of it, though it was gone: the line says what the
        // run left, and that someone deleted it since.
        let server = serving("nginx", 1, "StepPaused").start();
        their_edit_under_step_2s_patch(&server, |server| {
            server.delete_object("networking.k8s.io", "ingresses", NAMESPACE, "web-canary").expect("made at step 1");
        })
        .stderr_has("error: Ingress shop/web-canary was deleted by someone else while this run wrote it\n")
        .stderr_has("  Ingress shop/web-canary: written and kept: Rollout web is approved with it (step 1/3); deleted by someone else since (it did not exist before this run)\n");
        assert!(canary(&server).is_none(), "their deletion stands");
    }

    #[test]
    fn a_canary_kept_at_an_earlier_step_and_changed_under_a_later_steps_patch_is_said_changed_since() {
        // As the deletion above, for an edit the later step's write meets as a conflict: the
        // refusal shows their edit, and the kept line says it was changed since.
        let server = serving("nginx", 1, "StepPaused").start();
        let theirs = json!({"metadata": {"annotations": {"nginx.ingress.kubernetes.io/canary-weight": "77"}}});
        their_edit_under_step_2s_patch(&server, |server| {
            server.patch_object("networking.k8s.io", "ingresses", NAMESPACE, "web-canary", &theirs);
        })
        .stderr_has("error: Ingress shop/web-canary was changed by someone else while this run wrote it; not overwriting their edit:\n")
        .stderr_has("  Ingress shop/web-canary: written and kept: Rollout web is approved with it (step 1/3); changed by someone else since (it did not exist before this run)\n");
        let weight = &annotations(&canary(&server).expect("kept"))["nginx.ingress.kubernetes.io/canary-weight"];
        assert_eq!(weight, "77", "their edit stands");
    }

    #[test]
    fn a_canary_backup_whose_rollout_was_made_again_is_not_made_again_without_force() {
        // A review's finding: made again from its backup, the canary Ingress's owner reference
        // named a Rollout uid no longer there, and the garbage collector deleted it at once.
        let server = serving("nginx", 1, "StepPaused").start();
        approve(&server).success();
        let test = Test::new().kubeconfig(&server);
        let restored = test.run_args(["restore", "web", "--yes"]).success();
        let line = restored.stdout.lines().find(|l| l.starts_with("Ingress shop/web-canary deleted (backup ")).unwrap();
        let backup = line.trim_start_matches("Ingress shop/web-canary deleted (backup ").trim_end_matches(')');
        // A GitOps tool's replace: the Rollout deleted and made again, under another uid.
        let mut rollout = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "web").unwrap();
        server.delete_object("rollouts.kruise.io", "rollouts", NAMESPACE, "web").unwrap();
        rollout["metadata"].as_object_mut().unwrap().remove("uid");
        server.put_object(rollout);
        server.clear_log();
        test.run_args(["restore", "--from-backup", backup, "--yes"]).status(3).stderr_has(&format!(
            "nothing was written: {backup} names as its owner Rollout web (uid 00000000-0000-4000-8000-000000000001), which was deleted and made again since (its uid is "
        ));
        assert!(ingress_writes(&server).iter().all(|w| !w.contains("ingresses")), "{:?}", ingress_writes(&server));
        test.run_args(["restore", "--from-backup", backup, "--yes", "--force"]).success().stderr_has(
            "the garbage collector would delete the object made from it at once; put back all the same (--force)",
        );
        // Its Rollout gone for good: the same.
        server.delete_object("rollouts.kruise.io", "rollouts", NAMESPACE, "web").unwrap();
        server.delete_object("networking.k8s.io", "ingresses", NAMESPACE, "web-canary").unwrap();
        test.run_args(["restore", "--from-backup", backup, "--yes"]).status(3).stderr_has("which does not exist now");
    }

    #[test]
    fn a_restore_whose_steps_do_not_plan_is_refused_without_force_and_says_the_controller_is_stuck_too() {
        // Approved with a script for class traefik that the cluster does not have (no ConfigMap
        // key, none built in): the canary Ingress exists, and now no step plans.
        let server = serving("traefik", 1, "StepPaused").start();
        let test = Test::new().kubeconfig(&server).file("traefik.lua", "return {['traefik.example/canary'] = 'true'}");
        test.run_args(["approve", "web", "--yes", "--script", "ingress.traefik=traefik.lua"]).success();
        let made = canary(&server).unwrap();
        server.clear_log();
        let note = "Rollout web: cannot check for edits made during the release, its steps do not plan: Rollout shop/web routes through Ingress web: no Lua script for Ingress class \"traefik\"";
        let stuck = "; the controller's own restore (its finalise) is stuck too until a script for Ingress class \"traefik\" is added, as the controller needs it for every operation on the Ingress\n";
        let refusal = "error: nothing was written: Rollout web's steps do not plan (said above), so the objects could not be checked for edits made during the release, which a restore would discard unseen: fix what stops the steps planning, or pass --force to restore anyway\n";
        for args in
            [vec!["restore", "web", "--yes"], vec!["restore", "--ref", "Ingress.networking.k8s.io/web-canary", "--yes"]]
        {
            test.run_args(&args).status(3).stderr_has(note).stderr_has(stuck).stderr_has(refusal);
            assert_eq!(ingress_writes(&server), Vec::<String>::new(), "{args:?}");
            assert_eq!(canary(&server).unwrap(), made, "{args:?}");
        }
        // A dry run writes nothing: it says so and shows the restore.
        test.run_args(["restore", "web", "--dry-run=client"])
            .success()
            .stderr_has(note)
            .stdout_has("Ingress shop/web-canary: delete it, as the controller's finalise does")
            .stdout_has("dry run (client): nothing was written");
        test.run_args(["restore", "web", "--yes", "--force"])
            .success()
            .stderr_has(note)
            .stdout_has("Ingress shop/web-canary deleted (backup ");
        assert!(canary(&server).is_none());
    }

    /// Bob's Ingress, named as Ingress web's canary: no owner, his own host and Service.
    fn bobs_ingress() -> Value {
        json!({
            "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "web-canary", "namespace": NAMESPACE, "annotations": {"owner": "bob"}},
            "spec": {"ingressClassName": "nginx", "rules": [{"host": "bob.example.com", "http": {"paths": [
                {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "bob", "port": {"number": 80}}}}
            ]}}]}
        })
    }

    #[test]
    fn someone_elses_canary_ingress_is_warned_refused_without_force_and_never_deleted() {
        let server = serving("nginx", 1, "StepPaused").object(bobs_ingress()).start();
        let bobs = canary(&server).unwrap();
        let test = Test::new().kubeconfig(&server);
        let why = "Ingress shop/web-canary is not Rollout shop/web's canary Ingress (it has no controller owner; it routes to Service bob, not to the canary Service web-canary)";
        test.run_args(["plan", "web"]).success().stdout_has(&format!(
            "warning: {why}: the controller patches its annotations as if it were, and deletes it when the release ends"
        ));
        server.clear_log();
        test.run_args(["approve", "web", "--yes"])
            .status(3)
            .stderr_has("error: nothing was written: the step patches the annotations of an Ingress named as a canary Ingress that its Rollout did not make")
            .stderr_has(&format!("  {why}\nFind out whose it is"));
        assert_eq!(ingress_writes(&server), Vec::<String>::new());
        assert_eq!(canary(&server).unwrap(), bobs);
        test.run_args(["status", "web"]).success().stdout_has(&format!("      note: {why}\n"));

        // --force writes it, as the controller would.
        test.run_args(["approve", "web", "--yes", "--force"])
            .success()
            .stdout_has("Ingress shop/web-canary updated (backup ");
        assert_eq!(annotations(&canary(&server).unwrap())[format!("{NGINX}/canary-by-header")], "x-canary");

        // restore leaves it, saying how to put it back, and refuses without --force.
        server.clear_log();
        let refused = test.run_args(["restore", "web", "--yes"]).status(3).stderr_has(&format!(
            "error: nothing was written: restore would leave these objects as they are, without putting back what was written to them:\n  {why}: restore does not delete it, as the controller's finalise would; approve or the controller may have changed its annotations: `restore --from-backup "
        ));
        assert!(!refused.stderr.contains("original-spec-configuration"), "{}", refused.stderr);
        let backup =
            refused.stderr.split("`restore --from-backup ").nth(1).unwrap().split('`').next().unwrap().to_string();
        test.run_args(["restore", "--ref", "Ingress.networking.k8s.io/web-canary", "--yes"])
            .status(3)
            .stderr_has("Ingress shop/web-canary is not a canary Ingress that a Rollout or TrafficRouting made (none is its controller owner): restore does not delete it");
        assert_eq!(ingress_writes(&server), Vec::<String>::new());
        test.run_args(["restore", "web", "--yes", "--force"])
            .success()
            .stderr_has(&format!("warning: {why}: restore does not delete it"));
        assert_eq!(ingress_writes(&server), Vec::<String>::new(), "nothing else to restore, and it is left");
        // The backup named is Bob's Ingress before approve wrote it; its Service bob is not the
        // canary Service, whose absence only a canary Ingress's backup is warned of.
        let put_back = test.run_args(["restore", "--from-backup", &backup, "--yes"]).success();
        assert!(!put_back.stderr.contains("warning:"), "{}", put_back.stderr);
        assert_eq!(annotations(&canary(&server).unwrap()), annotations(&bobs));
        // Bob's Ingress deleted and made again (another uid): the backups here are of the one
        // before, which `restore --from-backup` refuses; none is offered (one was, regression).
        server.delete_object("networking.k8s.io", "ingresses", NAMESPACE, "web-canary");
        server.put_object(bobs_ingress());
        assert_ne!(canary(&server).unwrap()["metadata"]["uid"], bobs["metadata"]["uid"]);
        test.run_args(["restore", "web", "--yes"]).status(3).stderr_has(&format!(
            "{why}: restore does not delete it, as the controller's finalise would; approve or the controller may have changed its annotations: there is no backup of it here"
        ));
    }

    #[test]
    fn restoring_the_canarys_owner_with_another_rollout_of_the_same_ingress_deletes_it() {
        let server = serving("nginx", 1, "StepPaused").start();
        approve(&server).success();
        // Rollout another routes through Ingress web too; it comes first, and finds the canary
        // someone else's (Rollout web's), which is restored with it.
        let mut another = rollout("nginx", 1, "StepPaused");
        another["metadata"]["name"] = json!("another");
        another["status"]["phase"] = json!("Healthy");
        server.put_object(another);
        Test::new()
            .kubeconfig(&server)
            .args(["restore", "another", "web", "--yes"])
            .run()
            .success()
            .stdout_has("Ingress shop/web-canary deleted (backup ");
        assert!(canary(&server).is_none());
    }

    #[test]
    fn a_canary_ingress_whose_spec_was_changed_is_noted_by_status_and_restore() {
        let server = serving("nginx", 1, "StepPaused").start();
        approve(&server).success();
        let test = Test::new().kubeconfig(&server);
        let out = test.run_args(["status", "web"]).success();
        assert!(!out.stdout.contains("note:"), "{}", out.stdout);
        server.put_object({
            let mut edited = canary(&server).unwrap();
            edited["spec"]["rules"].as_array_mut().unwrap().push(json!({"host": "evil.example.com", "http": {"paths": [
                {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web-canary", "port": {"number": 80}}}}
            ]}}));
            edited
        });
        let note = "the spec of Ingress shop/web-canary differs from the one the controller makes from Ingress shop/web now: edited by hand, or the stable Ingress changed since the canary was made (the controller never updates it)";
        // Only annotations place it: still at step 1, with the note.
        test.run_args(["status", "web"])
            .success()
            .stdout_has("Ingress shop/web-canary  at step 1")
            .stdout_has(&format!("      note: {note}\n"));
        let status = test.run_args(["status", "web", "-o", "json"]).success().json();
        assert_eq!(status[0]["objects"][0]["notes"], json!([note]), "{status}");
        test.run_args(["plan", "web"]).success().stdout_has(&format!("warning: {note}"));
        // restore deletes it as the controller does, with the note, after a backup.
        test.run_args(["restore", "web", "--yes"])
            .success()
            .stdout_has(&format!("  warning: {note}\n"))
            .stdout_has("Ingress shop/web-canary deleted (backup ");
        assert!(canary(&server).is_none());
    }

    #[test]
    fn dry_runs_judge_the_canary_ingress_as_made_and_store_nothing() {
        let server = serving("nginx", 1, "StepPaused").start();
        let test = Test::new().kubeconfig(&server);
        test.run_args(["approve", "web", "--yes", "--dry-run=server"])
            .success()
            .stdout_has("server dry-run accepted Ingress shop/web-canary\n")
            .stdout_has("dry run (server): nothing was stored");
        test.run_args(["plan", "web", "--dry-run=server"])
            .success()
            .stdout_has("server dry-run accepted Ingress shop/web-canary (step 1/3)");
        // Every request went with dryRun, each a creation: approve's create, then its patch judged
        // as the creation of the patched object (a merge patch of an object nothing stored would
        // fail), and plan's creation of the object as planned.
        let sent: Vec<String> = server
            .writes()
            .iter()
            .filter(|w| w.path.contains("ingresses"))
            .map(|w| {
                assert!(w.is_dry_run(), "{} {}", w.method, w.path);
                w.method.clone()
            })
            .collect();
        assert_eq!(sent, ["POST", "POST", "POST"]);
        assert!(canary(&server).is_none());
        assert_eq!(state(&server), "StepPaused");
    }

    #[test]
    fn an_ingress_ref_adds_no_round_trip() {
        // Latency makes concurrent requests overlap, so sequential round trips can be counted.
        let server = serving("aliyun-alb", 1, "StepPaused").latency(Duration::from_millis(200)).start();
        let test = Test::new().kubeconfig(&server);
        test.run_args(["plan", "web"]).success();
        server.clear_log();
        test.run_args(["plan", "web"]).success();
        let paths: Vec<String> = server.requests().iter().map(|r| format!("{} {}", r.method, r.path)).collect();
        assert_eq!(server.round_trips(), 2, "the Rollout, then everything its routing reads: {paths:?}");
        for read in [
            "GET /apis/networking.k8s.io/v1/namespaces/shop/ingresses/web",
            "GET /apis/networking.k8s.io/v1/namespaces/shop/ingresses/web-canary",
            "GET /api/v1/namespaces/shop/services/web-canary",
            "GET /apis/networking.k8s.io/v1/namespaces/shop/ingresses",
            "GET /api/v1/namespaces/kruise-rollout/configmaps/kruise-rollout-configuration",
        ] {
            assert!(paths.iter().any(|p| p == read), "{read} in {paths:?}");
        }
    }

    #[test]
    fn a_script_configmap_that_may_not_be_read_says_how_to_do_without_it() {
        let server = serving("nginx", 1, "StepPaused").deny(Rule::new(["get"]).resources(["configmaps"])).start();
        let test = Test::new().kubeconfig(&server);
        test.run_args(["plan", "web"])
            .status(1)
            .stderr_has("reading configmaps kruise-rollout/kruise-rollout-configuration")
            .stderr_has("(403 Forbidden)\n  Ingress class nginx needs it: the controller takes an Ingress class's script from its key lua.traffic.routing.ingress.nginx first, before the built-in one; grant get on it (the user guide's rollout-lua-scripts Role), or give the script with --script ingress.nginx=FILE or --lua-dir\n");
        // Given the class's script, the ConfigMap is not read.
        let script = crate::support::repo("lua_configuration/trafficrouting_ingress/nginx.lua");
        let given = format!("ingress.nginx={}", script.display());
        test.run_args(["plan", "web", "--script", &given]).success().stdout_has("Ingress shop/web-canary");
    }

    #[test]
    fn a_missing_canary_service_is_a_warning() {
        let server = serving("nginx", 1, "StepPaused").start();
        let warning = "warning: Service web-canary does not exist: the canary Ingress routes to it";
        let out = Test::new().kubeconfig(&server).args(["plan", "web"]).run().success();
        assert!(!out.stdout.contains(warning), "{}", out.stdout);
        server.delete_object("", "services", NAMESPACE, "web-canary");
        Test::new().kubeconfig(&server).args(["plan", "web"]).run().success().stdout_has(warning);
        // The stable Service missing too: the controller waits for it, and makes no canary
        // Service.
        server.delete_object("", "services", NAMESPACE, "web");
        let out = Test::new().kubeconfig(&server).args(["plan", "web"]).run().success().stdout_has(
            "warning: Service web does not exist: it is the stable Service (trafficRoutings[0].service), which the controller waits for at every step with traffic or matches, writing nothing there (no canary Service, no routing) until it does",
        );
        assert!(!out.stdout.contains(warning), "{}", out.stdout);
        // Without permission to read Services, the check is left out, saying so.
        let server = serving("nginx", 1, "StepPaused").deny(Rule::new(["get"]).resources(["services"])).start();
        let out = Test::new()
            .kubeconfig(&server)
            .args(["plan", "web"])
            .run()
            .success()
            .stderr_has("warning: cannot read Service shop/web-canary (services \"web-canary\" is forbidden")
            .stderr_has("whether it exists is not checked; to allow that read, grant get services named web-canary (API group core) in namespace shop\n")
            .stderr_has("warning: cannot read Service shop/web (services \"web\" is forbidden");
        assert!(!out.stdout.contains(warning), "{}", out.stdout);
        // A Role that grants one by name: the other is checked all the same.
        let server =
            serving("nginx", 1, "StepPaused").deny(Rule::new(["get"]).resources(["services"]).names(["web"])).start();
        server.delete_object("", "services", NAMESPACE, "web-canary");
        let out = Test::new().kubeconfig(&server).args(["plan", "web"]).run().success().stdout_has(warning);
        assert!(out.stderr.contains("cannot read Service shop/web ("), "{}", out.stderr);
        assert!(!out.stderr.contains("cannot read Service shop/web-canary"), "{}", out.stderr);
        // Following reads again (here every 2s, as listing Rollouts is forbidden too) and says
        // it once.
        let server = serving("nginx", 1, "StepPaused")
            .deny(Rule::new(["get"]).resources(["services"]))
            .deny(Rule::new(["list"]).resources(["rollouts"]))
            .start();
        let out = Test::new().kubeconfig(&server).args(["status", "web", "-w", "--timeout", "5s"]).run().status(1);
        assert!(out.stderr.contains("reading the Rollouts every 2s"), "{}", out.stderr);
        assert_eq!(out.stderr.matches("cannot read Service shop/web-canary").count(), 1, "{}", out.stderr);
    }

    #[test]
    fn approve_asks_for_the_ingress_permissions_it_needs() {
        let server =
            serving("nginx", 1, "StepPaused").deny(Rule::new(["create", "delete"]).resources(["ingresses"])).start();
        approve(&server)
            .status(3)
            .stderr_has("  create ingresses (API group networking.k8s.io) in namespace shop\n  delete ingresses named web-canary (API group networking.k8s.io) in namespace shop")
            .stderr_has("resources: [\"ingresses\"]\n  verbs: [\"create\"]\n- apiGroups: [\"networking.k8s.io\"]\n  resources: [\"ingresses\"]\n  resourceNames: [\"web-canary\"]\n  verbs: [\"delete\"]");
        assert_eq!(ingress_writes(&server), Vec::<String>::new());
    }

    #[test]
    fn where_owner_references_are_enforced_the_rollouts_finalizers_are_asked_for() {
        // OpenShift runs the OwnerReferencesPermissionEnforcement admission plugin: the canary
        // Ingress's owner reference blocks the Rollout's deletion, and only who may update
        // rollouts/finalizers may set it. Whether a server runs the plugin cannot be asked, so
        // a missing permission is a note before writing, and the create's 403 stops the run.
        let server = serving("nginx", 1, "StepPaused")
            .enforce_owner_references()
            .deny(Rule::new(["update"]).resources(["rollouts/finalizers"]))
            .start();
        approve(&server)
            .status(1)
            .stderr_has("note: you may not\n  update rollouts/finalizers named web (API group rollouts.kruise.io) in namespace shop\nwhich creating Ingress shop/web-canary needs where the API server enforces owner-reference permissions")
            .stderr_has("resources: [\"rollouts/finalizers\"]\n  resourceNames: [\"web\"]\n  verbs: [\"update\"]")
            .stderr_has("error: creating Ingress shop/web-canary: ingresses.networking.k8s.io \"web-canary\" is forbidden: cannot set blockOwnerDeletion")
            .stderr_has("  nothing was written");
        assert_eq!(state(&server), "StepPaused");
        assert!(canary(&server).is_none());

        // With the permission: no note, and the canary Ingress made.
        let server = serving("nginx", 1, "StepPaused").enforce_owner_references().start();
        let out = approve(&server).success();
        assert!(!out.stderr.contains("finalizers"), "{}", out.stderr);
        assert!(approved_with_its_canary(&server));

        // A restore deletes the canary Ingress, and would make it again to undo that.
        let server =
            serving("nginx", 1, "StepPaused").deny(Rule::new(["update"]).resources(["rollouts/finalizers"])).start();
        approve(&server).success();
        Test::new()
            .kubeconfig(&server)
            .args(["restore", "web", "--yes"])
            .run()
            .success()
            .stderr_has("which making Ingress shop/web-canary again to undo its deletion needs where");
        assert!(canary(&server).is_none());
    }

    /// `approve web` at step 1 writes: the claim, the canary Ingress's creation, its patch, the
    /// approval, the claim's release.
    const APPROVE_WRITES: usize = 5;

    #[track_caller]
    fn approved_with_its_canary(server: &FakeHandle) -> bool {
        let approved = state(server) == "StepReady";
        match approved {
            true => assert_eq!(annotations(&canary(server).unwrap())[format!("{NGINX}/canary-by-header")], "x-canary"),
            false => {
                assert_eq!(state(server), "StepPaused");
                assert!(canary(server).is_none(), "not approved: no canary Ingress");
            }
        }
        approved
    }

    #[test]
    fn approve_resolves_a_lost_garbled_or_hung_reply_after_each_write() {
        let faults =
            [ReplyFault::Lost, ReplyFault::Garbled].into_iter().flat_map(|f| (1..=APPROVE_WRITES).map(move |k| (f, k)));
        // A reply that never comes ends with the request's timeout: once, after the create.
        for (fault, k) in faults.chain([(ReplyFault::NeverSent, 2)]) {
            let server = serving("nginx", 1, "StepPaused").start();
            server.reply_fault(Requests::Writes, k, Stage::AfterStore, fault);
            let out =
                Test::new().kubeconfig(&server).args(["approve", "web", "--yes", "--request-timeout", "2s"]).run();
            assert_eq!(out.status, 0, "{fault:?} after write {k}\n{}\n{}", out.stdout, out.stderr);
            assert!(approved_with_its_canary(&server), "{fault:?} after write {k}");
            if (2..=4).contains(&k) {
                let unheard = format!("{}; a fresh read shows the write", unheard(fault, "2s"));
                assert!(out.stdout.contains(&unheard), "{fault:?} after write {k}: {}", out.stdout);
            }
            assert_eq!(server.objects("coordination.k8s.io", "leases"), Vec::<Value>::new(), "the claim is released");
        }
    }

    #[test]
    fn a_failed_approval_rolls_the_canary_ingress_back_to_nothing() {
        // Also when the ingress controller writes the canary's status after each write, as on a
        // real cluster: a regression, its rollback gave up on the conflict that made.
        for status_written in [false, true] {
            let server = serving("nginx", 1, "StepPaused").start();
            if status_written {
                a_controller_writes_the_status_of(&server, "ingresses");
            }
            // The approval is refused (a policy webhook's 403): the created and patched canary
            // goes again. (An approval whose outcome is unknown keeps its routing: it may still
            // land.)
            let approval = Requests::Matching(Rule::new(["patch"]).resources(["rollouts/status"]));
            server.storm(approval, Some(1), 403, None);
            let out = approve(&server).status(1).stderr_has("Ingress shop/web-canary: rolled back");
            assert!(!out.stderr.contains("someone"), "{}", out.stderr);
            assert!(!approved_with_its_canary(&server), "status written: {status_written}");
            let undo =
                server.writes().into_iter().rfind(|w| w.method == "DELETE" && w.path.ends_with("/web-canary")).unwrap();
            assert!(
                undo.body["preconditions"]["uid"].is_string(),
                "the inverse of a create is a delete with a UID precondition"
            );
            assert!(server.objects("coordination.k8s.io", "leases").is_empty());
        }
    }

    #[test]
    fn a_canary_someone_deleted_before_the_rollback_is_rolled_back_to_nothing() {
        // The approval is held, then refused; meanwhile someone deletes the canary the run made.
        // Its undos meet a 404: it is as it was before this run (absent), not "could NOT roll
        // back", and there is no backup to put back.
        let server = serving("nginx", 1, "StepPaused").start();
        let approval = Requests::Matching(Rule::new(["patch"]).resources(["rollouts/status"]));
        let held = server.pause(approval.clone(), 1, Stage::BeforeStore);
        server.storm(approval, Some(1), 403, None);
        let test = Test::new().kubeconfig(&server);
        let child = test.spawn(&["approve", "web", "--yes"]);
        assert!(held.wait_until_held(Duration::from_secs(30)), "the approval is sent");
        server.delete_object("networking.k8s.io", "ingresses", "shop", "web-canary").expect("the canary was made");
        held.release();
        let out =
            child.finish().status(1).stderr_has("  Ingress shop/web-canary: rolled back\n  nothing else was written");
        assert!(!out.stderr.contains("NOT") && !out.stderr.contains("--from-backup"), "{}", out.stderr);
        assert!(canary(&server).is_none());
        assert!(server.objects("coordination.k8s.io", "leases").is_empty());
    }

    /// `approve web --yes --request-timeout 2s`, the read of the canary that would resolve a lost
    /// or late write of it hung (its first read is the one that finds it missing).
    fn approve_with_the_canary_not_read_back(server: &FakeHandle) -> Output {
        let canary_reads = Requests::Matching(Rule::new(["get"]).resources(["ingresses"]).names(["web-canary"]));
        server.reply_fault(canary_reads, 2, Stage::BeforeStore, ReplyFault::NeverSent);
        Test::new()
            .kubeconfig(server)
            .args(["approve", "web", "--yes", "--request-timeout", "2s"])
            .run()
            .status(1)
            .stderr_has("reading it again to tell whether it landed failed too")
    }

    #[test]
    fn the_rollback_deletes_a_canary_whose_patch_landed_unheard() {
        // The canary's patch (write 3) is stored, its reply lost, and not read back; the run
        // stops. The rollback's delete of the canary it made meets that patch, knows it for its
        // own, and deletes the canary all the same.
        let server = serving("nginx", 1, "StepPaused").start();
        server.reply_fault(Requests::Writes, 3, Stage::AfterStore, ReplyFault::Lost);
        let out = approve_with_the_canary_not_read_back(&server)
            .stderr_has("Ingress shop/web-canary while rolling back: a write of this run's that it did not hear of has landed; rolling it back too")
            .stderr_has("  Ingress shop/web-canary: rolled back\n  nothing else was written");
        assert!(!out.stderr.contains("someone"), "{}", out.stderr);
        assert!(!approved_with_its_canary(&server));
        assert!(server.objects("coordination.k8s.io", "leases").is_empty());
    }

    #[test]
    fn a_second_sigint_during_the_canarys_create_or_patch_says_the_run_made_it() {
        // The canary's create (write 2) or its patch (write 3) is held, and two SIGINTs stop the
        // run at once: there is no backup to look for, as the canary did not exist before.
        // Held at its patch, the canary was made: only the patch may or may not have landed.
        for (k, may_be) in [
            (2, "may or may not have been made (its request was out) (it did not exist before this run)"),
            (
                3,
                "made and NOT rolled back (the second signal stopped the run first); a later write of it may or may not be written (its request was out) (it did not exist before this run)",
            ),
        ] {
            let server = serving("nginx", 1, "StepPaused").start();
            let held = server.pause(Requests::Writes, k, Stage::BeforeStore);
            let test = Test::new().kubeconfig(&server);
            let child = test.spawn(&["approve", "web", "--yes"]);
            assert!(held.wait_until_held(Duration::from_secs(30)), "write {k} is sent");
            child.first_signal("INT");
            child.signal("INT");
            child.finish().status(130).stderr_has(&format!("  Ingress shop/web-canary: {may_be}\n"));
            held.release();
        }
    }

    #[test]
    fn a_canary_left_as_made_by_a_run_stopped_at_its_patch_is_at_the_original_and_restored() {
        // An online trial: the canary left at weight "0" by two SIGINTs at its patch was shown
        // drifted, and `restore` refused to delete it as someone's edit.
        let server = serving("nginx", 1, "StepPaused").start();
        let held = server.pause(Requests::Writes, 3, Stage::BeforeStore);
        let test = Test::new().kubeconfig(&server);
        let child = test.spawn(&["approve", "web", "--yes"]);
        assert!(held.wait_until_held(Duration::from_secs(30)), "the patch is sent");
        child.first_signal("INT");
        child.signal("INT");
        child.finish().status(130);
        assert_eq!(annotations(&canary(&server).unwrap())[format!("{NGINX}/canary-weight")], "0", "made, not patched");
        let status = test.run_args(["status", "web", "-o", "json"]).success().json();
        let view = &status[0]["objects"][0];
        assert_eq!(
            (&view["name"], &view["position"]),
            (&json!("web-canary"), &json!({"kind": "original"})),
            "{status}"
        );
        assert!(
            view["notes"][0].as_str().unwrap().starts_with("made at weight 0, as the controller creates it"),
            "{view}"
        );
        // Its claim is left too, by a run gone: released as the refusal says. Then approve
        // routes it (it refused it as edited) and restore deletes it.
        test.run_args(["release-claim", "web", "--yes"]).success();
        let routed = test.run_args(["approve", "web", "--traffic-only", "--yes"]).success();
        assert!(!routed.stderr.contains("edit"), "{}", routed.stderr);
        assert_eq!(annotations(&canary(&server).unwrap())[format!("{NGINX}/canary-by-header")], "x-canary");
        let restored = test.run_args(["restore", "web", "--yes"]).success();
        assert!(!restored.stderr.contains("edit"), "{}", restored.stderr);
        assert_eq!(canary(&server), None, "deleted");
        held.release();
    }

    #[test]
    fn a_server_that_stops_answering_at_the_canarys_patch_is_given_up_on_in_bounded_time() {
        // Every request from the patch (write 3) on hangs: the patch, reading it again, the
        // rollback's delete and reading that again each wait the request timeout, and the
        // report says what each object may be. The claim's release is not sent (it expires by
        // itself): it would wait out the timeout twice more, deleting and reading again.
        let server = serving("nginx", 1, "StepPaused").start();
        server.hang_from_write(3);
        let started = Instant::now();
        let out = Test::new().kubeconfig(&server).args(["approve", "web", "--yes", "--request-timeout", "1s"]).run();
        let took = started.elapsed();
        out.status(1)
            .stderr_has("error: patching Ingress shop/web-canary at http://127.0.0.1:")
            .stderr_has(
                "  Ingress shop/web-canary: may or may not be rolled back (no whole reply came within 1s; reading it again \
                 failed the same way); a later write of it may or may not be written (no whole reply came \
                 within 1s; it could not be read again; the server may still apply it) (it did not exist before this run)\n  \
                 nothing else was written\n",
            )
            .stderr_has("warning: the claim on Rollout shop/web was not released, as the API server did not answer the run's last requests; it expires within 120s, or `kubectl rollout-lua release-claim web -n shop` releases it\n")
            .stderr_has("  once the API server answers again, `kubectl rollout-lua status` shows where each object now stands");
        assert_eq!(unanswered(&server), ["PATCH web-canary", "GET web-canary", "DELETE web-canary", "GET web-canary"]);
        // Four requests of 1s; loose, as the machine is shared.
        assert!(took < Duration::from_secs(15), "took {took:?}");
        // From the create (write 2) on: what a create may have done, unread.
        let server = serving("nginx", 1, "StepPaused").start();
        server.hang_from_write(2);
        Test::new()
            .kubeconfig(&server)
            .args(["approve", "web", "--yes", "--request-timeout", "1s"])
            .run()
            .status(1)
            .stderr_has("error: creating Ingress shop/web-canary at http://127.0.0.1:")
            .stderr_has("reading it again to tell whether it landed failed too")
            .stderr_has("  Ingress shop/web-canary: may or may not have been made (no whole reply came within 1s; it could not be read again; the server may still apply it) (it did not exist before this run)\n");
    }

    #[test]
    fn an_undo_of_the_canarys_patch_left_unknown_says_the_canary_made_stands() {
        // The approval (write 4) is refused, and the rollback's first undo, the canary's patch
        // reversed, goes unanswered: a hung server, or a second signal while it is out. The
        // canary this run made stands either way (its delete is never sent): only the patch's
        // undo may or may not have landed.
        let refused = || Requests::Matching(Rule::new(["patch"]).resources(["rollouts/status"]));
        let server = serving("nginx", 1, "StepPaused").start();
        server.storm(refused(), Some(1), 422, None);
        server.hang_from_write(5);
        Test::new()
            .kubeconfig(&server)
            .args(["approve", "web", "--yes", "--request-timeout", "1s"])
            .run()
            .status(1)
            .stderr_has(
                "  Ingress shop/web-canary: made, not rolled back; a later write of it: may or may not be rolled back \
                 (no whole reply came within 1s; reading it again failed the same way) (it did not exist before this run)\n",
            )
            // An Ingress and Gateway trial: the way back named only the backups, which a canary
            // this run made has none of.
            .stderr_has("\n  `kubectl delete` removes an object this run made (`it did not exist before this run`) that is, or may be, left\n");
        assert_eq!(unanswered(&server), ["PATCH web-canary", "GET web-canary"], "no delete");
        assert!(canary(&server).is_some());

        let server = serving("nginx", 1, "StepPaused").start();
        server.storm(refused(), Some(1), 422, None);
        let undo = server.pause(Requests::Writes, 5, Stage::BeforeStore);
        let test = Test::new().kubeconfig(&server);
        let child = test.spawn(&["approve", "web", "--yes"]);
        assert!(undo.wait_until_held(Duration::from_secs(30)), "the undo is sent");
        child.first_signal("INT");
        child.signal("INT");
        child
            .finish()
            .status(130)
            .stderr_has(
                "  Ingress shop/web-canary: made, not rolled back; a later write of it: may or may not be rolled back \
             (its rollback was out) (it did not exist before this run)\n",
            )
            .stderr_has("\n  `kubectl delete` removes an object this run made");
        undo.release();
        assert!(canary(&server).is_some());
    }

    #[test]
    fn the_rollback_reads_again_a_canary_whose_create_was_not_read_back_and_deletes_it() {
        // The canary's create (write 2) is stored, its reply lost, and not read back; the run
        // stops. Before rolling back, the canary is read once more: made, it is deleted, as a
        // create of this run's whose reply came would be.
        let server = serving("nginx", 1, "StepPaused").start();
        server.reply_fault(Requests::Writes, 2, Stage::AfterStore, ReplyFault::Lost);
        let out = approve_with_the_canary_not_read_back(&server)
            .stderr_has("  Ingress shop/web-canary: rolled back\n  nothing else was written");
        assert!(!out.stderr.contains("may or may not be written"), "{}", out.stderr);
        assert!(canary(&server).is_none(), "the canary it made is deleted");
        assert_eq!(state(&server), "StepPaused");
        assert!(server.objects("coordination.k8s.io", "leases").is_empty());

        // Still not there when read again: reported as a write the server may still apply, as
        // read back now (by a server that answers again: `status` works now).
        let server = serving("nginx", 1, "StepPaused").start();
        let late = server.late_write(Requests::Matching(Rule::new(["create"]).resources(["ingresses"])), 1);
        approve_with_the_canary_not_read_back(&server).stderr_has(
            "  Ingress shop/web-canary: not applied when read back (the server answered 504 Timeout; the server may still apply it) (it did not exist before this run)\n  nothing else was written\n  `kubectl delete` removes an object this run made (`it did not exist before this run`) that is, or may be, left\n  `kubectl rollout-lua status` shows where each object now stands",
        );
        assert!(canary(&server).is_none());
        assert_eq!(late.land(Duration::from_secs(5)), Some(201), "the server may still make it");
    }

    #[test]
    fn a_patch_whose_reply_was_lost_before_someone_annotated_the_canary_is_never_undone_over_them() {
        // A regression: at step 2 the canary's patch is stored, its reply lost, and someone
        // adds an annotation before the run reads it again. The read was taken as this run's
        // write; the approval was refused, and the rollback (a diff over the whole object)
        // deleted their annotation, reporting only "rolled back".
        let server = serving("nginx", 1, "StepPaused").start();
        approve(&server).success();
        pause_at(&server, 2);
        let before = canary(&server).unwrap();
        // Writes now: the claim, the canary's patch, the approval.
        server.reply_fault(Requests::Writes, 2, Stage::AfterStore, ReplyFault::Lost);
        server.storm(Requests::Matching(Rule::new(["patch"]).resources(["rollouts/status"])), Some(1), 403, None);
        someone_edits(&server, When::After(2), CANARY, |canary| {
            canary["metadata"]["annotations"]["example.com/owner"] = json!("team-b");
        });
        let out = approve(&server)
            .status(1)
            .stderr_has("a fresh read shows someone else changed Ingress shop/web-canary meanwhile, perhaps after this run's write landed")
            .stderr_has("+++ Ingress shop/web-canary (this run's write and theirs, as it is now)")
            .stderr_has("  Ingress shop/web-canary: may have been written by this run before someone else changed it (its state before this run: ");
        assert!(!out.stderr.contains("nothing was written"), "{}", out.stderr);
        let now = annotations(&canary(&server).unwrap());
        assert_eq!(now["example.com/owner"], "team-b", "their annotation stays");
        assert_eq!(now[format!("{NGINX}/canary-weight")], "30", "this run's write is not undone over theirs");
        assert_eq!(state(&server), "StepPaused", "not approved");
        let patches = server.writes().into_iter().filter(|w| w.method == "PATCH" && w.path.ends_with("/web-canary"));
        assert_eq!(patches.count(), 2, "step 1's and this run's, no rollback");
        let approvals = server.writes().into_iter().filter(|w| w.path.ends_with("/rollouts/web/status")).count();
        assert_eq!(approvals, 1, "step 1's: the run stops at the write it cannot tell");
        assert_ne!(annotations(&before), now);
    }

    #[test]
    fn a_lost_create_then_someone_elses_edit_is_named_as_maybe_this_runs() {
        // A regression: the canary Ingress this run made (its reply lost, then annotated by
        // someone) dropped out of the report: "nothing was written", exit 3.
        let server = serving("nginx", 1, "StepPaused").start();
        // Writes: the claim, the create.
        server.reply_fault(Requests::Writes, 2, Stage::AfterStore, ReplyFault::Lost);
        someone_edits(&server, When::After(2), CANARY, |canary| {
            canary["metadata"]["annotations"]["example.com/owner"] = json!("team-b");
        });
        let out = approve(&server)
            .status(1)
            .stderr_has(
                "  Ingress shop/web-canary: may have been made by this run and changed by someone else since, or made by them (it did not exist before this run)\n  nothing else was written",
            )
            .stderr_has("a fresh read shows Ingress shop/web-canary made or changed by someone else meanwhile, perhaps after this run's create landed; it is left as it is:")
            // No state before this run to compare with (trial 9).
            .stderr_has("It did not exist before this run: see whose it is now and decide\n");
        assert!(!out.stderr.contains("nothing was written") && !out.stderr.contains("named below"), "{}", out.stderr);
        let made = canary(&server).unwrap();
        assert_eq!(annotations(&made)["example.com/owner"], "team-b");
        assert_eq!(state(&server), "StepPaused");
        assert!(server.objects("coordination.k8s.io", "leases").is_empty());
    }

    #[test]
    fn restore_resolves_a_lost_garbled_or_hung_reply_after_the_delete() {
        for fault in [ReplyFault::Lost, ReplyFault::Garbled, ReplyFault::NeverSent] {
            let server = serving("nginx", 1, "StepPaused").start();
            approve(&server).success();
            // The claim, then the delete.
            server.reply_fault(Requests::Writes, 2, Stage::AfterStore, fault);
            let out =
                Test::new().kubeconfig(&server).args(["restore", "web", "--yes", "--request-timeout", "2s"]).run();
            assert_eq!(out.status, 0, "{fault:?}\n{}\n{}", out.stdout, out.stderr);
            let unheard = format!("{}; a fresh read shows the write", unheard(fault, "2s"));
            assert!(out.stdout.contains("deleted (backup ") && out.stdout.contains(&unheard), "{}", out.stdout);
            assert!(canary(&server).is_none());
        }
    }

    #[test]
    fn a_busy_or_silent_server_at_the_canarys_delete_fails_the_restore_and_keeps_the_canary() {
        // A 503 storm on the delete, or no answer at all (not stored; 2s request timeout).
        for storm in [true, false] {
            let server = serving("nginx", 1, "StepPaused").start();
            approve(&server).success();
            let made = canary(&server).unwrap();
            match storm {
                true => {
                    server.storm(Requests::Matching(Rule::new(["delete"]).resources(["ingresses"])), None, 503, Some(1))
                }
                false => server.reply_fault(Requests::Writes, 2, Stage::BeforeStore, ReplyFault::NeverSent),
            }
            let started = Instant::now();
            let out =
                Test::new().kubeconfig(&server).args(["restore", "web", "--yes", "--request-timeout", "2s"]).run();
            assert_eq!(out.status, 1, "storm: {storm}\n{}\n{}", out.stdout, out.stderr);
            assert!(started.elapsed() < Duration::from_secs(30), "bounded: {:?}", started.elapsed());
            assert!(out.stderr.contains("Ingress shop/web-canary: not applied when read back"), "{}", out.stderr);
            assert_eq!(canary(&server), Some(made), "storm: {storm}: the canary stays as it was");
            assert!(server.objects("coordination.k8s.io", "leases").is_empty());
        }
    }

    #[test]
    fn a_signal_while_the_canarys_delete_is_held_finishes_it_and_says_so() {
        for (name, code) in [("INT", 130), ("TERM", 143)] {
            let server = serving("nginx", 1, "StepPaused").start();
            approve(&server).success();
            // The claim, then the delete.
            let out = signalled_after_write(&server, &["restore", "web", "--yes"], 2, name);
            assert_eq!(out.status, code, "{}\n{}", out.stdout, out.stderr);
            assert!(out.stderr.contains("it came during the last write, which was finished"), "{}", out.stderr);
            assert!(
                out.stderr.contains("  Ingress shop/web-canary: deleted (its state before this run: "),
                "{}",
                out.stderr
            );
            assert!(canary(&server).is_none(), "{name}: the delete was finished");
            assert!(server.objects("coordination.k8s.io", "leases").is_empty());
        }
    }

    #[test]
    fn restore_says_a_canary_its_finalizers_hold_is_being_deleted() {
        // A delete only marks an Ingress an ingress controller put its finalizer on, until it
        // removes it; the reply of the delete, or the read after a lost one, shows so.
        for lost in [false, true] {
            let server = serving("nginx", 1, "StepPaused").start();
            approve(&server).success();
            let mut held = canary(&server).unwrap();
            held["metadata"]["finalizers"] = json!(["example.com/load-balancer"]);
            server.put_object(held);
            if lost {
                server.reply_fault(Requests::Writes, 2, Stage::AfterStore, ReplyFault::Lost);
            }
            Test::new()
                .kubeconfig(&server)
                .args(["restore", "web", "--yes"])
                .run()
                .success()
                .stdout_has("Ingress shop/web-canary deleted (backup ")
                .stdout_has("; it is being deleted: its finalizers (example.com/load-balancer) hold it until whoever set them removes them)");
            assert!(canary(&server).unwrap()["metadata"]["deletionTimestamp"].is_string(), "lost: {lost}");
        }
    }

    #[test]
    fn a_canary_being_deleted_is_noted_by_status_and_a_plan_writing_it_warns() {
        // A regression: a canary Ingress someone deleted while its finalizers hold it showed as
        // plain `drifted`, and a plan patching it (as the controller would) said nothing.
        let server = serving("nginx", 1, "StepPaused").start();
        approve(&server).success();
        let mut held = canary(&server).unwrap();
        held["metadata"]["finalizers"] = json!(["example.com/load-balancer"]);
        held["metadata"]["deletionTimestamp"] = json!("2026-12-04T00:00:00Z");
        server.put_object(held);
        let test = Test::new().kubeconfig(&server);
        let being_deleted = "Ingress shop/web-canary is being deleted (it has a deletionTimestamp, held by its finalizers: example.com/load-balancer)";
        test.run_args(["status", "web"])
            .success()
            .stdout_has(&format!("note: {being_deleted}: its routing goes with it\n"));
        test.run_args(["plan", "web", "--step", "2"]).success().stdout_has(&format!(
            "warning: {being_deleted}: the controller writes it all the same (it reads no deletionTimestamp) and counts the step done, and the routing written goes with the object\n"
        ));
        // At the step it stands at, nothing is written: no warning. Every step planned: at the
        // step that patches it, from where step 1 left it (a regression: such a carried object
        // was passed over); not at step 3, which deletes it (warned of its own).
        let out = test.run_args(["plan", "web"]).success();
        assert!(!out.stdout.contains("warning: Ingress shop/web-canary is being deleted"), "{}", out.stdout);
        let all = test.run_args(["plan", "web", "--all-steps"]).success();
        let warned = format!("warning: {being_deleted}: the controller writes it all the same");
        assert_eq!(all.stdout.matches(&warned).count(), 1, "{}", all.stdout);
    }

    #[test]
    fn a_canary_made_again_by_someone_after_a_delete_whose_reply_was_lost_is_theirs_and_named() {
        // A regression (audit s29 safety2 #1): the delete landed, its reply was lost, and someone
        // (a GitOps tool, a colleague) made an Ingress of the name again before the run read it
        // back; the run said `deleted` and exited 0 while theirs routed half the traffic.
        let server = serving("nginx", 1, "StepPaused").start();
        approve(&server).success();
        let mut theirs = canary(&server).unwrap();
        theirs["metadata"]["annotations"] = json!({"nginx.ingress.kubernetes.io/canary": "true",
                                                    "nginx.ingress.kubernetes.io/canary-weight": "50"});
        server.reply_fault(Requests::Writes, 2, Stage::AfterStore, ReplyFault::Lost);
        server.after_write(2, move |store| {
            store.put(theirs);
        });
        let out = Test::new()
            .kubeconfig(&server)
            .args(["restore", "web", "--yes"])
            .run()
            .status(3)
            .stderr_has("a fresh read shows Ingress shop/web-canary deleted, then made again by someone else (another uid):")
            .stderr_has("+    nginx.ingress.kubernetes.io/canary-weight: \"50\"")
            .stderr_has("It is theirs, and left alone: review it")
            .stderr_has("  Ingress shop/web-canary: deleted by this run, then made again by someone else: theirs, left alone (its state before this run: ");
        assert!(!out.stdout.contains("deleted (backup"), "{}", out.stdout);
        assert_eq!(annotations(&canary(&server).unwrap())["nginx.ingress.kubernetes.io/canary-weight"], "50");
        assert!(server.objects("coordination.k8s.io", "leases").is_empty());
    }

    #[test]
    fn someone_elses_edit_of_the_canary_ingress_between_writes_is_not_overwritten() {
        let server = serving("nginx", 1, "StepPaused").start();
        // Between the create (write 2) and the patch (write 3), someone annotates the canary.
        someone_edits(&server, When::Before(3), CANARY, |canary| {
            canary["metadata"]["annotations"]["example.com/owner"] = json!("team-b");
        });
        approve(&server)
            .status(3)
            .stderr_has("Ingress shop/web-canary was changed by someone else while this run wrote it; not overwriting their edit:")
            .stderr_has("+    example.com/owner: team-b")
            .stderr_has("Ingress shop/web-canary: NOT rolled back: someone changed it since this run wrote it");
        assert_eq!(state(&server), "StepPaused", "not approved");
        assert_eq!(annotations(&canary(&server).unwrap())["example.com/owner"], "team-b", "their edit stays");

        // At step 2 the canary is patched; someone else's edit lands between the read and the patch.
        let server = serving("nginx", 1, "StepPaused").start();
        approve(&server).success();
        pause_at(&server, 2);
        someone_edits(&server, When::Before(2), CANARY, |canary| {
            canary["metadata"]["annotations"][format!("{NGINX}/canary-by-header-value")] = json!("false");
        });
        approve(&server).status(3).stderr_has("not overwriting their edit");
        assert_eq!(annotations(&canary(&server).unwrap())[format!("{NGINX}/canary-by-header-value")], "false");

        // Someone else makes the canary Ingress between the read and the create: theirs stays.
        let server = serving("nginx", 1, "StepPaused").start();
        server.before_write(2, |store| {
            let mut theirs = stable_ingress("nginx");
            theirs["metadata"]["name"] = json!("web-canary");
            store.put(theirs);
        });
        approve(&server)
            .status(3)
            .stderr_has("Ingress shop/web-canary was made by someone else while this run made it; not overwriting it:")
            .stderr_has("It did not exist when this run planned it: see whose it is now before running anything again");
        assert_eq!(state(&server), "StepPaused");
        assert!(canary(&server).unwrap()["metadata"].get("ownerReferences").is_none(), "theirs, untouched");
    }

    #[test]
    fn sigint_or_sigterm_between_the_create_and_the_patch_rolls_the_create_back() {
        // With the ingress controller writing the canary's status after the create too.
        for (name, code, status_written) in [("INT", 130, false), ("TERM", 143, true)] {
            let server = serving("nginx", 1, "StepPaused").start();
            if status_written {
                a_controller_writes_the_status_of(&server, "ingresses");
            }
            let out = signalled_after_write(&server, &["approve", "web", "--yes"], 2, name);
            let stderr = out.stderr;
            assert_eq!(out.status, code, "{stderr}");
            assert!(stderr.contains("Ingress shop/web-canary: rolled back"), "{name}: {stderr}");
            assert!(!approved_with_its_canary(&server));
            assert_eq!(server.objects("coordination.k8s.io", "leases"), Vec::<Value>::new());
        }
    }

    #[test]
    fn a_signal_while_the_canarys_patch_is_held_stops_before_the_approval_and_rolls_both_back() {
        for (name, code) in [("INT", 130), ("TERM", 143)] {
            let server = serving("nginx", 1, "StepPaused").start();
            // The claim, the create, then the patch.
            let out = signalled_after_write(&server, &["approve", "web", "--yes"], 3, name);
            assert_eq!(out.status, code, "{}\n{}", out.stdout, out.stderr);
            assert!(out.stderr.contains("Ingress shop/web-canary: rolled back"), "{name}: {}", out.stderr);
            assert!(!approved_with_its_canary(&server), "{name}: not approved, no canary");
            assert!(server.objects("coordination.k8s.io", "leases").is_empty());
        }
    }

    #[test]
    fn a_busy_or_silent_server_at_the_canarys_create_or_patch_stops_the_run_and_leaves_nothing() {
        // Write 2 is the canary's create, write 3 its patch: a 503 storm on it, or no answer at
        // all (not stored; 2s request timeout), stops the run before the approval, and a canary
        // it made goes again.
        for (verb, k) in [("create", 2), ("patch", 3)] {
            for storm in [true, false] {
                let server = serving("nginx", 1, "StepPaused").start();
                match storm {
                    true => {
                        server.storm(Requests::Matching(Rule::new([verb]).resources(["ingresses"])), None, 503, Some(1))
                    }
                    false => server.reply_fault(Requests::Writes, k, Stage::BeforeStore, ReplyFault::NeverSent),
                }
                let started = Instant::now();
                let out =
                    Test::new().kubeconfig(&server).args(["approve", "web", "--yes", "--request-timeout", "2s"]).run();
                let context = format!("{verb}, storm: {storm}\n{}\n{}", out.stdout, out.stderr);
                assert_eq!(out.status, 1, "{context}");
                assert!(started.elapsed() < Duration::from_secs(30), "bounded: {:?}", started.elapsed());
                let report = match verb {
                    "create" => "Ingress shop/web-canary: not applied when read back",
                    _ => "Ingress shop/web-canary: rolled back\n  nothing else was written",
                };
                assert!(out.stderr.contains(report), "{context}");
                assert!(!approved_with_its_canary(&server), "{context}");
                assert!(server.objects("coordination.k8s.io", "leases").is_empty());
            }
        }
    }

    /// Rollout `web` approved at step 1 (its canary Ingress made, then given a status and managed
    /// fields, as a real server and ingress controller would), then restored (the canary
    /// deleted). Returns the test, the canary as it was, and the backup the restore took of it.
    fn canary_deleted_by_a_restore(server: &FakeHandle) -> (Test, Value, std::path::PathBuf) {
        let test = Test::new().kubeconfig(server);
        test.run_args(["approve", "web", "--yes"]).success();
        let mut made = canary(server).unwrap();
        made["status"] = json!({"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}});
        made["metadata"]["managedFields"] = json!([{"manager": "kubectl-rollout-lua", "operation": "Update"}]);
        let made = server.put_object(made);
        test.run_args(["restore", "web", "--yes"]).success().stdout_has("Ingress shop/web-canary deleted (backup ");
        assert!(canary(server).is_none());
        let folder = test.path("home/.local/state/kubectl-rollout-lua/backups/fake/shop/Ingress/web-canary");
        let backups: Vec<_> = std::fs::read_dir(folder).unwrap().map(|e| e.unwrap().path()).collect();
        let [backup] = backups.as_slice() else { panic!("one backup, the restore's: {backups:?}") };
        (test, made, backup.clone())
    }

    #[test]
    fn a_canary_ingress_a_restore_deleted_is_made_again_from_its_backup() {
        // A regression: `restore --from-backup` refused an object that no longer exists ("create
        // it with kubectl instead"), though a restore's report names the deleted canary Ingress's
        // backup as its state before the run; and `kubectl create -f` refuses the backup, which
        // holds a resourceVersion.
        let server = serving("nginx", 1, "StepPaused").start();
        let (test, made, backup) = canary_deleted_by_a_restore(&server);
        let saved = std::fs::read_to_string(&backup).unwrap();
        let saved = &rollout_lua::for_tests::parse_documents(&saved, "backup").unwrap()[0].value;
        assert!(saved["metadata"]["resourceVersion"].is_string(), "the backup holds the object as read");
        let from_backup = |more: &[&str]| {
            let mut args = vec!["restore", "--from-backup", backup.to_str().unwrap()];
            args.extend(more);
            test.run_args(args)
        };
        let shown = [
            "Ingress shop/web-canary does not exist: it is created as the backup holds it (owner references and finalizers too), without what the API server sets (uid, resourceVersion, timestamps, managed fields, status)\n",
            "--- Ingress shop/web-canary (absent)\n",
            "+    nginx.ingress.kubernetes.io/canary-by-header: x-canary\n",
        ];

        // A server dry run sends the create for admission to judge, and stores nothing.
        server.clear_log();
        let dry = from_backup(&["--dry-run=server"]).success().stdout_has("dry run (server): nothing was stored");
        for line in shown {
            assert!(dry.stdout.contains(line), "{line}\n{}", dry.stdout);
        }
        assert!(routing_writes(&server).iter().all(|w| w.is_dry_run()), "{:?}", writes(&server));
        assert!(canary(&server).is_none());

        server.clear_log();
        let out = from_backup(&["--yes"]).success().stdout_has(&format!(
            "Ingress shop/web-canary created from {} (it did not exist before)\n",
            backup.display()
        ));
        for line in shown {
            assert!(out.stdout.contains(line), "{line}\n{}", out.stdout);
        }
        assert_eq!(ingress_writes(&server), ["POST /apis/networking.k8s.io/v1/namespaces/shop/ingresses"]);
        assert_eq!(claim_writes(&server).len(), 2, "web is claimed, and released: {:?}", claim_writes(&server));
        let create =
            server.writes().into_iter().find(|w| w.method == "POST" && w.path.ends_with("/ingresses")).unwrap();
        for field in ["resourceVersion", "uid", "creationTimestamp", "managedFields", "generation"] {
            assert!(create.body["metadata"].get(field).is_none(), "{field} not sent: {}", create.body);
        }
        assert!(create.body.get("status").is_none(), "{}", create.body);
        let again = canary(&server).unwrap();
        assert_eq!(again["spec"], made["spec"]);
        assert_eq!(annotations(&again), annotations(&made));
        assert_eq!(again["metadata"]["labels"], made["metadata"]["labels"]);
        assert_eq!(again["metadata"]["ownerReferences"], made["metadata"]["ownerReferences"], "still the Rollout's");

        // Now it exists and holds the backup's routing.
        from_backup(&["--yes"]).success().stdout_is("Ingress shop/web-canary already matches the backup\n");

        // Someone else makes it between the read and the create (the claim is write 1): theirs
        // stays, and the run refuses, naming it.
        let server = serving("nginx", 1, "StepPaused").start();
        let (test, _, backup) = canary_deleted_by_a_restore(&server);
        server.before_write(2, |store| {
            let mut theirs = stable_ingress("nginx");
            theirs["metadata"]["name"] = json!("web-canary");
            store.put(theirs);
        });
        test.run_args(["restore".as_ref(), "--from-backup".as_ref(), backup.as_os_str(), "--yes".as_ref()])
            .status(3)
            .stderr_has("Ingress shop/web-canary was made by someone else while this run made it; not overwriting it:")
            .stderr_has("It did not exist when this run planned it: see whose it is now before running anything again")
            .stderr_has("nothing was written");
        assert!(canary(&server).unwrap()["metadata"].get("ownerReferences").is_none(), "theirs, untouched");
    }

    #[test]
    fn a_canary_ingress_made_again_from_its_backup_warns_of_a_missing_canary_service_and_a_rollout_not_in_a_release() {
        let server = serving("nginx", 1, "StepPaused").start();
        let (test, _, backup) = canary_deleted_by_a_restore(&server);
        let from_backup = |more: &str| test.run_args(["restore", "--from-backup", backup.to_str().unwrap(), more]);
        // In a release, its canary Service there: nothing to warn of.
        let quiet = from_backup("--dry-run=client").success();
        assert!(!quiet.stderr.contains("warning:"), "{}", quiet.stderr);
        // The release is over: the controller deleted the canary Service with the canary Ingress.
        let mut over = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "web").unwrap();
        over["status"] = json!({"phase": "Healthy"});
        server.put_object(over);
        server.delete_object("", "services", NAMESPACE, "web-canary");
        from_backup("--yes")
            .success()
            .stderr_has("warning: Service web-canary does not exist: the canary Ingress routes to it; the controller creates it at a step that routes, before it writes any routing (to every provider; not for a blue-green release's final route to the new version), but without the controller the canary traffic fails\n")
            .stderr_has("warning: Rollout shop/web is not in a release: the controller deletes its canary Ingress only in a release (at a step without traffic, or at its end), so Ingress shop/web-canary stays, with the canary traffic it routes, until `restore --ref Ingress.networking.k8s.io/web-canary` deletes it again\n")
            .stdout_has("Ingress shop/web-canary created from ");
        assert!(canary(&server).is_some(), "warnings only: it is what the user asked for");
        // As the warning says, a restore deletes it again.
        test.run_args(["restore", "--ref", "Ingress.networking.k8s.io/web-canary", "--yes"])
            .success()
            .stdout_has("Ingress shop/web-canary deleted (backup ");
        assert!(canary(&server).is_none());
    }

    #[test]
    fn a_canary_ingress_made_again_from_its_backup_resolves_a_lost_or_garbled_reply() {
        for fault in [ReplyFault::Lost, ReplyFault::Garbled] {
            // Stored, its reply lost (the claim is write 1, the create write 2): a fresh read
            // shows it made.
            let server = serving("nginx", 1, "StepPaused").start();
            let (test, made, backup) = canary_deleted_by_a_restore(&server);
            server.reply_fault(Requests::Writes, 2, Stage::AfterStore, fault);
            test.run_args(["restore".as_ref(), "--from-backup".as_ref(), backup.as_os_str(), "--yes".as_ref()])
                .success()
                .stdout_has("Ingress shop/web-canary created from ")
                .stdout_has(&format!(
                    "(it did not exist before; {}; a fresh read shows the write)",
                    unheard(fault, "30s")
                ));
            assert_eq!(annotations(&canary(&server).unwrap()), annotations(&made), "{fault:?}");

            // Not stored: a fresh read finds nothing; the server may still make it (exit 1).
            let server = serving("nginx", 1, "StepPaused").start();
            let (test, _, backup) = canary_deleted_by_a_restore(&server);
            server.reply_fault(Requests::Writes, 2, Stage::BeforeStore, fault);
            let out = test
                .run_args(["restore".as_ref(), "--from-backup".as_ref(), backup.as_os_str(), "--yes".as_ref()])
                .status(1)
                .stderr_has(&format!(
                    "Ingress shop/web-canary: not applied when read back ({}; the server may still apply it)",
                    unheard(fault, "30s")
                ));
            assert!(!out.stdout.contains("created from"), "{fault:?}: {}", out.stdout);
            assert!(canary(&server).is_none(), "{fault:?}");
            assert_eq!(server.objects("coordination.k8s.io", "leases"), Vec::<Value>::new(), "{fault:?}");
        }
    }

    #[test]
    fn sigint_while_a_canary_ingress_is_made_again_from_its_backup_finishes_it() {
        let server = serving("nginx", 1, "StepPaused").start();
        let (test, _, backup) = canary_deleted_by_a_restore(&server);
        // The create (write 2, after the claim) is stored and its reply held.
        let pause = server.pause(Requests::Writes, 2, Stage::AfterStore);
        let child = test.spawn(&["restore", "--from-backup", backup.to_str().unwrap(), "--yes"]);
        assert!(pause.wait_until_held(Duration::from_secs(30)), "the create reached");
        child.first_signal("INT");
        pause.release();
        child
            .finish()
            .status(130)
            .stdout_has("Ingress shop/web-canary created from ")
            .stderr_has("interrupted (SIGINT): it came during the last write, which was finished");
        assert!(canary(&server).is_some());
        assert_eq!(server.objects("coordination.k8s.io", "leases"), Vec::<Value>::new());
    }

    #[test]
    fn approve_writes_in_the_controllers_order_custom_refs_then_the_ingress() {
        let mut rollout = rollout("nginx", 1, "StepPaused");
        rollout["spec"]["strategy"]["canary"]["trafficRoutings"][0]["customNetworkRefs"] =
            json!([{"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "demo"}]);
        let server = serving("nginx", 1, "StepPaused").object(rollout).object(virtual_service()).start();
        approve(&server).success();
        let order: Vec<String> = writes(&server).iter().map(|w| w.rsplit('/').next().unwrap().to_string()).collect();
        assert_eq!(order, ["demo", "demo", "ingresses", "web-canary", "status"]);
        // The first error stops it, as it stops the controller: a VirtualService that is not
        // there fails the plan before the Ingress is looked at.
        server.delete_object("networking.istio.io", "virtualservices", NAMESPACE, "demo");
        Test::new().kubeconfig(&server).args(["plan", "web"]).run().status(1).stderr_has(
            "routes through VirtualService/demo (networking.istio.io/v1beta1), but there is no such object",
        );
    }

    /// Rollout `web` at step 1 of `rollout`'s steps, routed only through TrafficRouting `tr` (a
    /// header match through Ingress `web`, nginx), which it holds.
    fn linked_to_a_traffic_routing() -> FakeHandle {
        let mut linked = rollout("nginx", 1, "StepPaused");
        linked["metadata"]["annotations"] = json!({"rollouts.kruise.io/trafficrouting": "tr"});
        linked["spec"]["strategy"]["canary"].as_object_mut().unwrap().remove("trafficRoutings");
        serving("nginx", 1, "StepPaused")
            .object(linked)
            .object(json!({
                "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting",
                "metadata": {"name": "tr", "namespace": NAMESPACE, "uid": "t-1",
                             "finalizers": ["rollouts.kruise.io/trafficrouting", "progressing.rollouts.kruise.io/web"]},
                "spec": {"strategy": {"matches": [{"headers": [{"type": "Exact", "name": "x-canary", "value": "true"}]}]},
                         "objectRef": [{"service": "web", "ingress": {"name": "web"}}]},
                "status": {"phase": "Progressing"}
            }))
            .start()
    }

    #[test]
    fn a_canary_ingress_a_traffic_routing_left_after_the_release_is_noted_with_when_its_controller_deletes_it() {
        let server = linked_to_a_traffic_routing();
        let test = Test::new().kubeconfig(&server);
        approve(&server).success();
        assert_eq!(canary(&server).unwrap()["metadata"]["ownerReferences"][0]["kind"], "TrafficRouting");
        // The release is over, but the canary Ingress is left (a controller that did not finish).
        let mut over = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "web").unwrap();
        over["status"] = json!({"phase": "Healthy", "canaryStatus": null});
        server.put_object(over);
        let set_finalizers = |finalizers: Value| {
            let mut tr = server.object("rollouts.kruise.io", "*", "trafficroutings", NAMESPACE, "tr").unwrap();
            tr["metadata"]["finalizers"] = finalizers;
            tr["status"]["phase"] = json!("Healthy");
            server.put_object(tr);
        };
        // Still held by a Rollout, the TrafficRouting routes it, as it should: nothing to say.
        set_finalizers(json!(["rollouts.kruise.io/trafficrouting", "progressing.rollouts.kruise.io/other"]));
        let out =
            test.run_args(["status", "web"]).success().stdout_has("Ingress shop/web-canary  at step 1, step 2, step 3");
        assert!(!out.stdout.contains("note:"), "{}", out.stdout);
        // Held by none, it stays until the TrafficRouting finalises.
        set_finalizers(json!(["rollouts.kruise.io/trafficrouting"]));
        let note = "the release is over (phase Healthy) and no Rollout holds TrafficRouting shop/tr, but Ingress shop/web-canary still routes as its strategy, which that TrafficRouting's controller undoes only at the end of the next release of a Rollout linked to it; `kubectl rollout-lua restore web -n shop` puts the routing before the release back (it deletes the canary Ingress)";
        test.run_args(["status", "web"]).success().stdout_has(&format!("      note: {note}\n"));
        test.run_args(["plan", "web"]).success().stdout_has(&format!("  {note}\n"));
        // As the note says, restore deletes it; put back from its backup, it is warned of again.
        test.run_args(["restore", "web", "--yes"]).success().stdout_has("Ingress shop/web-canary deleted (backup ");
        let folder = test.path("home/.local/state/kubectl-rollout-lua/backups/fake/shop/Ingress/web-canary");
        let backup = std::fs::read_dir(folder).unwrap().map(|e| e.unwrap().path()).max().unwrap();
        test.run_args(["restore".as_ref(), "--from-backup".as_ref(), backup.as_os_str(), "--yes".as_ref()])
            .success()
            .stderr_has("warning: TrafficRouting shop/tr is not in a release: a TrafficRouting has no steps, and its controller deletes its canary Ingress only when it finalises, once no Rollout holds it any more (at the end of the next release of a Rollout linked to it), so Ingress shop/web-canary stays, with the canary traffic it routes, until `restore --ref Ingress.networking.k8s.io/web-canary` deletes it again\n")
            .stdout_has("Ingress shop/web-canary created from ");
    }

    #[test]
    fn a_traffic_routing_with_an_ingress_ref_keeps_the_stable_backends() {
        let server = serving("nginx", 1, "StepPaused")
            .object(json!({
                "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting",
                "metadata": {"name": "tr", "namespace": NAMESPACE, "uid": "t-1"},
                "spec": {"strategy": {"weight": 10}, "objectRef": [{"service": "web", "ingress": {"name": "web"}}]}
            }))
            .start();
        let out = Test::new().kubeconfig(&server).args(["record", "trafficrouting/tr"]).run().success();
        let case = &rollout_lua::for_tests::parse_documents(&out.stdout, "record").unwrap()[0].value;
        let made = &case["expected"][0];
        assert_eq!(made["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"], "web");
        assert_eq!(annotations(made)[format!("{NGINX}/canary-weight")], "10");
    }

    #[test]
    fn record_writes_an_ingress_case_that_test_and_plan_replay() {
        let server = serving("nginx", 2, "StepPaused").start();
        let test = Test::new().kubeconfig(&server);
        approve(&server).success();
        let out = test.run_args(["record", "web"]).success();
        let case = &rollout_lua::for_tests::parse_documents(&out.stdout, "record").unwrap()[0].value;
        assert_eq!(case["original"]["metadata"]["name"], "web");
        let expected = case["expected"].as_array().unwrap();
        assert_eq!(expected.len(), 3);
        assert_eq!(annotations(&expected[0])[format!("{NGINX}/canary-by-header")], "x-canary");
        assert_eq!(annotations(&expected[1])[format!("{NGINX}/canary-weight")], "30");
        assert!(expected[2].is_null());
        test.run_args(["record", "web", "--dir", "cases"])
            .success()
            .stderr_has("wrote cases/trafficrouting_ingress/testdata/nginx/web-ingress-web.yaml");
        assert!(test.path("cases/trafficrouting_ingress/nginx.lua").is_file());
        test.run_args(["test", "cases"])
            .success()
            .stdout_has("ok   trafficrouting_ingress/nginx web-ingress-web.yaml (3 steps)");
        // The recorded script is the built-in one: plan says nothing of it. Changed, it does.
        test.run_args(["plan", "-R", "-f", "cases"]).success().stderr_is("");
        let script = test.path("cases/trafficrouting_ingress/nginx.lua");
        std::fs::write(&script, format!("-- changed\n{}", std::fs::read_to_string(&script).unwrap())).unwrap();
        test.run_args(["plan", "-R", "-f", "cases"]).success().stderr_is(
            "note: cases/trafficrouting_ingress/nginx.lua beside the test cases is not the script this plan runs (built-in lua_configuration/trafficrouting_ingress/nginx.lua): add --lua-dir cases to run it\n",
        );
        test.run_args(["record", "web", "--output-file", "web.yaml"]).success();
        test.run_args(["plan", "-f", "web.yaml"]).success().stdout_has("Ingress shop/web-canary");
    }

    #[test]
    fn status_watch_shows_an_edit_of_the_canary_ingress_within_seconds() {
        let server = serving("nginx", 1, "StepPaused").start();
        approve(&server).success();
        let test = Test::new().kubeconfig(&server);
        let running = test.spawn(&["status", "web", "-w", "--timeout", "60s"]);
        running.wait_for_stdout("Ingress web-canary at step 1");
        // The Ingresses' watch opens once the first view is shown.
        let watches = || -> Vec<String> {
            let requests = server.requests().into_iter();
            requests.filter(|r| r.query_params.iter().any(|(k, _)| k == "watch")).map(|r| r.path).collect()
        };
        let watched = || watches().iter().any(|path| path.ends_with("/ingresses"));
        let deadline = Instant::now() + Duration::from_secs(20);
        while !watched() {
            assert!(Instant::now() < deadline, "no watch of the Ingresses: {:?}", server.requests());
            std::thread::sleep(Duration::from_millis(20));
        }
        let edited = Instant::now();
        server.put_object({
            let mut edited = canary(&server).unwrap();
            edited["metadata"]["annotations"][format!("{NGINX}/canary-weight")] = json!("90");
            edited
        });
        // Seen through the watch, not at the full read 30 s later.
        running.wait_for_stdout("Ingress web-canary drifted");
        assert!(edited.elapsed() < Duration::from_secs(10), "seen after {:?}", edited.elapsed());
        running.signal("INT");
        let out = running.finish_within(Duration::from_secs(20));
        // The Ingresses of the namespace are watched, not each Ingress the Rollout routes through.
        let watched = watches();
        let of = |plural: &str| watched.iter().filter(|p| p.ends_with(&format!("/namespaces/shop/{plural}"))).count();
        assert_eq!((of("rollouts"), of("ingresses"), watched.len()), (1, 1, 2), "{watched:?}");
        assert!(!out.stderr.contains("forbidden"), "{}", out.stderr);
    }

    #[test]
    fn status_places_the_canary_ingress_as_absent_when_its_stable_ingress_is_missing() {
        // Step 2 is routed and paused: the controller routes no step now, so where the objects
        // stand is told, the canary Ingress (never made) absent, with why the current step fails.
        let server = serving("nginx", 2, "StepPaused").start();
        server.delete_object("networking.k8s.io", "ingresses", NAMESPACE, "web").unwrap();
        let test = Test::new().kubeconfig(&server);
        test.run_args(["status", "web"])
            .success()
            .stdout_has("    Ingress shop/web-canary  absent")
            .stdout_has("      note: Rollout shop/web, step 2/3: Ingress shop/web not found: the canary Ingress is built from it: a step that routes it fails at the controller (its restore skips it)\n");
        // Not at the current step, which the controller has routed: the line `status -w` logs says so.
        let json = test.run_args(["status", "web", "-o", "json"]).success().json();
        let canary = &json[0]["objects"][0];
        assert_eq!((&canary["name"], &canary["atCurrentStep"]), (&json!("web-canary"), &json!(false)), "{json}");
        // Where the controller routes the current step now, that step fails: an error.
        let mut routing = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "web").unwrap();
        routing["status"]["canaryStatus"]["currentStepState"] = json!("StepTrafficRouting");
        server.put_object(routing);
        test.run_args(["status", "web"])
            .status(1)
            .stdout_has("Ingress shop/web not found: the canary Ingress is built from it");
    }

    #[test]
    fn status_shows_a_drifted_canary_ingress() {
        let server = serving("nginx", 1, "StepPaused").start();
        approve(&server).success();
        server.put_object({
            let mut edited = canary(&server).unwrap();
            edited["metadata"]["annotations"][format!("{NGINX}/canary-by-header-value")] = json!("yes");
            edited
        });
        Test::new()
            .kubeconfig(&server)
            .args(["status", "web"])
            .run()
            .success()
            .stdout_has("Ingress shop/web-canary  drifted");
        // A restore shows the edit it discards, and asks.
        Test::new()
            .kubeconfig(&server)
            .args(["restore", "web", "--yes"])
            .run()
            .status(3)
            .stdout_has("Ingress shop/web-canary was edited after it was routed; a restore discards these edits:");
        assert!(canary(&server).is_some());
    }
}
