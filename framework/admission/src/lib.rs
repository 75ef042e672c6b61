//! # agentry-admission
//!
//! Who may talk to an agent served on a port (`agentry serve`, `agentry mcp serve --listen`),
//! as Jupyter decides it: a token (in an `Authorization: Bearer` header, a cookie or a `token`
//! query parameter), a `Host` the server answers to (so that a page whose name was rebound to
//! 127.0.0.1 is refused), and, from a browser, an `Origin` that is the server's own or allowed.
//!
//! The checks take header values as text, so that every front-end, whatever its HTTP stack,
//! asks the same questions.

use std::net::{IpAddr, SocketAddr};

/// The cookie the web page keeps the token in.
pub const TOKEN_COOKIE: &str = "agentry_token";

/// Why a request is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// Its `Host` is not a name the server answers to (HTTP 403).
    #[error(
        "the host `{0}` is not one this server answers to (start it with --allow-host {0} to allow it)"
    )]
    Host(String),
    /// It comes from a page of another site (HTTP 403).
    #[error("requests from pages of {0} are not allowed here")]
    Origin(String),
    /// It does not carry the token (HTTP 401).
    #[error(
        "the token is missing or wrong: open the link `agentry serve` printed, or send `Authorization: Bearer TOKEN`"
    )]
    Token,
}

impl Refused {
    /// The HTTP status it answers with.
    pub fn status(&self) -> u16 {
        match self {
            Refused::Host(_) | Refused::Origin(_) => 403,
            Refused::Token => 401,
        }
    }

    /// The JSON body it answers with: `{"message", "code"}`.
    pub fn body(&self) -> serde_json::Value {
        let code = match self {
            Refused::Token => "unauthorized",
            Refused::Host(_) | Refused::Origin(_) => "forbidden",
        };
        serde_json::json!({"message": self.to_string(), "code": code})
    }
}

/// What a request shows of itself, as its headers give it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Credentials<'a> {
    /// The `Host` header.
    pub host: Option<&'a str>,
    /// The `Origin` header.
    pub origin: Option<&'a str>,
    /// The `Authorization` header.
    pub authorization: Option<&'a str>,
    /// The `Cookie` header.
    pub cookie: Option<&'a str>,
    /// The query string.
    pub query: Option<&'a str>,
}

impl<'a> Credentials<'a> {
    /// What a request shows, from a lookup of its headers by (lower-case) name and its query.
    pub fn from_headers(header: impl Fn(&str) -> Option<&'a str>, query: Option<&'a str>) -> Self {
        Self {
            host: header("host"),
            origin: header("origin"),
            authorization: header("authorization"),
            cookie: header("cookie"),
            query,
        }
    }
}

/// A server's admission rules.
#[derive(Debug, Clone)]
pub struct Admission {
    token: Option<String>,
    /// The names the server answers to by itself (loopback and its address).
    own_hosts: Vec<String>,
    /// Names allowed besides (a proxy's): any port.
    hosts: Vec<String>,
    origins: Vec<String>,
    /// The port it listens on, when known: a `Host` of its own names that gives a port gives
    /// this one.
    port: Option<u16>,
}

impl Admission {
    /// The rules of a server listening on `listen`: `token` required (none: anyone who reaches
    /// the port), the `Host` names `localhost`, `127.0.0.1`, `[::1]`, the listening address and
    /// `extra_hosts`, and pages of the server itself or of `extra_origins` (`http://host:port`).
    pub fn new(
        token: Option<String>,
        listen: SocketAddr,
        extra_hosts: &[String],
        extra_origins: &[String],
    ) -> Self {
        let mut own_hosts: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
            .into_iter()
            .map(str::to_owned)
            .collect();
        if !listen.ip().is_unspecified() {
            own_hosts.push(host_name(listen.ip()));
        }
        Self {
            token,
            own_hosts,
            hosts: extra_hosts
                .iter()
                .map(|host| host.to_ascii_lowercase())
                .collect(),
            origins: extra_origins.to_vec(),
            port: (listen.port() != 0).then_some(listen.port()),
        }
    }

    /// The token, if one is required.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// Whether the request comes to a name this server answers to, from a page allowed here;
    /// checked before anything else, on every route.
    pub fn check_site(&self, request: &Credentials<'_>) -> Result<(), Refused> {
        let host = request.host.unwrap_or_default();
        let name = name_of(host);
        let own = self.own_hosts.contains(&name);
        if !own && !self.hosts.contains(&name) {
            return Err(Refused::Host(name));
        }
        // Its own names with another port: a request meant for another server.
        if own
            && let (Some(port), Some(given)) = (self.port, port_of(host))
            && given != port
        {
            return Err(Refused::Host(host.trim().to_ascii_lowercase()));
        }
        match request.origin {
            None => Ok(()),
            Some(origin) if self.origin_allowed(origin, host) => Ok(()),
            Some(origin) => Err(Refused::Origin(origin.to_owned())),
        }
    }

    /// Whether the request carries the token (always, when none is required).
    pub fn check_token(&self, request: &Credentials<'_>) -> Result<(), Refused> {
        let Some(token) = &self.token else {
            return Ok(());
        };
        let bearer = request
            .authorization
            .and_then(|value| value.strip_prefix("Bearer "));
        let cookie = request.cookie.and_then(|cookies| {
            cookies
                .split(';')
                .filter_map(|pair| pair.trim().split_once('='))
                .find_map(|(name, value)| (name == TOKEN_COOKIE).then_some(value))
        });
        let query = request.query.and_then(|query| {
            query
                .split('&')
                .find_map(|pair| pair.strip_prefix("token="))
        });
        let presented = [bearer, cookie, query];
        if presented
            .into_iter()
            .flatten()
            .any(|given| same_secret(given, token))
        {
            Ok(())
        } else {
            Err(Refused::Token)
        }
    }

