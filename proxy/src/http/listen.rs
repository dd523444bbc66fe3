//! The listener: `pinlog proxy --listen ADDR --upstream URL` checked and started, and the loop
//! that accepts clients.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use pinlog_core::exit::Failure;
use pinlog_core::render::quoted;
use pinlog_mcp::loopback;
use tokio::net::TcpListener;

use super::requests::handle;
use super::{HttpOptions, Proxy, CLIENT_TIME, IDLE_TIME};
use pinlog_core::identity::PublicIdentity;

use crate::approvers;
use crate::options::ProxyOptions;
use crate::pins::{LockPins, StorePins};
use crate::public::open_public;
use crate::session::{Pins, WireIds};
use crate::store::{ServerKey, Store};

const CONNECT_TIME: Duration = Duration::from_secs(10);

/// `pinlog proxy --listen ADDR --upstream URL`: serves until SIGINT or SIGTERM (exit 0). Exit 2
/// for an address that is not loopback or an upstream that is not an http(s) URL; 4 when the
/// store or the lockfile cannot be read or the address cannot be bound.
pub fn run_listener(args: &ProxyOptions, upstream: &str) -> Result<u8, Failure> {
    let listen = args
        .listen
        .ok_or_else(|| Failure::usage("--upstream needs --listen ADDR"))?;
    // The proxy passes requests on with the client's credentials and has none of its own to
    // ask for: only this machine may reach it.
    let listen = loopback::require(listen).map_err(|_| {
        Failure::usage(format!(
            "--listen {listen}: only a loopback address (127.0.0.1, [::1]) is served"
        ))
    })?;
    let url = reqwest::Url::parse(upstream)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| Failure::usage("--upstream must be an http or https URL"))?;
    // The URL itself may carry a token: the default label is its host and port only.
    let label = args.name.clone().unwrap_or_else(|| {
        let host = url.host_str().unwrap_or_default();
        url.port()
            .map_or(host.to_string(), |p| format!("{host}:{p}"))
    });
    // A store, a pin or a lockfile that cannot be read stops the proxy before it listens.
    let store = Store::home()
        .and_then(|h| Store::open(&h))
        .map_err(|e| Failure::unreadable(e.to_string()))?;
    let key = ServerKey::from_url(upstream);
    if let Err(e) = store.pinned(&key) {
        return Err(Failure::unreadable(format!(
            "{e} (`pinlog forget {key}` drops the pin)"
        )));
    }
    let lock = match &args.lock {
        None => None,
        Some(path) => {
            let bytes = pinlog_core::files::read_bounded(path, 64 << 20).map_err(|e| {
                Failure::unreadable(format!("cannot read the lockfile {}: {e}", path.display()))
            })?;
            let read = pinlog_core::lockfile::Lockfile::read(&bytes).map_err(|e| {
                Failure::unreadable(format!("the lockfile {}: {e}", path.display()))
            })?;
            // Where approvals come only from a signed lockfile, it alone decides.
            let only_locked =
                args.only_locked || approvers::enforce(store.home_dir(), Some((path, &bytes)))?;
            if only_locked && read.server(&label).is_none() {
                return Err(Failure::unreadable(format!(
                    "the lockfile {} does not name the server {} and --only-locked is set (or \
                     approvals come only from a signed lockfile)",
                    path.display(),
                    quoted(&label, 64)
                )));
            }
            Some((bytes, path.display().to_string(), only_locked))
        }
    };
    if lock.is_none() {
        approvers::enforce(store.home_dir(), None)?;
    }
    let store_pins = StorePins {
        store,
        key: key.clone(),
        label: label.clone(),
    };
    let on_drift = args.on_drift;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::unreadable(format!("cannot start the runtime: {e}")))?;
    let listener = runtime
        .block_on(TcpListener::bind(listen))
        .map_err(|e| Failure::unreadable(format!("cannot listen on {listen}: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| Failure::unreadable(e.to_string()))?;
    eprintln!(
        "pinlog: listening on http://{bound}/ for {} (server key {key})",
        quoted(&label, 64)
    );
    let package = lock.as_ref().and_then(|(bytes, _, _)| {
        let read = pinlog_core::lockfile::Lockfile::read(bytes).ok()?;
        read.server(&label).and_then(|s| s.package.clone())
    });
    let identity = package
        .as_ref()
        .and_then(PublicIdentity::of_package)
        .or_else(|| PublicIdentity::of_url(upstream));
    let options = HttpOptions {
        upstream: upstream.to_string(),
        label: label.clone(),
        on_drift,
        public: open_public(args.public_log.as_ref(), args.on_public_mismatch, identity),
    };
    match lock {
        Some((lock, lock_path, only_locked)) => {
            let pins = LockPins {
                lock,
                lock_path,
                id: label,
                fallback: (!only_locked).then_some(store_pins),
            };
            runtime.block_on(serve(listener, options, pins, stop()))
        }
        None => runtime.block_on(serve(listener, options, store_pins, stop())),
    }
    .map_err(Failure::unreadable)?;
    Ok(0)
}

async fn stop() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// Serves clients on `listener` until `shutdown` completes.
pub async fn serve<P, F>(
    listener: TcpListener,
    options: HttpOptions,
    pins: P,
    shutdown: F,
) -> Result<(), String>
where
    P: Pins + Send + 'static,
    F: Future<Output = ()>,
{
    let url = reqwest::Url::parse(&options.upstream)
        .map_err(|e| format!("--upstream is not a URL: {e}"))?;
    // No redirects: the client's Authorization goes to the upstream it named, nowhere else.
    let client = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIME)
        .read_timeout(IDLE_TIME)
        .redirect(reqwest::redirect::Policy::none())
        .referer(false)
        .build()
        .map_err(|e| format!("no HTTP client: {e}"))?;
    let proxy = Arc::new(Proxy {
        pins: Arc::new(Mutex::new(pins)),
        label: options.label,
        on_drift: options.on_drift,
        public: options.public.map(|(p, on)| (Arc::new(Mutex::new(p)), on)),
        url,
        client,
        sessions: Mutex::new(HashMap::new()),
        wire: WireIds::default(),
    });
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // Out of descriptors, say: wait rather than spin.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => return Ok(()),
        };
        let proxy = proxy.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let proxy = proxy.clone();
                async move { Ok::<_, Infallible>(handle(proxy, req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(CLIENT_TIME)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
