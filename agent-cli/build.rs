//! How the `agentry` binary is linked.

fn main() {
    // A position-dependent executable. Relocating a position-independent one this size means
    // writing tens of thousands of pointers, in about 180 pages, before `main` runs: a third of
    // what `agentry acp` costs before it answers `initialize` (see `benches/acp.rs`). Shared
    // libraries and plugins stay position-independent; the executable's own addresses are
    // fixed, as for Go binaries.
    let linux = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux");
    if linux {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
