//! Runs the TLS-to-Conn fuzz-target body over the committed seeds in fuzz/seeds/tls_conn, at
//! every split size up to 64, so CI exercises it without a fuzzer; crashers found by fuzzing
//! are added there as regression seeds.

#[test]
fn tls_conn_seeds() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/tls_conn");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        twelve_engine::fuzzing::tls_conn_target(&data);
        for split in 0..=64u8 {
            let mut seeded = data.clone();
            if seeded.len() > 1 {
                seeded[1] = split;
            }
            twelve_engine::fuzzing::tls_conn_target(&seeded);
        }
        count += 1;
    }
    assert!(count > 0, "no seeds in {}", dir.display());
}
