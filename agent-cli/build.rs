//! How the `agentry` binary is linked.

fn main() {
    // Position-independent, so that ASLR places it anew each run. Its relocations are packed
    // (RELR: a bitmap for runs of pointers, instead of a 24-byte entry for each of tens of
    // thousands), so that the loader's work before `main` stays small: see `benches/acp.rs`,
    // which compares `initialize` with a minimal agent's. Linkers and C libraries from 2022 on
    // (GNU ld 2.38, glibc 2.36) know the format.
    let linux_gnu = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    if linux_gnu {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
