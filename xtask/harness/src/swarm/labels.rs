//! The node labels wsbench reads and sets on a swarm.

/// The node label holding the address of a node's own engine (`ssh://user@host`, `unix:///…`).
pub(crate) const ENGINE_LABEL: &str = "wsbench.engine";
/// The node label that places tasks: `server` or `client`.
pub(crate) const ROLE_LABEL: &str = "wsbench.role";
/// The node label that makes a node run another architecture's images (`ppc64le` on an x86_64 engine with
/// qemu-user-static in binfmt_misc): an emulated node, labelled emulated in every result.
pub(crate) const ARCH_LABEL: &str = "wsbench.arch";
