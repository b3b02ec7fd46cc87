//! Response compression: which responses are compressed ([`Compression`], [`compressible`]),
//! the client's choice (`negotiate`), and a worker's encoders, built once and reused
//! ([`Codecs`]).
//!
//! The encoders were chosen by their speed on HttpArena's json bodies (4-8 KiB), measured
//! with each crate's one-shot API on one CPU: libdeflate (libdeflater) at level 1 makes a
//! smaller gzip body than zlib-rs (flate2) at level 1 in about as much time, and level 1
//! costs half of level 6 for 15% more bytes; zstd level 1 is the cheapest of all for the
//! smallest body; brotli pays for its ratio (quality 3 takes about three times gzip's
//! time). Hence the server's order for a tie in the client's weights: zstd, gzip, br.

mod negotiate;

pub use negotiate::Coding;
pub(crate) use negotiate::negotiate;

/// Dynamic compression of response bodies (`Config::compression`): which coding levels,
/// from what size. A response is compressed when it is a 200 with a body of at least
/// `min_bytes`, its `Content-Type` is textual ([`compressible`]), its handler set no
/// `Content-Encoding` of its own, and the client accepts one of the codings (`Accept-Encoding`,
/// q-values honoured); such a response carries `Vary: Accept-Encoding` whichever coding it got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Compression {
    /// libdeflate's level for gzip, 1 (fastest) to 12.
    pub gzip_level: u8,
    /// brotli's quality, 0 to 11.
    pub brotli_quality: u8,
    /// zstd's level, 1 to 22.
    pub zstd_level: u8,
    /// Smaller bodies are sent as they are: below a few hundred bytes the coding's own
    /// framing eats most of the gain, and the CPU is spent for nothing.
    pub min_bytes: usize,
}

impl Default for Compression {
    fn default() -> Self {
        Self {
            gzip_level: 1,
            brotli_quality: 3,
            zstd_level: 1,
            min_bytes: 512,
        }
    }
}

impl Compression {
    /// The codings offered, in the server's order of preference (see the module docs).
    pub(crate) const OFFER: &'static [Coding] = &[Coding::Zstd, Coding::Gzip, Coding::Br];

    /// Checks every level against its codec's range; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        let check = |name: &str, v: u8, lo: u8, hi: u8| {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(format!("{name} {v} is out of range ({lo} to {hi})"))
            }
        };
        check("gzip level", self.gzip_level, 1, 12)?;
        check("brotli quality", self.brotli_quality, 0, 11)?;
        check("zstd level", self.zstd_level, 1, 22)
    }
}

impl std::str::FromStr for Compression {
    type Err = String;

    /// `gzip=N,br=N,zstd=N,min=BYTES`, any subset in any order, the rest at their defaults
    /// (`""` is all defaults); each level is checked against its codec's range.
    fn from_str(s: &str) -> Result<Self, String> {
        let mut c = Compression::default();
        for pair in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("{pair:?}: expected KEY=VALUE (gzip, br, zstd, min)"))?;
            let bad = |e: std::num::ParseIntError| format!("{key}={value}: {e}");
            match key {
                "gzip" => c.gzip_level = value.parse().map_err(bad)?,
                "br" => c.brotli_quality = value.parse().map_err(bad)?,
                "zstd" => c.zstd_level = value.parse().map_err(bad)?,
                "min" => c.min_bytes = value.parse().map_err(bad)?,
                _ => {
                    return Err(format!(
                        "{key:?}: unknown key (expected gzip, br, zstd or min)"
                    ));
                }
            }
        }
        c.validate()?;
        Ok(c)
    }
}

/// Whether a body of this media type is worth compressing: text, JSON, JavaScript, XML, SVG
/// and WebAssembly. Images, fonts (woff2 is already brotli), audio, video and archives are
/// compressed already.
pub fn compressible(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .as_bytes();
    let starts = |p: &[u8]| essence.len() >= p.len() && essence[..p.len()].eq_ignore_ascii_case(p);
    let ends = |s: &[u8]| {
        essence.len() >= s.len() && essence[essence.len() - s.len()..].eq_ignore_ascii_case(s)
    };
    if starts(b"text/") || ends(b"+json") || ends(b"+xml") {
        return true;
    }
    [
        &b"application/json"[..],
        b"application/javascript",
        b"application/x-javascript",
        b"application/ecmascript",
        b"application/xml",
        b"application/wasm",
    ]
    .iter()
    .any(|t| essence.eq_ignore_ascii_case(t))
}

/// A worker's encoders and their output buffer: built on first use, then reused for every
/// response (libdeflate's and zstd's contexts are reset per call, not rebuilt). brotli's
/// encoder state cannot be reset, so a br response builds its own.
pub(crate) struct Codecs {
    settings: Compression,
    gzip: Option<libdeflater::Compressor>,
    zstd: Option<zstd::bulk::Compressor<'static>>,
    /// Compressed bytes: `out[..n]` after [`Codecs::compress`]. Its length only grows, so the
    /// encoders write into initialised memory without zeroing it again.
    out: Vec<u8>,
}

