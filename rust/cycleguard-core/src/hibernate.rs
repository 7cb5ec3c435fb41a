//! Hibernation: an idle session's state packed into a few hundred bytes, unpacked on its next
//! call.
//!
//! An awake [`Session`] is a struct sized for the worst case: a ring of ten call slots, eight
//! failure folds, four tracked tools, seven pattern periods, one word per count. A session
//! that has been quiet for a while (the guard decides when, see `guard.py`) needs none of
//! that at hand, and most of its words are zero. [`Hibernated`] keeps the same state as a
//! byte string: counts as LEB128 varints, hashes as their significant bytes after a length
//! byte, empty options as one byte, and every Python string once (the slots refer to it by
//! index). Waking rebuilds the identical struct, so detection cannot tell a session that slept
//! from one that did not (tests/detect/test_hibernate.py replays call sequences both ways).
//!
//! Every stored type implements [`Packed`]; a struct lists its fields once in [`packed!`],
//! which writes and reads them in the same order and stops compiling when a field is added
//! to the struct but not to the list.

use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::dims::{
    Budget, CategoryStreak, ErrorStreak, IdenticalCall, PollEntry, PollNoProgress, StateRevisit,
    TextLoop, ToolPattern,
};
use crate::rules::{
    AnswerMemory, EditWithoutEffect, FailedLookups, FailureDensity, NearDuplicateEdit, NothingNew,
    RecurringFailure, RepeatedFailure, ReplayCycle, SameError, Staleness,
};
use crate::session::{Session, SessionHeader};
use crate::settings::Num;
use crate::signal::Gate;
use crate::watch::{CallRing, Slot};

/// Where packed state is written: its bytes and the Python strings it refers to.
pub struct Packer<'py> {
    py: Python<'py>,
    bytes: Vec<u8>,
    strings: Vec<Py<PyString>>,
    words: Vec<u64>,
}

/// Reads what a [`Packer`] wrote, in the same order.
pub struct Unpacker<'a, 'py> {
    py: Python<'py>,
    bytes: &'a [u8],
    at: usize,
    strings: &'a [Py<PyString>],
    words: Vec<u64>,
}

impl Packer<'_> {
    fn byte(&mut self, b: u8) {
        self.bytes.push(b);
    }

    /// LEB128: seven bits a byte, low first (small counts take one byte).
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.bytes.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.bytes.push(v as u8);
    }
}

impl Unpacker<'_, '_> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }
}

/// A value that packs into bytes and back to an equal value.
pub trait Packed: Sized {
    fn pack(&self, p: &mut Packer<'_>);
    fn unpack(u: &mut Unpacker<'_, '_>) -> Option<Self>;
}

/// The shortest word worth remembering for a back-reference (one byte instead of five or
/// more).
const MIN_REMEMBERED_LEN: usize = 4;
/// A length byte above 8 is a back-reference: `WORD_REF + i` is the `i`-th remembered word.
const WORD_REF: usize = 9;
/// How many words can be referred to back (the length byte's room above `WORD_REF`).
const MAX_REMEMBERED: usize = 256 - WORD_REF;

/// Words are mostly hashes and bit sets (random bits, or none): a length byte, then the
/// significant bytes low first. Zero is one byte, a hash nine. The same hash is held by
/// several dimensions at once (the ring, the identical-call and edit keys, the pattern and
/// poll tables), so a long word written before is written again as one back-reference byte;
/// reading remembers the same words in the same order.
impl Packed for u64 {
    fn pack(&self, p: &mut Packer<'_>) {
        let len = 8 - (self.leading_zeros() / 8) as usize;
        if len >= MIN_REMEMBERED_LEN {
            if let Some(i) = p.words.iter().position(|w| w == self) {
                p.byte((WORD_REF + i) as u8);
                return;
            }
            if p.words.len() < MAX_REMEMBERED {
                p.words.push(*self);
            }
        }
        p.byte(len as u8);
        p.bytes.extend_from_slice(&self.to_le_bytes()[..len]);
    }

    fn unpack(u: &mut Unpacker<'_, '_>) -> Option<Self> {
        let len = u.byte()? as usize;
        if len >= WORD_REF {
            return u.words.get(len - WORD_REF).copied();
        }
        let raw = u.bytes.get(u.at..u.at + len)?;
        u.at += len;
        let mut word = [0u8; 8];
        word[..len].copy_from_slice(raw);
        let word = u64::from_le_bytes(word);
        if len >= MIN_REMEMBERED_LEN && u.words.len() < MAX_REMEMBERED {
            u.words.push(word);
        }
        Some(word)
    }
}

/// Counts and steps: zigzag, then LEB128.
impl Packed for i64 {
    fn pack(&self, p: &mut Packer<'_>) {
        p.varint(((self << 1) ^ (self >> 63)) as u64);
    }

