//! pinlog-log: the RFC 9162 Merkle tree, C2SP checkpoints and tiles, entries and the SQLite store.
