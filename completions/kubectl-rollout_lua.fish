# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kubectl_rollout_lua_global_optspecs
    string join \n v/verbose= no-color h/help V/version
end

function __fish_kubectl_rollout_lua_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_kubectl_rollout_lua_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_kubectl_rollout_lua_using_subcommand
    set -l cmd (__fish_kubectl_rollout_lua_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_needs_command" -s v -l verbose -d 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl\'s: each request to the API server, with its answer\'s status and time' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_needs_command" -l no-color -d 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_needs_command" -s V -l version -d 'Print version'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_needs_command" -f -a "plan" -d 'Show what a step does to the gateway objects, as a diff from their current content'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_needs_command" -f -a "approve" -d 'Make the gateway objects match the current step, then approve the step (StepPaused -> StepReady)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_needs_command" -f -a "restore" -d 'Put gateway objects back to their stored original (as the controller does when a release ends)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_needs_command" -f -a "status" -d 'Show Rollouts\' progress and where each gateway object stands; -w follows it'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_needs_command" -f -a "release-claim" -d 'Release the claim an approve or restore left on Rollouts (when its holder is gone)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_needs_command" -f -a "record" -d 'Write a live Rollout and its gateway objects\' originals as a test case, every step\'s plan as expected'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_needs_command" -f -a "test" -d 'Run scripts\' test cases (the controller\'s testdata format) with the controller\'s test-harness semantics'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_needs_command" -f -a "eval" -d 'Run one script on one obj and print the result as canonical JSON'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_needs_command" -f -a "lua-obj" -d 'Write the obj of every step of a test case as a Lua file, for debugging a script'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_needs_command" -f -a "completions" -d 'Print a shell completion script (bash, zsh, fish, powershell, elvish, nushell)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -s l -l selector -d 'Select Rollouts by label (e.g. app=shop)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -s f -l filename -d 'Plan from files instead of the cluster: files or directories of manifests (YAML or JSON, multi-document; - for stdin) with Rollouts, TrafficRoutings, gateway objects and optionally the kruise-rollout-configuration ConfigMap. Other documents are skipped (-v lists them); a directory\'s .yaml, .yml and .json files are read, not its subdirectories (see -R) nor hidden files' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -s k -l kustomize -d 'Plan from the manifests `kubectl kustomize DIR` builds (as kubectl\'s -k; needs kubectl on PATH)' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l validate -d 'With -f or -k: fields the Rollout and TrafficRouting CRDs do not define (misspelt ones)' -r -f -a "strict\t'Refuse the input'
warn\t'Warn in the plan'
ignore\t'Say nothing'"
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l step -d 'Plan this step (1-based); default: the current step, none while the release is ending (offline: every step)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l dry-run -d 'Also send the planned objects to the API server with dryRun=All, so admission webhooks (e.g. Istio\'s validation) judge them' -r -f -a "server\t''"
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -s o -l output -d 'Print the planned objects and a summary instead of diffs' -r -f -a "yaml\t''
json\t''"
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l script -d 'Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE, or ingress.CLASSTYPE=FILE for an Ingress class (repeatable)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l lua-dir -d 'Look for DIR/<group>/<Kind>/trafficRouting.lua and DIR/trafficrouting_ingress/<classType>.lua before the built-in scripts and the ConfigMap' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l controller-namespace -d 'Namespace of the controller\'s kruise-rollout-configuration ConfigMap (read only when a kind has no other script)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l lua-timeout -d 'Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller\'s is 1s)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l lua-memory -d 'Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -s n -l namespace -d 'The namespace (default: the context\'s; offline: objects without one are in "default")' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l cluster -d 'The kubeconfig cluster to use, instead of the context\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l user -d 'The kubeconfig user to use, instead of the context\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -s s -l server -d 'The API server\'s URL, instead of the cluster\'s (its certificate-authority still applies)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l certificate-authority -d 'A CA certificate file, instead of the cluster\'s certificate-authority' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l tls-server-name -d 'The name to verify the server\'s certificate against, instead of the server\'s host' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l token -d 'Bearer token to authenticate with, instead of the user\'s (a user\'s tokenFile is still read first, as in kubectl)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l username -d 'Username for basic authentication, instead of the user\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l password -d 'Password for basic authentication, instead of the user\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l client-certificate -d 'A client certificate file, instead of the user\'s' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l client-key -d 'The client certificate\'s key file, instead of the user\'s' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l as -d 'Username to impersonate for the operation (default: the kubeconfig user\'s as)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l as-uid -d 'UID to impersonate for the operation (needs a user to impersonate: --as, or the user\'s as)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l as-group -d 'Group to impersonate for the operation (repeatable; needs a user to impersonate: --as, or the user\'s as)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l request-timeout -d 'Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -s v -l verbose -d 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl\'s: each request to the API server, with its answer\'s status and time' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l all -d 'Every Rollout of the namespace, as kubectl\'s --all'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -s A -l all-namespaces -d 'Every namespace\'s Rollouts (with -l: those it selects), as kubectl get -A'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -s R -l recursive -d 'With -f: read the subdirectories of directories too, as kubectl\'s -R'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l show-obj -d 'With -f or -k: print the obj each script gets, per step and object, as JSON (or YAML with -o yaml) instead of diffs; one entry\'s obj is input for `eval --obj`. A kind or Ingress class without a script yet is shown too, with a note on stderr'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l next -d 'Plan the step after the current one (the step the status\'s nextStepIndex names, when patched to jump)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l all-steps -d 'Plan every step in order'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l summary -d 'A line per step and object (what is written, and the traffic split) instead of diffs'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l show-stored-original -d 'Show the stored original (the original-spec annotation) in full in diffs, not as `stored (sha256 …, N bytes)`'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l detailed-exitcode -d 'Exit 0 when nothing would change, 2 when something would, 1 on error (a Rollout not in a release, whose plan by default previews its next release\'s step 1, changes nothing now; a step asked for with --step, --next or --all-steps counts as asked, changes and all)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l insecure-skip-tls-verify -d 'Do not verify the server\'s certificate (clears the cluster\'s certificate-authority)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -l no-color -d 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand plan" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -s l -l selector -d 'Select Rollouts by label (e.g. app=shop)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l expect-step -d 'Refuse unless the current step is N (1 or more); a release past step N\'s approval (or at it, approved) is said to be approved already, exit 0, nothing written (not with --until-step or --to-end)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l dry-run -d 'client: show what would be written; server: send every write with dryRun=All' -r -f -a "none\t''
client\t''
server\t''"
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l until-step -d 'After approving, follow the Rollout and approve each later pause up to step N (1 or more, at most the Rollout\'s steps)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l timeout -d 'With --until-step or --to-end: give up waiting this long after the confirmation (e.g. 30m; 0 for never)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l script -d 'Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE, or ingress.CLASSTYPE=FILE for an Ingress class (repeatable)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l lua-dir -d 'Look for DIR/<group>/<Kind>/trafficRouting.lua and DIR/trafficrouting_ingress/<classType>.lua before the built-in scripts and the ConfigMap' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l controller-namespace -d 'Namespace of the controller\'s kruise-rollout-configuration ConfigMap (read only when a kind has no other script)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l lua-timeout -d 'Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller\'s is 1s)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l lua-memory -d 'Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -s n -l namespace -d 'The namespace (default: the context\'s; offline: objects without one are in "default")' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l cluster -d 'The kubeconfig cluster to use, instead of the context\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l user -d 'The kubeconfig user to use, instead of the context\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -s s -l server -d 'The API server\'s URL, instead of the cluster\'s (its certificate-authority still applies)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l certificate-authority -d 'A CA certificate file, instead of the cluster\'s certificate-authority' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l tls-server-name -d 'The name to verify the server\'s certificate against, instead of the server\'s host' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l token -d 'Bearer token to authenticate with, instead of the user\'s (a user\'s tokenFile is still read first, as in kubectl)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l username -d 'Username for basic authentication, instead of the user\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l password -d 'Password for basic authentication, instead of the user\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l client-certificate -d 'A client certificate file, instead of the user\'s' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l client-key -d 'The client certificate\'s key file, instead of the user\'s' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l as -d 'Username to impersonate for the operation (default: the kubeconfig user\'s as)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l as-uid -d 'UID to impersonate for the operation (needs a user to impersonate: --as, or the user\'s as)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l as-group -d 'Group to impersonate for the operation (repeatable; needs a user to impersonate: --as, or the user\'s as)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l request-timeout -d 'Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -s v -l verbose -d 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl\'s: each request to the API server, with its answer\'s status and time' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -s y -l yes -d 'Do not ask for confirmation (required when stdin is not a terminal)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l traffic-only -d 'Only make the gateway objects match the current step; do not approve (allowed in any step state of a release in progress; warns in BeforeStepUpgrade and StepUpgrade, before the step\'s canary pods are ready)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l force -d 'Write all the same where a guard refuses: an object edited after it was routed (the edit is written over); a stored original that holds no spec (`{}`, `null`, an empty spec: writing from it wipes the object\'s routing); a custom ref without a stored original that routes to the canary already (the controller stores that routing as the original); a `<name>-canary` Ingress that someone else made (its controller owner is not the Rollout); an object that another Rollout in a release, or a TrafficRouting in a release that the Rollout does not link, routes; an HTTPRoute write that leaves the stable Service without a rule; a step the API server would not admit now, or whose routing hangs on a workload\'s replica count not read; a step the controller would stick at (its own Istio script fails on an object). An edit made during this run is still refused (on a terminal: asked), and so are annotations past the API server\'s 256 KiB'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l to-end -d 'After approving, follow the Rollout and approve every later pause until it completes'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l show-stored-original -d 'Show the stored original (the original-spec annotation) in full in diffs, not as `stored (sha256 …, N bytes)`'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l insecure-skip-tls-verify -d 'Do not verify the server\'s certificate (clears the cluster\'s certificate-authority)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -l no-color -d 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand approve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -s l -l selector -d 'Select Rollouts by label (e.g. app=shop)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l ref -d 'Restore this gateway object instead of a Rollout\'s: KIND.GROUP/NAME (KIND.VERSION.GROUP/NAME names the version), or KIND/NAME for VirtualService (vs), DestinationRule (dr) and Ingress (ing) (repeatable; one that is not there fails the run, exit 1, after the others); a custom ref or a canary Ingress, not an HTTPRoute (restore its Rollout)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l from-backup -d 'Put back an object saved by an earlier write (a file under the backups folder); one that no longer exists is made again' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l dry-run -d 'client: show what would be written; server: send every write with dryRun=All' -r -f -a "none\t''
client\t''
server\t''"
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l script -d 'Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE, or ingress.CLASSTYPE=FILE for an Ingress class (repeatable)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l lua-dir -d 'Look for DIR/<group>/<Kind>/trafficRouting.lua and DIR/trafficrouting_ingress/<classType>.lua before the built-in scripts and the ConfigMap' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l controller-namespace -d 'Namespace of the controller\'s kruise-rollout-configuration ConfigMap (read only when a kind has no other script)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l lua-timeout -d 'Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller\'s is 1s)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l lua-memory -d 'Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -s n -l namespace -d 'The namespace (default: the context\'s; offline: objects without one are in "default")' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l cluster -d 'The kubeconfig cluster to use, instead of the context\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l user -d 'The kubeconfig user to use, instead of the context\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -s s -l server -d 'The API server\'s URL, instead of the cluster\'s (its certificate-authority still applies)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l certificate-authority -d 'A CA certificate file, instead of the cluster\'s certificate-authority' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l tls-server-name -d 'The name to verify the server\'s certificate against, instead of the server\'s host' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l token -d 'Bearer token to authenticate with, instead of the user\'s (a user\'s tokenFile is still read first, as in kubectl)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l username -d 'Username for basic authentication, instead of the user\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l password -d 'Password for basic authentication, instead of the user\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l client-certificate -d 'A client certificate file, instead of the user\'s' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l client-key -d 'The client certificate\'s key file, instead of the user\'s' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l as -d 'Username to impersonate for the operation (default: the kubeconfig user\'s as)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l as-uid -d 'UID to impersonate for the operation (needs a user to impersonate: --as, or the user\'s as)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l as-group -d 'Group to impersonate for the operation (repeatable; needs a user to impersonate: --as, or the user\'s as)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l request-timeout -d 'Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -s v -l verbose -d 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl\'s: each request to the API server, with its answer\'s status and time' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l force -d 'Restore even when someone edited the objects after the controller (or approve) wrote them, when a stored original holds no spec (restoring it wipes the object\'s routing), (--ref, --from-backup) when the Rollouts that may route the objects cannot be read, (ROLLOUT, -l) when another Rollout in a release, or a TrafficRouting in a release that the Rollouts do not link, routes them, or (--from-backup) when the backup is not whole (no matching end line: cut short, changed, or an older version\'s), holds no spec where the live object has one, or is of an object deleted and made again since'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -s y -l yes -d 'Do not ask for confirmation (required when stdin is not a terminal)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l insecure-skip-tls-verify -d 'Do not verify the server\'s certificate (clears the cluster\'s certificate-authority)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -l no-color -d 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand restore" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -s l -l selector -d 'Select Rollouts by label (e.g. app=shop)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l timeout -d 'With --watch: give up after this long (e.g. 10m; 0 for never)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -s o -l output -d 'Print the status as YAML or JSON; with --watch, each Rollout\'s entry when it changes (the first read: each): JSON one compact document per line, YAML each after a `---`' -r -f -a "yaml\t''
json\t''"
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l script -d 'Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE, or ingress.CLASSTYPE=FILE for an Ingress class (repeatable)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l lua-dir -d 'Look for DIR/<group>/<Kind>/trafficRouting.lua and DIR/trafficrouting_ingress/<classType>.lua before the built-in scripts and the ConfigMap' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l controller-namespace -d 'Namespace of the controller\'s kruise-rollout-configuration ConfigMap (read only when a kind has no other script)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l lua-timeout -d 'Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller\'s is 1s)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l lua-memory -d 'Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -s n -l namespace -d 'The namespace (default: the context\'s; offline: objects without one are in "default")' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l cluster -d 'The kubeconfig cluster to use, instead of the context\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l user -d 'The kubeconfig user to use, instead of the context\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -s s -l server -d 'The API server\'s URL, instead of the cluster\'s (its certificate-authority still applies)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l certificate-authority -d 'A CA certificate file, instead of the cluster\'s certificate-authority' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l tls-server-name -d 'The name to verify the server\'s certificate against, instead of the server\'s host' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l token -d 'Bearer token to authenticate with, instead of the user\'s (a user\'s tokenFile is still read first, as in kubectl)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l username -d 'Username for basic authentication, instead of the user\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l password -d 'Password for basic authentication, instead of the user\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l client-certificate -d 'A client certificate file, instead of the user\'s' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l client-key -d 'The client certificate\'s key file, instead of the user\'s' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l as -d 'Username to impersonate for the operation (default: the kubeconfig user\'s as)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l as-uid -d 'UID to impersonate for the operation (needs a user to impersonate: --as, or the user\'s as)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l as-group -d 'Group to impersonate for the operation (repeatable; needs a user to impersonate: --as, or the user\'s as)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l request-timeout -d 'Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -s v -l verbose -d 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl\'s: each request to the API server, with its answer\'s status and time' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -s A -l all-namespaces -d 'Every namespace\'s Rollouts (with -l: those it selects), as kubectl get -A'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -s w -l watch -d 'Follow the Rollouts (a watch) until they complete or fail: a live view on a terminal (stderr), a line per change otherwise'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l until-paused -d 'With --watch: exit 0 as soon as every Rollout waits for approval (a gate for CI)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l insecure-skip-tls-verify -d 'Do not verify the server\'s certificate (clears the cluster\'s certificate-authority)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -l no-color -d 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -s l -l selector -d 'Select Rollouts by label (e.g. app=shop)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -s n -l namespace -d 'The namespace (default: the context\'s; offline: objects without one are in "default")' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -l cluster -d 'The kubeconfig cluster to use, instead of the context\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -l user -d 'The kubeconfig user to use, instead of the context\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -s s -l server -d 'The API server\'s URL, instead of the cluster\'s (its certificate-authority still applies)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -l certificate-authority -d 'A CA certificate file, instead of the cluster\'s certificate-authority' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -l tls-server-name -d 'The name to verify the server\'s certificate against, instead of the server\'s host' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -l token -d 'Bearer token to authenticate with, instead of the user\'s (a user\'s tokenFile is still read first, as in kubectl)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -l username -d 'Username for basic authentication, instead of the user\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -l password -d 'Password for basic authentication, instead of the user\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -l client-certificate -d 'A client certificate file, instead of the user\'s' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -l client-key -d 'The client certificate\'s key file, instead of the user\'s' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -l as -d 'Username to impersonate for the operation (default: the kubeconfig user\'s as)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -l as-uid -d 'UID to impersonate for the operation (needs a user to impersonate: --as, or the user\'s as)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -l as-group -d 'Group to impersonate for the operation (repeatable; needs a user to impersonate: --as, or the user\'s as)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -l request-timeout -d 'Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -s v -l verbose -d 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl\'s: each request to the API server, with its answer\'s status and time' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -s y -l yes -d 'Do not ask for confirmation (required when stdin is not a terminal)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -l insecure-skip-tls-verify -d 'Do not verify the server\'s certificate (clears the cluster\'s certificate-authority)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -l no-color -d 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand release-claim" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -s o -l output -d 'The test cases\' format: YAML, the controller\'s testdata format (the only one)' -r -f -a "yaml\t''"
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l output-file -d 'Write the test cases to FILE instead of stdout, as YAML documents (plan -f FILE replays them; test replays --dir)' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l dir -d 'Write the test cases into DIR, laid out as lua_configuration/ (DIR/<group>/<Kind>/testdata/…, an Ingress case in DIR/trafficrouting_ingress/testdata/<classType>/, with the script next to them) so that `test DIR` replays them, and `plan -R -f DIR --lua-dir DIR` plans them with those scripts; a file holding the case of another Rollout or object (another namespace\'s), or no case, is never replaced' -r -f -a "(__fish_complete_directories)"
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l script -d 'Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE, or ingress.CLASSTYPE=FILE for an Ingress class (repeatable)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l lua-dir -d 'Look for DIR/<group>/<Kind>/trafficRouting.lua and DIR/trafficrouting_ingress/<classType>.lua before the built-in scripts and the ConfigMap' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l controller-namespace -d 'Namespace of the controller\'s kruise-rollout-configuration ConfigMap (read only when a kind has no other script)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l lua-timeout -d 'Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller\'s is 1s)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l lua-memory -d 'Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l kubeconfig -d 'Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l context -d 'The kubeconfig context to use' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -s n -l namespace -d 'The namespace (default: the context\'s; offline: objects without one are in "default")' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l cluster -d 'The kubeconfig cluster to use, instead of the context\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l user -d 'The kubeconfig user to use, instead of the context\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -s s -l server -d 'The API server\'s URL, instead of the cluster\'s (its certificate-authority still applies)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l certificate-authority -d 'A CA certificate file, instead of the cluster\'s certificate-authority' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l tls-server-name -d 'The name to verify the server\'s certificate against, instead of the server\'s host' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l token -d 'Bearer token to authenticate with, instead of the user\'s (a user\'s tokenFile is still read first, as in kubectl)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l username -d 'Username for basic authentication, instead of the user\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l password -d 'Password for basic authentication, instead of the user\'s' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l client-certificate -d 'A client certificate file, instead of the user\'s' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l client-key -d 'The client certificate\'s key file, instead of the user\'s' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l as -d 'Username to impersonate for the operation (default: the kubeconfig user\'s as)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l as-uid -d 'UID to impersonate for the operation (needs a user to impersonate: --as, or the user\'s as)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l as-group -d 'Group to impersonate for the operation (repeatable; needs a user to impersonate: --as, or the user\'s as)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l request-timeout -d 'Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -s v -l verbose -d 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl\'s: each request to the API server, with its answer\'s status and time' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l insecure-skip-tls-verify -d 'Do not verify the server\'s certificate (clears the cluster\'s certificate-authority)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -l no-color -d 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand record" -s h -l help -d 'Print help'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand test" -s o -l output -d 'Print a JSON report instead of text' -r -f -a "json\t''"
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand test" -l lua-timeout -d 'Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller\'s is 1s)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand test" -l lua-memory -d 'Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand test" -s v -l verbose -d 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl\'s: each request to the API server, with its answer\'s status and time' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand test" -l no-color -d 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand test" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand eval" -l obj -d 'The obj the script sees (JSON or YAML; - for stdin), as `plan -f … --show-obj` prints it' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand eval" -l lua-timeout -d 'Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller\'s is 1s)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand eval" -l lua-memory -d 'Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand eval" -s v -l verbose -d 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl\'s: each request to the API server, with its answer\'s status and time' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand eval" -l ingress -d 'Run an Ingress script (lua_configuration/trafficrouting_ingress/<classType>.lua): obj has annotations, weight (a string), matches, canaryService and requestHeaderModifier, and the returned annotations print as a JSON map with sorted keys (null for none)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand eval" -l no-color -d 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand eval" -s h -l help -d 'Print help'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand lua-obj" -s o -l output -d 'lua: a Lua file setting steps.step_1, steps.step_2, …; json or yaml: a list of {case, step, obj}, one entry of which `eval --obj` reads' -r -f -a "lua\t''
json\t''
yaml\t''"
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand lua-obj" -l output-file -d 'Write to FILE instead of stdout' -r -F
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand lua-obj" -s v -l verbose -d 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl\'s: each request to the API server, with its answer\'s status and time' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand lua-obj" -l no-color -d 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand lua-obj" -s h -l help -d 'Print help'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand completions" -s v -l verbose -d 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl\'s: each request to the API server, with its answer\'s status and time' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand completions" -l no-color -d 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand completions" -s h -l help -d 'Print help'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand __complete" -s v -l verbose -d 'Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl\'s: each request to the API server, with its answer\'s status and time' -r
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand __complete" -l no-color -d 'Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand __complete" -s h -l help -d 'Print help'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand help; and not __fish_seen_subcommand_from plan approve restore status release-claim record test eval lua-obj completions __complete help" -f -a "plan" -d 'Show what a step does to the gateway objects, as a diff from their current content'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand help; and not __fish_seen_subcommand_from plan approve restore status release-claim record test eval lua-obj completions __complete help" -f -a "approve" -d 'Make the gateway objects match the current step, then approve the step (StepPaused -> StepReady)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand help; and not __fish_seen_subcommand_from plan approve restore status release-claim record test eval lua-obj completions __complete help" -f -a "restore" -d 'Put gateway objects back to their stored original (as the controller does when a release ends)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand help; and not __fish_seen_subcommand_from plan approve restore status release-claim record test eval lua-obj completions __complete help" -f -a "status" -d 'Show Rollouts\' progress and where each gateway object stands; -w follows it'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand help; and not __fish_seen_subcommand_from plan approve restore status release-claim record test eval lua-obj completions __complete help" -f -a "release-claim" -d 'Release the claim an approve or restore left on Rollouts (when its holder is gone)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand help; and not __fish_seen_subcommand_from plan approve restore status release-claim record test eval lua-obj completions __complete help" -f -a "record" -d 'Write a live Rollout and its gateway objects\' originals as a test case, every step\'s plan as expected'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand help; and not __fish_seen_subcommand_from plan approve restore status release-claim record test eval lua-obj completions __complete help" -f -a "test" -d 'Run scripts\' test cases (the controller\'s testdata format) with the controller\'s test-harness semantics'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand help; and not __fish_seen_subcommand_from plan approve restore status release-claim record test eval lua-obj completions __complete help" -f -a "eval" -d 'Run one script on one obj and print the result as canonical JSON'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand help; and not __fish_seen_subcommand_from plan approve restore status release-claim record test eval lua-obj completions __complete help" -f -a "lua-obj" -d 'Write the obj of every step of a test case as a Lua file, for debugging a script'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand help; and not __fish_seen_subcommand_from plan approve restore status release-claim record test eval lua-obj completions __complete help" -f -a "completions" -d 'Print a shell completion script (bash, zsh, fish, powershell, elvish, nushell)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand help; and not __fish_seen_subcommand_from plan approve restore status release-claim record test eval lua-obj completions __complete help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-rollout_lua -n "__fish_kubectl_rollout_lua_using_subcommand completions; and not __fish_seen_subcommand_from bash zsh fish powershell elvish nushell" -f -a "bash zsh fish powershell elvish nushell"
