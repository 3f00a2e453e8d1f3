//! The one error type of kiln and its stable status codes.

/// Stable status codes, shared by the Rust API, the C API and the CLI's exit codes.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    Success = 0,
    BadParam = 1,
    BadParamNullPointer = 2,
    BadParamSizeInsufficient = 3,
    NotSupported = 4,
    NotInitialized = 5,
    AllocFailed = 6,
    PluginError = 7,
    ExecutionFailed = 8,
    InternalError = 9,
}

impl Status {
    /// The status with integer code `code`, or `None` for an unknown code.
    pub fn from_code(code: i32) -> Option<Status> {
        Some(match code {
            0 => Status::Success,
            1 => Status::BadParam,
            2 => Status::BadParamNullPointer,
            3 => Status::BadParamSizeInsufficient,
            4 => Status::NotSupported,
            5 => Status::NotInitialized,
            6 => Status::AllocFailed,
            7 => Status::PluginError,
            8 => Status::ExecutionFailed,
            9 => Status::InternalError,
            _ => return None,
        })
    }

    /// The C-style name, e.g. `KILN_STATUS_BAD_PARAM`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Success => "KILN_STATUS_SUCCESS",
            Status::BadParam => "KILN_STATUS_BAD_PARAM",
            Status::BadParamNullPointer => "KILN_STATUS_BAD_PARAM_NULL_POINTER",
            Status::BadParamSizeInsufficient => "KILN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT",
            Status::NotSupported => "KILN_STATUS_NOT_SUPPORTED",
            Status::NotInitialized => "KILN_STATUS_NOT_INITIALIZED",
            Status::AllocFailed => "KILN_STATUS_ALLOC_FAILED",
            Status::PluginError => "KILN_STATUS_PLUGIN_ERROR",
            Status::ExecutionFailed => "KILN_STATUS_EXECUTION_FAILED",
            Status::InternalError => "KILN_STATUS_INTERNAL_ERROR",
        }
    }
}

/// Every failure in kiln. The message names what was wrong and where (tensor UID, node name,
/// byte offset, field). Bad parameters about one tensor, one node or one byte offset carry it as
/// fields (`Tensor`, `Node`, `Bytes`), so that callers and tests match on data, not on text; their
/// status is `BadParam` and their text reads as the plain `BadParam` text did.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("bad parameter: {0}")]
    BadParam(String),
    /// A bad parameter about one tensor: its UID, its name ("" when it has none).
    #[error("bad parameter: {}: {message}", tensor_label(*uid, name))]
    Tensor {
        uid: i64,
        name: String,
        message: String,
    },
    /// A bad parameter about one node of a graph.
    #[error("bad parameter: node '{node}': {message}")]
    Node { node: String, message: String },
    /// Bad bytes: what was being read and the byte offset in it.
    #[error("bad parameter: {what}: at byte {offset}: {message}")]
    Bytes {
        what: String,
        offset: u64,
        message: String,
    },
    #[error("null pointer: {0}")]
    NullPointer(String),
    #[error("buffer too small: {0}")]
    SizeInsufficient(String),
    #[error("not supported: {0}")]
    NotSupported(String),
    #[error("not initialized: {0}")]
    NotInitialized(String),
    #[error("allocation failed: {0}")]
    AllocFailed(String),
    #[error("plugin error: {0}")]
    Plugin(String),
    #[error("execution failed: {0}")]
    ExecutionFailed(String),
    #[error("internal error: {0}")]
    Internal(String),
}

/// `tensor 'name' (uid 3)`, or `tensor uid 3` for a tensor without a name.
pub(crate) fn tensor_label(uid: i64, name: &str) -> String {
    if name.is_empty() {
        format!("tensor uid {uid}")
    } else {
        format!("tensor '{name}' (uid {uid})")
    }
}

impl Error {
    /// A bad parameter about tensor `uid` (named `name`, or "").
    pub fn tensor(uid: i64, name: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Tensor {
            uid,
            name: name.into(),
            message: message.into(),
        }
    }

    /// A bad parameter about the node named `node`.
    pub fn node(node: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Node {
            node: node.into(),
            message: message.into(),
        }
    }

