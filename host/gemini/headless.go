package gemini

// Headless is the command line that runs one prompt in Gemini CLI with
// nobody at the terminal (gemini -p), for a follow-up session warden starts
// (package spawn). Without --yolo Gemini CLI offers no shell or write tool
// in this mode; warden does not add it. The prompt is one argument, never
// a flag: the caller refuses a prompt that starts with '-'.
func (Adapter) Headless(prompt string) []string { return []string{"gemini", "-p", prompt} }
