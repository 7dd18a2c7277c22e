//! TLS for both ends, with rustls (ring): a server's certificate and key
//! from PEM, and what a client trusts (the system's roots, plus a CA file
//! of the caller's for private or self-signed servers).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, RootCertStore, ServerConfig};

/// A server's TLS identity: its certificate chain and private key.
#[derive(Clone)]
pub struct ServerTls {
    pub(crate) config: Arc<ServerConfig>,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServerTls")
    }
}

impl ServerTls {
    /// From PEM files: the certificate chain (leaf first) and its private
    /// key (PKCS#8, PKCS#1 or SEC1).
    pub fn from_pem_files(certificate: impl AsRef<Path>, key: impl AsRef<Path>) -> io::Result<Self> {
        let read = |path: &Path| {
            std::fs::read(path)
                .map_err(|error| io::Error::new(error.kind(), format!("{}: {error}", path.display())))
        };
        Self::from_pem(&read(certificate.as_ref())?, &read(key.as_ref())?)
    }

    /// From PEM text held in memory.
    pub fn from_pem(certificate: &[u8], key: &[u8]) -> io::Result<Self> {
        let chain = certificates(certificate)?;
        let key = PrivateKeyDer::from_pem_slice(key)
            .map_err(|error| invalid(format!("no usable private key in the PEM: {error}")))?;
        let config = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(io::Error::other)?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|error| invalid(format!("the certificate and key do not fit: {error}")))?;
        Ok(Self {
            config: Arc::new(config),
        })
    }
}

/// What a client trusts: the system's roots, and `ca_file`'s certificates
/// when given.
pub(crate) fn client_config(ca_file: Option<&PathBuf>) -> io::Result<Arc<ClientConfig>> {
    static SYSTEM: OnceLock<Arc<ClientConfig>> = OnceLock::new();
    let Some(ca_file) = ca_file else {
        if let Some(config) = SYSTEM.get() {
            return Ok(config.clone());
        }
        let config = build_client_config(system_roots())?;
        return Ok(SYSTEM.get_or_init(|| config).clone());
    };
    let pem = std::fs::read(ca_file)
        .map_err(|error| io::Error::new(error.kind(), format!("{}: {error}", ca_file.display())))?;
    let mut roots = system_roots();
    for certificate in certificates(&pem)? {
        roots
            .add(certificate)
            .map_err(|error| invalid(format!("{}: {error}", ca_file.display())))?;
    }
    build_client_config(roots)
}

fn build_client_config(roots: RootCertStore) -> io::Result<Arc<ClientConfig>> {
    let config = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(io::Error::other)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

fn system_roots() -> RootCertStore {
    let mut roots = RootCertStore::empty();
    // Unreadable system certificates are skipped: a CA file may still do.
    let found = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(found.certs);
    roots
}

fn certificates(pem: &[u8]) -> io::Result<Vec<CertificateDer<'static>>> {
    let chain = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| invalid(format!("unreadable certificate PEM: {error}")))?;
    if chain.is_empty() {
        return Err(invalid("no certificate in the PEM".to_owned()));
    }
    Ok(chain)
}

/// An explicit provider: the process-wide default panics when more than
/// one is compiled in.
fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}
