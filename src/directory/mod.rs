//! A directory as one model (directory contract, docs/SPEC.md Part IV):
//! every file enters, weights through their canonical labels, every other
//! file by its bytes. `group` decides, by names alone, which files form
//! which component.

pub mod group;
pub mod members;
pub mod skeleton;
