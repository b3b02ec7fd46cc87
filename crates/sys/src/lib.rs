//! twelve-sys: syscalls, socket options, CBPF steering, CPU affinity and topology.
