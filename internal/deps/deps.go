//go:build tools

// Package deps pins the module's dependencies until every one is imported by
// real code. Delete an import here once a package uses it.
package deps

import (
	_ "github.com/jackc/pgx/v5"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "go.yaml.in/yaml/v3"
	_ "modernc.org/sqlite"
	_ "mvdan.cc/sh/v3/syntax"
)
