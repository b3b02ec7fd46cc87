//! Times the client-side handshake primitives on ring and aws-lc-rs, 3,000 of each, 5 rounds.
use std::time::Instant;
macro_rules! bench {
    ($lib:ident, $agree:expr, $kp:expr) => {{
        use $lib::{
            agreement,
            rand::SystemRandom,
            signature::{self, KeyPair},
        };
        let rng = SystemRandom::new();
        let n = 3000;
        let mut out = Vec::new();
        for (name, alg) in [
            ("x25519", &agreement::X25519),
            ("p256", &agreement::ECDH_P256),
        ] {
            let peer = agreement::EphemeralPrivateKey::generate(alg, &rng).unwrap();
            let peer_pub = peer.compute_public_key().unwrap();
            let peer_pub = peer_pub.as_ref().to_vec();
            let t = Instant::now();
            for _ in 0..n {
                let k = agreement::EphemeralPrivateKey::generate(alg, &rng).unwrap();
                let _p = k.compute_public_key().unwrap();
                let up = agreement::UnparsedPublicKey::new(alg, &peer_pub);
                $agree(k, &up);
            }
            out.push((name, t.elapsed().as_nanos() as f64 / n as f64 / 1000.0));
        }
        let pkcs8 = signature::EcdsaKeyPair::generate_pkcs8(
            &signature::ECDSA_P256_SHA256_ASN1_SIGNING,
            &rng,
        )
        .unwrap();
        let kp = $kp(pkcs8.as_ref(), &rng);
        let msg = [7u8; 130];
        let sig = kp.sign(&rng, &msg).unwrap();
        let pk = signature::UnparsedPublicKey::new(
            &signature::ECDSA_P256_SHA256_ASN1,
            kp.public_key().as_ref().to_vec(),
        );
        let t = Instant::now();
        for _ in 0..n {
            pk.verify(&msg, sig.as_ref()).unwrap();
        }
        out.push((
            "p256-verify",
            t.elapsed().as_nanos() as f64 / n as f64 / 1000.0,
        ));
        out
    }};
}
fn main() {
    for round in 0..5 {
        let r = bench!(
            ring,
            |k, up: &ring::agreement::UnparsedPublicKey<&Vec<u8>>| {
                ring::agreement::agree_ephemeral(k, up, |s: &[u8]| s.len()).unwrap();
            },
            |p: &[u8], rng: &ring::rand::SystemRandom| ring::signature::EcdsaKeyPair::from_pkcs8(
                &ring::signature::ECDSA_P256_SHA256_ASN1_SIGNING,
                p,
                rng
            )
            .unwrap()
        );
        let a = bench!(
            aws_lc_rs,
            |k, up: &aws_lc_rs::agreement::UnparsedPublicKey<&Vec<u8>>| {
                aws_lc_rs::agreement::agree_ephemeral(k, up, (), |s: &[u8]| {
                    Ok::<usize, ()>(s.len())
                })
                .unwrap();
            },
            |p: &[u8], _rng: &aws_lc_rs::rand::SystemRandom| {
                aws_lc_rs::signature::EcdsaKeyPair::from_pkcs8(
                    &aws_lc_rs::signature::ECDSA_P256_SHA256_ASN1_SIGNING,
                    p,
                )
                .unwrap()
            }
        );
        println!(
            "round {round}: ring {:?}",
            r.iter()
                .map(|(n, v)| format!("{n} {v:.1}us"))
                .collect::<Vec<_>>()
        );
        println!(
            "round {round}: awslc {:?}",
            a.iter()
                .map(|(n, v)| format!("{n} {v:.1}us"))
                .collect::<Vec<_>>()
        );
    }
}
