//! MIME type by file extension: a fixed table, case-insensitive on the extension.
//!
//! Text types carry `charset=utf-8` so browsers never sniff an encoding. Unknown extensions get
//! `application/octet-stream`: RFC 9110 §8.3 lets a sender omit the type, but then clients sniff
//! the content, and a browser rendering an unknown user-supplied file as HTML is the classic
//! static-server XSS; octet-stream makes it a download.

/// Type sent for an extension the table does not know.
pub(crate) const DEFAULT: &str = "application/octet-stream";

/// Sorted by extension (binary search); lower-case keys.
const TABLE: &[(&str, &str)] = &[
    ("7z", "application/x-7z-compressed"),
    ("aac", "audio/aac"),
    ("avif", "image/avif"),
    ("bin", "application/octet-stream"),
    ("bmp", "image/bmp"),
    ("bz2", "application/x-bzip2"),
    ("css", "text/css; charset=utf-8"),
    ("csv", "text/csv; charset=utf-8"),
    ("gif", "image/gif"),
    ("gz", "application/gzip"),
    ("htm", "text/html; charset=utf-8"),
    ("html", "text/html; charset=utf-8"),
    ("ico", "image/vnd.microsoft.icon"),
    ("jpeg", "image/jpeg"),
    ("jpg", "image/jpeg"),
    ("js", "text/javascript; charset=utf-8"),
    ("json", "application/json"),
    ("map", "application/json"),
    ("md", "text/markdown; charset=utf-8"),
    ("mjs", "text/javascript; charset=utf-8"),
    ("mp3", "audio/mpeg"),
    ("mp4", "video/mp4"),
    ("oga", "audio/ogg"),
    ("ogg", "audio/ogg"),
    ("ogv", "video/ogg"),
    ("otf", "font/otf"),
    ("pdf", "application/pdf"),
    ("png", "image/png"),
    ("svg", "image/svg+xml"),
    ("tar", "application/x-tar"),
    ("toml", "application/toml"),
    ("ttf", "font/ttf"),
    ("txt", "text/plain; charset=utf-8"),
    ("wasm", "application/wasm"),
    ("wav", "audio/wav"),
    ("webm", "video/webm"),
    ("webmanifest", "application/manifest+json"),
    ("webp", "image/webp"),
    ("woff", "font/woff"),
    ("woff2", "font/woff2"),
    ("xml", "application/xml"),
    ("xz", "application/x-xz"),
    ("yaml", "application/yaml"),
    ("yml", "application/yaml"),
    ("zip", "application/zip"),
    ("zst", "application/zstd"),
];

/// MIME type for the last segment of `path`; [`DEFAULT`] when it has no known extension.
pub(crate) fn for_path(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return DEFAULT;
    };
    // A dotfile such as `.txt` has no extension, only a name.
    if stem.is_empty() || ext.len() > 16 {
        return DEFAULT;
    }
    let mut lower = [0u8; 16];
    let lower = &mut lower[..ext.len()];
    lower.copy_from_slice(ext.as_bytes());
    lower.make_ascii_lowercase();
    TABLE
        .binary_search_by(|(k, _)| k.as_bytes().cmp(lower))
        .map_or(DEFAULT, |i| TABLE[i].1)
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! mime {
        ($($name:ident: $input:expr => $want:expr;)*) => {$(
            #[test]
            fn $name() {
                assert_eq!(for_path($input), $want);
            }
        )*};
    }

    mime! {
        html: "index.html" => "text/html; charset=utf-8";
        upper_case_extension: "A.PNG" => "image/png";
        nested: "static/js/app.min.js" => "text/javascript; charset=utf-8";
        unknown: "a.unknownext" => DEFAULT;
        no_extension: "Makefile" => DEFAULT;
        dotfile: ".txt" => DEFAULT;
        dot_in_directory_only: "v1.2/README" => DEFAULT;
        trailing_dot: "a." => DEFAULT;
        long_extension: "a.aaaaaaaaaaaaaaaaaaaaaaaaa" => DEFAULT;
    }

    #[test]
    fn table_is_sorted_and_lower_case() {
        for pair in TABLE.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{} before {}", pair[0].0, pair[1].0);
        }
        assert!(
            TABLE
                .iter()
                .all(|(k, _)| k.len() <= 16 && *k == k.to_lowercase())
        );
    }
}
