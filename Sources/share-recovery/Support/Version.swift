/// The package version `share-recovery --version` prints: format version 1 engine, before its first
/// tagged release. Raise it with every release tag; the help-tree test reads it from this file.
let packageVersion = "0.5.0"
