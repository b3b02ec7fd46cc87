//! One histogram as text: HdrHistogram's V2 deflate-compressed encoding in base64 (the
//! payload of an `.hlog` line, `HISTF…`), so a JSON report or a timeseries line carries the
//! whole histogram and a reader (`twelve merge`, or any HdrHistogram library) rebuilds it
//! bucket by bucket.
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use std::fmt;

/// A histogram that could not be read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodecError {
    /// Not base64.
    Base64,
    /// Not an HdrHistogram V2 (compressed) encoding.
    Encoding,
    /// Bounds other than twelve's (1 ns … 1 h, 3 digits): it cannot be merged losslessly.
    Bounds,
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CodecError::Base64 => "histogram is not base64",
            CodecError::Encoding => "histogram is not an HdrHistogram V2 encoding",
            CodecError::Bounds => "histogram bounds differ from twelve's (1 ns..1 h, 3 digits)",
        })
    }
}

impl std::error::Error for CodecError {}

/// `h` as base64 of its V2 deflate encoding.
pub fn encode(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .expect("writing to a Vec cannot fail");
    STANDARD.encode(bytes)
}

/// A histogram from [`encode`]'s text, with twelve's bounds, so [`crate::Recorder::add`]
/// (which requires them) can take it.
pub fn decode(text: &str) -> Result<Histogram<u64>, CodecError> {
    let bytes = STANDARD.decode(text).map_err(|_| CodecError::Base64)?;
    let read: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|_| CodecError::Encoding)?;
    let mut h = crate::latency::new_histogram();
    if read.sigfig() != h.sigfig() || read.low() != h.low() || read.high() > h.high() {
        return Err(CodecError::Bounds);
    }
    h.add(&read).map_err(|_| CodecError::Bounds)?;
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::latency::new_histogram;

    fn sample(values: &[u64]) -> Histogram<u64> {
        let mut h = new_histogram();
        for &v in values {
            h.saturating_record(v);
        }
        h
    }

    macro_rules! roundtrip {
        ($name:ident, $values:expr) => {
            #[test]
            fn $name() {
                let h = sample(&$values);
                let text = encode(&h);
                assert!(text.starts_with("HISTF"), "{text}");
                let back = decode(&text).unwrap();
                assert_eq!(back, h);
                assert_eq!(back.len(), h.len());
                assert!(
                    h.iter_all()
                        .zip(back.iter_all())
                        .all(|(a, b)| a.count_at_value() == b.count_at_value())
                );
            }
        };
    }

    roundtrip!(roundtrip_empty, []);
    roundtrip!(roundtrip_one, [23_456]);
    roundtrip!(
        roundtrip_spread,
        [1, 999, 1_000, 23_456, 7_000_000, 3_599_999_999_999]
    );
    roundtrip!(roundtrip_saturated, [u64::MAX]);

    #[test]
    fn garbage_is_refused() {
        assert_eq!(decode("not base64!").unwrap_err(), CodecError::Base64);
        assert_eq!(decode("AAAA").unwrap_err(), CodecError::Encoding);
    }

    #[test]
    fn other_bounds_are_refused() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 1_000_000, 2).unwrap();
        h.record(5).unwrap();
        assert_eq!(decode(&encode(&h)).unwrap_err(), CodecError::Bounds);
    }
}
