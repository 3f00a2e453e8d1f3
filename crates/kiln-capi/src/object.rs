//! What every C object is underneath: a header with a type tag and a live/destroyed state, so that
//! each entry point can refuse a wrong kind, a destroyed object or zeroed memory with
//! `KILN_STATUS_BAD_PARAM` before it touches the contents.
//!
//! Every `kiln_handle_t*`, `kiln_graph_t*` and `kiln_plan_t*` points to one [`Object`]. Destroying
//! an object drops its contents and keeps the header for the rest of the process (a tombstone):
//! a later call with the stale pointer reads a header that is still allocated and says the object
//! was destroyed, and the address is never handed out again, so a stale pointer can never name a
//! newer object. The cost is `size_of::<Object>()` bytes (32 on 64-bit targets, pinned by a test
//! below) per object ever destroyed, documented in docs/c-api.md.
//!
//! The contents sit behind an `Arc`: a call takes its own reference under the header's lock and
//! works on that, so a destroy racing with a call on another thread releases the contents when
//! the last call using them returns, instead of freeing them under it.

use crate::graph::GraphData;
use kiln_backend::{ExecutionPlan, Handle};
use kiln_core::{Error, Result};
use std::ffi::c_void;
use std::sync::{Arc, Mutex, PoisonError};

/// The kinds of C object, each with its own tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Handle,
    Graph,
    Plan,
}

impl Kind {
    const ALL: [Kind; 3] = [Kind::Handle, Kind::Graph, Kind::Plan];

    /// The tag stored first in the header: eight ASCII bytes, so that zeroed or foreign memory
    /// is very unlikely to carry one by chance and a memory dump shows what the object is.
    const fn tag(self) -> u64 {
        u64::from_le_bytes(match self {
            Kind::Handle => *b"kiln:HDL",
            Kind::Graph => *b"kiln:GRF",
            Kind::Plan => *b"kiln:PLN",
        })
    }

    /// The C type name, for messages.
    pub(crate) fn type_name(self) -> &'static str {
        match self {
            Kind::Handle => "kiln_handle_t",
            Kind::Graph => "kiln_graph_t",
            Kind::Plan => "kiln_plan_t",
        }
    }
}

/// What a live object holds.
pub(crate) enum Contents {
    Handle(Handle),
    Graph(Arc<GraphData>),
    Plan(Arc<ExecutionPlan>),
}

impl Contents {
    fn kind(&self) -> Kind {
        match self {
            Contents::Handle(_) => Kind::Handle,
            Contents::Graph(_) => Kind::Graph,
            Contents::Plan(_) => Kind::Plan,
        }
    }

    /// A second reference to the same contents (a `Handle` is itself a shared reference).
    fn share(&self) -> Contents {
        match self {
            Contents::Handle(h) => Contents::Handle(h.clone()),
            Contents::Graph(g) => Contents::Graph(g.clone()),
            Contents::Plan(p) => Contents::Plan(p.clone()),
        }
    }
}

/// The header every C object pointer addresses. `repr(C)` keeps `tag` at offset 0, where the
/// check reads it before knowing what the object is.
#[repr(C)]
pub(crate) struct Object {
    /// `Kind::tag` of the kind it was made as; never written after creation.
    tag: u64,
    /// `Some` while live; `None` once destroyed.
    contents: Mutex<Option<Contents>>,
}

/// Makes a new object holding `contents` and returns its address, cast to the C type `T`. The
/// allocation is never freed (see the module comment).
pub(crate) fn make<T>(contents: Contents) -> *mut T {
    let object = Object {
        tag: contents.kind().tag(),
        contents: Mutex::new(Some(contents)),
    };
    Box::into_raw(Box::new(object)).cast::<T>()
}

