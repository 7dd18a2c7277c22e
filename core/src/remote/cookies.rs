//! The cookies a server set, sent back on a connection's later requests: a
//! load balancer's affinity cookie keeps them on the backend that holds the
//! connection. Only `name=value` is kept (attributes and expiry are
//! ignored, as the official client does).

use hyper::header::{self, HeaderMap, HeaderValue};

#[derive(Default)]
pub(crate) struct CookieJar {
    cookies: Vec<(String, String)>,
}

impl CookieJar {
    /// Remember the cookies `headers` (a response's) set.
    pub(crate) fn keep(&mut self, headers: &HeaderMap) {
        for set in headers.get_all(header::SET_COOKIE) {
            let Some((name, value)) = set
                .to_str()
                .ok()
                .and_then(|set| set.split(';').next())
                .and_then(|pair| pair.split_once('='))
            else {
                continue;
            };
            let (name, value) = (name.trim().to_owned(), value.trim().to_owned());
            self.cookies.retain(|(known, _)| *known != name);
            self.cookies.push((name, value));
        }
    }

    /// Send them with a request's `headers`; the caller's own `Cookie`
    /// header keeps its pairs.
    pub(crate) fn apply(&self, headers: &mut HeaderMap) {
        if self.cookies.is_empty() {
            return;
        }
        let mut pairs: Vec<String> = self
            .cookies
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        if let Some(own) = headers.get(header::COOKIE).and_then(|v| v.to_str().ok()) {
            let own_names: Vec<&str> = own
                .split(';')
                .filter_map(|p| p.trim().split('=').next())
                .collect();
            pairs.retain(|pair| !own_names.contains(&pair.split('=').next().unwrap_or("")));
            pairs.push(own.to_owned());
        }
        if let Ok(value) = HeaderValue::try_from(pairs.join("; ")) {
            headers.insert(header::COOKIE, value);
        }
    }
}