    fn unpack(u: &mut Unpacker<'_, '_>) -> Option<Self> {
        let z = u.varint()?;
        Some(((z >> 1) as i64) ^ -((z & 1) as i64))
    }
}

impl Packed for u32 {
    fn pack(&self, p: &mut Packer<'_>) {
        p.varint(u64::from(*self));
    }

    fn unpack(u: &mut Unpacker<'_, '_>) -> Option<Self> {
        u32::try_from(u.varint()?).ok()
    }
}

impl Packed for usize {
    fn pack(&self, p: &mut Packer<'_>) {
        p.varint(*self as u64);
    }

    fn unpack(u: &mut Unpacker<'_, '_>) -> Option<Self> {
        usize::try_from(u.varint()?).ok()
    }
}

impl Packed for f64 {
    fn pack(&self, p: &mut Packer<'_>) {
        p.bytes.extend_from_slice(&self.to_le_bytes());
    }

    fn unpack(u: &mut Unpacker<'_, '_>) -> Option<Self> {
        let raw = u.bytes.get(u.at..u.at + 8)?;
        u.at += 8;
        Some(f64::from_le_bytes(raw.try_into().ok()?))
    }
}

impl Packed for Gate {
    fn pack(&self, p: &mut Packer<'_>) {
        p.byte(self.0);
    }

    fn unpack(u: &mut Unpacker<'_, '_>) -> Option<Self> {
        Some(Gate(u.byte()?))
    }
}

impl Packed for Num {
    fn pack(&self, p: &mut Packer<'_>) {
        match self {
            Num::Int(v) => {
                p.byte(0);
                v.pack(p);
            }
            Num::Float(v) => {
                p.byte(1);
                v.pack(p);
            }
        }
    }

    fn unpack(u: &mut Unpacker<'_, '_>) -> Option<Self> {
        match u.byte()? {
            0 => Some(Num::Int(i64::unpack(u)?)),
            1 => Some(Num::Float(f64::unpack(u)?)),
            _ => None,
        }
    }
}

/// A string is written once per packing; later uses give its index (a session's strings are
/// its few tool names, so a linear search by identity is the cheap way).
impl Packed for Py<PyString> {
    fn pack(&self, p: &mut Packer<'_>) {
        let index = match p.strings.iter().position(|s| s.is(self)) {
            Some(i) => i,
            None => {
                p.strings.push(self.clone_ref(p.py));
                p.strings.len() - 1
            }
        };
        p.varint(index as u64);
    }

    fn unpack(u: &mut Unpacker<'_, '_>) -> Option<Self> {
        let index = usize::try_from(u.varint()?).ok()?;
        Some(u.strings.get(index)?.clone_ref(u.py))
    }
}

impl<T: Packed> Packed for Option<T> {
    fn pack(&self, p: &mut Packer<'_>) {
        match self {
            None => p.byte(0),
            Some(v) => {
                p.byte(1);
                v.pack(p);
            }
        }
    }

    fn unpack(u: &mut Unpacker<'_, '_>) -> Option<Self> {
        match u.byte()? {
            0 => Some(None),
            1 => Some(Some(T::unpack(u)?)),
            _ => None,
        }
    }
}

impl<T: Packed> Packed for Box<T> {
    fn pack(&self, p: &mut Packer<'_>) {
        (**self).pack(p);
    }

    fn unpack(u: &mut Unpacker<'_, '_>) -> Option<Self> {
        Some(Box::new(T::unpack(u)?))
    }
}

/// A sequence: its length, then its items (a `Vec` and a boxed slice alike).
fn pack_items<T: Packed>(items: &[T], p: &mut Packer<'_>) {
    p.varint(items.len() as u64);
    for v in items {
        v.pack(p);
    }
}

impl<T: Packed> Packed for Vec<T> {
    fn pack(&self, p: &mut Packer<'_>) {
        pack_items(self, p);
    }

    fn unpack(u: &mut Unpacker<'_, '_>) -> Option<Self> {
        let len = usize::try_from(u.varint()?).ok()?;
        // Every element takes at least one byte: a length beyond what is left is corrupt.
        if len > u.bytes.len() - u.at {
            return None;
        }
        (0..len).map(|_| T::unpack(u)).collect()
    }
}

impl<T: Packed> Packed for Box<[T]> {
    fn pack(&self, p: &mut Packer<'_>) {
        pack_items(self, p);
    }

