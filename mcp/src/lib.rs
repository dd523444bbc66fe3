//! pinlog-mcp: the MCP wire, JSON-RPC over stdio and HTTP in both protocol eras.
