//! [`Tickets`]: the load generator's session store, which keeps every TLS 1.3 ticket a server
//! issues (up to [`TICKETS_PER_SERVER`]) so that each reconnection of a run can resume.
//!
//! Why not rustls's own `ClientSessionMemoryCache`: it keeps at most 8 TLS 1.3 tickets per
//! server name. A ticket resumes one handshake, and a load generator opens `-c` connections
//! to one server at once, so with it most reconnections of `--close -c64` make a full
//! handshake (docs/results.md#tls).
//!
//! Shared by every load worker through rustls's `Arc<dyn ClientSessionStore>`, whose methods
//! take `&self` from any thread: a mutex, taken once per handshake, never per request.

use rustls::NamedGroup;
use rustls::client::{ClientSessionStore, Tls12ClientSessionValue, Tls13ClientSessionValue};
use rustls::pki_types::ServerName;
use std::collections::VecDeque;
use std::sync::Mutex;

/// The most TLS 1.3 tickets kept for one server name: more than any `-c` a run resumes at
/// once needs (a ticket is used once, and most servers issue one or two per handshake); the
/// oldest go first.
pub(crate) const TICKETS_PER_SERVER: usize = 16_384;

/// The most server names kept (a targets file may name several hosts); the oldest name goes
/// first.
const SERVERS: usize = 256;

/// See the module documentation.
#[derive(Debug, Default)]
pub(crate) struct Tickets(Mutex<Servers<Entry>>);

/// What is kept for one server name.
#[derive(Debug, Default)]
struct Entry {
    kx_hint: Option<NamedGroup>,
    tls12: Option<Tls12ClientSessionValue>,
    tls13: Stack<Tls13ClientSessionValue>,
}

/// Entries by server name, at most [`SERVERS`], in the order they were first stored. A
/// linear search: a run talks to one server, or a handful.
#[derive(Debug)]
struct Servers<T> {
    entries: Vec<(ServerName<'static>, T)>,
    max: usize,
}

impl<T> Default for Servers<T> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            max: SERVERS,
        }
    }
}

impl<T: Default> Servers<T> {
    fn get(&mut self, name: &ServerName<'_>) -> Option<&mut T> {
        self.entries
            .iter_mut()
            .find(|(n, _)| n == name)
            .map(|(_, e)| e)
    }

    fn entry(&mut self, name: ServerName<'static>) -> &mut T {
        let i = match self.entries.iter().position(|(n, _)| *n == name) {
            Some(i) => i,
            None => {
                if self.entries.len() == self.max {
                    self.entries.remove(0);
                }
                self.entries.push((name, T::default()));
                self.entries.len() - 1
            }
        };
        &mut self.entries[i].1
    }
}

/// A bounded stack of tickets: the newest is taken first (the freshest, furthest from its
/// lifetime's end), the oldest dropped when full.
#[derive(Debug)]
struct Stack<T> {
    items: VecDeque<T>,
    max: usize,
}

impl<T> Default for Stack<T> {
    fn default() -> Self {
        Self {
            items: VecDeque::new(),
            max: TICKETS_PER_SERVER,
        }
    }
}

impl<T> Stack<T> {
    fn push(&mut self, item: T) {
        if self.items.len() == self.max {
            self.items.pop_front();
        }
        self.items.push_back(item);
    }

    fn take(&mut self) -> Option<T> {
        self.items.pop_back()
    }
}

impl Tickets {
    fn with<R>(&self, f: impl FnOnce(&mut Servers<Entry>) -> R) -> R {
        // A panic while holding the lock cannot leave an entry half-written: every change is
        // one push, pop or assignment.
        f(&mut self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl ClientSessionStore for Tickets {
    fn set_kx_hint(&self, name: ServerName<'static>, group: NamedGroup) {
        self.with(|s| s.entry(name).kx_hint = Some(group));
    }

    fn kx_hint(&self, name: &ServerName<'_>) -> Option<NamedGroup> {
        self.with(|s| s.get(name).and_then(|e| e.kx_hint))
    }

    fn set_tls12_session(&self, name: ServerName<'static>, value: Tls12ClientSessionValue) {
        self.with(|s| s.entry(name).tls12 = Some(value));
    }

    fn tls12_session(&self, name: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        self.with(|s| s.get(name).and_then(|e| e.tls12.clone()))
    }

    fn remove_tls12_session(&self, name: &ServerName<'static>) {
        self.with(|s| {
            if let Some(e) = s.get(name) {
                e.tls12 = None;
            }
        });
    }

    fn insert_tls13_ticket(&self, name: ServerName<'static>, value: Tls13ClientSessionValue) {
        self.with(|s| s.entry(name).tls13.push(value));
    }

    fn take_tls13_ticket(&self, name: &ServerName<'static>) -> Option<Tls13ClientSessionValue> {
        self.with(|s| s.get(name).and_then(|e| e.tls13.take()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> ServerName<'static> {
        ServerName::try_from(s.to_owned()).unwrap()
    }

    /// Far more than rustls's 8 tickets are kept; the newest comes out first; past the bound
    /// the oldest are gone.
    #[test]
    fn ring_keeps_up_to_its_bound_newest_first() {
        let mut r = Stack {
            items: VecDeque::new(),
            max: 100,
        };
        for i in 0..150 {
            r.push(i);
        }
        let taken: Vec<i32> = std::iter::from_fn(|| r.take()).collect();
        assert_eq!(taken, (50..150).rev().collect::<Vec<_>>());
    }

    /// Entries are found by name only; past the bound the first name stored goes.
    #[test]
    fn servers_are_kept_by_name_up_to_their_bound() {
        let mut s: Servers<Vec<u8>> = Servers {
            entries: Vec::new(),
            max: 2,
        };
        s.entry(name("a.example")).push(1);
        s.entry(name("b.example")).push(2);
        s.entry(name("a.example")).push(3);
        assert_eq!(s.get(&name("a.example")).cloned(), Some(vec![1, 3]));
        s.entry(name("c.example")).push(4);
        assert_eq!(s.get(&name("a.example")), None);
        assert_eq!(s.get(&name("b.example")).cloned(), Some(vec![2]));
        assert_eq!(s.get(&name("c.example")).cloned(), Some(vec![4]));
    }

    /// The hint and the TLS 1.2 session are one per name, and no name sees another's.
    #[test]
    fn kx_hints_are_per_name() {
        let t = Tickets::default();
        t.set_kx_hint(name("a.example"), NamedGroup::X25519);
        assert_eq!(t.kx_hint(&name("a.example")), Some(NamedGroup::X25519));
        assert_eq!(t.kx_hint(&name("b.example")), None);
        assert!(t.take_tls13_ticket(&name("a.example")).is_none());
    }
}
