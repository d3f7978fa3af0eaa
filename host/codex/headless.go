package codex

// Headless is the command line that runs one prompt in Codex with nobody
// at the terminal (codex exec), for a follow-up session warden starts
// (package spawn). --skip-git-repo-check lets it run in a project that is
// not a Git repository; its stdin is /dev/null. The prompt is one argument,
// never a flag: the caller refuses a prompt that starts with '-'.
func (Adapter) Headless(prompt string) []string {
	return []string{"codex", "exec", "--skip-git-repo-check", prompt}
}
