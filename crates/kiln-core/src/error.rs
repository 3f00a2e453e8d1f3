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
/// byte offset, field).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("bad parameter: {0}")]
    BadParam(String),
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

impl Error {
    /// The stable status code of this error.
    pub fn status(&self) -> Status {
        match self {
            Error::BadParam(_) => Status::BadParam,
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

    /// The message without the status prefix.
    pub fn message(&self) -> &str {
        match self {
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
