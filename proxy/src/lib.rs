//! pinlog-proxy: the stdio and HTTP proxy that holds traffic until the surface matches its pin.
