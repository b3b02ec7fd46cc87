//! Running a sweep: one bench run per step, each with its own warm-up, the drain wait before
//! each, and the SLO verdict of each; and the knee search on top of it.
use super::drain::{DrainPolicy, Drained, wait_drained};
use super::knee::{KneeResult, KneeSearch, find_max_rate};
use twelve_load::{Arrival, Config, LoadError, Model, Protocol, run};
use twelve_report::visual::{LoadKind, Step};
use twelve_report::{Slo, Summary};

/// The configuration of one step: `base` with its connections (closed model) or its rate
/// (open model, keeping `base`'s arrival process and seed) or its HTTP/2 streams per connection
/// (closed model, `-c` kept) set to `load`.
///
/// A concurrency step below the thread count uses fewer threads (one connection each), since
/// every worker needs at least one connection.
pub fn configure(base: &Config, kind: LoadKind, load: f64) -> Config {
    let mut c = base.clone();
    match kind {
        LoadKind::Concurrency => {
            c.model = Model::Closed;
            c.connections = (load.round() as usize).max(1);
            c.worker_cpus.truncate(c.connections);
        }
        LoadKind::Streams => {
            c.model = Model::Closed;
            c.protocol = Protocol::H2 {
                streams: (load.round() as u32).max(1),
            };
        }
        LoadKind::Rate => {
            let (arrival, seed) = match base.model {
                Model::Open { arrival, seed, .. } => (arrival, seed),
                Model::Closed => (Arrival::Uniform, 1),
            };
            c.model = Model::Open {
                rate_per_s: load,
                arrival,
                seed,
            };
        }
    }
    c
}

/// Runs one step: waits for the target's sockets to drain, then one bench run at `load`.
/// Returns the step and what the drain wait found.
pub fn run_step(
    base: &Config,
    kind: LoadKind,
    load: f64,
    slos: &[Slo],
    drain: &DrainPolicy,
) -> Result<(Step, Drained), LoadError> {
    let port = base.targets.first().map_or(0, |t| t.addr.port());
    let drained = wait_drained(port, drain);
    let config = configure(base, kind, load);
    let outcome = run(&config, |_| {})?;
    Ok((
        Step {
            load,
            start: outcome.start,
            summary: Summary::new(&outcome.result, slos),
        },
        drained,
    ))
}

/// Runs every step of `plan` in order; `each` sees each step as it finishes.
pub fn run_sweep(
    base: &Config,
    kind: LoadKind,
    plan: &[f64],
    slos: &[Slo],
    drain: &DrainPolicy,
    mut each: impl FnMut(&Step, &Drained),
) -> Result<Vec<Step>, LoadError> {
    let mut steps = Vec::with_capacity(plan.len());
    for &load in plan {
        let (step, drained) = run_step(base, kind, load, slos, drain)?;
        each(&step, &drained);
        steps.push(step);
    }
    Ok(steps)
}

/// The knee search over open-model runs: returns every run as a step (in run order) and the
/// answer, whose probe indices are indices into the steps.
pub fn run_knee(
    base: &Config,
    search: &KneeSearch,
    slos: &[Slo],
    drain: &DrainPolicy,
    mut each: impl FnMut(&Step, &Drained),
) -> Result<(Vec<Step>, KneeResult), LoadError> {
    let mut steps = Vec::new();
    let knee = find_max_rate(search, |rate| {
        let (step, drained) = run_step(base, LoadKind::Rate, rate, slos, drain)?;
        each(&step, &drained);
        let pass = step.passed();
        steps.push(step);
        Ok::<_, LoadError>(pass)
    })?;
    Ok((steps, knee))
}

#[cfg(test)]
mod tests {
    use super::*;
    use twelve_load::Target;

    fn base() -> Config {
        let mut c = Config::new(vec![Target::parse("http://127.0.0.1:9/").unwrap()]);
        c.worker_cpus = vec![None; 4];
        c.model = Model::Open {
            rate_per_s: 1.0,
            arrival: Arrival::Poisson,
            seed: 7,
        };
        c
    }

    #[test]
    fn concurrency_step_sets_connections_and_closes_the_model() {
        let c = configure(&base(), LoadKind::Concurrency, 200.0);
        assert_eq!((c.connections, c.model), (200, Model::Closed));
        assert_eq!(c.worker_cpus.len(), 4);
    }

    #[test]
    fn concurrency_below_threads_drops_threads() {
        let c = configure(&base(), LoadKind::Concurrency, 2.0);
        assert_eq!((c.connections, c.worker_cpus.len()), (2, 2));
        c.validate().unwrap();
    }

    #[test]
    fn streams_step_sets_streams_and_keeps_connections() {
        let mut b = base();
        b.protocol = Protocol::H2 { streams: 1 };
        b.connections = 8;
        let c = configure(&b, LoadKind::Streams, 100.0);
        assert_eq!(
            (c.connections, c.model, c.protocol),
            (8, Model::Closed, Protocol::H2 { streams: 100 })
        );
    }

    #[test]
    fn rate_step_keeps_arrival_and_seed() {
        let c = configure(&base(), LoadKind::Rate, 5000.0);
        assert_eq!(
            c.model,
            Model::Open {
                rate_per_s: 5000.0,
                arrival: Arrival::Poisson,
                seed: 7
            }
        );
    }
}
