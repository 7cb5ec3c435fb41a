/work/main/rust/cycleguard-core/target/release/deps/_core-e8810548e1445932.d: src/lib.rs src/args.rs src/canon.rs src/categories.rs src/dims.rs src/failures.rs src/fasthash.rs src/heap.rs src/json.rs src/mask.rs src/normalize.rs src/pyclass.rs src/pystr.rs src/rules.rs src/session.rs src/settings.rs src/shell.rs src/signal.rs src/state.rs src/swar.rs src/text.rs src/watch.rs

/work/main/rust/cycleguard-core/target/release/deps/_core-e8810548e1445932: src/lib.rs src/args.rs src/canon.rs src/categories.rs src/dims.rs src/failures.rs src/fasthash.rs src/heap.rs src/json.rs src/mask.rs src/normalize.rs src/pyclass.rs src/pystr.rs src/rules.rs src/session.rs src/settings.rs src/shell.rs src/signal.rs src/state.rs src/swar.rs src/text.rs src/watch.rs

src/lib.rs:
src/args.rs:
src/canon.rs:
src/categories.rs:
src/dims.rs:
src/failures.rs:
src/fasthash.rs:
src/heap.rs:
src/json.rs:
src/mask.rs:
src/normalize.rs:
src/pyclass.rs:
src/pystr.rs:
src/rules.rs:
src/session.rs:
src/settings.rs:
src/shell.rs:
src/signal.rs:
src/state.rs:
src/swar.rs:
src/text.rs:
src/watch.rs:
