//! Flow-control windows (RFC 9113 §6.9), as both ends of a connection keep them: the limits,
//! the WINDOW_UPDATE frame, and a change of the peer's SETTINGS_INITIAL_WINDOW_SIZE.

use super::frame::{self, Frame};

/// The largest window RFC 9113 §6.9.1 allows.
pub(crate) const MAX_WINDOW: i64 = (1 << 31) - 1;

/// The window every stream and the connection start with (§6.9.2).
pub(crate) const DEFAULT_WINDOW: i64 = 65_535;

/// Appends a WINDOW_UPDATE.
pub(crate) fn window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    frame::encode(&Frame::WindowUpdate { stream, increment }, out);
}

/// The peer's SETTINGS_INITIAL_WINDOW_SIZE became `new` (it was `*initial`): §6.9.2 applies
/// the change to the send window of every open stream. `false` when one passes 2^31-1, a
/// connection error FLOW_CONTROL_ERROR.
pub(crate) fn resize<'a>(
    initial: &mut i64,
    new: u32,
    send_windows: impl Iterator<Item = &'a mut i64>,
) -> bool {
    let delta = i64::from(new) - *initial;
    *initial = i64::from(new);
    let mut ok = true;
    for w in send_windows {
        *w += delta;
        ok &= *w <= MAX_WINDOW;
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_initial_window_moves_every_stream_by_the_difference() {
        let mut initial = DEFAULT_WINDOW;
        let mut windows = [DEFAULT_WINDOW, 10, -5];
        assert!(resize(&mut initial, 1_000, windows.iter_mut()));
        assert_eq!(
            (initial, windows),
            (1_000, [1_000, 10 - 64_535, -5 - 64_535])
        );
        let mut windows = [MAX_WINDOW - 1];
        assert!(!resize(&mut initial, 1_002, windows.iter_mut()));
    }
}
