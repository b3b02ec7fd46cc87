//! `Accept-Encoding` negotiation (RFC 9110 §12.5.3): which content coding, of those a response
//! can be sent in, the client prefers.
//!
//! ```text
//! Accept-Encoding = #( codings [ weight ] )
//! codings         = content-coding / "identity" / "*"
//! weight          = OWS ";" OWS "q=" qvalue
//! qvalue          = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
//! ```
//!
//! A request without the field gets identity: the RFC lets a server pick any coding then, but
//! clients that send nothing (curl without `--compressed`, HttpArena's json profile) expect
//! none. A malformed element is skipped, not fatal: the rest of the list still counts.

/// A content coding twelve can send a body in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coding {
    /// No coding (`identity`).
    Identity,
    /// `gzip` (RFC 1952; `x-gzip` is read as its alias, RFC 9110 §8.4.1.3).
    Gzip,
    /// `br` (RFC 7932).
    Br,
    /// `zstd` (RFC 8878).
    Zstd,
}

impl Coding {
    /// The `Content-Encoding` token; empty for identity, which is never sent.
    pub fn token(self) -> &'static str {
        match self {
            Coding::Identity => "",
            Coding::Gzip => "gzip",
            Coding::Br => "br",
            Coding::Zstd => "zstd",
        }
    }

    fn named(name: &[u8]) -> Option<Coding> {
        [
            (&b"gzip"[..], Coding::Gzip),
            (b"x-gzip", Coding::Gzip),
            (b"br", Coding::Br),
            (b"zstd", Coding::Zstd),
            (b"identity", Coding::Identity),
        ]
        .into_iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, c)| c)
    }
}

/// What one `Accept-Encoding` list said about each coding: its weight in thousandths, or
/// `None` when not named.
#[derive(Clone, Copy, Debug, Default)]
struct Weights {
    gzip: Option<u16>,
    br: Option<u16>,
    zstd: Option<u16>,
    star: Option<u16>,
}

impl Weights {
    fn slot(&mut self, c: Coding) -> Option<&mut Option<u16>> {
        match c {
            Coding::Gzip => Some(&mut self.gzip),
            Coding::Br => Some(&mut self.br),
            Coding::Zstd => Some(&mut self.zstd),
            Coding::Identity => None,
        }
    }

    /// A coding's weight: its own, else the `*` one, else 0 (not acceptable).
    fn of(&self, c: Coding) -> u16 {
        let own = match c {
            Coding::Gzip => self.gzip,
            Coding::Br => self.br,
            Coding::Zstd => self.zstd,
            Coding::Identity => return 0,
        };
        own.or(self.star).unwrap_or(0)
    }
}

/// The coding to send: of `offer` (the server's order of preference, which breaks ties),
/// the one with the highest non-zero weight in the `Accept-Encoding` field lines `values`;
/// `Identity` when none is acceptable or there is no field.
pub fn negotiate<'h>(values: impl IntoIterator<Item = &'h [u8]>, offer: &[Coding]) -> Coding {
    let mut w = Weights::default();
    for value in values {
        for element in value.split(|&b| b == b',') {
            let Some((name, q)) = element_weight(element) else {
                continue;
            };
            if name == b"*" {
                w.star = Some(q);
            } else if let Some(slot) = Coding::named(name).and_then(|c| w.slot(c)) {
                // Named twice: the later one wins, as most parsers do.
                *slot = Some(q);
            }
        }
    }
    let mut best = (Coding::Identity, 0);
    for &c in offer {
        let q = w.of(c);
        if q > best.1 {
            best = (c, q);
        }
    }
    best.0
}

/// One list element, `name [ ; q=value ]`: its name and weight (1000 when absent); `None`
/// for an empty or malformed element.
fn element_weight(element: &[u8]) -> Option<(&[u8], u16)> {
    let mut parts = element.split(|&b| b == b';');
    let name = parts.next()?.trim_ascii();
    if name.is_empty() {
        return None;
    }
    let mut q = 1000;
    for param in parts {
        let param = param.trim_ascii();
        let (key, value) = param.split_at(param.iter().position(|&b| b == b'=')?);
        if key.trim_ascii().eq_ignore_ascii_case(b"q") {
            q = qvalue(value[1..].trim_ascii())?;
        }
    }
    Some((name, q))
}

/// A qvalue in thousandths: `0`, `0.5`, `0.125`, `1`, `1.000`; anything else `None`.
fn qvalue(v: &[u8]) -> Option<u16> {
    let (int, frac) = match v.iter().position(|&b| b == b'.') {
        Some(dot) => (&v[..dot], &v[dot + 1..]),
        None => (v, &b""[..]),
    };
    if frac.len() > 3 || !frac.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut thousandths = 0u16;
    for i in 0..3 {
        thousandths = thousandths * 10 + frac.get(i).map_or(0, |d| u16::from(d - b'0'));
    }
    match int {
        b"0" => Some(thousandths),
        b"1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Coding::*;

    const ALL: &[Coding] = &[Zstd, Gzip, Br];

    macro_rules! negotiates {
        ($($name:ident: $values:expr, $offer:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                let values: &[&str] = $values;
                let got = negotiate(values.iter().map(|v| v.as_bytes()), $offer);
                assert_eq!(got, $want);
            }
        )*};
    }

    negotiates! {
        no_field_is_identity: &[], ALL => Identity;
        empty_field_is_identity: &[""], ALL => Identity;
        arena_json_comp_tie_goes_to_server_order: &["gzip, br"], ALL => Gzip;
        arena_static_weights_prefer_br: &["br;q=1, gzip;q=0.8"], ALL => Br;
        curl_compressed: &["deflate, gzip, br, zstd"], ALL => Zstd;
        client_weight_beats_server_order: &["gzip;q=0.5, br"], ALL => Br;
        q_zero_refuses: &["gzip;q=0"], ALL => Identity;
        q_zero_point_zero_refuses: &["gzip;q=0.000, br;q=0.001"], ALL => Br;
        star_covers_the_unnamed: &["*"], ALL => Zstd;
        star_with_exclusion: &["*;q=0.5, zstd;q=0"], ALL => Gzip;
        star_zero_and_identity: &["identity, *;q=0"], ALL => Identity;
        x_gzip_is_gzip: &["x-gzip"], ALL => Gzip;
        case_and_spaces: &["  GZIP ; Q=0.9 ,BR;q=1.0"], ALL => Br;
        only_offered_codings: &["br"], &[Gzip] => Identity;
        unknown_codings_ignored: &["compress, deflate"], ALL => Identity;
        malformed_q_skips_the_element: &["br;q=2, gzip"], ALL => Gzip;
        q_with_four_decimals_is_malformed: &["br;q=0.1234, gzip;q=0.1"], ALL => Gzip;
        one_point_five_is_malformed: &["br;q=1.5, gzip"], ALL => Gzip;
        lines_combine: &["gzip;q=0.2", "br;q=0.3"], ALL => Br;
        empty_elements_ignored: &[",, ,gzip,"], ALL => Gzip;
        later_duplicate_wins: &["br, br;q=0, gzip;q=0.1"], ALL => Gzip;
    }

    #[test]
    fn tokens() {
        assert_eq!(
            [Gzip.token(), Br.token(), Zstd.token(), Identity.token()],
            ["gzip", "br", "zstd", ""]
        );
    }
}
