//! Stdin and stdout polled by the protocol thread itself.
//!
//! tokio's `stdin()`/`stdout()` hand every read and write to a thread of its
//! blocking pool and back, two more thread hops per message, and a hop waits
//! for its thread to be woken. When stdin and stdout are pipes or sockets
//! (an editor's) they are switched to non-blocking mode and registered with
//! the runtime's event loop instead; anything else (a regular file, which
//! epoll refuses, or a terminal) falls back to tokio's versions. The original file status
//! flags are restored when the stream is dropped.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};

/// The server's input: stdin, read by the runtime.
pub type Input = Box<dyn AsyncRead + Unpin + Send>;
/// The server's output: stdout, written by the runtime.
pub type Output = Box<dyn AsyncWrite + Unpin + Send>;

/// Stdin and stdout for the server; must be called inside the runtime.
pub fn stdio() -> (Input, Output) {
    let input: Input = match Pipe::new(libc::STDIN_FILENO, Interest::READABLE) {
        Some(pipe) => Box::new(pipe),
        None => Box::new(tokio::io::stdin()),
    };
    let output: Output = match Pipe::new(libc::STDOUT_FILENO, Interest::WRITABLE) {
        Some(pipe) => Box::new(pipe),
        None => Box::new(tokio::io::stdout()),
    };
    (input, output)
}

/// The size asked for the stdout pipe (Linux's default limit for users).
const PIPE_BYTES: libc::c_int = 1 << 20;

/// A file descriptor this process does not own: it is never closed here.
struct Borrowed(RawFd);

impl AsRawFd for Borrowed {
    fn as_raw_fd(&self) -> RawFd {
        self.0
    }
}

struct Pipe {
    fd: AsyncFd<Borrowed>,
    flags: libc::c_int,
}

impl Pipe {
    /// Stays valid as long as `fd` stays open, which the standard streams
    /// (and the tests' pipes) do for the life of the `Pipe`.
    fn new(fd: RawFd, interest: Interest) -> Option<Pipe> {
        // A terminal is shared with the shell: leave it blocking.
        // SAFETY: isatty only inspects the descriptor.
        if unsafe { libc::isatty(fd) } == 1 {
            return None;
        }
        // SAFETY: fcntl with F_GETFL only reads the descriptor's flags.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if flags < 0 {
            return None;
        }
        // SAFETY: F_SETFL with integer flags on a descriptor we hold.
        if flags & libc::O_NONBLOCK == 0 && unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
            return None;
        }
        if interest == Interest::WRITABLE {
            // A publishDiagnostics of a large document is megabytes long: with
            // the default 64 KB pipe the client is woken for every 64 KB. A
            // larger pipe where the system allows it (not a pipe: refused, fine).
            // SAFETY: F_SETPIPE_SZ with an integer size on a descriptor we hold.
            unsafe { libc::fcntl(fd, libc::F_SETPIPE_SZ, PIPE_BYTES) };
        }
        // SAFETY: `fd` is open and refers to the same file for the life of
        // the `AsyncFd` (see above).
        match unsafe { AsyncFd::register_with_interest(Borrowed(fd), interest) } {
            Ok(registered) => Some(Pipe { fd: registered, flags }),
            Err(error) => {
                tracing::debug!("fd {fd} cannot be polled ({error}); using a blocking thread");
                // SAFETY: as above; puts the original flags back.
                unsafe { libc::fcntl(fd, libc::F_SETFL, flags) };
                None
            }
        }
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        // SAFETY: as in `new`; puts the original flags back.
        unsafe { libc::fcntl(self.fd.get_ref().0, libc::F_SETFL, self.flags) };
    }
}

/// One read(2) or write(2) result as `io::Result`, retrying on EINTR.
fn retrying(mut call: impl FnMut() -> isize) -> io::Result<usize> {
    loop {
        let done = call();
        if done >= 0 {
            return Ok(done as usize);
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

impl AsyncRead for Pipe {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.fd.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            let read = guard.try_io(|fd| {
                // SAFETY: reads at most `unfilled.len()` bytes into `unfilled`.
                retrying(|| unsafe { libc::read(fd.get_ref().0, unfilled.as_mut_ptr().cast(), unfilled.len()) })
            });
            match read {
                Ok(Ok(count)) => {
                    buf.advance(count);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(error)) => return Poll::Ready(Err(error)),
                // Not ready after all: readiness was cleared, poll again.
                Err(_would_block) => continue,
            }
        }
    }
}

impl AsyncWrite for Pipe {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.fd.poll_write_ready(cx))?;
            let written = guard.try_io(|fd| {
                // SAFETY: writes at most `data.len()` bytes from `data`.
                retrying(|| unsafe { libc::write(fd.get_ref().0, data.as_ptr().cast(), data.len()) })
            });
            match written {
                Ok(result) => return Poll::Ready(result),
                Err(_would_block) => continue,
            }
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        slices: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.fd.poll_write_ready(cx))?;
            let written = guard.try_io(|fd| {
                // SAFETY: IoSlice is ABI-compatible with iovec; writev reads
                // at most the slices' bytes, which outlive the call.
                retrying(|| unsafe {
                    libc::writev(fd.get_ref().0, slices.as_ptr().cast(), slices.len().min(1024) as libc::c_int)
                })
            });
            match written {
                Ok(result) => return Poll::Ready(result),
                Err(_would_block) => continue,
            }
        }
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Nothing is buffered here.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A pipe pair whose ends are owned by the test (closed when dropped).
    fn pipe() -> (std::fs::File, std::fs::File) {
        let mut fds = [0; 2];
        // SAFETY: pipe writes two descriptors into `fds`.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        use std::os::fd::FromRawFd;
        // SAFETY: both descriptors were just created and are owned here alone.
        unsafe { (std::fs::File::from_raw_fd(fds[0]), std::fs::File::from_raw_fd(fds[1])) }
    }

    #[tokio::test]
    async fn a_large_message_crosses_a_pipe_whole_and_the_flags_are_restored() {
        let (read_end, write_end) = pipe();
        let flags = |file: &std::fs::File| unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETFL) };
        let before = flags(&write_end);
        let message: Vec<u8> = (0..1_000_000u32).map(|it| (it % 251) as u8).collect();
        let (mut reader, mut writer) = (
            Pipe::new(read_end.as_raw_fd(), Interest::READABLE).unwrap(),
            Pipe::new(write_end.as_raw_fd(), Interest::WRITABLE).unwrap(),
        );
        assert_ne!(flags(&write_end) & libc::O_NONBLOCK, 0);
        // Far more than the pipe holds: the writer must wait for the reader.
        let sent = message.clone();
        let writing = tokio::spawn(async move {
            writer.write_all(&sent).await.unwrap();
            drop(writer);
        });
        let mut received = vec![0; message.len()];
        reader.read_exact(&mut received).await.unwrap();
        writing.await.unwrap();
        assert_eq!(received, message);
        assert_eq!(flags(&write_end), before);
    }

    #[tokio::test]
    async fn a_regular_file_is_refused_so_that_the_blocking_fallback_is_used() {
        let file = tempfile_in_target();
        assert!(Pipe::new(file.as_raw_fd(), Interest::READABLE).is_none());
        // SAFETY: F_GETFL only reads the flags.
        assert_eq!(unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETFL) } & libc::O_NONBLOCK, 0);
    }

    fn tempfile_in_target() -> std::fs::File {
        let path = std::env::temp_dir().join(format!("hpf-ls-stdio-test-{}", std::process::id()));
        let file = std::fs::OpenOptions::new().create(true).truncate(true).read(true).write(true).open(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        file
    }
}
