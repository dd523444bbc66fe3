//! pinlog-crawler: discovery, sandboxed probes and appends to the public log.
