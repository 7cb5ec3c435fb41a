/work/main/rust/cycleguard-core/target/release/deps/pyo3_build_config-24814c8d1530db05.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pyo3-build-config-0.25.1/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pyo3-build-config-0.25.1/src/errors.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pyo3-build-config-0.25.1/src/impl_.rs /work/main/rust/cycleguard-core/target/release/build/pyo3-build-config-080d65cbd56632b5/out/pyo3-build-config-file.txt /work/main/rust/cycleguard-core/target/release/build/pyo3-build-config-080d65cbd56632b5/out/pyo3-build-config.txt

/work/main/rust/cycleguard-core/target/release/deps/libpyo3_build_config-24814c8d1530db05.rlib: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pyo3-build-config-0.25.1/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pyo3-build-config-0.25.1/src/errors.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pyo3-build-config-0.25.1/src/impl_.rs /work/main/rust/cycleguard-core/target/release/build/pyo3-build-config-080d65cbd56632b5/out/pyo3-build-config-file.txt /work/main/rust/cycleguard-core/target/release/build/pyo3-build-config-080d65cbd56632b5/out/pyo3-build-config.txt

/work/main/rust/cycleguard-core/target/release/deps/libpyo3_build_config-24814c8d1530db05.rmeta: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pyo3-build-config-0.25.1/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pyo3-build-config-0.25.1/src/errors.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pyo3-build-config-0.25.1/src/impl_.rs /work/main/rust/cycleguard-core/target/release/build/pyo3-build-config-080d65cbd56632b5/out/pyo3-build-config-file.txt /work/main/rust/cycleguard-core/target/release/build/pyo3-build-config-080d65cbd56632b5/out/pyo3-build-config.txt

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pyo3-build-config-0.25.1/src/lib.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pyo3-build-config-0.25.1/src/errors.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/pyo3-build-config-0.25.1/src/impl_.rs:
/work/main/rust/cycleguard-core/target/release/build/pyo3-build-config-080d65cbd56632b5/out/pyo3-build-config-file.txt:
/work/main/rust/cycleguard-core/target/release/build/pyo3-build-config-080d65cbd56632b5/out/pyo3-build-config.txt:

# env-dep:CARGO_PKG_VERSION=0.25.1
# env-dep:OUT_DIR=/work/main/rust/cycleguard-core/target/release/build/pyo3-build-config-080d65cbd56632b5/out