    fn unpack(u: &mut Unpacker<'_, '_>) -> Option<Self> {
        Vec::<T>::unpack(u).map(Vec::into_boxed_slice)
    }
}

impl<T: Packed, const N: usize> Packed for [T; N] {
    fn pack(&self, p: &mut Packer<'_>) {
        for v in self {
            v.pack(p);
        }
    }

    fn unpack(u: &mut Unpacker<'_, '_>) -> Option<Self> {
        let items: Vec<T> = (0..N).map(|_| T::unpack(u)).collect::<Option<_>>()?;
        items.try_into().ok()
    }
}

impl<A: Packed, B: Packed> Packed for (A, B) {
    fn pack(&self, p: &mut Packer<'_>) {
        self.0.pack(p);
        self.1.pack(p);
    }

    fn unpack(u: &mut Unpacker<'_, '_>) -> Option<Self> {
        Some((A::unpack(u)?, B::unpack(u)?))
    }
}

/// `Packed` for a struct of packed fields, written and read in the order listed. The struct
/// expression names every field, so a field missing from the list does not compile.
macro_rules! packed {
    ($ty:ident { $($field:ident),* $(,)? }) => {
        impl Packed for $ty {
            fn pack(&self, p: &mut Packer<'_>) {
                $( self.$field.pack(p); )*
            }

            fn unpack(u: &mut Unpacker<'_, '_>) -> Option<Self> {
                // Struct expressions evaluate their fields in the order written.
                Some($ty { $( $field: Packed::unpack(u)? ),* })
            }
        }
    };
}

packed!(Slot {
    key,
    result,
    info,
    tool
});
// (the ring's remainder multiplier follows from its size: not packed, made again)
impl Packed for CallRing {
    fn pack(&self, p: &mut Packer<'_>) {
        self.slots.pack(p);
    }

    fn unpack(u: &mut Unpacker<'_, '_>) -> Option<Self> {
        Some(CallRing::of(Packed::unpack(u)?))
    }
}
packed!(Staleness { bits, folds, next });
packed!(IdenticalCall { count, gate });
packed!(CategoryStreak {
    category,
    count,
    known,
    tracked,
    gate
});
packed!(ToolPattern {
    max_period,
    full_run,
    name_run,
    name_laps,
    lap_changed,
    seen,
    count,
    gate
});
packed!(PollEntry {
    tool,
    result,
    count,
    gate
});
packed!(PollNoProgress { table });
packed!(ErrorStreak { count, gate, table });
packed!(AnswerMemory { answers, next });
packed!(ReplayCycle { gate, seen });
packed!(NearDuplicateEdit {
    key,
    key2,
    count,
    long_bits,
    run2,
    gate
});
packed!(RepeatedFailure { gate });
packed!(RecurringFailure { table, gate });
packed!(FailureDensity {
    bits,
    calls,
    run,
    gate
});
packed!(SameError {
    table,
    failed_action,
    gate
});
packed!(FailedLookups { run, gate });
packed!(NothingNew {
    seen,
    last,
    run,
    gate
});
packed!(EditWithoutEffect {
    check_key,
    check_result,
    rounds,
    edits_since,
    edit_target,
    lap_target,
    gate
});
packed!(TextLoop {
    count,
    last_exact,
    last_sketch,
    gate
});
packed!(StateRevisit {
    ring,
    visits,
    seen,
    abab_run,
    count,
    gate
});
packed!(Budget {
    tool_calls,
    model_turns,
    tokens,
    first_s,
    last_s,
    gates
});

/// Packs a session's loop state, in the order [`Hibernated::wake`] reads it; the rest of
/// [`Session`] (its plan, key and agent, its call and turn counts) is kept as it is, for the
/// properties.
fn pack_loop_state(s: &Session, p: &mut Packer<'_>) {
    s.ring.pack(p);
    s.staleness.pack(p);
    s.identical.pack(p);
    s.category.pack(p);
    s.pattern.pack(p);
    s.poll.pack(p);
    s.error.pack(p);
    s.replay.pack(p);
    s.near_duplicate.pack(p);
    s.repeated.pack(p);
    s.recurring.pack(p);
    s.density.pack(p);
    s.same.pack(p);
    s.lookups.pack(p);
    s.no_effect.pack(p);
    s.nothing_new.pack(p);
    s.text.pack(p);
    s.revisits.pack(p);
    s.budget.pack(p);
}

/// A hibernated session: the header of [`Session`] as it is, its loop state packed.
pub struct Hibernated {
    pub header: SessionHeader,
    bytes: Box<[u8]>,
    strings: Box<[Py<PyString>]>,
}

impl Hibernated {
    /// Packs `session` (the caller drops it).
    pub fn new(py: Python<'_>, session: &Session) -> Self {
        let mut p = Packer {
            py,
            bytes: Vec::with_capacity(256),
            strings: Vec::new(),
            words: Vec::new(),
        };
        pack_loop_state(session, &mut p);
        Hibernated {
            header: session.header.clone_ref(py),
            bytes: p.bytes.into_boxed_slice(),
            strings: p.strings.into_boxed_slice(),
        }
    }

