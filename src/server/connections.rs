//! The connections of `bidtb serve`, guarded against slow, idle, malformed and too many
//! clients: one request per connection; the request line read and checked here first (a
//! line that is not printable ASCII HTTP gets a JSON 400, as every other error does); the
//! headers within a timeout (`serve --header-timeout`, 10 s by default), the whole
//! exchange within three times that;
//! at most [`connection_bound`] connections at once (more wait in the kernel's queue);
//! and on Ctrl-C or SIGTERM, no new connections, and those under way get
//! [`SHUTDOWN_DEADLINE`] to finish.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tower::ServiceExt;

/// How long the connections under way get to finish once the server is told to stop.
pub const SHUTDOWN_DEADLINE: Duration = Duration::from_secs(5);
/// The most connections served at once, file descriptors permitting.
pub const MAX_CONNECTIONS: usize = 256;
/// The longest request line read.
const MAX_REQUEST_LINE: usize = 8192;

/// The most connections to serve at once: [`MAX_CONNECTIONS`], or fewer where the limit on
/// open files (`ulimit -n`) leaves less room beside the files open now.
pub fn connection_bound() -> usize {
    let soft_limit = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|l| {
            let line = l.lines().find(|l| l.starts_with("Max open files"))?;
            line["Max open files".len()..]
                .split_whitespace()
                .next()?
                .parse::<usize>()
                .ok()
        });
    let open = std::fs::read_dir("/proc/self/fd").map_or(16, |d| d.count());
    match soft_limit {
        // Room for the listener, the runtime's own descriptors and a margin.
        Some(limit) => limit.saturating_sub(open + 16).clamp(1, MAX_CONNECTIONS),
        None => MAX_CONNECTIONS,
    }
}

/// Serve `app` on `listener` until `shutdown` resolves, then let the connections under way
/// finish within [`SHUTDOWN_DEADLINE`]. A client gets `header_timeout` to send its request
/// line and headers, and three times that for the whole connection.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    header_timeout: Duration,
    shutdown: impl Future<Output = ()>,
) {
    let permits = Arc::new(Semaphore::new(connection_bound()));
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            p = permits.clone().acquire_owned() => p.expect("the semaphore is never closed"),
            () = &mut shutdown => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of descriptors or a connection reset before it was taken: wait a
                // little and go on.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let app = app.clone();
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let _permit = permit;
            let served = connection(stream, app, watcher, header_timeout);
            let _ = tokio::time::timeout(3 * header_timeout, served).await;
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(SHUTDOWN_DEADLINE) => {}
    }
}

/// One connection: its request line checked, then one request served by `app`.
async fn connection(mut stream: TcpStream, app: Router, watcher: Watcher, timeout: Duration) {
    let mut head = Vec::with_capacity(256);
    match tokio::time::timeout(timeout, request_line(&mut stream, &mut head)).await {
        Ok(Ok(None)) => {}
        Ok(Ok(Some(problem))) => {
            let _ = reply_bad_request(&mut stream, &problem).await;
            return;
        }
        // Timed out, or closed before a whole line.
        Err(_) | Ok(Err(_)) => return,
    }
    let service = TowerToHyperService::new(
        app.map_request(|req: hyper::Request<Incoming>| req.map(Body::new)),
    );
    let io = TokioIo::new(Rewind {
        head,
        at: 0,
        stream,
    });
    let conn = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(timeout)
        .keep_alive(false)
        .serve_connection(io, service);
    let _ = watcher.watch(conn).await;
}

/// Read from `stream` into `head` until the first line is complete; then check it: None if
/// it is an HTTP/1 request line of printable ASCII, else what is wrong with it. An error if
/// the client closed before a whole line.
async fn request_line(stream: &mut TcpStream, head: &mut Vec<u8>) -> io::Result<Option<String>> {
    let mut buf = [0u8; 1024];
    loop {
        if let Some(end) = head.iter().position(|&b| b == b'\n') {
            return Ok(check_request_line(&head[..end]));
        }
        if head.len() > MAX_REQUEST_LINE {
            return Ok(Some(format!(
                "the request line is longer than {MAX_REQUEST_LINE} bytes"
            )));
        }
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        head.extend_from_slice(&buf[..n]);
    }
}

/// What is wrong with a request line (without its line end), if anything.
pub fn check_request_line(line: &[u8]) -> Option<String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if !line.iter().all(|&b| (0x20..0x7f).contains(&b)) {
        return Some(
            "the request line holds bytes that are not printable ASCII (percent-encode them)"
                .into(),
        );
    }
    let text = std::str::from_utf8(line).expect("ASCII");
    let parts: Vec<&str> = text.split(' ').collect();
    let well_formed = parts.len() == 3
        && !parts[0].is_empty()
        && parts[0].bytes().all(|b| b.is_ascii_uppercase())
        && !parts[1].is_empty()
        && parts[2].starts_with("HTTP/1.");
    (!well_formed).then(|| format!("not an HTTP/1 request line: {text:.80}"))
}

/// Answer 400 with a JSON error and close.
async fn reply_bad_request(stream: &mut TcpStream, problem: &str) -> io::Result<()> {
    let body = serde_json::json!({ "error": problem }).to_string();
    let reply = format!(
        "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(reply.as_bytes()).await?;
    stream.shutdown().await
}

/// The stream with the bytes already read from it put back in front.
struct Rewind {
    head: Vec<u8>,
    at: usize,
    stream: TcpStream,
}

impl AsyncRead for Rewind {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.at < self.head.len() {
            let n = buf.remaining().min(self.head.len() - self.at);
            let at = self.at;
            buf.put_slice(&self.head[at..at + n]);
            self.at += n;
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Rewind {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_lines_are_checked() {
        assert_eq!(
            check_request_line(b"GET /api/query?fen=k3 HTTP/1.1\r"),
            None
        );
        assert_eq!(check_request_line(b"GET / HTTP/1.0"), None);
        for bad in [
            &b"GET /\xff HTTP/1.1\r"[..],
            b"GARBAGE\r",
            b"GET /\x01 HTTP/1.1",
            b"get / HTTP/1.1",
            b"GET  HTTP/1.1",
            b"GET / HTTP/2",
            b"",
        ] {
            assert!(check_request_line(bad).is_some(), "{bad:?}");
        }
    }
}
