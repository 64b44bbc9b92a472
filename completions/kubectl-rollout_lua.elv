
use builtin;
use str;

set edit:completion:arg-completer[kubectl-rollout_lua] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'kubectl-rollout_lua'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'kubectl-rollout_lua'= {
            cand -v 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --verbose 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --no-color 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand plan 'Show what a step does to the gateway objects, as a diff from their current content'
            cand approve 'Make the gateway objects match the current step, then approve the step (StepPaused -> StepReady)'
            cand restore 'Put gateway objects back to their stored original (as the controller does when a release ends)'
            cand status 'Show Rollouts'' progress and where each gateway object stands; -w follows it'
            cand release-claim 'Release the claim an approve or restore left on Rollouts (when its holder is gone)'
            cand record 'Write a live Rollout and its gateway objects'' originals as a test case, every step''s plan as expected'
            cand test 'Run scripts'' test cases (the controller''s testdata format) with the controller''s test-harness semantics'
            cand eval 'Run one script on one obj and print the result as canonical JSON'
            cand lua-obj 'Write the obj of every step of a test case as a Lua file, for debugging a script'
            cand completions 'Print a shell completion script (bash, zsh, fish, powershell, elvish, nushell)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kubectl-rollout_lua;plan'= {
            cand -l 'Select Rollouts by label (e.g. app=shop)'
            cand --selector 'Select Rollouts by label (e.g. app=shop)'
            cand -f 'Plan from files instead of the cluster: files or directories of manifests (YAML or JSON, multi-document; - for stdin) with Rollouts, TrafficRoutings, gateway objects and optionally the kruise-rollout-configuration ConfigMap. Other documents are skipped (-v lists them); a directory''s .yaml, .yml and .json files are read, not its subdirectories (see -R) nor hidden files'
            cand --filename 'Plan from files instead of the cluster: files or directories of manifests (YAML or JSON, multi-document; - for stdin) with Rollouts, TrafficRoutings, gateway objects and optionally the kruise-rollout-configuration ConfigMap. Other documents are skipped (-v lists them); a directory''s .yaml, .yml and .json files are read, not its subdirectories (see -R) nor hidden files'
            cand -k 'Plan from the manifests `kubectl kustomize DIR` builds (as kubectl''s -k; needs kubectl on PATH)'
            cand --kustomize 'Plan from the manifests `kubectl kustomize DIR` builds (as kubectl''s -k; needs kubectl on PATH)'
            cand --validate 'With -f or -k: fields the Rollout and TrafficRouting CRDs do not define (misspelt ones)'
            cand --step 'Plan this step (1-based); default: the current step, none while the release is ending (offline: every step)'
            cand --dry-run 'Also send the planned objects to the API server with dryRun=All, so admission webhooks (e.g. Istio''s validation) judge them'
            cand -o 'Print the planned objects and a summary instead of diffs'
            cand --output 'Print the planned objects and a summary instead of diffs'
            cand --script 'Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE, or ingress.CLASSTYPE=FILE for an Ingress class (repeatable)'
            cand --lua-dir 'Look for DIR/<group>/<Kind>/trafficRouting.lua and DIR/trafficrouting_ingress/<classType>.lua before the built-in scripts and the ConfigMap'
            cand --controller-namespace 'Namespace of the controller''s kruise-rollout-configuration ConfigMap (read only when a kind has no other script)'
            cand --lua-timeout 'Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller''s is 1s)'
            cand --lua-memory 'Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)'
            cand --context 'The kubeconfig context to use'
            cand -n 'The namespace (default: the context''s; offline: objects without one are in "default")'
            cand --namespace 'The namespace (default: the context''s; offline: objects without one are in "default")'
            cand --as 'Username to impersonate for the operation'
            cand --as-group 'Group to impersonate for the operation (repeatable; needs --as, as in kubectl)'
            cand --request-timeout 'Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)'
            cand --all 'Every Rollout of the namespace, as kubectl''s --all'
            cand -A 'Every namespace''s Rollouts (with -l: those it selects), as kubectl get -A'
            cand --all-namespaces 'Every namespace''s Rollouts (with -l: those it selects), as kubectl get -A'
            cand -R 'With -f: read the subdirectories of directories too, as kubectl''s -R'
            cand --recursive 'With -f: read the subdirectories of directories too, as kubectl''s -R'
            cand --show-obj 'With -f or -k: print the obj each script gets, per step and object, as JSON (or YAML with -o yaml) instead of diffs; one entry''s obj is input for `eval --obj`. A kind or Ingress class without a script yet is shown too, with a note on stderr'
            cand --next 'Plan the step after the current one (the step the status''s nextStepIndex names, when patched to jump)'
            cand --all-steps 'Plan every step in order'
            cand --summary 'A line per step and object (what is written, and the traffic split) instead of diffs'
            cand --show-stored-original 'Show the stored original (the original-spec annotation) in full in diffs, not as `stored (sha256 …, N bytes)`'
            cand --detailed-exitcode 'Exit 0 when nothing would change, 2 when something would, 1 on error (a Rollout not in a release, whose plan by default previews its next release''s step 1, changes nothing now; a step asked for with --step, --next or --all-steps counts as asked, changes and all)'
            cand -v 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --verbose 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --no-color 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'kubectl-rollout_lua;approve'= {
            cand -l 'Select Rollouts by label (e.g. app=shop)'
            cand --selector 'Select Rollouts by label (e.g. app=shop)'
            cand --expect-step 'Refuse unless the current step is N (1 or more)'
            cand --dry-run 'client: show what would be written; server: send every write with dryRun=All'
            cand --until-step 'After approving, follow the Rollout and approve each later pause up to step N (1 or more, at most the Rollout''s steps)'
            cand --timeout 'With --until-step or --to-end: give up waiting this long after the confirmation (e.g. 30m; 0 for never)'
            cand --script 'Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE, or ingress.CLASSTYPE=FILE for an Ingress class (repeatable)'
            cand --lua-dir 'Look for DIR/<group>/<Kind>/trafficRouting.lua and DIR/trafficrouting_ingress/<classType>.lua before the built-in scripts and the ConfigMap'
            cand --controller-namespace 'Namespace of the controller''s kruise-rollout-configuration ConfigMap (read only when a kind has no other script)'
            cand --lua-timeout 'Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller''s is 1s)'
            cand --lua-memory 'Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)'
            cand --context 'The kubeconfig context to use'
            cand -n 'The namespace (default: the context''s; offline: objects without one are in "default")'
            cand --namespace 'The namespace (default: the context''s; offline: objects without one are in "default")'
            cand --as 'Username to impersonate for the operation'
            cand --as-group 'Group to impersonate for the operation (repeatable; needs --as, as in kubectl)'
            cand --request-timeout 'Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)'
            cand -y 'Do not ask for confirmation (required when stdin is not a terminal)'
            cand --yes 'Do not ask for confirmation (required when stdin is not a terminal)'
            cand --traffic-only 'Only make the gateway objects match the current step; do not approve (allowed in any step state of a release in progress; warns in BeforeStepUpgrade and StepUpgrade, before the step''s canary pods are ready)'
            cand --force 'Write all the same where a guard refuses: an object edited after it was routed (the edit is written over); a stored original that holds no spec (`{}`, `null`, an empty spec: writing from it wipes the object''s routing); a custom ref without a stored original that routes to the canary already (the controller stores that routing as the original); a `<name>-canary` Ingress that someone else made (its controller owner is not the Rollout); an object that another Rollout in a release, or a TrafficRouting in a release that the Rollout does not link, routes; an HTTPRoute write that leaves the stable Service without a rule; a step the API server would not admit now, or whose routing hangs on a workload''s replica count not read; a step the controller would stick at (its own Istio script fails on an object). An edit made during this run is still refused (on a terminal: asked), and so are annotations past the API server''s 256 KiB'
            cand --to-end 'After approving, follow the Rollout and approve every later pause until it completes'
            cand --show-stored-original 'Show the stored original (the original-spec annotation) in full in diffs, not as `stored (sha256 …, N bytes)`'
            cand -v 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --verbose 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --no-color 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'kubectl-rollout_lua;restore'= {
            cand -l 'Select Rollouts by label (e.g. app=shop)'
            cand --selector 'Select Rollouts by label (e.g. app=shop)'
            cand --ref 'Restore this gateway object instead of a Rollout''s: KIND.GROUP/NAME, or KIND/NAME for VirtualService (vs), DestinationRule (dr) and Ingress (ing) (repeatable; one that is not there fails the run, exit 1, after the others); a custom ref or a canary Ingress, not an HTTPRoute (restore its Rollout)'
            cand --from-backup 'Put back an object saved by an earlier write (a file under the backups folder); one that no longer exists is made again'
            cand --dry-run 'client: show what would be written; server: send every write with dryRun=All'
            cand --script 'Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE, or ingress.CLASSTYPE=FILE for an Ingress class (repeatable)'
            cand --lua-dir 'Look for DIR/<group>/<Kind>/trafficRouting.lua and DIR/trafficrouting_ingress/<classType>.lua before the built-in scripts and the ConfigMap'
            cand --controller-namespace 'Namespace of the controller''s kruise-rollout-configuration ConfigMap (read only when a kind has no other script)'
            cand --lua-timeout 'Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller''s is 1s)'
            cand --lua-memory 'Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)'
            cand --context 'The kubeconfig context to use'
            cand -n 'The namespace (default: the context''s; offline: objects without one are in "default")'
            cand --namespace 'The namespace (default: the context''s; offline: objects without one are in "default")'
            cand --as 'Username to impersonate for the operation'
            cand --as-group 'Group to impersonate for the operation (repeatable; needs --as, as in kubectl)'
            cand --request-timeout 'Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)'
            cand --force 'Restore even when someone edited the objects after the controller (or approve) wrote them, when a stored original holds no spec (restoring it wipes the object''s routing), (--ref, --from-backup) when the Rollouts that may route the objects cannot be read, (ROLLOUT, -l) when another Rollout in a release, or a TrafficRouting in a release that the Rollouts do not link, routes them, or (--from-backup) when the backup is not whole (no matching end line: cut short, changed, or an older version''s), holds no spec where the live object has one, or is of an object deleted and made again since'
            cand -y 'Do not ask for confirmation (required when stdin is not a terminal)'
            cand --yes 'Do not ask for confirmation (required when stdin is not a terminal)'
            cand -v 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --verbose 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --no-color 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'kubectl-rollout_lua;status'= {
            cand -l 'Select Rollouts by label (e.g. app=shop)'
            cand --selector 'Select Rollouts by label (e.g. app=shop)'
            cand --timeout 'With --watch: give up after this long (e.g. 10m; 0 for never)'
            cand -o 'Print the status as YAML or JSON; with --watch, each Rollout''s entry when it changes (the first read: each): JSON one compact document per line, YAML each after a `---`'
            cand --output 'Print the status as YAML or JSON; with --watch, each Rollout''s entry when it changes (the first read: each): JSON one compact document per line, YAML each after a `---`'
            cand --script 'Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE, or ingress.CLASSTYPE=FILE for an Ingress class (repeatable)'
            cand --lua-dir 'Look for DIR/<group>/<Kind>/trafficRouting.lua and DIR/trafficrouting_ingress/<classType>.lua before the built-in scripts and the ConfigMap'
            cand --controller-namespace 'Namespace of the controller''s kruise-rollout-configuration ConfigMap (read only when a kind has no other script)'
            cand --lua-timeout 'Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller''s is 1s)'
            cand --lua-memory 'Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)'
            cand --context 'The kubeconfig context to use'
            cand -n 'The namespace (default: the context''s; offline: objects without one are in "default")'
            cand --namespace 'The namespace (default: the context''s; offline: objects without one are in "default")'
            cand --as 'Username to impersonate for the operation'
            cand --as-group 'Group to impersonate for the operation (repeatable; needs --as, as in kubectl)'
            cand --request-timeout 'Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)'
            cand -A 'Every namespace''s Rollouts (with -l: those it selects), as kubectl get -A'
            cand --all-namespaces 'Every namespace''s Rollouts (with -l: those it selects), as kubectl get -A'
            cand -w 'Follow the Rollouts (a watch) until they complete or fail: a live view on a terminal (stderr), a line per change otherwise'
            cand --watch 'Follow the Rollouts (a watch) until they complete or fail: a live view on a terminal (stderr), a line per change otherwise'
            cand --until-paused 'With --watch: exit 0 as soon as every Rollout waits for approval (a gate for CI)'
            cand -v 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --verbose 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --no-color 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'kubectl-rollout_lua;release-claim'= {
            cand -l 'Select Rollouts by label (e.g. app=shop)'
            cand --selector 'Select Rollouts by label (e.g. app=shop)'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)'
            cand --context 'The kubeconfig context to use'
            cand -n 'The namespace (default: the context''s; offline: objects without one are in "default")'
            cand --namespace 'The namespace (default: the context''s; offline: objects without one are in "default")'
            cand --as 'Username to impersonate for the operation'
            cand --as-group 'Group to impersonate for the operation (repeatable; needs --as, as in kubectl)'
            cand --request-timeout 'Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)'
            cand -y 'Do not ask for confirmation (required when stdin is not a terminal)'
            cand --yes 'Do not ask for confirmation (required when stdin is not a terminal)'
            cand -v 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --verbose 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --no-color 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'kubectl-rollout_lua;record'= {
            cand -o 'The test cases'' format: YAML, the controller''s testdata format (the only one)'
            cand --output 'The test cases'' format: YAML, the controller''s testdata format (the only one)'
            cand --output-file 'Write the test cases to FILE instead of stdout, as YAML documents (plan -f FILE replays them; test replays --dir)'
            cand --dir 'Write the test cases into DIR, laid out as lua_configuration/ (DIR/<group>/<Kind>/testdata/…, an Ingress case in DIR/trafficrouting_ingress/testdata/<classType>/, with the script next to them) so that `test DIR` replays them, and `plan -R -f DIR --lua-dir DIR` plans them with those scripts; a file holding the case of another Rollout or object (another namespace''s), or no case, is never replaced'
            cand --script 'Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE, or ingress.CLASSTYPE=FILE for an Ingress class (repeatable)'
            cand --lua-dir 'Look for DIR/<group>/<Kind>/trafficRouting.lua and DIR/trafficrouting_ingress/<classType>.lua before the built-in scripts and the ConfigMap'
            cand --controller-namespace 'Namespace of the controller''s kruise-rollout-configuration ConfigMap (read only when a kind has no other script)'
            cand --lua-timeout 'Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller''s is 1s)'
            cand --lua-memory 'Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)'
            cand --kubeconfig 'Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)'
            cand --context 'The kubeconfig context to use'
            cand -n 'The namespace (default: the context''s; offline: objects without one are in "default")'
            cand --namespace 'The namespace (default: the context''s; offline: objects without one are in "default")'
            cand --as 'Username to impersonate for the operation'
            cand --as-group 'Group to impersonate for the operation (repeatable; needs --as, as in kubectl)'
            cand --request-timeout 'Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)'
            cand -v 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --verbose 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --no-color 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'kubectl-rollout_lua;test'= {
            cand -o 'Print a JSON report instead of text'
            cand --output 'Print a JSON report instead of text'
            cand --lua-timeout 'Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller''s is 1s)'
            cand --lua-memory 'Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)'
            cand -v 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --verbose 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --no-color 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'kubectl-rollout_lua;eval'= {
            cand --obj 'The obj the script sees (JSON or YAML; - for stdin), as `plan -f … --show-obj` prints it'
            cand --lua-timeout 'Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller''s is 1s)'
            cand --lua-memory 'Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)'
            cand --ingress 'Run an Ingress script (lua_configuration/trafficrouting_ingress/<classType>.lua): obj has annotations, weight (a string), matches, canaryService and requestHeaderModifier, and the returned annotations print as a JSON map with sorted keys (null for none)'
            cand -v 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --verbose 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --no-color 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'kubectl-rollout_lua;lua-obj'= {
            cand -o 'lua: a Lua file setting steps.step_1, steps.step_2, …; json or yaml: a list of {case, step, obj}, one entry of which `eval --obj` reads'
            cand --output 'lua: a Lua file setting steps.step_1, steps.step_2, …; json or yaml: a list of {case, step, obj}, one entry of which `eval --obj` reads'
            cand --output-file 'Write to FILE instead of stdout'
            cand -v 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --verbose 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --no-color 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'kubectl-rollout_lua;completions'= {
            cand -v 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --verbose 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --no-color 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'kubectl-rollout_lua;__complete'= {
            cand -v 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --verbose 'Say more on stderr (plan -f: what was read, and what was skipped and why)'
            cand --no-color 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'kubectl-rollout_lua;help'= {
            cand plan 'Show what a step does to the gateway objects, as a diff from their current content'
            cand approve 'Make the gateway objects match the current step, then approve the step (StepPaused -> StepReady)'
            cand restore 'Put gateway objects back to their stored original (as the controller does when a release ends)'
            cand status 'Show Rollouts'' progress and where each gateway object stands; -w follows it'
            cand release-claim 'Release the claim an approve or restore left on Rollouts (when its holder is gone)'
            cand record 'Write a live Rollout and its gateway objects'' originals as a test case, every step''s plan as expected'
            cand test 'Run scripts'' test cases (the controller''s testdata format) with the controller''s test-harness semantics'
            cand eval 'Run one script on one obj and print the result as canonical JSON'
            cand lua-obj 'Write the obj of every step of a test case as a Lua file, for debugging a script'
            cand completions 'Print a shell completion script (bash, zsh, fish, powershell, elvish, nushell)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kubectl-rollout_lua;help;plan'= {
        }
        &'kubectl-rollout_lua;help;approve'= {
        }
        &'kubectl-rollout_lua;help;restore'= {
        }
        &'kubectl-rollout_lua;help;status'= {
        }
        &'kubectl-rollout_lua;help;release-claim'= {
        }
        &'kubectl-rollout_lua;help;record'= {
        }
        &'kubectl-rollout_lua;help;test'= {
        }
        &'kubectl-rollout_lua;help;eval'= {
        }
        &'kubectl-rollout_lua;help;lua-obj'= {
        }
        &'kubectl-rollout_lua;help;completions'= {
        }
        &'kubectl-rollout_lua;help;__complete'= {
        }
        &'kubectl-rollout_lua;help;help'= {
        }
    ]
    $completions[$command]
}
