//! A TCP proxy on loopback whose connections a test can cut, as a network
//! that drops does: every connection it carries ends at once, and for a
//! while new ones are dropped as soon as they are made. Or it can swallow
//! them: what they carry stops, yet neither end sees them close.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub struct CutProxy {
    address: SocketAddr,
    state: Arc<State>,
}

struct State {
    /// Cancelled by a cut: every connection made before it ends.
    carried: Mutex<CancellationToken>,
    /// Cancelled by a swallow: every connection made before it goes silent.
    swallowed: Mutex<CancellationToken>,
    /// New connections are dropped until then.
    down_until: Mutex<Option<Instant>>,
    made: AtomicUsize,
}

impl CutProxy {
    /// Forward connections on a new loopback port to `target`.
    pub async fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let state = Arc::new(State {
            carried: Mutex::new(CancellationToken::new()),
            swallowed: Mutex::new(CancellationToken::new()),
            down_until: Mutex::new(None),
            made: AtomicUsize::new(0),
        });
        tokio::spawn(accept(listener, target, state.clone()));
        Self { address, state }
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// End every connection carried now, and drop new ones for `down`.
    pub fn cut_for(&self, down: Duration) {
        *self.state.down_until.lock().unwrap() = Some(Instant::now() + down);
        let old = std::mem::take(&mut *self.state.carried.lock().unwrap());
        old.cancel();
    }

    /// Stop carrying anything on the connections carried now, holding them
    /// open (a network that drops traffic without a reset); new ones work.
    pub fn swallow(&self) {
        let old = std::mem::take(&mut *self.state.swallowed.lock().unwrap());
        old.cancel();
    }

    /// Start a long turn on `client` (a `stream` request of 100,000
    /// messages), cut the network mid-turn for `down`, and return how the
    /// turn failed.
    pub async fn cut_a_long_turn(
        &self,
        client: &acp_engine::Connection,
        down: Duration,
    ) -> acp_engine::RequestError {
        let turn = super::start_stream(client, 100_000);
        tokio::time::sleep(Duration::from_millis(100)).await;
        self.cut_for(down);
        tokio::time::timeout(super::PATIENCE, turn)
            .await
            .expect("no hang")
            .unwrap()
            .expect_err("the turn fails")
    }

    /// Connections forwarded so far.
    pub fn connections_made(&self) -> usize {
        self.state.made.load(Ordering::SeqCst)
    }
}

async fn accept(listener: TcpListener, target: SocketAddr, state: Arc<State>) {
    while let Ok((mut client, _)) = listener.accept().await {
        let down = state
            .down_until
            .lock()
            .unwrap()
            .is_some_and(|until| Instant::now() < until);
        if down {
            continue; // dropped: the client sees its connection end
        }
        let Ok(mut server) = TcpStream::connect(target).await else {
            continue;
        };
        state.made.fetch_add(1, Ordering::SeqCst);
        let cut = state.carried.lock().unwrap().clone();
        let swallowed = state.swallowed.lock().unwrap().clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                _ = cut.cancelled() => {}
                // Held open, silent, until a cut.
                _ = swallowed.cancelled() => cut.cancelled().await,
            }
        });
    }
}
