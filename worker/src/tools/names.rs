//! The names of the tools the model sees (part of the contract): a leaf, so the local provider,
//! which plans calls to them, and the tools themselves share one spelling.

pub const SEARCH_ITEMS: &str = "search_items";
pub const CREATE_ITEM: &str = "create_item";
pub const UPDATE_ITEM: &str = "update_item";
pub const DELETE_ITEM: &str = "delete_item";
pub const COMPLETE_TODO: &str = "complete_todo";
pub const RESOLVE_TIME: &str = "resolve_time";
/// The terminal tool, whose successful call ends the run with its verdict.
pub const FINISH: &str = quickact_shared::store::steps::FINISH_TOOL;
