//! Interleaved comparisons (`twelve compare A B`): A B A B … rounds with the same settings,
//! so slow drift of a noisy machine falls on both sides of every pair. The figures, their
//! spreads and pairwise ratios are twelve-report's (`twelve_report::visual::compare_report`).

/// Which side of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The first, the baseline.
    A,
    /// The second, the candidate.
    B,
}

/// Runs `rounds` rounds of A then B; `run(side, round)` runs one. Returns each side's
/// results in round order.
pub fn interleave<T, E>(
    rounds: usize,
    mut run: impl FnMut(Side, usize) -> Result<T, E>,
) -> Result<(Vec<T>, Vec<T>), E> {
    let (mut a, mut b) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    for round in 0..rounds {
        a.push(run(Side::A, round)?);
        b.push(run(Side::B, round)?);
    }
    Ok((a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_alternate_a_then_b() {
        let mut order = Vec::new();
        let (a, b) = interleave(3, |side, round| {
            order.push((side, round));
            Ok::<_, ()>(round)
        })
        .unwrap();
        assert_eq!(a, [0, 1, 2]);
        assert_eq!(b, [0, 1, 2]);
        use Side::*;
        assert_eq!(order, [(A, 0), (B, 0), (A, 1), (B, 1), (A, 2), (B, 2)]);
    }
}
