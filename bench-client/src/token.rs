//! The agent's token: the secret the run and the agent share, and the proofs by which each shows it holds it.
//!
//! A layer-1 module: the run's validated configuration holds a token, and the agent above
//! it proves and checks it.

use ring::hmac;

pub use bench_proto::results::AGENT_TOKEN_ENV as TOKEN_ENV;

/// The shared secret: 32 random bytes, written as 64 hex digits.
#[derive(Clone, PartialEq, Eq)]
pub struct Token([u8; 32]);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("an agent token is 64 hex digits (32 bytes), as `bench-client agent` prints one")]
pub struct BadToken;

impl Token {
    pub fn generate() -> Token {
        let mut bytes = [0u8; 32];
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
            .expect("the system's random source");
        Token(bytes)
    }

    pub fn parse(text: &str) -> Result<Token, BadToken> {
        let text = text.trim();
        if text.len() != 64 || !text.is_ascii() {
            return Err(BadToken);
        }
        let mut bytes = [0u8; 32];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| BadToken)?;
        }
        Ok(Token(bytes))
    }

    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The token of `WSBENCH_AGENT_TOKEN`, or of a file (its first line), or `None` when neither is given.
    pub(crate) fn from_env_or_file(
        file: Option<&std::path::Path>,
    ) -> anyhow::Result<Option<Token>> {
        use anyhow::Context as _;
        if let Some(path) = file {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading the agent token {}", path.display()))?;
            return Ok(Some(Token::parse(text.lines().next().unwrap_or(""))?));
        }
        match std::env::var(TOKEN_ENV) {
            Ok(v) => Ok(Some(
                Token::parse(&v).map_err(|e| anyhow::anyhow!("{TOKEN_ENV}: {e}"))?,
            )),
            Err(_) => Ok(None),
        }
    }

    /// The proof that `side` holds the token, bound to one TLS session by its exported keying material.
    pub fn proof(&self, side: Side, ekm: &[u8; 32]) -> String {
        let key = hmac::Key::new(hmac::HMAC_SHA256, &self.0);
        let mut ctx = hmac::Context::with_key(&key);
        ctx.update(side.label());
        ctx.update(ekm);
        ctx.sign()
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// Whether `proof` is `side`'s proof for this session (compared in constant time).
    pub fn verify(&self, side: Side, ekm: &[u8; 32], proof: &str) -> bool {
        let Ok(tag) = Token::parse_tag(proof) else {
            return false;
        };
        let key = hmac::Key::new(hmac::HMAC_SHA256, &self.0);
        let mut msg = side.label().to_vec();
        msg.extend_from_slice(ekm);
        hmac::verify(&key, &msg, &tag).is_ok()
    }

    fn parse_tag(text: &str) -> Result<Vec<u8>, BadToken> {
        if text.len() != 64 || !text.is_ascii() {
            return Err(BadToken);
        }
        (0..32)
            .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| BadToken))
            .collect()
    }
}

/// Which end a proof speaks for (so that one end's proof is never the other's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Run,
    Agent,
}

impl Side {
    fn label(self) -> &'static [u8] {
        match self {
            Side::Run => b"wsbench run\0",
            Side::Agent => b"wsbench agent\0",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_read_as_written_and_nothing_else() {
        let t = Token::generate();
        assert_eq!(Token::parse(&t.hex()), Ok(t.clone()));
        assert_eq!(Token::parse(&format!(" {}\n", t.hex())), Ok(t.clone()));
        assert_ne!(Token::generate(), t, "random");
        assert_eq!(Token::parse("abc"), Err(BadToken));
        assert_eq!(Token::parse(&"g".repeat(64)), Err(BadToken));
        assert!(
            !format!("{t:?}").contains(&t.hex()[..8]),
            "never printed by Debug"
        );
    }

    #[test]
    fn a_proof_holds_only_for_its_token_side_and_session() {
        let (t, other) = (Token::generate(), Token::generate());
        let (ekm, ekm2) = ([1u8; 32], [2u8; 32]);
        let p = t.proof(Side::Run, &ekm);
        assert!(t.verify(Side::Run, &ekm, &p));
        assert!(!other.verify(Side::Run, &ekm, &p), "another token");
        assert!(!t.verify(Side::Agent, &ekm, &p), "the other side's");
        assert!(!t.verify(Side::Run, &ekm2, &p), "another session");
        assert!(!t.verify(Side::Run, &ekm, "00"), "malformed");
    }
}
