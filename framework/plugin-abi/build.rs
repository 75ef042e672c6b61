//! Records the compiler's version, which a plugin reports to the host that loads it, and the
//! first agentry version whose plugin ABI may differ from this one's (the next minor while the
//! version is 0.x, the next major after), which a plugin's declaration names.
fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let version = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|v| v.trim().to_owned())
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=AGENTRY_PLUGIN_RUSTC={version}");
    println!("cargo:rerun-if-env-changed=RUSTC");
    let number = |name: &str| -> u64 {
        std::env::var(name)
            .ok()
            .and_then(|value| value.parse().ok())
            .unwrap_or(0)
    };
    let (major, minor) = (
        number("CARGO_PKG_VERSION_MAJOR"),
        number("CARGO_PKG_VERSION_MINOR"),
    );
    let next_breaking = if major == 0 {
        format!("0.{}.0", minor + 1)
    } else {
        format!("{}.0.0", major + 1)
    };
    println!("cargo:rustc-env=AGENTRY_PLUGIN_NEXT_BREAKING={next_breaking}");
}
