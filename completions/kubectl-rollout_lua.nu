module completions {

  # Plan, approve, restore, follow and test the traffic routing of OpenKruise Rollouts
  export extern kubectl-rollout_lua [
    --verbose(-v): string     # Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl's: each request to the API server, with its answer's status and time
    --no-color                # Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)
    --help(-h)                # Print help (see more with '--help')
    --version(-V)             # Print version
  ]

  def "nu-complete kubectl-rollout_lua plan validate" [] {
    [ "strict" "warn" "ignore" ]
  }

  def "nu-complete kubectl-rollout_lua plan dry_run" [] {
    [ "server" ]
  }

  def "nu-complete kubectl-rollout_lua plan output" [] {
    [ "yaml" "json" ]
  }

  # Show what a step does to the gateway objects, as a diff from their current content
  export extern "kubectl-rollout_lua plan" [
    --selector(-l): string    # Select Rollouts by label (e.g. app=shop)
    --all                     # Every Rollout of the namespace, as kubectl's --all
    --all-namespaces(-A)      # Every namespace's Rollouts (with -l: those it selects), as kubectl get -A
    --filename(-f): string    # Plan from files instead of the cluster: files or directories of manifests (YAML or JSON, multi-document; - for stdin) with Rollouts, TrafficRoutings, gateway objects and optionally the kruise-rollout-configuration ConfigMap. Other documents are skipped (-v lists them); a directory's .yaml, .yml and .json files are read, not its subdirectories (see -R) nor hidden files
    --recursive(-R)           # With -f: read the subdirectories of directories too, as kubectl's -R
    --kustomize(-k): path     # Plan from the manifests `kubectl kustomize DIR` builds (as kubectl's -k; needs kubectl on PATH)
    --validate: string@"nu-complete kubectl-rollout_lua plan validate" # With -f or -k: fields the Rollout and TrafficRouting CRDs do not define (misspelt ones)
    --show-obj                # With -f or -k: print the obj each script gets, per step and object, as JSON (or YAML with -o yaml) instead of diffs; one entry's obj is input for `eval --obj`. A kind or Ingress class without a script yet is shown too, with a note on stderr
    --step: string            # Plan this step (1-based); default: the current step, none while the release is ending (offline: every step)
    --next                    # Plan the step after the current one (the step the status's nextStepIndex names, when patched to jump)
    --all-steps               # Plan every step in order
    --dry-run: string@"nu-complete kubectl-rollout_lua plan dry_run" # Also send the planned objects to the API server with dryRun=All, so admission webhooks (e.g. Istio's validation) judge them
    --output(-o): string@"nu-complete kubectl-rollout_lua plan output" # Print the planned objects and a summary instead of diffs
    --summary                 # A line per step and object (what is written, and the traffic split) instead of diffs
    --show-stored-original    # Show the stored original (the original-spec annotation) in full in diffs, not as `stored (sha256 …, N bytes)`
    --detailed-exitcode       # Exit 0 when nothing would change, 2 when something would, 1 on error (a Rollout not in a release, whose plan by default previews its next release's step 1, changes nothing now; a step asked for with --step, --next or --all-steps counts as asked, changes and all)
    --script: string          # Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE, or ingress.CLASSTYPE=FILE for an Ingress class (repeatable)
    --lua-dir: path           # Look for DIR/<group>/<Kind>/trafficRouting.lua and DIR/trafficrouting_ingress/<classType>.lua before the built-in scripts and the ConfigMap
    --controller-namespace: string # Namespace of the controller's kruise-rollout-configuration ConfigMap (read only when a kind has no other script)
    --lua-timeout: string     # Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller's is 1s)
    --lua-memory: string      # Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)
    --kubeconfig: path        # Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)
    --context: string         # The kubeconfig context to use
    --namespace(-n): string   # The namespace (default: the context's; offline: objects without one are in "default")
    --cluster: string         # The kubeconfig cluster to use, instead of the context's
    --user: string            # The kubeconfig user to use, instead of the context's
    --server(-s): string      # The API server's URL, instead of the cluster's (its certificate-authority still applies)
    --certificate-authority: path # A CA certificate file, instead of the cluster's certificate-authority
    --insecure-skip-tls-verify # Do not verify the server's certificate (clears the cluster's certificate-authority)
    --tls-server-name: string # The name to verify the server's certificate against, instead of the server's host
    --token: string           # Bearer token to authenticate with, instead of the user's (a user's tokenFile is still read first, as in kubectl)
    --username: string        # Username for basic authentication, instead of the user's
    --password: string        # Password for basic authentication, instead of the user's
    --client-certificate: path # A client certificate file, instead of the user's
    --client-key: path        # The client certificate's key file, instead of the user's
    --as: string              # Username to impersonate for the operation (default: the kubeconfig user's as)
    --as-uid: string          # UID to impersonate for the operation (needs a user to impersonate: --as, or the user's as)
    --as-group: string        # Group to impersonate for the operation (repeatable; needs a user to impersonate: --as, or the user's as)
    --request-timeout: string # Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)
    --verbose(-v): string     # Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl's: each request to the API server, with its answer's status and time
    --no-color                # Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)
    --help(-h)                # Print help (see more with '--help')
    ...rollouts: string       # Rollouts, as NAME or rollout/NAME
  ]

  def "nu-complete kubectl-rollout_lua approve dry_run" [] {
    [ "none" "client" "server" ]
  }

  # Make the gateway objects match the current step, then approve the step (StepPaused -> StepReady)
  export extern "kubectl-rollout_lua approve" [
    --selector(-l): string    # Select Rollouts by label (e.g. app=shop)
    --yes(-y)                 # Do not ask for confirmation (required when stdin is not a terminal)
    --expect-step: string     # Refuse unless the current step is N (1 or more); a release past step N's approval (or at it, approved) is said to be approved already, exit 0, nothing written (not with --until-step or --to-end)
    --traffic-only            # Only make the gateway objects match the current step; do not approve (allowed in any step state of a release in progress; warns in BeforeStepUpgrade and StepUpgrade, before the step's canary pods are ready)
    --force                   # Write all the same where a guard refuses: an object edited after it was routed (the edit is written over); a stored original that holds no spec (`{}`, `null`, an empty spec: writing from it wipes the object's routing); a custom ref without a stored original that routes to the canary already (the controller stores that routing as the original); a `<name>-canary` Ingress that someone else made (its controller owner is not the Rollout); an object that another Rollout in a release, or a TrafficRouting in a release that the Rollout does not link, routes; an HTTPRoute write that leaves the stable Service without a rule; a step the API server would not admit now, or whose routing hangs on a workload's replica count not read; a step the controller would stick at (its own Istio script fails on an object). An edit made during this run is still refused (on a terminal: asked), and so are annotations past the API server's 256 KiB
    --dry-run: string@"nu-complete kubectl-rollout_lua approve dry_run" # client: show what would be written; server: send every write with dryRun=All
    --until-step: string      # After approving, follow the Rollout and approve each later pause up to step N (1 or more, at most the Rollout's steps)
    --to-end                  # After approving, follow the Rollout and approve every later pause until it completes
    --timeout: string         # With --until-step or --to-end: give up waiting this long after the confirmation (e.g. 30m; 0 for never)
    --show-stored-original    # Show the stored original (the original-spec annotation) in full in diffs, not as `stored (sha256 …, N bytes)`
    --script: string          # Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE, or ingress.CLASSTYPE=FILE for an Ingress class (repeatable)
    --lua-dir: path           # Look for DIR/<group>/<Kind>/trafficRouting.lua and DIR/trafficrouting_ingress/<classType>.lua before the built-in scripts and the ConfigMap
    --controller-namespace: string # Namespace of the controller's kruise-rollout-configuration ConfigMap (read only when a kind has no other script)
    --lua-timeout: string     # Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller's is 1s)
    --lua-memory: string      # Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)
    --kubeconfig: path        # Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)
    --context: string         # The kubeconfig context to use
    --namespace(-n): string   # The namespace (default: the context's; offline: objects without one are in "default")
    --cluster: string         # The kubeconfig cluster to use, instead of the context's
    --user: string            # The kubeconfig user to use, instead of the context's
    --server(-s): string      # The API server's URL, instead of the cluster's (its certificate-authority still applies)
    --certificate-authority: path # A CA certificate file, instead of the cluster's certificate-authority
    --insecure-skip-tls-verify # Do not verify the server's certificate (clears the cluster's certificate-authority)
    --tls-server-name: string # The name to verify the server's certificate against, instead of the server's host
    --token: string           # Bearer token to authenticate with, instead of the user's (a user's tokenFile is still read first, as in kubectl)
    --username: string        # Username for basic authentication, instead of the user's
    --password: string        # Password for basic authentication, instead of the user's
    --client-certificate: path # A client certificate file, instead of the user's
    --client-key: path        # The client certificate's key file, instead of the user's
    --as: string              # Username to impersonate for the operation (default: the kubeconfig user's as)
    --as-uid: string          # UID to impersonate for the operation (needs a user to impersonate: --as, or the user's as)
    --as-group: string        # Group to impersonate for the operation (repeatable; needs a user to impersonate: --as, or the user's as)
    --request-timeout: string # Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)
    --verbose(-v): string     # Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl's: each request to the API server, with its answer's status and time
    --no-color                # Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)
    --help(-h)                # Print help (see more with '--help')
    ...rollouts: string       # Rollouts, as NAME or rollout/NAME
  ]

  def "nu-complete kubectl-rollout_lua restore dry_run" [] {
    [ "none" "client" "server" ]
  }

  # Put gateway objects back to their stored original (as the controller does when a release ends)
  export extern "kubectl-rollout_lua restore" [
    --selector(-l): string    # Select Rollouts by label (e.g. app=shop)
    --ref: string             # Restore this gateway object instead of a Rollout's: KIND.GROUP/NAME (KIND.VERSION.GROUP/NAME names the version), or KIND/NAME for VirtualService (vs), DestinationRule (dr) and Ingress (ing) (repeatable; one that is not there fails the run, exit 1, after the others); a custom ref or a canary Ingress, not an HTTPRoute (restore its Rollout)
    --from-backup: path       # Put back an object saved by an earlier write (a file under the backups folder); one that no longer exists is made again
    --force                   # Restore even when someone edited the objects after the controller (or approve) wrote them, when a stored original holds no spec (restoring it wipes the object's routing), (--ref, --from-backup) when the Rollouts that may route the objects cannot be read, (ROLLOUT, -l) when another Rollout in a release, or a TrafficRouting in a release that the Rollouts do not link, routes them, or (--from-backup) when the backup is not whole (no matching end line: cut short, changed, or an older version's), holds no spec where the live object has one, or is of an object deleted and made again since
    --yes(-y)                 # Do not ask for confirmation (required when stdin is not a terminal)
    --dry-run: string@"nu-complete kubectl-rollout_lua restore dry_run" # client: show what would be written; server: send every write with dryRun=All
    --script: string          # Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE, or ingress.CLASSTYPE=FILE for an Ingress class (repeatable)
    --lua-dir: path           # Look for DIR/<group>/<Kind>/trafficRouting.lua and DIR/trafficrouting_ingress/<classType>.lua before the built-in scripts and the ConfigMap
    --controller-namespace: string # Namespace of the controller's kruise-rollout-configuration ConfigMap (read only when a kind has no other script)
    --lua-timeout: string     # Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller's is 1s)
    --lua-memory: string      # Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)
    --kubeconfig: path        # Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)
    --context: string         # The kubeconfig context to use
    --namespace(-n): string   # The namespace (default: the context's; offline: objects without one are in "default")
    --cluster: string         # The kubeconfig cluster to use, instead of the context's
    --user: string            # The kubeconfig user to use, instead of the context's
    --server(-s): string      # The API server's URL, instead of the cluster's (its certificate-authority still applies)
    --certificate-authority: path # A CA certificate file, instead of the cluster's certificate-authority
    --insecure-skip-tls-verify # Do not verify the server's certificate (clears the cluster's certificate-authority)
    --tls-server-name: string # The name to verify the server's certificate against, instead of the server's host
    --token: string           # Bearer token to authenticate with, instead of the user's (a user's tokenFile is still read first, as in kubectl)
    --username: string        # Username for basic authentication, instead of the user's
    --password: string        # Password for basic authentication, instead of the user's
    --client-certificate: path # A client certificate file, instead of the user's
    --client-key: path        # The client certificate's key file, instead of the user's
    --as: string              # Username to impersonate for the operation (default: the kubeconfig user's as)
    --as-uid: string          # UID to impersonate for the operation (needs a user to impersonate: --as, or the user's as)
    --as-group: string        # Group to impersonate for the operation (repeatable; needs a user to impersonate: --as, or the user's as)
    --request-timeout: string # Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)
    --verbose(-v): string     # Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl's: each request to the API server, with its answer's status and time
    --no-color                # Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)
    --help(-h)                # Print help (see more with '--help')
    ...rollouts: string       # Rollouts, as NAME or rollout/NAME
  ]

  def "nu-complete kubectl-rollout_lua status output" [] {
    [ "yaml" "json" ]
  }

  # Show Rollouts' progress and where each gateway object stands; -w follows it
  export extern "kubectl-rollout_lua status" [
    --selector(-l): string    # Select Rollouts by label (e.g. app=shop)
    --all-namespaces(-A)      # Every namespace's Rollouts (with -l: those it selects), as kubectl get -A
    --watch(-w)               # Follow the Rollouts (a watch) until they complete or fail: a live view on a terminal (stderr), a line per change otherwise
    --timeout: string         # With --watch: give up after this long (e.g. 10m; 0 for never)
    --until-paused            # With --watch: exit 0 as soon as every Rollout waits for approval (a gate for CI)
    --output(-o): string@"nu-complete kubectl-rollout_lua status output" # Print the status as YAML or JSON; with --watch, each Rollout's entry when it changes (the first read: each): JSON one compact document per line, YAML each after a `---`
    --script: string          # Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE, or ingress.CLASSTYPE=FILE for an Ingress class (repeatable)
    --lua-dir: path           # Look for DIR/<group>/<Kind>/trafficRouting.lua and DIR/trafficrouting_ingress/<classType>.lua before the built-in scripts and the ConfigMap
    --controller-namespace: string # Namespace of the controller's kruise-rollout-configuration ConfigMap (read only when a kind has no other script)
    --lua-timeout: string     # Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller's is 1s)
    --lua-memory: string      # Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)
    --kubeconfig: path        # Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)
    --context: string         # The kubeconfig context to use
    --namespace(-n): string   # The namespace (default: the context's; offline: objects without one are in "default")
    --cluster: string         # The kubeconfig cluster to use, instead of the context's
    --user: string            # The kubeconfig user to use, instead of the context's
    --server(-s): string      # The API server's URL, instead of the cluster's (its certificate-authority still applies)
    --certificate-authority: path # A CA certificate file, instead of the cluster's certificate-authority
    --insecure-skip-tls-verify # Do not verify the server's certificate (clears the cluster's certificate-authority)
    --tls-server-name: string # The name to verify the server's certificate against, instead of the server's host
    --token: string           # Bearer token to authenticate with, instead of the user's (a user's tokenFile is still read first, as in kubectl)
    --username: string        # Username for basic authentication, instead of the user's
    --password: string        # Password for basic authentication, instead of the user's
    --client-certificate: path # A client certificate file, instead of the user's
    --client-key: path        # The client certificate's key file, instead of the user's
    --as: string              # Username to impersonate for the operation (default: the kubeconfig user's as)
    --as-uid: string          # UID to impersonate for the operation (needs a user to impersonate: --as, or the user's as)
    --as-group: string        # Group to impersonate for the operation (repeatable; needs a user to impersonate: --as, or the user's as)
    --request-timeout: string # Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)
    --verbose(-v): string     # Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl's: each request to the API server, with its answer's status and time
    --no-color                # Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)
    --help(-h)                # Print help (see more with '--help')
    ...rollouts: string       # Rollouts, as NAME or rollout/NAME
  ]

  # Release the claim an approve or restore left on Rollouts (when its holder is gone)
  export extern "kubectl-rollout_lua release-claim" [
    --selector(-l): string    # Select Rollouts by label (e.g. app=shop)
    --yes(-y)                 # Do not ask for confirmation (required when stdin is not a terminal)
    --kubeconfig: path        # Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)
    --context: string         # The kubeconfig context to use
    --namespace(-n): string   # The namespace (default: the context's; offline: objects without one are in "default")
    --cluster: string         # The kubeconfig cluster to use, instead of the context's
    --user: string            # The kubeconfig user to use, instead of the context's
    --server(-s): string      # The API server's URL, instead of the cluster's (its certificate-authority still applies)
    --certificate-authority: path # A CA certificate file, instead of the cluster's certificate-authority
    --insecure-skip-tls-verify # Do not verify the server's certificate (clears the cluster's certificate-authority)
    --tls-server-name: string # The name to verify the server's certificate against, instead of the server's host
    --token: string           # Bearer token to authenticate with, instead of the user's (a user's tokenFile is still read first, as in kubectl)
    --username: string        # Username for basic authentication, instead of the user's
    --password: string        # Password for basic authentication, instead of the user's
    --client-certificate: path # A client certificate file, instead of the user's
    --client-key: path        # The client certificate's key file, instead of the user's
    --as: string              # Username to impersonate for the operation (default: the kubeconfig user's as)
    --as-uid: string          # UID to impersonate for the operation (needs a user to impersonate: --as, or the user's as)
    --as-group: string        # Group to impersonate for the operation (repeatable; needs a user to impersonate: --as, or the user's as)
    --request-timeout: string # Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)
    --verbose(-v): string     # Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl's: each request to the API server, with its answer's status and time
    --no-color                # Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)
    --help(-h)                # Print help (see more with '--help')
    ...rollouts: string       # Rollouts, as NAME or rollout/NAME
  ]

  def "nu-complete kubectl-rollout_lua record output" [] {
    [ "yaml" ]
  }

  # Write a live Rollout and its gateway objects' originals as a test case, every step's plan as expected
  export extern "kubectl-rollout_lua record" [
    --output(-o): string@"nu-complete kubectl-rollout_lua record output" # The test cases' format: YAML, the controller's testdata format (the only one)
    --output-file: path       # Write the test cases to FILE instead of stdout, as YAML documents (plan -f FILE replays them; test replays --dir)
    --dir: directory          # Write the test cases into DIR, laid out as lua_configuration/ (DIR/<group>/<Kind>/testdata/…, an Ingress case in DIR/trafficrouting_ingress/testdata/<classType>/, with the script next to them) so that `test DIR` replays them, and `plan -R -f DIR --lua-dir DIR` plans them with those scripts; a file holding the case of another Rollout or object (another namespace's), or no case, is never replaced
    --script: string          # Use FILE for refs of this kind, before any other script: KIND.GROUP=FILE, or ingress.CLASSTYPE=FILE for an Ingress class (repeatable)
    --lua-dir: path           # Look for DIR/<group>/<Kind>/trafficRouting.lua and DIR/trafficrouting_ingress/<classType>.lua before the built-in scripts and the ConfigMap
    --controller-namespace: string # Namespace of the controller's kruise-rollout-configuration ConfigMap (read only when a kind has no other script)
    --lua-timeout: string     # Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller's is 1s)
    --lua-memory: string      # Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)
    --kubeconfig: path        # Path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)
    --context: string         # The kubeconfig context to use
    --namespace(-n): string   # The namespace (default: the context's; offline: objects without one are in "default")
    --cluster: string         # The kubeconfig cluster to use, instead of the context's
    --user: string            # The kubeconfig user to use, instead of the context's
    --server(-s): string      # The API server's URL, instead of the cluster's (its certificate-authority still applies)
    --certificate-authority: path # A CA certificate file, instead of the cluster's certificate-authority
    --insecure-skip-tls-verify # Do not verify the server's certificate (clears the cluster's certificate-authority)
    --tls-server-name: string # The name to verify the server's certificate against, instead of the server's host
    --token: string           # Bearer token to authenticate with, instead of the user's (a user's tokenFile is still read first, as in kubectl)
    --username: string        # Username for basic authentication, instead of the user's
    --password: string        # Password for basic authentication, instead of the user's
    --client-certificate: path # A client certificate file, instead of the user's
    --client-key: path        # The client certificate's key file, instead of the user's
    --as: string              # Username to impersonate for the operation (default: the kubeconfig user's as)
    --as-uid: string          # UID to impersonate for the operation (needs a user to impersonate: --as, or the user's as)
    --as-group: string        # Group to impersonate for the operation (repeatable; needs a user to impersonate: --as, or the user's as)
    --request-timeout: string # Time limit for each request to the API server (to connect, send it and read its whole answer, retries included), and for an exec credential plugin (e.g. 10s, 1m30s; default: 30s a request, 60s a plugin, 5m one that may prompt; 0 for none; empty for the default)
    --verbose(-v): string     # Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl's: each request to the API server, with its answer's status and time
    --no-color                # Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)
    --help(-h)                # Print help
    rollout: string           # The Rollout (NAME or rollout/NAME), or a TrafficRouting as trafficrouting/NAME (any spelling of the type that kubectl takes: TrafficRouting/NAME, trafficroutings/NAME, trafficrouting.rollouts.kruise.io/NAME, …)
  ]

  def "nu-complete kubectl-rollout_lua test output" [] {
    [ "json" ]
  }

  # Run scripts' test cases (the controller's testdata format) with the controller's test-harness semantics
  export extern "kubectl-rollout_lua test" [
    --output(-o): string@"nu-complete kubectl-rollout_lua test output" # Print a JSON report instead of text
    --lua-timeout: string     # Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller's is 1s)
    --lua-memory: string      # Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)
    --verbose(-v): string     # Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl's: each request to the API server, with its answer's status and time
    --no-color                # Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)
    --help(-h)                # Print help (see more with '--help')
    ...paths: path            # Script folders (<group>/<Kind>/trafficRouting.lua with a testdata/ folder, and trafficrouting_ingress/<classType>.lua with testdata/<classType>/) and HTTPRoute cases (gateway.networking.k8s.io/HTTPRoute/testdata/, run through the Gateway API routing), searched recursively, or a script file (.lua) with the testdata/ next to it (a testdata/ folder's subfolders too, as go test reads them); default: the built-in scripts. A file of test cases (record --output-file) is refused: record with --dir DIR and run test DIR
  ]

  # Run one script on one obj and print the result as canonical JSON
  export extern "kubectl-rollout_lua eval" [
    --obj: path               # The obj the script sees (JSON or YAML; - for stdin), as `plan -f … --show-obj` prints it
    --ingress                 # Run an Ingress script (lua_configuration/trafficrouting_ingress/<classType>.lua): obj has annotations, weight (a string), matches, canaryService and requestHeaderModifier, and the returned annotations print as a JSON map with sorted keys (null for none)
    --lua-timeout: string     # Time limit for one script evaluation, more than 0 (e.g. 500ms, 2s; the controller's is 1s)
    --lua-memory: string      # Memory limit for one script evaluation, its result included; at least 1Mi (e.g. 64Mi, 1Gi)
    --verbose(-v): string     # Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl's: each request to the API server, with its answer's status and time
    --no-color                # Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)
    --help(-h)                # Print help
    script: path              # The Lua script
  ]

  def "nu-complete kubectl-rollout_lua lua-obj output" [] {
    [ "lua" "json" "yaml" ]
  }

  # Write the obj of every step of a test case as a Lua file, for debugging a script
  export extern "kubectl-rollout_lua lua-obj" [
    --output(-o): string@"nu-complete kubectl-rollout_lua lua-obj output" # lua: a Lua file setting steps.step_1, steps.step_2, …; json or yaml: a list of {case, step, obj}, one entry of which `eval --obj` reads
    --output-file: path       # Write to FILE instead of stdout
    --verbose(-v): string     # Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl's: each request to the API server, with its answer's status and time
    --no-color                # Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)
    --help(-h)                # Print help
    case: path                # A test case (rollout or trafficRouting, original, expected)
  ]

  def "nu-complete kubectl-rollout_lua completions shell" [] {
    [ "bash" "zsh" "fish" "powershell" "elvish" "nushell" ]
  }

  # Print a shell completion script (bash, zsh, fish, powershell, elvish, nushell)
  export extern "kubectl-rollout_lua completions" [
    --verbose(-v): string     # Say more on stderr (plan -f: what was read, and what was skipped and why); -v=6 or more, as kubectl's: each request to the API server, with its answer's status and time
    --no-color                # Never colour the output (colour is also off when NO_COLOR is set, TERM=dumb, or the output is not a terminal)
    --help(-h)                # Print help
    shell: string@"nu-complete kubectl-rollout_lua completions shell" # The shell
  ]

  # Print this message or the help of the given subcommand(s)
  export extern "kubectl-rollout_lua help" [
  ]

  # Show what a step does to the gateway objects, as a diff from their current content
  export extern "kubectl-rollout_lua help plan" [
  ]

  # Make the gateway objects match the current step, then approve the step (StepPaused -> StepReady)
  export extern "kubectl-rollout_lua help approve" [
  ]

  # Put gateway objects back to their stored original (as the controller does when a release ends)
  export extern "kubectl-rollout_lua help restore" [
  ]

  # Show Rollouts' progress and where each gateway object stands; -w follows it
  export extern "kubectl-rollout_lua help status" [
  ]

  # Release the claim an approve or restore left on Rollouts (when its holder is gone)
  export extern "kubectl-rollout_lua help release-claim" [
  ]

  # Write a live Rollout and its gateway objects' originals as a test case, every step's plan as expected
  export extern "kubectl-rollout_lua help record" [
  ]

  # Run scripts' test cases (the controller's testdata format) with the controller's test-harness semantics
  export extern "kubectl-rollout_lua help test" [
  ]

  # Run one script on one obj and print the result as canonical JSON
  export extern "kubectl-rollout_lua help eval" [
  ]

  # Write the obj of every step of a test case as a Lua file, for debugging a script
  export extern "kubectl-rollout_lua help lua-obj" [
  ]

  # Print a shell completion script (bash, zsh, fish, powershell, elvish, nushell)
  export extern "kubectl-rollout_lua help completions" [
  ]

  # Print this message or the help of the given subcommand(s)
  export extern "kubectl-rollout_lua help help" [
  ]

}

export use completions *