    /// The session as it was packed; None only if the bytes were not written by [`Self::new`].
    pub fn wake(&self, py: Python<'_>) -> Option<Session> {
        let mut u = Unpacker {
            py,
            bytes: &self.bytes,
            at: 0,
            strings: &self.strings,
            words: Vec::new(),
        };
        let session = Session {
            header: self.header.clone_ref(py),
            ring: Packed::unpack(&mut u)?,
            staleness: Packed::unpack(&mut u)?,
            identical: Packed::unpack(&mut u)?,
            category: Packed::unpack(&mut u)?,
            pattern: Packed::unpack(&mut u)?,
            poll: Packed::unpack(&mut u)?,
            error: Packed::unpack(&mut u)?,
            replay: Packed::unpack(&mut u)?,
            near_duplicate: Packed::unpack(&mut u)?,
            repeated: Packed::unpack(&mut u)?,
            recurring: Packed::unpack(&mut u)?,
            density: Packed::unpack(&mut u)?,
            same: Packed::unpack(&mut u)?,
            lookups: Packed::unpack(&mut u)?,
            no_effect: Packed::unpack(&mut u)?,
            nothing_new: Packed::unpack(&mut u)?,
            text: Packed::unpack(&mut u)?,
            revisits: Packed::unpack(&mut u)?,
            budget: Packed::unpack(&mut u)?,
        };
        (u.at == u.bytes.len()).then_some(session)
    }

    /// The bytes it holds (struct, packed state, string references), for `sys.getsizeof`.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.bytes.len()
            + self.strings.len() * std::mem::size_of::<Py<PyString>>()
    }
}

fn unreadable() -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err("a hibernated session's state could not be read back")
}

/// A session awake (its struct, ready for the next call) or hibernated.
pub enum SessionState {
    Awake(Box<Session>),
    Asleep(Box<Hibernated>),
}

impl SessionState {
    /// The session, woken if it slept. An unreadable packing (a bug: [`Hibernated::wake`]
    /// reads exactly what it wrote) is an error and leaves the state as it was.
    pub fn awake(&mut self, py: Python<'_>) -> PyResult<&mut Session> {
        if let SessionState::Asleep(h) = self {
            let session = h.wake(py).ok_or_else(unreadable)?;
            *self = SessionState::Awake(Box::new(session));
        }
        match self {
            SessionState::Awake(s) => Ok(s),
            SessionState::Asleep(_) => unreachable!("woken above"),
        }
    }

    /// `read` on the session without waking it: a hibernated one is unpacked into a copy
    /// that is dropped afterwards (reading a sleeping session's counters or restart state
    /// keeps it small).
    pub fn read<R>(
        &self,
        py: Python<'_>,
        read: impl FnOnce(&Session) -> PyResult<R>,
    ) -> PyResult<R> {
        match self {
            SessionState::Awake(s) => read(s),
            SessionState::Asleep(h) => read(&h.wake(py).ok_or_else(unreadable)?),
        }
    }

    /// Packs an awake session (its struct is freed); false when it already slept.
    pub fn hibernate(&mut self, py: Python<'_>) -> bool {
        let SessionState::Awake(session) = self else {
            return false;
        };
        *self = SessionState::Asleep(Box::new(Hibernated::new(py, session)));
        true
    }

    pub fn is_asleep(&self) -> bool {
        matches!(self, SessionState::Asleep(_))
    }

