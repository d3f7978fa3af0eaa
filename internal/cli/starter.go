package cli

import "github.com/warden-run/warden/policy"

// detectLanguages names the languages of a project (policy.StarterLanguages).
func detectLanguages(root string) []string { return policy.StarterLanguages(root) }

// StarterPolicy is the policy `warden init` writes into a project without
// one (policy.Starter).
func StarterPolicy(langs []string) string { return policy.Starter(langs) }
