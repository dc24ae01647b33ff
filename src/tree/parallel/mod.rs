//! The parallel step's machinery: the pair search as tasks ([`pairs`]), the trait that
//! runs a stage's tasks ([`runner`]) and the tree's own worker threads ([`workers`]).

pub(crate) mod pairs;
pub(crate) mod runner;
pub(crate) mod workers;
