//! Connections to the core from inside its own process, without a socket.
//!
//! When the gateway runs in the core's process (`lms up`), its gRPC client reaches the core
//! over an in-memory pipe: the calls still go through the `lms.v1` codec and HTTP/2, so the
//! gateway stays a plain `lms.v1` client, but no loopback TCP (two system calls per frame,
//! wake-ups through the kernel) sits between them. The core keeps serving TCP for every
//! other caller. docs/benchmarks.md ("Hot path") has what it saves.

use std::{
    io,
    pin::Pin,
    task::{Context, Poll},
};

use tokio::{
    io::{AsyncRead, AsyncWrite, DuplexStream, ReadBuf},
    net::TcpStream,
    sync::mpsc,
};
use tonic::transport::{
    Channel, Endpoint, Uri,
    server::{Connected, TcpConnectInfo},
};

/// Bytes either side may write before waiting for the other to read: room for a large
/// answer's frames (HTTP/2's default window is 64 KiB).
const PIPE_CAPACITY: usize = 256 * 1024;

/// How many opened pipes may wait for the server to take them.
const PENDING_PIPES: usize = 64;

/// The server's end: pipes opened by [`InMemoryConnector`]s, in the order they were opened.
pub(crate) type PipeReceiver = mpsc::Receiver<DuplexStream>;

/// Opens in-memory connections to one core; cheap to clone.
#[derive(Debug, Clone)]
pub struct InMemoryConnector {
    pipes: mpsc::Sender<DuplexStream>,
}

impl InMemoryConnector {
    pub(crate) fn new() -> (Self, PipeReceiver) {
        let (pipes, receiver) = mpsc::channel(PENDING_PIPES);
        (Self { pipes }, receiver)
    }

    /// A gRPC channel to the core that connects on first use, and again after the core has
    /// closed its connection.
    pub fn channel(&self) -> Channel {
        let pipes = self.pipes.clone();
        // The authority is never resolved: every connection is a new pipe.
        Endpoint::from_static("http://lms-core.in-memory").connect_with_connector_lazy(
            tower::service_fn(move |_: Uri| {
                let pipes = pipes.clone();
                async move {
                    let (client, server) = tokio::io::duplex(PIPE_CAPACITY);
                    pipes.send(server).await.map_err(|_| {
                        io::Error::new(io::ErrorKind::ConnectionRefused, "the core has stopped")
                    })?;
                    Ok::<_, io::Error>(hyper_util::rt::TokioIo::new(client))
                }
            }),
        )
    }
}

/// One connection the core serves: from a TCP client or from inside the process.
pub(crate) enum CoreConnection {
    Tcp(TcpStream),
    InMemory(DuplexStream),
}

impl Connected for CoreConnection {
    /// The peer's addresses on TCP; nothing for a pipe.
    type ConnectInfo = Option<TcpConnectInfo>;

    fn connect_info(&self) -> Self::ConnectInfo {
        match self {
            Self::Tcp(tcp) => Some(tcp.connect_info()),
            Self::InMemory(_) => None,
        }
    }
}

impl AsyncRead for CoreConnection {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Tcp(tcp) => Pin::new(tcp).poll_read(cx, buf),
            Self::InMemory(pipe) => Pin::new(pipe).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for CoreConnection {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Self::Tcp(tcp) => Pin::new(tcp).poll_write(cx, buf),
            Self::InMemory(pipe) => Pin::new(pipe).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Self::Tcp(tcp) => Pin::new(tcp).poll_write_vectored(cx, bufs),
            Self::InMemory(pipe) => Pin::new(pipe).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Self::Tcp(tcp) => tcp.is_write_vectored(),
            Self::InMemory(pipe) => pipe.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Tcp(tcp) => Pin::new(tcp).poll_flush(cx),
            Self::InMemory(pipe) => Pin::new(pipe).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Tcp(tcp) => Pin::new(tcp).poll_shutdown(cx),
            Self::InMemory(pipe) => Pin::new(pipe).poll_shutdown(cx),
        }
    }
}
