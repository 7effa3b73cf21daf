//! `sqlx::migrate!` embeds `migrations/` when this crate compiles; without this line cargo would not
//! notice a newly added migration and would keep the old set in the binaries.
fn main() {
    println!("cargo:rerun-if-changed=../migrations");
}
