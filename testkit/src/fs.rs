//! Walking a directory a test wrote or reads.

use std::path::{Path, PathBuf};

/// Every file below `dir` whose name ends in `ext` (every file for `""`), sorted.
pub fn files_below(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else if p.to_str().unwrap().ends_with(ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
