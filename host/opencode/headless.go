package opencode

// Headless is the command line that runs one prompt in OpenCode with
// nobody at the terminal (opencode run), for a follow-up session warden
// starts (package spawn). The prompt is one argument, never a flag: the
// caller refuses a prompt that starts with '-'.
func (Adapter) Headless(prompt string) []string { return []string{"opencode", "run", prompt} }
