//! A remote agent's URL: which transport, where to connect, what to ask for.

use std::io;

use hyper::Uri;

/// The transports a URL can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scheme {
    /// `ws://`
    WebSocket,
    /// `wss://`
    SecureWebSocket,
    /// `http://`: Streamable HTTP
    Http,
    /// `https://`: Streamable HTTP over TLS
    Https,
}

impl Scheme {
    pub(crate) fn tls(self) -> bool {
        matches!(self, Scheme::SecureWebSocket | Scheme::Https)
    }
}

/// A parsed `ws://`, `wss://`, `http://` or `https://` URL.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    pub(crate) scheme: Scheme,
    /// The host as written (a name, an IPv4 address or `[v6]`).
    pub(crate) host: String,
    pub(crate) port: u16,
    /// Path and query, at least `/`.
    pub(crate) target: String,
    /// What the `Host` header says: `host` or `host:port`.
    pub(crate) authority: String,
    pub(crate) uri: Uri,
}

impl Endpoint {
    pub(crate) fn parse(url: &str) -> io::Result<Self> {
        let invalid = |why: &str| io::Error::new(io::ErrorKind::InvalidInput, format!("{url:?}: {why}"));
        let uri: Uri = url.parse().map_err(|_| invalid("not a URL"))?;
        let scheme = match uri.scheme_str().map(str::to_ascii_lowercase).as_deref() {
            Some("ws") => Scheme::WebSocket,
            Some("wss") => Scheme::SecureWebSocket,
            Some("http") => Scheme::Http,
            Some("https") => Scheme::Https,
            _ => return Err(invalid("the scheme must be ws, wss, http or https")),
        };
        let authority = uri.authority().ok_or_else(|| invalid("no host"))?.clone();
        if authority.as_str().contains('@') {
            return Err(invalid("user info in the URL is not supported: pass a token"));
        }
        // A port that is no port (99999 does not fit 16 bits) reads as none:
        // connecting to the scheme's default instead would report a refusal
        // from elsewhere.
        let text = authority.as_str();
        let after_host = match text.strip_prefix('[') {
            Some(v6) => v6.split_once(']').map_or("", |(_, rest)| rest),
            None => text,
        };
        let port = match (authority.port_u16(), after_host.split_once(':')) {
            (Some(port), _) => port,
            (None, Some((_, port))) => return Err(invalid(&format!("{port} is not a port (0 to 65535)"))),
            (None, None) if scheme.tls() => 443,
            (None, None) => 80,
        };
        let target = uri
            .path_and_query()
            .map_or("/", |target| target.as_str())
            .to_owned();
        let target = if target.is_empty() { "/".to_owned() } else { target };
        Ok(Self {
            scheme,
            host: authority.host().to_owned(),
            port,
            target,
            authority: authority.as_str().to_owned(),
            uri,
        })
    }

    /// The host without IPv6 brackets, for name resolution and TLS.
    pub(crate) fn bare_host(&self) -> &str {
        self.host.trim_start_matches('[').trim_end_matches(']')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_out_of_range_is_refused() {
        let Err(error) = Endpoint::parse("ws://127.0.0.1:99999/acp") else {
            panic!("a port beyond 65535 was taken");
        };
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
        assert!(error.to_string().contains("99999 is not a port"), "{error}");
    }

    #[test]
    fn urls_name_their_transport_and_default_port() {
        let ws = Endpoint::parse("ws://127.0.0.1:8080/acp").unwrap();
        assert_eq!(
            (ws.scheme, ws.port, ws.target.as_str()),
            (Scheme::WebSocket, 8080, "/acp")
        );
        let https = Endpoint::parse("HTTPS://example.com").unwrap();
        assert_eq!(
            (https.scheme, https.port, https.target.as_str()),
            (Scheme::Https, 443, "/")
        );
        assert_eq!(https.authority, "example.com");
        let v6 = Endpoint::parse("http://[::1]:9/x?y=1").unwrap();
        assert_eq!(
            (v6.bare_host(), v6.port, v6.target.as_str()),
            ("::1", 9, "/x?y=1")
        );
        for bad in ["ftp://x/", "localhost:80", "ws://user:pw@h/", "not a url"] {
            assert!(Endpoint::parse(bad).is_err(), "{bad}");
        }
    }
}