    /// Whether `token` is this server's token.
    pub fn is_token(&self, token: &str) -> bool {
        self.token
            .as_deref()
            .is_some_and(|own| same_secret(token, own))
    }

    /// The server's own origin (`http://HOST`, `https://HOST` for the `Host` it was reached
    /// at), or one allowed.
    fn origin_allowed(&self, origin: &str, host: &str) -> bool {
        let own = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
            .is_some_and(|rest| rest.eq_ignore_ascii_case(host));
        own || self.origins.iter().any(|allowed| allowed == origin)
    }
}

/// A `Host` header's name, without its port, in lower case (`[::1]:8787` → `[::1]`).
fn name_of(host: &str) -> String {
    let host = host.trim();
    let name = if host.starts_with('[') {
        host.split_inclusive(']').next().unwrap_or(host)
    } else {
        host.rsplit_once(':').map_or(host, |(name, _)| name)
    };
    name.to_ascii_lowercase()
}

/// A `Host` header's port, when it gives one (`[::1]:8787` → 8787); an unreadable one reads as
/// port 0, which no server listens on.
fn port_of(host: &str) -> Option<u16> {
    let host = host.trim();
    let after_name = if host.starts_with('[') {
        host.split_once(']').map_or("", |(_, rest)| rest)
    } else {
        host.rsplit_once(':').map_or("", |(_, port)| port)
    };
    let port = after_name.strip_prefix(':').unwrap_or(after_name);
    (!port.is_empty()).then(|| port.parse().unwrap_or(0))
}

/// An address as a `Host` header names it.
fn host_name(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(ip) => ip.to_string(),
        IpAddr::V6(ip) => format!("[{ip}]"),
    }
}

/// Compares two secrets in time that does not depend on where they differ.
fn same_secret(given: &str, expected: &str) -> bool {
    let (given, expected) = (given.as_bytes(), expected.as_bytes());
    let differences = given
        .iter()
        .zip(expected)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b));
    given.len() == expected.len() && differences == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admission() -> Admission {
        Admission::new(
            Some("s3cret".to_owned()),
            "127.0.0.1:8787".parse().unwrap(),
            &["agentry.internal".to_owned()],
            &["http://app.example:3000".to_owned()],
        )
    }

    fn site(host: &str, origin: Option<&str>) -> Result<(), Refused> {
        admission().check_site(&Credentials {
            host: Some(host),
            origin,
            ..Credentials::default()
        })
    }

    #[test]
    fn only_the_servers_own_names_are_answered() {
        for host in [
            "127.0.0.1:8787",
            "localhost:8787",
            "LOCALHOST",
            "[::1]:8787",
            "agentry.internal:8787",
        ] {
            assert_eq!(site(host, None), Ok(()), "{host}");
        }
        for host in [
            "rebind.example:8787",
            "127.0.0.1.nip.io:8787",
            "localhost.evil:8787",
            "",
            "[::2]:8787",
            // Its own names with another port, or a port that is not one.
            "127.0.0.1:9999",
            "localhost:80",
            "[::1]:1",
            "localhost:87x",
        ] {
            assert!(matches!(site(host, None), Err(Refused::Host(_))), "{host}");
        }
        // Without a port (a proxy that passes the name alone), or a proxy's name on its port.
        assert_eq!(site("127.0.0.1", None), Ok(()));
        assert_eq!(site("agentry.internal:443", None), Ok(()));
        let any = Admission::new(None, "0.0.0.0:8787".parse().unwrap(), &[], &[]);
        let lan = Credentials {
            host: Some("0.0.0.0:8787"),
            ..Credentials::default()
        };
        assert!(any.check_site(&lan).is_err());
    }

    #[test]
    fn pages_of_other_sites_are_refused() {
        assert_eq!(
            site("127.0.0.1:8787", Some("http://127.0.0.1:8787")),
            Ok(())
        );
        assert_eq!(
            site("localhost:8787", Some("http://localhost:8787")),
            Ok(())
        );
        assert_eq!(
            site("localhost:8787", Some("http://app.example:3000")),
            Ok(())
        );
        for origin in [
            "http://evil.example",
            "http://127.0.0.1:9999",
            "http://127.0.0.1:8787.evil.example",
            "null",
        ] {
            assert!(
                matches!(
                    site("127.0.0.1:8787", Some(origin)),
                    Err(Refused::Origin(_))
                ),
                "{origin}"
            );
        }
    }

    #[test]
    fn the_token_comes_in_a_header_a_cookie_or_the_query() {
        let admission = admission();
        let with = |authorization, cookie, query| {
            admission.check_token(&Credentials {
                authorization,
                cookie,
                query,
                ..Credentials::default()
            })
        };
        assert_eq!(with(Some("Bearer s3cret"), None, None), Ok(()));
        assert_eq!(with(None, Some("a=1; agentry_token=s3cret"), None), Ok(()));
        assert_eq!(with(None, None, Some("x=1&token=s3cret")), Ok(()));
        assert_eq!(with(Some("Bearer s3cre"), None, None), Err(Refused::Token));
        assert_eq!(
            with(Some("Bearer s3cretx"), None, None),
            Err(Refused::Token)
        );
        assert_eq!(
            with(None, Some("other_token=s3cret"), None),
            Err(Refused::Token)
        );
        assert_eq!(with(Some("s3cret"), None, None), Err(Refused::Token));
        assert_eq!(with(None, None, None), Err(Refused::Token));
        let open = Admission::new(None, "127.0.0.1:1".parse().unwrap(), &[], &[]);
        assert_eq!(open.check_token(&Credentials::default()), Ok(()));
    }
}
