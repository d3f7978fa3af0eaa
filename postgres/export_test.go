package postgres

// Batches is how many batches the package's stores have sent.
func Batches() int64 { return batches.Load() }
