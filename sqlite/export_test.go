package sqlite

// SetAfterSchema sets the hook that runs once a new store's schema is in
// its temporary file (tests of a creator killed at that moment).
func SetAfterSchema(f func(tmp string)) { afterSchema = f }

// ConnVersion is the dialect's ConnVersion.
var ConnVersion = connVersion
