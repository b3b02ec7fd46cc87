//! Why the server ended a stream or an HTTP/2 connection: one kind per counter in /metrics.

use super::super::Violation;
use super::super::fields::Malformed;
use super::super::hpack::HpackError;

/// Why a stream or the connection was ended: one counter each in /metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// A frame broke a rule of its own type (§4, §6).
    Frame(Violation),
    /// The connection did not begin with the client preface (§3.4).
    Preface,
    /// The first frame after the preface was not SETTINGS (§3.4).
    SettingsFirst,
    /// A client stream with an even id (§5.1.1).
    EvenStream,
    /// A new stream whose id is not above every earlier one's (§5.1.1).
    StreamBackwards,
    /// DATA, RST_STREAM or WINDOW_UPDATE on a stream that was never opened (§5.1).
    IdleStream,
    /// A frame other than PRIORITY on a stream already closed (§5.1).
    ClosedStream,
    /// A frame other than CONTINUATION inside a field block, or a CONTINUATION outside one
    /// (§6.10).
    Continuation,
    /// A field block longer than `max_header_block` (CVE-2024-27316).
    HeaderBlockTooLarge,
    /// HPACK could not decode a block (RFC 7541; COMPRESSION_ERROR).
    Hpack(HpackError),
    /// A malformed request (§8.1.1).
    Malformed(Malformed),
    /// The peer sent more than a window allowed (§6.9).
    FlowControl,
    /// A WINDOW_UPDATE or SETTINGS took a send window past 2^31-1 (§6.9.1).
    WindowOverflow,
    /// Too many RST_STREAM frames (CVE-2023-44487).
    RapidReset,
    /// Too many frames that carry no request (SETTINGS, PING, empty DATA ... floods).
    ControlFlood,
    /// A PUSH_PROMISE from a client (§8.4).
    PushPromise,
    /// A stream over SETTINGS_MAX_CONCURRENT_STREAMS (§5.1.2).
    Refused,
}

impl Fault {
    /// A short name for /metrics.
    pub fn name(self) -> &'static str {
        match self {
            Fault::Frame(v) => match v {
                Violation::TooLarge => "frame_too_large",
                Violation::BadLength => "frame_size",
                Violation::StreamZero | Violation::StreamNonZero => "frame_stream",
                Violation::PaddingTooLong => "padding",
                Violation::SelfDependency => "self_dependency",
                Violation::EnablePush | Violation::InitialWindowSize | Violation::MaxFrameSize => {
                    "bad_setting"
                }
                Violation::ZeroIncrement => "zero_window_increment",
            },
            Fault::Preface => "preface",
            Fault::SettingsFirst => "settings_first",
            Fault::EvenStream => "even_stream",
            Fault::StreamBackwards => "stream_backwards",
            Fault::IdleStream => "idle_stream",
            Fault::ClosedStream => "closed_stream",
            Fault::Continuation => "continuation",
            Fault::HeaderBlockTooLarge => "header_block_too_large",
            Fault::Hpack(_) => "hpack",
            Fault::Malformed(_) => "malformed",
            Fault::FlowControl => "flow_control",
            Fault::WindowOverflow => "window_overflow",
            Fault::RapidReset => "rapid_reset",
            Fault::ControlFlood => "control_flood",
            Fault::PushPromise => "push_promise",
            Fault::Refused => "refused_stream",
        }
    }

    /// Every name [`Fault::name`] gives, for /metrics to list each once.
    pub const NAMES: [&'static str; 23] = [
        "frame_too_large",
        "frame_size",
        "frame_stream",
        "padding",
        "self_dependency",
        "bad_setting",
        "zero_window_increment",
        "preface",
        "settings_first",
        "even_stream",
        "stream_backwards",
        "idle_stream",
        "closed_stream",
        "continuation",
        "header_block_too_large",
        "hpack",
        "malformed",
        "flow_control",
        "window_overflow",
        "rapid_reset",
        "control_flood",
        "push_promise",
        "refused_stream",
    ];
}
