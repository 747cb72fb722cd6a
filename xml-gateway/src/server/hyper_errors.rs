//! hyper answers a request it cannot parse by itself, before any of our code runs: 400 for
//! malformed HTTP, 414 for a URI over 65,534 bytes, 431 for too many or too large header
//! fields, each with an empty body. This stream rewrites exactly those answers, as they are
//! written, into the contract's XML error with a fresh `X-Request-Id`.
//!
//! They are recognised by shape: a status line of one of these codes, a head with no
//! `x-request-id` (every answer of the router carries one) and nothing after the head (hyper
//! closes the connection after them). Writes are kept contiguous (no vectored writes), so such
//! a head always starts a write.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use axum::http::StatusCode;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::representation::{Format, error_body};
use crate::request_id::RequestId;
use crate::xml::XML_CONTENT_TYPE;

/// The message of each answer hyper writes itself.
fn message(status: StatusCode) -> Option<&'static str> {
    match status {
        StatusCode::BAD_REQUEST => Some("The request is not well-formed HTTP/1.1."),
        StatusCode::URI_TOO_LONG => Some(
            "The request URI is longer than 65,534 bytes; send a long userIds list in the body \
             of POST /gamification/points.",
        ),
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => Some(
            "The request header fields are too large or too many (at most 100 fields, about \
             400 KB in all).",
        ),
        _ => None,
    }
}

/// The XML answer replacing `written`, when `written` is one of hyper's own error answers.
pub(super) fn replacement(written: &[u8]) -> Option<Vec<u8>> {
    const LONGEST_HEAD: usize = 512;
    if written.len() > LONGEST_HEAD || !written.starts_with(b"HTTP/1.") {
        return None;
    }
    let head_end = written
        .windows(4)
        .position(|window| window == b"\r\n\r\n")?
        + 4;
    if head_end != written.len() {
        return None;
    }
    let head = std::str::from_utf8(written).ok()?;
    let status_line = head.lines().next()?;
    let code = status_line
        .strip_prefix("HTTP/1.1 ")
        .or_else(|| status_line.strip_prefix("HTTP/1.0 "))?
        .get(..3)?;
    let status = StatusCode::from_bytes(code.as_bytes()).ok()?;
    let message = message(status)?;
    if head.to_ascii_lowercase().contains("\r\nx-request-id:") {
        return None;
    }
    let request_id = RequestId::generate();
    let body = error_body(Format::Xml, status, message, Some(&request_id));
    let mut answer = format!(
        "{status_line}\r\ncontent-type: {XML_CONTENT_TYPE}\r\ncontent-length: {}\r\n\
         x-request-id: {}\r\nconnection: close\r\n",
        body.len(),
        request_id.as_str()
    );
    if let Some(date) = head
        .lines()
        .find(|line| line.to_ascii_lowercase().starts_with("date:"))
    {
        answer.push_str(date);
        answer.push_str("\r\n");
    }
    answer.push_str("\r\n");
    answer.push_str(&body);
    Some(answer.into_bytes())
}

/// A stream whose writes of hyper's own error answers are replaced by [`replacement`].
#[derive(Debug)]
pub(super) struct XmlParseErrors<S> {
    inner: S,
    /// A replacement answer and how much of it is written.
    pending: Option<(Vec<u8>, usize)>,
}

impl<S> XmlParseErrors<S> {
    pub(super) fn new(inner: S) -> Self {
        Self {
            inner,
            pending: None,
        }
    }
}

impl<S: AsyncWrite + Unpin> XmlParseErrors<S> {
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((answer, written)) = &mut self.pending {
            if *written == answer.len() {
                self.pending = None;
                break;
            }
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &answer[*written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            *written += n;
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for XmlParseErrors<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for XmlParseErrors<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(self.poll_pending(cx))?;
        if let Some(answer) = replacement(buf) {
            self.pending = Some((answer, 0));
            // The rest goes out on the next write, flush or shutdown.
            if let Poll::Ready(Err(error)) = self.poll_pending(cx) {
                return Poll::Ready(Err(error));
            }
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hypers_own_answers_become_xml_errors() {
        for (head, code) in [
            (
                "HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\ndate: Mon, 23 Nov 2026 10:00:00 GMT\r\n\r\n",
                "431",
            ),
            (
                "HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\n\r\n",
                "414",
            ),
            (
                "HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n",
                "400",
            ),
        ] {
            let answer = String::from_utf8(replacement(head.as_bytes()).unwrap()).unwrap();
            assert!(answer.starts_with(head.lines().next().unwrap()), "{answer}");
            assert!(answer.contains("\r\nx-request-id: "), "{answer}");
            assert!(
                answer.contains(&format!("<error><code>{code}</code>")),
                "{answer}"
            );
            let (answer_head, body) = answer.split_once("\r\n\r\n").unwrap();
            assert!(answer_head.contains(&format!("content-length: {}", body.len())));
        }
    }

    #[test]
    fn the_routers_answers_are_left_alone() {
        let ours = "HTTP/1.1 400 Bad Request\r\nx-request-id: abc\r\ncontent-length: 0\r\n\r\n";
        assert!(replacement(ours.as_bytes()).is_none());
        let with_body = "HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\nab";
        assert!(replacement(with_body.as_bytes()).is_none());
        let other = "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n";
        assert!(replacement(other.as_bytes()).is_none());
        assert!(replacement(b"partial body bytes").is_none());
    }
}
