//! Which addresses WebFetch may connect to: public ones only, unless the configuration allows
//! more. Loopback, private, link-local (cloud metadata at 169.254.169.254), carrier-grade NAT,
//! "this network", documentation, benchmarking, multicast and reserved ranges are refused, in
//! IPv4 and IPv6, also when an IPv6 address carries an IPv4 one (mapped, NAT64, 6to4). Hosts are
//! read by the `url` crate, which turns every IPv4 spelling (decimal `2130706433`, octal
//! `0177.0.0.1`, hex `0x7f.1`) into the address it means, so no spelling slips past.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// A block of addresses: `ADDRESS/PREFIX` or one address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddressRange {
    network: IpAddr,
    prefix: u8,
}

impl AddressRange {
    /// Whether `address` is in the range.
    pub fn contains(&self, address: IpAddr) -> bool {
        match (self.network, canonical(address)) {
            (IpAddr::V4(network), IpAddr::V4(address)) => {
                prefix_match(&network.octets(), &address.octets(), self.prefix)
            }
            (IpAddr::V6(network), IpAddr::V6(address)) => {
                prefix_match(&network.octets(), &address.octets(), self.prefix)
            }
            _ => false,
        }
    }
}

impl FromStr for AddressRange {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let network: IpAddr = address
            .trim()
            .parse()
            .map_err(|_| format!("`{text}` is not an address or ADDRESS/PREFIX"))?;
        let bits = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(prefix) => prefix
                .trim()
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= bits)
                .ok_or_else(|| format!("`{text}`: the prefix must be 0 to {bits}"))?,
            None => bits,
        };
        Ok(Self {
            network: canonical(network),
            prefix,
        })
    }
}

impl fmt::Display for AddressRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

fn prefix_match(network: &[u8], address: &[u8], prefix: u8) -> bool {
    let whole = usize::from(prefix / 8);
    if network[..whole] != address[..whole] {
        return false;
    }
    let rest = prefix % 8;
    rest == 0 || {
        let mask = 0xffu8 << (8 - rest);
        network[whole] & mask == address[whole] & mask
    }
}

/// An IPv6 address that carries an IPv4 one (mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`,
/// 6to4 `2002::/16`) as that IPv4 address; any other address as it is.
fn canonical(address: IpAddr) -> IpAddr {
    let IpAddr::V6(v6) = address else {
        return address;
    };
    if let Some(v4) = v6.to_ipv4_mapped() {
        return IpAddr::V4(v4);
    }
    let octets = v6.octets();
    let segments = v6.segments();
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return IpAddr::V4(Ipv4Addr::new(
            octets[12], octets[13], octets[14], octets[15],
        ));
    }
    if segments[0] == 0x2002 {
        return IpAddr::V4(Ipv4Addr::new(octets[2], octets[3], octets[4], octets[5]));
    }
    address
}

/// Why an address is not public, for the refusal's message.
pub fn non_public_reason(address: IpAddr) -> Option<&'static str> {
    match canonical(address) {
        IpAddr::V4(v4) => v4_reason(v4),
        IpAddr::V6(v6) => v6_reason(v6),
    }
}

fn v4_reason(address: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = address.octets();
    Some(match (a, b, c) {
        (0, _, _) => "\"this network\" (0.0.0.0/8)",
        (10, _, _) => "private (10.0.0.0/8)",
        (100, 64..=127, _) => "carrier-grade NAT (100.64.0.0/10)",
        (127, _, _) => "loopback (127.0.0.0/8)",
        (169, 254, _) => "link-local, where cloud metadata services live (169.254.0.0/16)",
        (172, 16..=31, _) => "private (172.16.0.0/12)",
        (192, 0, 0) => "IETF protocol assignments (192.0.0.0/24)",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "documentation",
        (192, 88, 99) => "6to4 relay anycast (192.88.99.0/24)",
        (192, 168, _) => "private (192.168.0.0/16)",
        (198, 18..=19, _) => "benchmarking (198.18.0.0/15)",
        (224..=239, _, _) => "multicast (224.0.0.0/4)",
        (240..=255, _, _) => "reserved or broadcast (240.0.0.0/4)",
        _ => return None,
    })
}

