//! The Kubernetes objects that run a sharded `twelve bench` (`--shards N --k8s-manifest`) as
//! N pods. An Indexed Job (completionMode Indexed, completions = parallelism = N, so
//! every pod gets its `JOB_COMPLETION_INDEX` and all run at once) whose pods meet at shard
//! 0's barrier, found by DNS through a headless Service (`<job>-0.<service>`, published before
//! the pods are ready, since the barrier runs before readiness means anything). A failed
//! shard fails the Job (backoffLimit 0 and a podFailurePolicy of FailJob): a share re-run
//! later would be out of phase with the others. Written as YAML by hand: flat, and every
//! string quoted as JSON, which YAML reads unchanged.
use std::fmt::Write;

/// The barrier's port in the pods.
pub const BARRIER_PORT: u16 = 7070;

/// The barrier's address inside the pods: shard 0's pod, found by DNS through the Service
/// named `name`.
pub fn barrier_addr(name: &str) -> String {
    format!("{name}-0.{name}:{BARRIER_PORT}")
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

    #[test]
    fn manifest_names_the_job_and_quotes_args() {
        let y = manifest("tb", "twelve:1", 3, &s(&["bench", "-H", "X: \"y\""]));
        assert!(y.contains("completions: 3\n  parallelism: 3\n"), "{y}");
        assert!(y.contains("        - \"X: \\\"y\\\"\"\n"), "{y}");
        assert_eq!(y.matches("\n---\n").count(), 1);
    }

    #[test]
    fn the_barrier_is_shard_zeros_pod_behind_the_service() {
        assert_eq!(barrier_addr("tb"), "tb-0.tb:7070");
    }
}
