//! What a server or a client configuration feeds the MCP client, as arbitrary bytes: JSON-RPC
//! messages, server-sent event streams cut anywhere, client configurations with variables. None
//! may panic; an event stream reads the same whatever the cuts.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pinlog_clients::config;
use pinlog_mcp::http::EventParser;
use pinlog_mcp::jsonrpc;

fuzz_target!(|data: &[u8]| {
    let Some((&which, input)) = data.split_first() else {
        return;
    };
    match which % 3 {
        0 => {
            let _ = jsonrpc::read(input, 1 << 20);
        }
        1 => {
            // Whole, then cut at every point the first byte picks.
            let whole = EventParser::default().feed_events(input, 1 << 16);
            let step = usize::from(input.first().copied().unwrap_or(1).max(1));
            let mut parser = EventParser::default();
            let mut pieces = Vec::new();
            let mut failed = false;
            for chunk in input.chunks(step) {
                match parser.feed_events(chunk, 1 << 16) {
                    Ok(events) => pieces.extend(events),
                    Err(_) => {
                        failed = true;
                        break;
                    }
                }
            }
            if let (Ok(whole), false) = (whole, failed) {
                assert_eq!(whole, pieces, "events depend on where the stream was cut");
            }
        }
        _ => {
            let env = |name: &str| (name.len() % 2 == 0).then(|| format!("v-{name}"));
            let _ = config::read(input, &env);
        }
    }
});