    /// The session's header, awake or not (the properties read it without waking it).
    pub fn header(&self) -> &SessionHeader {
        match self {
            SessionState::Awake(s) => &s.header,
            SessionState::Asleep(h) => &h.header,
        }
    }

    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + match self {
                SessionState::Awake(s) => s.memory_bytes(),
                SessionState::Asleep(h) => h.memory_bytes(),
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packed<T: Packed>(py: Python<'_>, value: &T) -> (Vec<u8>, Vec<Py<PyString>>) {
        let mut p = Packer {
            py,
            bytes: Vec::new(),
            strings: Vec::new(),
            words: Vec::new(),
        };
        value.pack(&mut p);
        (p.bytes, p.strings)
    }

    fn unpacked<T: Packed>(py: Python<'_>, bytes: &[u8], strings: &[Py<PyString>]) -> Option<T> {
        let mut u = Unpacker {
            py,
            bytes,
            at: 0,
            strings,
            words: Vec::new(),
        };
        let v = T::unpack(&mut u)?;
        (u.at == bytes.len()).then_some(v)
    }

    #[test]
    fn words_counts_and_reals_come_back_equal_at_their_edges() {
        pyo3::prepare_freethreaded_python();
        Python::with_gil(|py| {
            for w in [0u64, 1, 0xFF, 0x100, u64::MAX >> 1, u64::MAX] {
                let (b, s) = packed(py, &w);
                assert_eq!(b.len(), 1 + (8 - w.leading_zeros() as usize / 8));
                assert_eq!(unpacked::<u64>(py, &b, &s), Some(w));
            }
            for c in [0i64, 1, -1, 63, -64, 64, i64::MAX, i64::MIN] {
                let (b, s) = packed(py, &c);
                assert_eq!(unpacked::<i64>(py, &b, &s), Some(c));
            }
            assert_eq!(packed(py, &5i64).0.len(), 1);
            for x in [0.0f64, -2.5, f64::MAX] {
                let (b, s) = packed(py, &Num::Float(x));
                assert!(matches!(unpacked::<Num>(py, &b, &s), Some(Num::Float(y)) if y == x));
            }
        });
    }

    #[test]
    fn a_long_word_written_again_is_one_back_reference_byte() {
        pyo3::prepare_freethreaded_python();
        Python::with_gil(|py| {
            let hash = 0x1234_5678_9ABC_DEF0u64;
            let short = 0xFFFu64; // two bytes: not worth remembering
            let value = vec![hash, short, hash, short, hash];
            let (bytes, strings) = packed(py, &value);
            // length, then 1 + 8, 1 + 2, one reference byte, 1 + 2, one reference byte
            assert_eq!(bytes.len(), 1 + 9 + 3 + 1 + 3 + 1);
            assert_eq!(bytes[1 + 9 + 3], WORD_REF as u8);
            assert_eq!(unpacked::<Vec<u64>>(py, &bytes, &strings), Some(value));
            // a reference to a word not yet read is corrupt
            assert!(unpacked::<u64>(py, &[WORD_REF as u8], &[]).is_none());
            // past the references' room, words are written out in full and still read back
            let many: Vec<u64> = (0..MAX_REMEMBERED as u64 + 20)
                .map(|i| u64::MAX - i)
                .chain([u64::MAX, u64::MAX - MAX_REMEMBERED as u64 - 5])
                .collect();
            let (bytes, strings) = packed(py, &many);
            assert_eq!(unpacked::<Vec<u64>>(py, &bytes, &strings), Some(many));
        });
    }

    #[test]
    fn a_string_used_twice_is_stored_once() {
        pyo3::prepare_freethreaded_python();
        Python::with_gil(|py| {
            let a = PyString::new(py, "bash").unbind();
            let b = PyString::new(py, "grep").unbind();
            let v = vec![a.clone_ref(py), b.clone_ref(py), a.clone_ref(py)];
            let (bytes, strings) = packed(py, &v);
            assert_eq!(strings.len(), 2);
            let back: Vec<Py<PyString>> = unpacked(py, &bytes, &strings).unwrap();
            assert!(back[0].is(&a) && back[1].is(&b) && back[2].is(&a));
        });
    }

    #[test]
    fn truncated_or_foreign_bytes_read_as_none() {
        pyo3::prepare_freethreaded_python();
        Python::with_gil(|py| {
            let value: Vec<(u64, i64)> = vec![(u64::MAX, -3), (7, 1 << 40)];
            let (bytes, strings) = packed(py, &value);
            for cut in 0..bytes.len() {
                assert!(unpacked::<Vec<(u64, i64)>>(py, &bytes[..cut], &strings).is_none());
            }
            assert!(unpacked::<u64>(py, &[9, 0, 0, 0, 0, 0, 0, 0, 0, 0], &[]).is_none());
            assert!(unpacked::<Option<u64>>(py, &[2, 0], &[]).is_none());
            assert!(unpacked::<Py<PyString>>(py, &[0], &[]).is_none()); // no such string
            assert!(unpacked::<Vec<u64>>(py, &[0xFF, 0xFF, 0x03], &[]).is_none()); // too long
            let overlong = [0x80u8; 11];
            assert!(unpacked::<i64>(py, &overlong, &[]).is_none());
        });
    }
}
