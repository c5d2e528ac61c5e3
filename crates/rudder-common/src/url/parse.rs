//! Parsing of Dubbo URL strings, tolerant of what real providers write.

use super::{DubboUrl, Params, UrlError};

/// Parses the plain (not percent-encoded) string form.
pub(super) fn parse_plain(input: &str) -> Result<DubboUrl, UrlError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(UrlError::Empty);
    }
    let (rest, query) = match s.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (s, None),
    };
    let (protocol, rest) = match rest.find("://") {
        Some(0) => return Err(UrlError::MissingProtocol),
        Some(i) => (&rest[..i], &rest[i + 3..]),
        None => ("", rest),
    };
    if !protocol
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.' | b'_'))
    {
        return Err(UrlError::BadProtocol(protocol.to_owned()));
    }
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i + 1..].trim_start_matches('/')),
        None => (rest, ""),
    };
    let (userinfo, hostport) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    let (username, password) = match userinfo {
        Some(u) => match u.split_once(':') {
            Some((name, pass)) => (Some(name.to_owned()), Some(pass.to_owned())),
            None => (Some(u.to_owned()), None),
        },
        None => (None, None),
    };
    let (host, port) = split_host_port(hostport)?;
    Ok(DubboUrl {
        protocol: protocol.to_owned(),
        username,
        password,
        host: host.to_owned(),
        port,
        path: path.to_owned(),
        params: query.map(parse_query).unwrap_or_default(),
    })
}

fn split_host_port(hostport: &str) -> Result<(&str, u16), UrlError> {
    if let Some(v6) = hostport.strip_prefix('[') {
        let end = v6
            .find(']')
            .ok_or_else(|| UrlError::BadHost(hostport.to_owned()))?;
        let host = &v6[..end];
        return match &v6[end + 1..] {
            "" => Ok((host, 0)),
            p => match p.strip_prefix(':') {
                Some(port) => Ok((host, parse_port(port)?)),
                None => Err(UrlError::BadHost(hostport.to_owned())),
            },
        };
    }
    match hostport.rsplit_once(':') {
        // A bare IPv6 address without brackets has several colons: take it as a host with no port.
        Some((host, _)) if host.contains(':') => Ok((hostport, 0)),
        Some((host, port)) => Ok((host, parse_port(port)?)),
        None => Ok((hostport, 0)),
    }
}

fn parse_port(port: &str) -> Result<u16, UrlError> {
    if port.is_empty() {
        return Ok(0);
    }
    port.parse().map_err(|_| UrlError::BadPort(port.to_owned()))
}

/// `k=v&k2=v2`; a part without `=` is stored as `k=k` (as Dubbo does), empty keys are dropped,
/// a repeated key keeps its last value.
fn parse_query(query: &str) -> Params {
    let mut pairs: Vec<(Box<str>, Box<str>)> = Vec::new();
    for part in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').unwrap_or((part, part));
        let k = k.trim();
        if k.is_empty() {
            continue;
        }
        pairs.push((k.into(), v.trim().into()));
    }
    Params::from_pairs(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_in_brackets() {
        let u = parse_plain("tri://[fe80::1]:50051/S?x=1").unwrap();
        assert_eq!((u.host(), u.port()), ("fe80::1", 50051));
        assert_eq!(u.address(), "[fe80::1]:50051");
    }

    #[test]
    fn no_protocol_like_dubbo_url_test() {
        let u = parse_plain(
            "10.20.130.230:20880/context/path?interface=org.apache.dubbo.test.interfaceName",
        )
        .unwrap();
        assert_eq!(u.protocol(), "");
        assert_eq!(u.path(), "context/path");
        assert_eq!(u.service_key(), "org.apache.dubbo.test.interfaceName");
    }

    #[test]
    fn errors_name_the_problem() {
        assert_eq!(parse_plain("  "), Err(UrlError::Empty));
        assert_eq!(parse_plain("://h:1/x"), Err(UrlError::MissingProtocol));
        assert_eq!(
            parse_plain("dubbo://h:99999/x"),
            Err(UrlError::BadPort("99999".into()))
        );
        assert_eq!(
            parse_plain("dubbo://h:ab/x"),
            Err(UrlError::BadPort("ab".into()))
        );
        assert_eq!(
            parse_plain("dubbo://[::1/x"),
            Err(UrlError::BadHost("[::1".into()))
        );
        assert!(matches!(
            parse_plain("du bo://h:1/x"),
            Err(UrlError::BadProtocol(_))
        ));
    }

    #[test]
    fn query_quirks() {
        let u = parse_plain("dubbo://h:1/S?a=1&a=2&flag&=x&empty=&&b= v ").unwrap();
        assert_eq!(u.parameter("a"), Some("2"));
        assert_eq!(u.parameter("flag"), Some("flag"));
        assert_eq!(u.parameter("empty"), Some(""));
        assert_eq!(u.parameter("b"), Some("v"));
        assert_eq!(u.parameters().count(), 4);
    }
}
