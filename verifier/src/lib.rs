//! pinlog-verifier: offline verification of a published log and the lock/verify gate.
