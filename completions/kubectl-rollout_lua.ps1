
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'kubectl-rollout_lua' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'kubectl-rollout_lua'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'kubectl-rollout_lua' {
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('plan', 'plan', [CompletionResultType]::ParameterValue, 'Show what a step does to the gateway objects, as a diff from their current content')
            [CompletionResult]::new('approve', 'approve', [CompletionResultType]::ParameterValue, 'Make the gateway objects match the current step, then approve the step (StepPaused -> StepReady)')
            [CompletionResult]::new('restore', 'restore', [CompletionResultType]::ParameterValue, 'Put gateway objects back to their stored original (as the controller does when a release ends)')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show Rollouts'' progress and where each gateway object stands; -w follows it')
            [CompletionResult]::new('release-claim', 'release-claim', [CompletionResultType]::ParameterValue, 'Release the claim an approve or restore left on Rollouts (when its holder is gone)')
            [CompletionResult]::new('record', 'record', [CompletionResultType]::ParameterValue, 'Write a live Rollout and its gateway objects'' originals as a test case, every step''s plan as expected')
            [CompletionResult]::new('test', 'test', [CompletionResultType]::ParameterValue, 'Run scripts'' test cases (the controller''s testdata format) with the controller''s test-harness semantics')
            [CompletionResult]::new('eval', 'eval', [CompletionResultType]::ParameterValue, 'Run one script on one obj and print the result as canonical JSON')
            [CompletionResult]::new('lua-obj', 'lua-obj', [CompletionResultType]::ParameterValue, 'Write the obj of every step of a test case as a Lua file, for debugging a script')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script (bash, zsh, fish, powershell, elvish, nushell)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-rollout_lua;plan' {
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Select Rollouts by label (e.g. app=shop)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Select Rollouts by label (e.g. app=shop)')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Plan from files instead of the cluster: files or directories of manifests (YAML or JSON, multi-document; - for stdin) with Rollouts, TrafficRoutings, gateway objects and optionally the kruise-rollout-configuration ConfigMap. Other documents are skipped (-v lists them); a directory''s .yaml, .yml and .json files are read, not its subdirectories (see -R) nor hidden files')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'Plan from files instead of the cluster: files or directories of manifests (YAML or JSON, multi-document; - for stdin) with Rollouts, TrafficRoutings, gateway objects and optionally the kruise-rollout-configuration ConfigMap. Other documents are skipped (-v lists them); a directory''s .yaml, .yml and .json files are read, not its subdirectories (see -R) nor hidden files')
            [CompletionResult]::new('-k', '-k', [CompletionResultType]::ParameterName, 'Plan from the manifests `kubectl kustomize DIR` builds (as kubectl''s -k; needs kubectl on PATH)')
            [CompletionResult]::new('--kustomize', '--kustomize', [CompletionResultType]::ParameterName, 'Plan from the manifests `kubectl kustomize DIR` builds (as kubectl''s -k; needs kubectl on PATH)')
            [CompletionResult]::new('--validate', '--validate', [CompletionResultType]::ParameterName, 'With -f or -k: fields the Rollout and TrafficRouting CRDs do not define (misspelt ones)')
            [CompletionResult]::new('--step', '--step', [CompletionResultType]::ParameterName, 'Plan this step (1-based); default: the current step, none while the release is ending (offline: every step)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Also send the planned objects to the API server with dryRun=All, so admission webhooks (e.g. Istio''s validation) judge them')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Print the planned objects and a summary instead of diffs')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Print the planned objects and a summary instead of diffs')
            [CompletionResult]::new('--script', '--script', [CompletionResultType]::ParameterName, 'Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE, or ingress.CLASSTYPE=FILE for an Ingress class (repeatable)')
            [CompletionResult]::new('--lua-dir', '--lua-dir', [CompletionResultType]::ParameterName, 'Look for DIR/<group>/<Kind>/trafficRouting.lua and DIR/trafficrouting_ingress/<classType>.lua before the built-in scripts and the ConfigMap')
            [CompletionResult]::new('--controller-namespace', '--controller-namespace', [CompletionResultType]::ParameterName, 'Namespace of the controller''s kruise-rollout-configuration ConfigMap (read only when a kind has no other script)')
            [CompletionResult]::new('--lua-timeout', '--lua-timeout', [CompletionResultType]::ParameterName, 'Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller''s is 1s)')
            [CompletionResult]::new('--lua-memory', '--lua-memory', [CompletionResultType]::ParameterName, 'Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s; offline: objects without one are in "default")')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s; offline: objects without one are in "default")')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use, instead of the context''s')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use, instead of the context''s')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'The API server''s URL, instead of the cluster''s (its certificate-authority still applies)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The API server''s URL, instead of the cluster''s (its certificate-authority still applies)')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'A CA certificate file, instead of the cluster''s certificate-authority')
            [CompletionResult]::new('--tls-server-name', '--tls-server-name', [CompletionResultType]::ParameterName, 'The name to verify the server''s certificate against, instead of the server''s host')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token to authenticate with, instead of the user''s (a user''s tokenFile is still read first, as in kubectl)')
            [CompletionResult]::new('--username', '--username', [CompletionResultType]::ParameterName, 'Username for basic authentication, instead of the user''s')
            [CompletionResult]::new('--password', '--password', [CompletionResultType]::ParameterName, 'Password for basic authentication, instead of the user''s')
            [CompletionResult]::new('--client-certificate', '--client-certificate', [CompletionResultType]::ParameterName, 'A client certificate file, instead of the user''s')
            [CompletionResult]::new('--client-key', '--client-key', [CompletionResultType]::ParameterName, 'The client certificate''s key file, instead of the user''s')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation (default: the kubeconfig user''s as)')
            [CompletionResult]::new('--as-uid', '--as-uid', [CompletionResultType]::ParameterName, 'UID to impersonate for the operation (needs a user to impersonate: --as, or the user''s as)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable; needs a user to impersonate: --as, or the user''s as)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Every Rollout of the namespace, as kubectl''s --all')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Every namespace''s Rollouts (with -l: those it selects), as kubectl get -A')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Every namespace''s Rollouts (with -l: those it selects), as kubectl get -A')
            [CompletionResult]::new('-R', '-R ', [CompletionResultType]::ParameterName, 'With -f: read the subdirectories of directories too, as kubectl''s -R')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'With -f: read the subdirectories of directories too, as kubectl''s -R')
            [CompletionResult]::new('--show-obj', '--show-obj', [CompletionResultType]::ParameterName, 'With -f or -k: print the obj each script gets, per step and object, as JSON (or YAML with -o yaml) instead of diffs; one entry''s obj is input for `eval --obj`. A kind or Ingress class without a script yet is shown too, with a note on stderr')
            [CompletionResult]::new('--next', '--next', [CompletionResultType]::ParameterName, 'Plan the step after the current one (the step the status''s nextStepIndex names, when patched to jump)')
            [CompletionResult]::new('--all-steps', '--all-steps', [CompletionResultType]::ParameterName, 'Plan every step in order')
            [CompletionResult]::new('--summary', '--summary', [CompletionResultType]::ParameterName, 'A line per step and object (what is written, and the traffic split) instead of diffs')
            [CompletionResult]::new('--show-stored-original', '--show-stored-original', [CompletionResultType]::ParameterName, 'Show the stored original (the original-spec annotation) in full in diffs, not as `stored (sha256 …, N bytes)`')
            [CompletionResult]::new('--detailed-exitcode', '--detailed-exitcode', [CompletionResultType]::ParameterName, 'Exit 0 when nothing would change, 2 when something would, 1 on error (a Rollout not in a release, whose plan by default previews its next release''s step 1, changes nothing now; a step asked for with --step, --next or --all-steps counts as asked, changes and all)')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not verify the server''s certificate (clears the cluster''s certificate-authority)')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-rollout_lua;approve' {
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Select Rollouts by label (e.g. app=shop)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Select Rollouts by label (e.g. app=shop)')
            [CompletionResult]::new('--expect-step', '--expect-step', [CompletionResultType]::ParameterName, 'Refuse unless the current step is N (1 or more); a release past step N''s approval (or at it, approved) is said to be approved already, exit 0, nothing written (not with --until-step or --to-end)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'client: show what would be written; server: send every write with dryRun=All')
            [CompletionResult]::new('--until-step', '--until-step', [CompletionResultType]::ParameterName, 'After approving, follow the Rollout and approve each later pause up to step N (1 or more, at most the Rollout''s steps)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'With --until-step or --to-end: give up waiting this long after the confirmation (e.g. 30m; 0 for never)')
            [CompletionResult]::new('--script', '--script', [CompletionResultType]::ParameterName, 'Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE, or ingress.CLASSTYPE=FILE for an Ingress class (repeatable)')
            [CompletionResult]::new('--lua-dir', '--lua-dir', [CompletionResultType]::ParameterName, 'Look for DIR/<group>/<Kind>/trafficRouting.lua and DIR/trafficrouting_ingress/<classType>.lua before the built-in scripts and the ConfigMap')
            [CompletionResult]::new('--controller-namespace', '--controller-namespace', [CompletionResultType]::ParameterName, 'Namespace of the controller''s kruise-rollout-configuration ConfigMap (read only when a kind has no other script)')
            [CompletionResult]::new('--lua-timeout', '--lua-timeout', [CompletionResultType]::ParameterName, 'Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller''s is 1s)')
            [CompletionResult]::new('--lua-memory', '--lua-memory', [CompletionResultType]::ParameterName, 'Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s; offline: objects without one are in "default")')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s; offline: objects without one are in "default")')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use, instead of the context''s')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use, instead of the context''s')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'The API server''s URL, instead of the cluster''s (its certificate-authority still applies)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The API server''s URL, instead of the cluster''s (its certificate-authority still applies)')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'A CA certificate file, instead of the cluster''s certificate-authority')
            [CompletionResult]::new('--tls-server-name', '--tls-server-name', [CompletionResultType]::ParameterName, 'The name to verify the server''s certificate against, instead of the server''s host')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token to authenticate with, instead of the user''s (a user''s tokenFile is still read first, as in kubectl)')
            [CompletionResult]::new('--username', '--username', [CompletionResultType]::ParameterName, 'Username for basic authentication, instead of the user''s')
            [CompletionResult]::new('--password', '--password', [CompletionResultType]::ParameterName, 'Password for basic authentication, instead of the user''s')
            [CompletionResult]::new('--client-certificate', '--client-certificate', [CompletionResultType]::ParameterName, 'A client certificate file, instead of the user''s')
            [CompletionResult]::new('--client-key', '--client-key', [CompletionResultType]::ParameterName, 'The client certificate''s key file, instead of the user''s')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation (default: the kubeconfig user''s as)')
            [CompletionResult]::new('--as-uid', '--as-uid', [CompletionResultType]::ParameterName, 'UID to impersonate for the operation (needs a user to impersonate: --as, or the user''s as)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable; needs a user to impersonate: --as, or the user''s as)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (required when stdin is not a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (required when stdin is not a terminal)')
            [CompletionResult]::new('--traffic-only', '--traffic-only', [CompletionResultType]::ParameterName, 'Only make the gateway objects match the current step; do not approve (allowed in any step state of a release in progress; warns in BeforeStepUpgrade and StepUpgrade, before the step''s canary pods are ready)')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Write all the same where a guard refuses: an object edited after it was routed (the edit is written over); a stored original that holds no spec (`{}`, `null`, an empty spec: writing from it wipes the object''s routing); a custom ref without a stored original that routes to the canary already (the controller stores that routing as the original); a `<name>-canary` Ingress that someone else made (its controller owner is not the Rollout); an object that another Rollout in a release, or a TrafficRouting in a release that the Rollout does not link, routes; an HTTPRoute write that leaves the stable Service without a rule; a step the API server would not admit now, or whose routing hangs on a workload''s replica count not read; a step the controller would stick at (its own Istio script fails on an object). An edit made during this run is still refused (on a terminal: asked), and so are annotations past the API server''s 256 KiB')
            [CompletionResult]::new('--to-end', '--to-end', [CompletionResultType]::ParameterName, 'After approving, follow the Rollout and approve every later pause until it completes')
            [CompletionResult]::new('--show-stored-original', '--show-stored-original', [CompletionResultType]::ParameterName, 'Show the stored original (the original-spec annotation) in full in diffs, not as `stored (sha256 …, N bytes)`')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not verify the server''s certificate (clears the cluster''s certificate-authority)')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-rollout_lua;restore' {
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Select Rollouts by label (e.g. app=shop)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Select Rollouts by label (e.g. app=shop)')
            [CompletionResult]::new('--ref', '--ref', [CompletionResultType]::ParameterName, 'Restore this gateway object instead of a Rollout''s: KIND.GROUP/NAME (KIND.VERSION.GROUP/NAME names the version), or KIND/NAME for VirtualService (vs), DestinationRule (dr) and Ingress (ing) (repeatable; one that is not there fails the run, exit 1, after the others); a custom ref or a canary Ingress, not an HTTPRoute (restore its Rollout)')
            [CompletionResult]::new('--from-backup', '--from-backup', [CompletionResultType]::ParameterName, 'Put back an object saved by an earlier write (a file under the backups folder); one that no longer exists is made again')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'client: show what would be written; server: send every write with dryRun=All')
            [CompletionResult]::new('--script', '--script', [CompletionResultType]::ParameterName, 'Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE, or ingress.CLASSTYPE=FILE for an Ingress class (repeatable)')
            [CompletionResult]::new('--lua-dir', '--lua-dir', [CompletionResultType]::ParameterName, 'Look for DIR/<group>/<Kind>/trafficRouting.lua and DIR/trafficrouting_ingress/<classType>.lua before the built-in scripts and the ConfigMap')
            [CompletionResult]::new('--controller-namespace', '--controller-namespace', [CompletionResultType]::ParameterName, 'Namespace of the controller''s kruise-rollout-configuration ConfigMap (read only when a kind has no other script)')
            [CompletionResult]::new('--lua-timeout', '--lua-timeout', [CompletionResultType]::ParameterName, 'Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller''s is 1s)')
            [CompletionResult]::new('--lua-memory', '--lua-memory', [CompletionResultType]::ParameterName, 'Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s; offline: objects without one are in "default")')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s; offline: objects without one are in "default")')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use, instead of the context''s')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use, instead of the context''s')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'The API server''s URL, instead of the cluster''s (its certificate-authority still applies)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The API server''s URL, instead of the cluster''s (its certificate-authority still applies)')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'A CA certificate file, instead of the cluster''s certificate-authority')
            [CompletionResult]::new('--tls-server-name', '--tls-server-name', [CompletionResultType]::ParameterName, 'The name to verify the server''s certificate against, instead of the server''s host')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token to authenticate with, instead of the user''s (a user''s tokenFile is still read first, as in kubectl)')
            [CompletionResult]::new('--username', '--username', [CompletionResultType]::ParameterName, 'Username for basic authentication, instead of the user''s')
            [CompletionResult]::new('--password', '--password', [CompletionResultType]::ParameterName, 'Password for basic authentication, instead of the user''s')
            [CompletionResult]::new('--client-certificate', '--client-certificate', [CompletionResultType]::ParameterName, 'A client certificate file, instead of the user''s')
            [CompletionResult]::new('--client-key', '--client-key', [CompletionResultType]::ParameterName, 'The client certificate''s key file, instead of the user''s')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation (default: the kubeconfig user''s as)')
            [CompletionResult]::new('--as-uid', '--as-uid', [CompletionResultType]::ParameterName, 'UID to impersonate for the operation (needs a user to impersonate: --as, or the user''s as)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable; needs a user to impersonate: --as, or the user''s as)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Restore even when someone edited the objects after the controller (or approve) wrote them, when a stored original holds no spec (restoring it wipes the object''s routing), (--ref, --from-backup) when the Rollouts that may route the objects cannot be read, (ROLLOUT, -l) when another Rollout in a release, or a TrafficRouting in a release that the Rollouts do not link, routes them, or (--from-backup) when the backup is not whole (no matching end line: cut short, changed, or an older version''s), holds no spec where the live object has one, or is of an object deleted and made again since')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (required when stdin is not a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (required when stdin is not a terminal)')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not verify the server''s certificate (clears the cluster''s certificate-authority)')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-rollout_lua;status' {
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Select Rollouts by label (e.g. app=shop)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Select Rollouts by label (e.g. app=shop)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'With --watch: give up after this long (e.g. 10m; 0 for never)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Print the status as YAML or JSON; with --watch, each Rollout''s entry when it changes (the first read: each): JSON one compact document per line, YAML each after a `---`')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Print the status as YAML or JSON; with --watch, each Rollout''s entry when it changes (the first read: each): JSON one compact document per line, YAML each after a `---`')
            [CompletionResult]::new('--script', '--script', [CompletionResultType]::ParameterName, 'Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE, or ingress.CLASSTYPE=FILE for an Ingress class (repeatable)')
            [CompletionResult]::new('--lua-dir', '--lua-dir', [CompletionResultType]::ParameterName, 'Look for DIR/<group>/<Kind>/trafficRouting.lua and DIR/trafficrouting_ingress/<classType>.lua before the built-in scripts and the ConfigMap')
            [CompletionResult]::new('--controller-namespace', '--controller-namespace', [CompletionResultType]::ParameterName, 'Namespace of the controller''s kruise-rollout-configuration ConfigMap (read only when a kind has no other script)')
            [CompletionResult]::new('--lua-timeout', '--lua-timeout', [CompletionResultType]::ParameterName, 'Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller''s is 1s)')
            [CompletionResult]::new('--lua-memory', '--lua-memory', [CompletionResultType]::ParameterName, 'Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s; offline: objects without one are in "default")')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s; offline: objects without one are in "default")')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use, instead of the context''s')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use, instead of the context''s')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'The API server''s URL, instead of the cluster''s (its certificate-authority still applies)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The API server''s URL, instead of the cluster''s (its certificate-authority still applies)')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'A CA certificate file, instead of the cluster''s certificate-authority')
            [CompletionResult]::new('--tls-server-name', '--tls-server-name', [CompletionResultType]::ParameterName, 'The name to verify the server''s certificate against, instead of the server''s host')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token to authenticate with, instead of the user''s (a user''s tokenFile is still read first, as in kubectl)')
            [CompletionResult]::new('--username', '--username', [CompletionResultType]::ParameterName, 'Username for basic authentication, instead of the user''s')
            [CompletionResult]::new('--password', '--password', [CompletionResultType]::ParameterName, 'Password for basic authentication, instead of the user''s')
            [CompletionResult]::new('--client-certificate', '--client-certificate', [CompletionResultType]::ParameterName, 'A client certificate file, instead of the user''s')
            [CompletionResult]::new('--client-key', '--client-key', [CompletionResultType]::ParameterName, 'The client certificate''s key file, instead of the user''s')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation (default: the kubeconfig user''s as)')
            [CompletionResult]::new('--as-uid', '--as-uid', [CompletionResultType]::ParameterName, 'UID to impersonate for the operation (needs a user to impersonate: --as, or the user''s as)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable; needs a user to impersonate: --as, or the user''s as)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Every namespace''s Rollouts (with -l: those it selects), as kubectl get -A')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Every namespace''s Rollouts (with -l: those it selects), as kubectl get -A')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Follow the Rollouts (a watch) until they complete or fail: a live view on a terminal (stderr), a line per change otherwise')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Follow the Rollouts (a watch) until they complete or fail: a live view on a terminal (stderr), a line per change otherwise')
            [CompletionResult]::new('--until-paused', '--until-paused', [CompletionResultType]::ParameterName, 'With --watch: exit 0 as soon as every Rollout waits for approval (a gate for CI)')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not verify the server''s certificate (clears the cluster''s certificate-authority)')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-rollout_lua;release-claim' {
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Select Rollouts by label (e.g. app=shop)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Select Rollouts by label (e.g. app=shop)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s; offline: objects without one are in "default")')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s; offline: objects without one are in "default")')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use, instead of the context''s')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use, instead of the context''s')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'The API server''s URL, instead of the cluster''s (its certificate-authority still applies)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The API server''s URL, instead of the cluster''s (its certificate-authority still applies)')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'A CA certificate file, instead of the cluster''s certificate-authority')
            [CompletionResult]::new('--tls-server-name', '--tls-server-name', [CompletionResultType]::ParameterName, 'The name to verify the server''s certificate against, instead of the server''s host')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token to authenticate with, instead of the user''s (a user''s tokenFile is still read first, as in kubectl)')
            [CompletionResult]::new('--username', '--username', [CompletionResultType]::ParameterName, 'Username for basic authentication, instead of the user''s')
            [CompletionResult]::new('--password', '--password', [CompletionResultType]::ParameterName, 'Password for basic authentication, instead of the user''s')
            [CompletionResult]::new('--client-certificate', '--client-certificate', [CompletionResultType]::ParameterName, 'A client certificate file, instead of the user''s')
            [CompletionResult]::new('--client-key', '--client-key', [CompletionResultType]::ParameterName, 'The client certificate''s key file, instead of the user''s')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation (default: the kubeconfig user''s as)')
            [CompletionResult]::new('--as-uid', '--as-uid', [CompletionResultType]::ParameterName, 'UID to impersonate for the operation (needs a user to impersonate: --as, or the user''s as)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable; needs a user to impersonate: --as, or the user''s as)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (required when stdin is not a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (required when stdin is not a terminal)')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not verify the server''s certificate (clears the cluster''s certificate-authority)')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-rollout_lua;record' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'The test cases'' format: YAML, the controller''s testdata format (the only one)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'The test cases'' format: YAML, the controller''s testdata format (the only one)')
            [CompletionResult]::new('--output-file', '--output-file', [CompletionResultType]::ParameterName, 'Write the test cases to FILE instead of stdout, as YAML documents (plan -f FILE replays them; test replays --dir)')
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Write the test cases into DIR, laid out as lua_configuration/ (DIR/<group>/<Kind>/testdata/…, an Ingress case in DIR/trafficrouting_ingress/testdata/<classType>/, with the script next to them) so that `test DIR` replays them, and `plan -R -f DIR --lua-dir DIR` plans them with those scripts; a file holding the case of another Rollout or object (another namespace''s), or no case, is never replaced')
            [CompletionResult]::new('--script', '--script', [CompletionResultType]::ParameterName, 'Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE, or ingress.CLASSTYPE=FILE for an Ingress class (repeatable)')
            [CompletionResult]::new('--lua-dir', '--lua-dir', [CompletionResultType]::ParameterName, 'Look for DIR/<group>/<Kind>/trafficRouting.lua and DIR/trafficrouting_ingress/<classType>.lua before the built-in scripts and the ConfigMap')
            [CompletionResult]::new('--controller-namespace', '--controller-namespace', [CompletionResultType]::ParameterName, 'Namespace of the controller''s kruise-rollout-configuration ConfigMap (read only when a kind has no other script)')
            [CompletionResult]::new('--lua-timeout', '--lua-timeout', [CompletionResultType]::ParameterName, 'Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller''s is 1s)')
            [CompletionResult]::new('--lua-memory', '--lua-memory', [CompletionResultType]::ParameterName, 'Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'The kubeconfig context to use')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s; offline: objects without one are in "default")')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace (default: the context''s; offline: objects without one are in "default")')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The kubeconfig cluster to use, instead of the context''s')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The kubeconfig user to use, instead of the context''s')
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'The API server''s URL, instead of the cluster''s (its certificate-authority still applies)')
            [CompletionResult]::new('--server', '--server', [CompletionResultType]::ParameterName, 'The API server''s URL, instead of the cluster''s (its certificate-authority still applies)')
            [CompletionResult]::new('--certificate-authority', '--certificate-authority', [CompletionResultType]::ParameterName, 'A CA certificate file, instead of the cluster''s certificate-authority')
            [CompletionResult]::new('--tls-server-name', '--tls-server-name', [CompletionResultType]::ParameterName, 'The name to verify the server''s certificate against, instead of the server''s host')
            [CompletionResult]::new('--token', '--token', [CompletionResultType]::ParameterName, 'Bearer token to authenticate with, instead of the user''s (a user''s tokenFile is still read first, as in kubectl)')
            [CompletionResult]::new('--username', '--username', [CompletionResultType]::ParameterName, 'Username for basic authentication, instead of the user''s')
            [CompletionResult]::new('--password', '--password', [CompletionResultType]::ParameterName, 'Password for basic authentication, instead of the user''s')
            [CompletionResult]::new('--client-certificate', '--client-certificate', [CompletionResultType]::ParameterName, 'A client certificate file, instead of the user''s')
            [CompletionResult]::new('--client-key', '--client-key', [CompletionResultType]::ParameterName, 'The client certificate''s key file, instead of the user''s')
            [CompletionResult]::new('--as', '--as', [CompletionResultType]::ParameterName, 'Username to impersonate for the operation (default: the kubeconfig user''s as)')
            [CompletionResult]::new('--as-uid', '--as-uid', [CompletionResultType]::ParameterName, 'UID to impersonate for the operation (needs a user to impersonate: --as, or the user''s as)')
            [CompletionResult]::new('--as-group', '--as-group', [CompletionResultType]::ParameterName, 'Group to impersonate for the operation (repeatable; needs a user to impersonate: --as, or the user''s as)')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('--insecure-skip-tls-verify', '--insecure-skip-tls-verify', [CompletionResultType]::ParameterName, 'Do not verify the server''s certificate (clears the cluster''s certificate-authority)')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'kubectl-rollout_lua;test' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Print a JSON report instead of text')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Print a JSON report instead of text')
            [CompletionResult]::new('--lua-timeout', '--lua-timeout', [CompletionResultType]::ParameterName, 'Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller''s is 1s)')
            [CompletionResult]::new('--lua-memory', '--lua-memory', [CompletionResultType]::ParameterName, 'Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-rollout_lua;eval' {
            [CompletionResult]::new('--obj', '--obj', [CompletionResultType]::ParameterName, 'The obj the script sees (JSON or YAML; - for stdin), as `plan -f … --show-obj` prints it')
            [CompletionResult]::new('--lua-timeout', '--lua-timeout', [CompletionResultType]::ParameterName, 'Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller''s is 1s)')
            [CompletionResult]::new('--lua-memory', '--lua-memory', [CompletionResultType]::ParameterName, 'Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('--ingress', '--ingress', [CompletionResultType]::ParameterName, 'Run an Ingress script (lua_configuration/trafficrouting_ingress/<classType>.lua): obj has annotations, weight (a string), matches, canaryService and requestHeaderModifier, and the returned annotations print as a JSON map with sorted keys (null for none)')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'kubectl-rollout_lua;lua-obj' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'lua: a Lua file setting steps.step_1, steps.step_2, …; json or yaml: a list of {case, step, obj}, one entry of which `eval --obj` reads')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'lua: a Lua file setting steps.step_1, steps.step_2, …; json or yaml: a list of {case, step, obj}, one entry of which `eval --obj` reads')
            [CompletionResult]::new('--output-file', '--output-file', [CompletionResultType]::ParameterName, 'Write to FILE instead of stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'kubectl-rollout_lua;completions' {
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'kubectl-rollout_lua;__complete' {
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl''s: each request to the API server, with its answer''s status and time')
            [CompletionResult]::new('--no-color', '--no-color', [CompletionResultType]::ParameterName, 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'kubectl-rollout_lua;help' {
            [CompletionResult]::new('plan', 'plan', [CompletionResultType]::ParameterValue, 'Show what a step does to the gateway objects, as a diff from their current content')
            [CompletionResult]::new('approve', 'approve', [CompletionResultType]::ParameterValue, 'Make the gateway objects match the current step, then approve the step (StepPaused -> StepReady)')
            [CompletionResult]::new('restore', 'restore', [CompletionResultType]::ParameterValue, 'Put gateway objects back to their stored original (as the controller does when a release ends)')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show Rollouts'' progress and where each gateway object stands; -w follows it')
            [CompletionResult]::new('release-claim', 'release-claim', [CompletionResultType]::ParameterValue, 'Release the claim an approve or restore left on Rollouts (when its holder is gone)')
            [CompletionResult]::new('record', 'record', [CompletionResultType]::ParameterValue, 'Write a live Rollout and its gateway objects'' originals as a test case, every step''s plan as expected')
            [CompletionResult]::new('test', 'test', [CompletionResultType]::ParameterValue, 'Run scripts'' test cases (the controller''s testdata format) with the controller''s test-harness semantics')
            [CompletionResult]::new('eval', 'eval', [CompletionResultType]::ParameterValue, 'Run one script on one obj and print the result as canonical JSON')
            [CompletionResult]::new('lua-obj', 'lua-obj', [CompletionResultType]::ParameterValue, 'Write the obj of every step of a test case as a Lua file, for debugging a script')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script (bash, zsh, fish, powershell, elvish, nushell)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-rollout_lua;help;plan' {
            break
        }
        'kubectl-rollout_lua;help;approve' {
            break
        }
        'kubectl-rollout_lua;help;restore' {
            break
        }
        'kubectl-rollout_lua;help;status' {
            break
        }
        'kubectl-rollout_lua;help;release-claim' {
            break
        }
        'kubectl-rollout_lua;help;record' {
            break
        }
        'kubectl-rollout_lua;help;test' {
            break
        }
        'kubectl-rollout_lua;help;eval' {
            break
        }
        'kubectl-rollout_lua;help;lua-obj' {
            break
        }
        'kubectl-rollout_lua;help;completions' {
            break
        }
        'kubectl-rollout_lua;help;__complete' {
            break
        }
        'kubectl-rollout_lua;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
