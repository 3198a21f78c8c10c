//! Renderers: each writes an already computed value to an `io::Write`. No computation,
//! filtering or sorting beyond layout, and never `println!`.

pub mod inventory;
pub mod style;
pub mod text;
pub mod timeline;
