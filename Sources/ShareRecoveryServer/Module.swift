// Filled in by the reference server work.