fn v6_reason(address: Ipv6Addr) -> Option<&'static str> {
    let first = address.segments()[0];
    Some(if address.is_unspecified() {
        "unspecified (::)"
    } else if address.is_loopback() {
        "loopback (::1)"
    } else if first & 0xfe00 == 0xfc00 {
        "unique local (fc00::/7)"
    } else if first & 0xffc0 == 0xfe80 {
        "link-local (fe80::/10)"
    } else if first & 0xffc0 == 0xfec0 {
        "site-local (fec0::/10)"
    } else if first & 0xff00 == 0xff00 {
        "multicast (ff00::/8)"
    } else if first == 0x2001 && address.segments()[1] == 0x0db8 {
        "documentation (2001:db8::/32)"
    } else if address.segments()[..6] == [0, 0, 0, 0, 0, 0] {
        "IPv4-compatible (::/96)"
    } else if first == 0x0100 && address.segments()[1..4] == [0, 0, 0] {
        "discard-only (100::/64)"
    } else {
        return None;
    })
}

/// The address policy: public addresses, plus the ranges the configuration allows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressGuard {
    allowed: Vec<AddressRange>,
}

impl AddressGuard {
    /// Public addresses, and also those in `allowed`.
    pub fn allowing(allowed: Vec<AddressRange>) -> Self {
        Self { allowed }
    }

    /// `Ok` when WebFetch may connect to `address`; otherwise why not.
    pub fn check(&self, address: IpAddr) -> Result<(), Refused> {
        if self.allowed.iter().any(|range| range.contains(address)) {
            return Ok(());
        }
        match non_public_reason(address) {
            Some(reason) => Err(Refused { address, reason }),
            None => Ok(()),
        }
    }
}

/// An address WebFetch may not connect to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{address} is not a public address ({reason}); WebFetch only fetches from the public internet unless [webfetch] allow_addresses lists it"
)]
pub struct Refused {
    /// The address.
    pub address: IpAddr,
    /// Which kind of address it is.
    pub reason: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host_address(url: &str) -> IpAddr {
        match url::Url::parse(url).unwrap().host().unwrap() {
            url::Host::Ipv4(v4) => IpAddr::V4(v4),
            url::Host::Ipv6(v6) => IpAddr::V6(v6),
            url::Host::Domain(name) => panic!("{url} kept the name {name}"),
        }
    }

    fn refused(address: &str) -> bool {
        AddressGuard::default()
            .check(address.parse().unwrap())
            .is_err()
    }

    #[test]
    fn every_non_public_class_is_refused() {
        for address in [
            "127.0.0.1",
            "127.255.255.254",
            "10.0.0.1",
            "10.255.255.255",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "0.1.2.3",
            "224.0.0.1",
            "255.255.255.255",
            "198.18.0.1",
            "192.0.2.1",
            "::1",
            "::",
            "fc00::1",
            "fdff:ffff::1",
            "fe80::1",
            "febf::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "::127.0.0.1",
        ] {
            assert!(refused(address), "{address} should be refused");
        }
    }

    #[test]
    fn public_addresses_and_range_edges_pass() {
        for address in [
            "8.8.8.8",
            "1.1.1.1",
            "172.15.255.255",
            "172.32.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "169.253.255.255",
            "11.0.0.0",
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert!(!refused(address), "{address} should pass");
        }
    }

    #[test]
    fn every_ipv4_spelling_reads_as_the_address_it_means() {
        for url in [
            "http://2130706433/",
            "http://0177.0.0.1/",
            "http://0x7f.0.0.1/",
            "http://0x7f000001/",
            "http://127.1/",
            "http://0177.1/",
            "http://[::ffff:7f00:1]/",
            "http://[::ffff:127.0.0.1]/",
        ] {
            let address = host_address(url);
            assert!(
                AddressGuard::default().check(address).is_err(),
                "{url} ({address}) should be refused"
            );
        }
        assert_eq!(
            host_address("http://0xa9.0xfe.0xa9.0xfe/"),
            "169.254.169.254".parse::<IpAddr>().unwrap()
        );
        assert_eq!(
            host_address("http://167772161/"),
            "10.0.0.1".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn allowed_ranges_let_their_addresses_through_and_no_others() {
        let guard = AddressGuard::allowing(vec!["127.0.0.1".parse().unwrap()]);
        assert!(guard.check("127.0.0.1".parse().unwrap()).is_ok());
        assert!(guard.check("::ffff:127.0.0.1".parse().unwrap()).is_ok());
        assert!(guard.check("127.0.0.2".parse().unwrap()).is_err());
        let lan = AddressGuard::allowing(vec!["10.1.0.0/16".parse().unwrap()]);
        assert!(lan.check("10.1.200.3".parse().unwrap()).is_ok());
        assert!(lan.check("10.2.0.1".parse().unwrap()).is_err());
        let error = lan.check("169.254.169.254".parse().unwrap()).unwrap_err();
        assert!(error.to_string().contains("link-local"), "{error}");
        assert!("10.0.0.0/33".parse::<AddressRange>().is_err());
        assert!("example.com".parse::<AddressRange>().is_err());
    }
}
