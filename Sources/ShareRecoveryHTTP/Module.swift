// Filled in by the HTTP sources work.
