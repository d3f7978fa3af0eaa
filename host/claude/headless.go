package claude

// Headless is the command line that runs one prompt in Claude Code with
// nobody at the terminal (print mode), for a follow-up session warden
// starts (package spawn). The prompt is one argument, never a flag: the
// caller refuses a prompt that starts with '-'.
func (Adapter) Headless(prompt string) []string { return []string{"claude", "-p", prompt} }
