//! `twelve bench --shards N --k8s-manifest`: the Kubernetes objects that run this command line
//! as N shards. An Indexed Job (completionMode Indexed, completions = parallelism = N, so
//! every pod gets its `JOB_COMPLETION_INDEX` and all run at once) whose pods meet at shard
//! 0's barrier, found by DNS through a headless Service (`<job>-0.<service>`, published before
//! the pods are ready, since the barrier runs before readiness means anything). A failed
//! shard fails the Job (backoffLimit 0 and a podFailurePolicy of FailJob): a share re-run
//! later would be out of phase with the others. Written as YAML by hand: flat, and every
//! string quoted as JSON, which YAML reads unchanged.
use std::fmt::Write;

/// The barrier's port in the pods.
pub const BARRIER_PORT: u16 = 7070;

/// Flags of ours that the pods must not see (they choose their own barrier).
const DROP_WITH_VALUE: [&str; 5] = [
    "--k8s-image",
    "--k8s-name",
    "--barrier",
    "--start-at",
    "--shard",
];
const DROP: [&str; 1] = ["--k8s-manifest"];

/// The pods' `twelve bench` arguments: `argv` (what followed `twelve bench`) without the
/// manifest's own flags, with the barrier at shard 0's pod and `--json` on stdout.
pub fn pod_args(argv: &[String], name: &str) -> Vec<String> {
    let mut out = vec!["bench".to_string()];
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        let flag = a.split_once('=').map_or(a.as_str(), |(f, _)| f);
        if DROP.contains(&flag) {
            continue;
        }
        if DROP_WITH_VALUE.contains(&flag) {
            if !a.contains('=') {
                it.next();
            }
            continue;
        }
        out.push(a.clone());
    }
    out.push("--barrier".into());
    out.push(format!("{name}-0.{name}:{BARRIER_PORT}"));
    if !argv.iter().any(|a| a == "--json") {
        out.push("--json".into());
    }
    out
}

fn q(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

/// The Service and the Indexed Job, as one YAML stream.
pub fn manifest(name: &str, image: &str, shards: u32, args: &[String]) -> String {
    let (n, img) = (q(name), q(image));
    let mut y = String::new();
    let _ = write!(
        y,
        "# twelve bench in {shards} shards: kubectl apply -f this, then `twelve merge` the pods' logs\n\
         # (README: Running on Kubernetes).\n\
         apiVersion: v1\n\
         kind: Service\n\
         metadata:\n  name: {n}\n  labels:\n    app.kubernetes.io/name: \"twelve-bench\"\n\
         spec:\n  clusterIP: None\n  publishNotReadyAddresses: true\n\
         \x20 selector:\n    batch.kubernetes.io/job-name: {n}\n\
         \x20 ports:\n  - name: \"barrier\"\n    port: {BARRIER_PORT}\n    targetPort: {BARRIER_PORT}\n\
         ---\n\
         apiVersion: batch/v1\n\
         kind: Job\n\
         metadata:\n  name: {n}\n  labels:\n    app.kubernetes.io/name: \"twelve-bench\"\n\
         spec:\n  completionMode: Indexed\n  completions: {shards}\n  parallelism: {shards}\n\
         \x20 backoffLimit: 0\n\
         \x20 podFailurePolicy:\n    rules:\n    - action: FailJob\n      onExitCodes:\n\
         \x20       operator: NotIn\n        values: [0]\n\
         \x20 template:\n    metadata:\n      labels:\n        app.kubernetes.io/name: \"twelve-bench\"\n\
         \x20   spec:\n      subdomain: {n}\n      restartPolicy: Never\n      containers:\n\
         \x20     - name: \"twelve\"\n        image: {img}\n        args:\n"
    );
    for a in args {
        let _ = writeln!(y, "        - {}", q(a));
    }
    let _ = write!(
        y,
        "        ports:\n        - name: \"barrier\"\n          containerPort: {BARRIER_PORT}\n"
    );
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|a| a.to_string()).collect()
    }

    macro_rules! args {
        ($name:ident, $argv:expr, $expect:expr) => {
            #[test]
            fn $name() {
                assert_eq!(pod_args(&s(&$argv), "tb"), s(&$expect));
            }
        };
    }

    args!(
        manifest_flags_are_dropped,
        [
            "--shards",
            "4",
            "--k8s-manifest",
            "--k8s-image",
            "x:1",
            "-R",
            "10k",
            "http://h/"
        ],
        [
            "bench",
            "--shards",
            "4",
            "-R",
            "10k",
            "http://h/",
            "--barrier",
            "tb-0.tb:7070",
            "--json"
        ]
    );
    args!(
        equals_forms_are_dropped,
        ["--k8s-name=tb", "--barrier=a:1", "--shards=2", "--json"],
        ["bench", "--shards=2", "--json", "--barrier", "tb-0.tb:7070"]
    );

    #[test]
    fn manifest_names_the_job_and_quotes_args() {
        let y = manifest("tb", "twelve:1", 3, &s(&["bench", "-H", "X: \"y\""]));
        assert!(y.contains("completions: 3\n  parallelism: 3\n"), "{y}");
        assert!(y.contains("        - \"X: \\\"y\\\"\"\n"), "{y}");
        assert_eq!(y.matches("\n---\n").count(), 1);
    }
}