    /// Bad bytes at `offset` of `what`.
    pub fn bytes(what: impl Into<String>, offset: u64, message: impl Into<String>) -> Error {
        Error::Bytes {
            what: what.into(),
            offset,
            message: message.into(),
        }
    }

    /// The UID of the tensor the error is about, if it is about one.
    pub fn tensor_uid(&self) -> Option<i64> {
        match self {
            Error::Tensor { uid, .. } => Some(*uid),
            _ => None,
        }
    }

    /// The name of the node the error is about, if it is about one.
    pub fn node_name(&self) -> Option<&str> {
        match self {
            Error::Node { node, .. } => Some(node),
            _ => None,
        }
    }

    /// The byte offset the error is about, if it is about bytes.
    pub fn byte_offset(&self) -> Option<u64> {
        match self {
            Error::Bytes { offset, .. } => Some(*offset),
            _ => None,
        }
    }

    /// The stable status code of this error.
    pub fn status(&self) -> Status {
        match self {
            Error::BadParam(_)
            | Error::Tensor { .. }
            | Error::Node { .. }
            | Error::Bytes { .. } => Status::BadParam,
            Error::NullPointer(_) => Status::BadParamNullPointer,
            Error::SizeInsufficient(_) => Status::BadParamSizeInsufficient,
            Error::NotSupported(_) => Status::NotSupported,
            Error::NotInitialized(_) => Status::NotInitialized,
            Error::AllocFailed(_) => Status::AllocFailed,
            Error::Plugin(_) => Status::PluginError,
            Error::ExecutionFailed(_) => Status::ExecutionFailed,
            Error::Internal(_) => Status::InternalError,
        }
    }

    /// The message without the status prefix (for errors about a tensor, a node or bytes: what
    /// is said of it, without the tensor, node or offset).
    pub fn message(&self) -> &str {
        match self {
            Error::Tensor { message, .. }
            | Error::Node { message, .. }
            | Error::Bytes { message, .. } => message,
            Error::BadParam(m)
            | Error::NullPointer(m)
            | Error::SizeInsufficient(m)
            | Error::NotSupported(m)
            | Error::NotInitialized(m)
            | Error::AllocFailed(m)
            | Error::Plugin(m)
            | Error::ExecutionFailed(m)
            | Error::Internal(m) => m,
        }
    }

    /// Builds the error of status `status` with `message`; `Success` maps to `Internal`.
    pub fn from_status(status: Status, message: impl Into<String>) -> Error {
        let m = message.into();
        match status {
            Status::BadParam => Error::BadParam(m),
            Status::BadParamNullPointer => Error::NullPointer(m),
            Status::BadParamSizeInsufficient => Error::SizeInsufficient(m),
            Status::NotSupported => Error::NotSupported(m),
            Status::NotInitialized => Error::NotInitialized(m),
            Status::AllocFailed => Error::AllocFailed(m),
            Status::PluginError => Error::Plugin(m),
            Status::ExecutionFailed => Error::ExecutionFailed(m),
            Status::InternalError | Status::Success => Error::Internal(m),
        }
    }
}

/// kiln's result type.
pub type Result<T> = std::result::Result<T, Error>;

/// Shorthand for an `Err(Error::BadParam(..))` built with `format!`.
#[macro_export]
macro_rules! bad_param {
    ($($arg:tt)*) => { Err($crate::Error::BadParam(format!($($arg)*))) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_about_a_tensor_node_or_bytes_carry_it_as_data_and_read_as_before() {
        let t = Error::tensor(3, "x", "rank 9 is outside 1..=8");
        assert_eq!(t.status(), Status::BadParam);
        assert_eq!(t.tensor_uid(), Some(3));
        assert_eq!(
            t.to_string(),
            "bad parameter: tensor 'x' (uid 3): rank 9 is outside 1..=8"
        );
        assert_eq!(
            Error::tensor(4, "", "m").to_string(),
            "bad parameter: tensor uid 4: m"
        );
        let n = Error::node("relu", "reads itself");
        assert_eq!(n.node_name(), Some("relu"));
        assert_eq!(n.to_string(), "bad parameter: node 'relu': reads itself");
        let b = Error::bytes("plan blob", 40, "bad length");
        assert_eq!(b.byte_offset(), Some(40));
        assert_eq!(b.message(), "bad length");
        assert_eq!(b.tensor_uid(), None);
    }
}
