//! The connections `agentry serve` accepts, guarded against those that hold a socket and say
//! nothing: a connection must send its first byte within a short while (a request's headers
//! start it), and one that neither sends nor receives anything for long is closed.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};

/// How long connections may be silent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Before the first byte a client sends.
    pub first_byte: Duration,
    /// With no byte either way, once it has sent one.
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            first_byte: Duration::from_secs(10),
            idle: Duration::from_secs(600),
        }
    }
}

/// A listener whose connections are [`Guarded`], with `TCP_NODELAY` set: events are small
/// writes that must go out at once, not wait for the client to acknowledge the previous one
/// (Nagle's algorithm against a delayed ACK holds a write back for up to 40 ms).
pub struct GuardedListener {
    listener: TcpListener,
    timeouts: Timeouts,
}

impl GuardedListener {
    /// `listener`, its connections held to `timeouts`.
    pub fn new(listener: TcpListener, timeouts: Timeouts) -> Self {
        Self { listener, timeouts }
    }
}

impl axum::serve::Listener for GuardedListener {
    type Io = Guarded<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.listener.accept().await {
                Ok((stream, address)) => {
                    if let Err(error) = stream.set_nodelay(true) {
                        tracing::debug!("TCP_NODELAY not set: {error}");
                    }
                    return (Guarded::new(stream, self.timeouts), address);
                }
                // Out of file descriptors, say: wait a moment rather than spin.
                Err(error) => {
                    tracing::warn!("a connection was not accepted: {error}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.listener.local_addr()
    }
}

/// A connection that fails (and so is closed) once it has been silent too long.
pub struct Guarded<T> {
    io: T,
    timeouts: Timeouts,
    deadline: Pin<Box<Sleep>>,
}

impl<T> Guarded<T> {
    fn new(io: T, timeouts: Timeouts) -> Self {
        Self {
            io,
            timeouts,
            deadline: Box::pin(tokio::time::sleep(timeouts.first_byte)),
        }
    }

    /// Something went through: the connection may be idle for a while again.
    fn heard(&mut self) {
        let idle = self.timeouts.idle;
        self.deadline.as_mut().reset(Instant::now() + idle);
    }

    /// Whether the silence has lasted too long (registering for a wake-up when it will have).
    fn expired(&mut self, cx: &mut Context<'_>) -> bool {
        self.deadline.as_mut().poll(cx).is_ready()
    }
}

fn silent() -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        "the connection was silent too long",
    )
}

impl<T: AsyncRead + Unpin> AsyncRead for Guarded<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    self.heard();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
            Poll::Pending if self.expired(cx) => Poll::Ready(Err(silent())),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Guarded<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.io).poll_write(cx, buf);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            self.heard();
        }
        written
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test(start_paused = true)]
    async fn a_silent_connection_fails_and_a_talking_one_does_not() {
        let timeouts = Timeouts {
            first_byte: Duration::from_secs(1),
            idle: Duration::from_secs(5),
        };
        let (client, server) = tokio::io::duplex(64);
        let mut guarded = Guarded::new(server, timeouts);
        let mut byte = [0u8; 1];
        let silent = guarded.read(&mut byte).await.unwrap_err();
        assert_eq!(silent.kind(), io::ErrorKind::TimedOut);
        drop(client);
        let (mut client, server) = tokio::io::duplex(64);
        let mut guarded = Guarded::new(server, timeouts);
        client.write_all(b"G").await.unwrap();
        assert_eq!(guarded.read(&mut byte).await.unwrap(), 1);
        // Past the first-byte deadline, within the idle one.
        tokio::time::sleep(Duration::from_secs(3)).await;
        client.write_all(b"E").await.unwrap();
        assert_eq!(guarded.read(&mut byte).await.unwrap(), 1);
        let idle = guarded.read(&mut byte).await.unwrap_err();
        assert_eq!(idle.kind(), io::ErrorKind::TimedOut);
    }
}
