//! Paths inside a workspace's tree, as the shadow repository holds them: bytes, `/`-separated,
//! relative to the workspace.

/// Whether `path` lies inside `folder`.
pub(super) fn is_inside(path: &[u8], folder: &[u8]) -> bool {
    path.len() > folder.len() && path.starts_with(folder) && path[folder.len()] == b'/'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_means_below_a_slash() {
        assert!(is_inside(b"a/b", b"a"));
        assert!(!is_inside(b"ab", b"a"));
        assert!(!is_inside(b"a", b"a"));
    }
}
