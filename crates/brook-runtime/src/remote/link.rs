//! The transport between ranks: a [`Link`] sends and receives tagged messages, in order for
//! each sender, receiver and tag, as MPI does. MPI is one link (`remote::mpi`, behind the
//! `mpi` feature); [`local_world`] is another, with threads for ranks, so that the protocol
//! is tested in every build.

use crate::registry::HostPlace;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Why a message did not get through.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    #[error(
        "no word from rank {rank} for {waited:?} (a rank says it is alive while it works; \
         BRT_MPI_TIMEOUT sets the wait)"
    )]
    Timeout { rank: usize, waited: Duration },
    #[error("rank {rank} is gone: {why}")]
    Gone { rank: usize, why: String },
}

/// Tagged messages between the ranks of one job.
pub trait Link: Send + Sync {
    /// This process's rank.
    fn rank(&self) -> usize;
    /// How many ranks the job has.
    fn size(&self) -> usize;
    /// Sends `parts` to rank `to` as consecutive messages of tag `tag`: no other thread's
    /// message to `to` with that tag comes between them.
    fn send(&self, to: usize, tag: u32, parts: &[&[u8]]) -> Result<(), LinkError>;
    /// The next message of tag `tag` from rank `from`, waiting for it: a request (a serving
    /// rank's) as long as the job runs, anything else until the link's patience has passed
    /// with no word from `from` (a message of tag [`super::wire::tag::ALIVE`] is a word).
    fn receive(&self, from: usize, tag: u32) -> Result<Vec<u8>, LinkError>;
    /// How often a serving rank says it is alive while it works on a request (well within
    /// the patience of [`Link::receive`]).
    fn heartbeat(&self) -> Duration {
        Duration::from_secs(1)
    }
    /// This rank's place among the job's ranks on its host (which of its devices a bare
    /// device name gives it: [`crate::registry::spec_for_host_place`]).
    fn host_place(&self) -> HostPlace {
        HostPlace { index: 0, count: 1 }
    }
    /// The next part of tag `tag` from rank `from`, which the receiver knows to be `len` bytes
    /// long: a link may carry a long part as several messages ([`PIECE`] bytes each; MPI counts
    /// a message's bytes in an `int`). Parts whose length the receiver does not know (headers,
    /// modules) are never that long.
    fn receive_len(&self, from: usize, tag: u32, len: usize) -> Result<Vec<u8>, LinkError> {
        let mut part = self.receive(from, tag)?;
        while part.len() < len {
            part.extend_from_slice(&self.receive(from, tag)?);
        }
        Ok(part)
    }
}

/// The longest message the MPI link sends: a longer part goes as several
/// ([`Link::receive_len`]). Headers are far shorter than any link's piece (their error
/// messages are cut at [`super::wire::MESSAGE_LIMIT`]).
pub const PIECE: usize = 1 << 28;

/// The messages a part goes as: pieces of `piece` bytes, the last shorter; one empty message
/// for an empty part.
pub fn pieces(part: &[u8], piece: usize) -> Vec<&[u8]> {
    if part.is_empty() {
        vec![part]
    } else {
        part.chunks(piece).collect()
    }
}

/// A message queue's key: sender, receiver, tag.
type Route = (usize, usize, u32);

/// Messages in flight: for each route, in order.
#[derive(Default)]
struct Mailboxes {
    queues: Mutex<HashMap<Route, VecDeque<Vec<u8>>>>,
    arrived: Condvar,
}

/// One rank of a job whose ranks are threads of this process ([`local_world`]).
pub struct LocalLink {
    rank: usize,
    size: usize,
    mail: Arc<Mailboxes>,
    /// How long a receive waits with no word from its sender before it fails (a test never
    /// hangs).
    patience: Duration,
    /// The longest message: small, so that the tests carry long parts in pieces as MPI does.
    piece: usize,
}

/// The links of a job of `size` ranks that are threads of this process: link `r` is rank `r`;
/// a receive fails after `patience` with no word from its sender.
pub fn local_world(size: usize, patience: Duration) -> Vec<LocalLink> {
    let mail = Arc::new(Mailboxes::default());
    (0..size)
        .map(|rank| LocalLink {
            rank,
            size,
            mail: mail.clone(),
            patience,
            piece: 16 * 1024,
        })
        .collect()
}

impl Link for LocalLink {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn heartbeat(&self) -> Duration {
        self.patience / 4
    }

    /// Threads of one process: every rank is on this host.
    fn host_place(&self) -> HostPlace {
        HostPlace {
            index: self.rank,
            count: self.size,
        }
    }

    fn send(&self, to: usize, tag: u32, parts: &[&[u8]]) -> Result<(), LinkError> {
        if to >= self.size {
            return Err(LinkError::Gone {
                rank: to,
                why: format!("the job has {} ranks", self.size),
            });
        }
        let mut queues = self.mail.queues.lock().unwrap_or_else(|p| p.into_inner());
        let queue = queues.entry((self.rank, to, tag)).or_default();
        for part in parts {
            queue.extend(pieces(part, self.piece).into_iter().map(<[u8]>::to_vec));
        }
        self.mail.arrived.notify_all();
        Ok(())
    }

    /// A serving rank waits for requests as long as it runs; other messages come within
    /// the link's patience or not at all.
    fn receive(&self, from: usize, tag: u32) -> Result<Vec<u8>, LinkError> {
        let patience = match tag {
            super::wire::tag::REQUEST => Duration::MAX,
            _ => self.patience,
        };
        let mut deadline = Instant::now().checked_add(patience);
        let mut queues = self.mail.queues.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(message) = queues
                .get_mut(&(from, self.rank, tag))
                .and_then(VecDeque::pop_front)
            {
                return Ok(message);
            }
            let alive = queues.get_mut(&(from, self.rank, super::wire::tag::ALIVE));
            if alive.is_some_and(|words| words.drain(..).count() > 0) {
                deadline = Instant::now().checked_add(patience);
            }
            let left = deadline.map_or(Duration::from_secs(3600), |d| {
                d.saturating_duration_since(Instant::now())
            });
            if left.is_zero() {
                return Err(LinkError::Timeout {
                    rank: from,
                    waited: self.patience,
                });
            }
            queues = self
                .mail
                .arrived
                .wait_timeout(queues, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}
