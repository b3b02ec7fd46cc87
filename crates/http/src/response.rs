//! Client side: incremental, zero-copy HTTP/1.1 response parsing for the load generator.
