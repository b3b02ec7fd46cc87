//! The limits of a server's HTTP/2 connection: what it advertises and what it tolerates.

/// The connection's limits: what it advertises and what it tolerates.
#[derive(Debug, Clone, Copy)]
pub struct ServerConfig {
    /// SETTINGS_MAX_CONCURRENT_STREAMS.
    pub max_concurrent_streams: u32,
    /// SETTINGS_INITIAL_WINDOW_SIZE: each stream's receive window.
    pub stream_window: u32,
    /// The connection's receive window, opened by a WINDOW_UPDATE after the preface.
    pub connection_window: u32,
    /// SETTINGS_MAX_HEADER_LIST_SIZE: the decoded fields of a request (names, values and
    /// 32 octets each, §6.5.2); a larger list gets 431.
    pub max_header_list: u32,
    /// The most octets of one field block across HEADERS and CONTINUATION frames; more is a
    /// CONTINUATION flood (CVE-2024-27316): GOAWAY ENHANCE_YOUR_CALM.
    pub max_header_block: usize,
    /// The largest request body; a larger one gets 413.
    pub max_body: u64,
    /// RST_STREAM frames a peer may send before its resets are weighed against its streams
    /// (CVE-2023-44487, "rapid reset").
    pub reset_budget: u32,
    /// Frames that cost work and carry no request (SETTINGS, PING, PRIORITY, empty DATA,
    /// CONTINUATION, unknown types) a peer may send beyond two per request.
    pub control_budget: u32,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            max_concurrent_streams: 128,
            stream_window: 1 << 20,
            connection_window: 1 << 24,
            max_header_list: 16 * 1024,
            max_header_block: 32 * 1024,
            max_body: 1 << 20,
            reset_budget: 128,
            control_budget: 1024,
        }
    }
}
