//! The error of parsing the text name of one of our enums (statuses, verdicts, item kinds). A leaf
//! module, so that the planner's items and the tasks can both use it without importing each other.

/// A name that is not one of the enum's.
#[derive(Debug, thiserror::Error)]
#[error("unknown value {0:?}")]
pub struct UnknownName(pub String);
