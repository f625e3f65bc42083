//! The micro benchmarks of storesrv live in `benches/` (criterion): the
//! rules of store-core, store-media's image pipeline and the rendering of
//! store-http's metrics. This library is empty: a package needs a target
//! besides its benchmarks.