/// The object header at `ptr` after checking its tag against `expected`, or an error naming
/// `argument`, what was expected and what was found.
///
/// # Safety
/// A non-null, aligned `ptr` must address at least 8 readable bytes (any object this module
/// made qualifies, destroyed or not).
unsafe fn header<'a>(ptr: *const c_void, argument: &str, expected: Kind) -> Result<&'a Object> {
    let wanted = expected.type_name();
    if ptr.is_null() {
        return Err(Error::NullPointer(format!(
            "argument '{argument}' is null (expected a {wanted})"
        )));
    }
    if ptr.align_offset(std::mem::align_of::<Object>()) != 0 {
        return Err(Error::BadParam(format!(
            "argument '{argument}': expected a {wanted}, found the misaligned address {ptr:p}, \
             which is not a kiln object"
        )));
    }
    // SAFETY: non-null and aligned; readable per the caller's contract. The tag is never written
    // after creation, so this read does not race with any kiln write.
    let tag = unsafe { ptr.cast::<u64>().read() };
    let found = Kind::ALL.into_iter().find(|k| k.tag() == tag);
    match found {
        Some(kind) if kind == expected => {
            // SAFETY: the tag says a header made by `make` lives here, and headers are never
            // freed.
            Ok(unsafe { &*ptr.cast::<Object>() })
        }
        Some(kind) => Err(Error::BadParam(format!(
            "argument '{argument}': expected a {wanted}, found a {}",
            kind.type_name()
        ))),
        None if tag == 0 => Err(Error::BadParam(format!(
            "argument '{argument}': expected a {wanted}, found zeroed memory, which is not a \
             kiln object (was it overwritten, or never made by kiln?)"
        ))),
        None => Err(Error::BadParam(format!(
            "argument '{argument}': expected a {wanted}, found memory that is not a kiln object \
             (its first 8 bytes are {tag:#018x})"
        ))),
    }
}

/// A reference to the live contents of the object at `ptr`, checked to be of kind `expected`.
///
/// # Safety
/// As [`header`].
pub(crate) unsafe fn live(ptr: *const c_void, argument: &str, expected: Kind) -> Result<Contents> {
    // SAFETY: forwarded contract.
    let object = unsafe { header(ptr, argument, expected) }?;
    let slot = object
        .contents
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    slot.as_ref().map(Contents::share).ok_or_else(|| {
        Error::BadParam(format!(
            "argument '{argument}': expected a live {0}, found a destroyed {0} (it was passed \
             to {1} before)",
            expected.type_name(),
            destroy_function(expected)
        ))
    })
}

/// The function that destroys objects of `kind`, for messages.
fn destroy_function(kind: Kind) -> &'static str {
    match kind {
        Kind::Handle => "kiln_handle_destroy",
        Kind::Graph => "kiln_graph_destroy",
        Kind::Plan => "kiln_plan_destroy",
    }
}

/// Destroys the object at `ptr`: null does nothing; a live object of kind `expected` drops its
/// contents (released when the last call still using them returns) and becomes a tombstone; a
/// wrong kind, a destroyed object (a double destroy) or memory that is not a kiln object is
/// refused.
///
/// # Safety
/// As [`header`].
pub(crate) unsafe fn destroy(ptr: *const c_void, argument: &str, expected: Kind) -> Result<()> {
    if ptr.is_null() {
        return Ok(());
    }
    // SAFETY: forwarded contract.
    let object = unsafe { header(ptr, argument, expected) }?;
    let taken = object
        .contents
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    match taken {
        // Dropped here, after the lock is released: a plan's engine context may take time to
        // tear down.
        Some(contents) => {
            drop(contents);
            Ok(())
        }
        None => Err(Error::BadParam(format!(
            "argument '{argument}': this {} was destroyed before (a double destroy)",
            expected.type_name()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/c-api.md states this size as what every destroyed object keeps.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_tombstone_is_32_bytes() {
        assert_eq!(std::mem::size_of::<Object>(), 32);
    }

    #[test]
    fn the_tags_are_distinct_and_not_zero() {
        for a in Kind::ALL {
            assert_ne!(a.tag(), 0);
            for b in Kind::ALL {
                assert_eq!(a == b, a.tag() == b.tag(), "{a:?} {b:?}");
            }
        }
    }
}
