/work/main/rust/cycleguard-core/target/release/deps/pyo3_macros-6f3049b363cabf1b.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pyo3-macros-0.25.1/src/lib.rs

/work/main/rust/cycleguard-core/target/release/deps/libpyo3_macros-6f3049b363cabf1b.so: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pyo3-macros-0.25.1/src/lib.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pyo3-macros-0.25.1/src/lib.rs:

# env-dep:CARGO_PKG_VERSION=0.25.1