impl std::fmt::Debug for Codecs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Codecs")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Codecs {
    pub(crate) fn new(settings: Compression) -> Self {
        Self {
            settings,
            gzip: None,
            zstd: None,
            out: Vec::new(),
        }
    }

    pub(crate) fn settings(&self) -> &Compression {
        &self.settings
    }

    /// `input` in `coding`, or `None` when the encoder failed (the response then goes out
    /// uncompressed) or the result is no smaller than the input.
    pub(crate) fn compress(&mut self, coding: Coding, input: &[u8]) -> Option<&[u8]> {
        let s = self.settings;
        let bound = match coding {
            Coding::Identity => return None,
            Coding::Gzip => self.gzip_encoder()?.gzip_compress_bound(input.len()),
            Coding::Zstd => zstd::zstd_safe::compress_bound(input.len()),
            Coding::Br => brotli::enc::BrotliEncoderMaxCompressedSize(input.len()).max(64),
        };
        if self.out.len() < bound {
            self.out.resize(bound, 0);
        }
        let out = &mut self.out[..];
        let n = match coding {
            Coding::Identity => return None,
            Coding::Gzip => self.gzip.as_mut()?.gzip_compress(input, out).ok()?,
            Coding::Zstd => {
                if self.zstd.is_none() {
                    self.zstd = zstd::bulk::Compressor::new(i32::from(s.zstd_level)).ok();
                }
                self.zstd.as_mut()?.compress_to_buffer(input, out).ok()?
            }
            Coding::Br => {
                let params = brotli::enc::BrotliEncoderParams {
                    quality: i32::from(s.brotli_quality),
                    size_hint: input.len(),
                    ..Default::default()
                };
                let mut w: &mut [u8] = out;
                brotli::enc::BrotliCompress(&mut &input[..], &mut w, &params).ok()?
            }
        };
        (n < input.len()).then(|| &self.out[..n])
    }

    fn gzip_encoder(&mut self) -> Option<&mut libdeflater::Compressor> {
        if self.gzip.is_none() {
            let level = libdeflater::CompressionLvl::new(i32::from(self.settings.gzip_level));
            self.gzip = Some(libdeflater::Compressor::new(level.ok()?));
        }
        self.gzip.as_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    macro_rules! types {
        ($($name:ident: $ct:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(compressible($ct), $want);
            }
        )*};
    }

    types! {
        json: "application/json" => true;
        text_with_charset: "text/plain; charset=utf-8" => true;
        css: "text/css" => true;
        javascript: "application/javascript" => true;
        svg: "image/svg+xml" => true;
        manifest: "application/manifest+json" => true;
        upper_case: "Application/JSON" => true;
        webp: "image/webp" => false;
        woff2: "font/woff2" => false;
        octets: "application/octet-stream" => false;
        gzip_archive: "application/gzip" => false;
        empty: "" => false;
    }

    fn text() -> Vec<u8> {
        (0..200)
            .flat_map(|i| {
                format!("{{\"id\":{i},\"name\":\"item {i}\",\"tags\":[\"a\",\"b\"]}},").into_bytes()
            })
            .collect()
    }

    /// Every coding round-trips through its reference decoder, with the codecs reused.
    #[test]
    fn each_coding_round_trips_twice() {
        let input = text();
        let mut codecs = Codecs::new(Compression::default());
        for _ in 0..2 {
            for coding in [Coding::Gzip, Coding::Br, Coding::Zstd] {
                let packed = codecs
                    .compress(coding, &input)
                    .expect("compresses")
                    .to_vec();
                assert!(
                    packed.len() < input.len() / 3,
                    "{coding:?}: {}",
                    packed.len()
                );
                let mut back = Vec::new();
                match coding {
                    Coding::Gzip => {
                        flate2::read::GzDecoder::new(&packed[..]).read_to_end(&mut back)
                    }
                    Coding::Br => {
                        brotli::Decompressor::new(&packed[..], 4096).read_to_end(&mut back)
                    }
                    Coding::Zstd => zstd::stream::read::Decoder::new(&packed[..])
                        .unwrap()
                        .read_to_end(&mut back),
                    Coding::Identity => unreachable!(),
                }
                .unwrap();
                assert_eq!(back, input, "{coding:?}");
            }
        }
    }

    #[test]
    fn incompressible_input_is_refused() {
        // xorshift64: no structure for a compressor to find.
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let input: Vec<u8> = (0..600)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let mut codecs = Codecs::new(Compression::default());
        assert!(codecs.compress(Coding::Gzip, &input).is_none());
        assert!(codecs.compress(Coding::Identity, b"x").is_none());
    }

    #[test]
    fn settings_parse() {
        let c: Compression = "gzip=6, min=100".parse().unwrap();
        assert_eq!((c.gzip_level, c.brotli_quality, c.min_bytes), (6, 3, 100));
        assert_eq!("".parse::<Compression>(), Ok(Compression::default()));
        for bad in ["gzip", "lz4=1", "br=12", "zstd=x", "gzip=0"] {
            assert!(bad.parse::<Compression>().is_err(), "{bad}");
        }
    }

    #[test]
    fn levels_are_checked() {
        assert!(Compression::default().validate().is_ok());
        let bad = Compression {
            gzip_level: 13,
            ..Compression::default()
        };
        assert_eq!(
            bad.validate().unwrap_err(),
            "gzip level 13 is out of range (1 to 12)"
        );
    }
}
