// Package report enforces an agent's output contract: a final report plus one
// metadata block for each configured plugin (docs/reports.md).
//
// A model ends its work with blocks marked by tags that carry a per-session
// random nonce, so that ordinary text never looks like a tag:
//
//	<warden-1f2e3d4c-FINAL>
//	the final report, streamed to the people watching
//	</warden-1f2e3d4c-FINAL>
//	<warden-1f2e3d4c-META plugin="support">
//	{"language": "en"}
//	</warden-1f2e3d4c-META>
//
// Parsing has two phases. While the response streams, a [Filter] passes the
// FINAL content on as it arrives and strips every META block and every tag,
// whatever the chunking, with a look-ahead bounded by the longest tag. When
// the response is complete, [Extract] finds the FINAL block and every META
// block anywhere in it: before, after, inside or around FINAL.
//
// A [Session] holds what a runtime needs across the turns of one agent
// session: the nonce, a fresh instance of each plugin, the locked final report
// and the metadata already accepted. [Session.Turn] validates each META block
// against its plugin's JSON Schema and returns the gate's verdict and the
// plain-text feedback for a retry; a retry asks only for what is missing and
// never makes the final report stream again.
//
// When the session is final, [Session.Complete] hands each plugin a
// [Completion]: the final report, the plugin's metadata, whether the session
// was served from a cache, and the session's [Origin] as the runtime gave it
// (the user's request, the conversation's last messages, the agent, the
// transcript's path).
//
// Plugins are Go values made by a [Factory] (one instance per session) or
// declarative files loaded by [LoadPlugins] (YAML or JSON, relative to the
// agent file, with an optional on-complete command).
//
// # Tag grammar
//
// With prefix P and nonce N, the tags are <P-N-FINAL>, </P-N-FINAL>,
// <P-N-META plugin="name"> and </P-N-META>. Tag names are case-sensitive. An
// opening or closing tag may carry attributes after whitespace (quoted with
// " or ', or bare); only the plugin attribute of a META tag means anything.
// A tag is at most 256 bytes long and contains no '<'; anything else is text.
//
// Blocks nest one level: a META block inside FINAL (or a FINAL block inside
// META) is cut out of the outer block's content. A META tag inside a META
// block ends the first block, which counts as truncated; a FINAL tag inside a
// FINAL block is dropped. A closing tag closes the innermost open block of its
// kind (blocks opened inside it and still open count as truncated); a closing
// tag with no open block of its kind is dropped. A block still open at the
// end of the response is truncated. Only the first FINAL block of a response
// is that response's final report; later ones are stripped and ignored.
package report
