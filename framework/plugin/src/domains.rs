//! Domain names as configuration and permission rules write them: `example.com` (or
//! `*.example.com`) stands for the domain and every subdomain.

/// Whether `host` is `domain` or one of its subdomains (case and a trailing dot ignored).
///
/// ```
/// use agentry_plugin::domains::host_in_domain;
/// assert!(host_in_domain("api.Docs.rs", "docs.rs"));
/// assert!(host_in_domain("docs.rs", "*.docs.rs"));
/// assert!(!host_in_domain("notdocs.rs", "docs.rs"));
/// ```
pub fn host_in_domain(host: &str, domain: &str) -> bool {
    let domain = domain
        .trim()
        .trim_start_matches("*.")
        .trim_end_matches('.')
        .to_ascii_lowercase();
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    !domain.is_empty() && (host == domain || host.ends_with(&format!(".{domain}")))
}
