package scripted

import (
	"fmt"
	"net/http"
	"time"
)

func usageTokens(t Turn) int {
	n := 1 + len(t.Text)/4
	for _, c := range t.ToolCalls {
		n += 1 + len(argsJSON(c))/4
	}
	return n
}

// writeAnthropic answers in the Anthropic Messages shape.
func writeAnthropic(w http.ResponseWriter, stream bool, t Turn, model string, id int) {
	msgID := fmt.Sprintf("msg_scripted_%d", id)
	stop := "end_turn"
	if len(t.ToolCalls) > 0 {
		stop = "tool_use"
	}
	if model == "" {
		model = "claude-scripted"
	}
	if !stream {
		var content []any
		if t.Text != "" {
			content = append(content, map[string]any{"type": "text", "text": t.Text})
		}
		for _, c := range t.ToolCalls {
			content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": c.Args})
		}
		if content == nil {
			content = []any{}
		}
		writeJSON(w, map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 10, "output_tokens": usageTokens(t)},
		})
		return
	}
	s := newSSE(w)
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
	}})
	idx := 0
	if t.Text != "" {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": idx,
			"content_block": map[string]any{"type": "text", "text": ""}})
		for _, p := range chunks(t.Text) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
				"delta": map[string]any{"type": "text_delta", "text": p}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	for _, c := range t.ToolCalls {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": idx,
			"content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		for _, p := range chunks(argsJSON(c)) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": usageTokens(t)}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

// writeOpenAIChat answers in the OpenAI chat completions shape.
func writeOpenAIChat(w http.ResponseWriter, stream bool, t Turn, model string, id int, promptTokens int) {
	cid := fmt.Sprintf("chatcmpl-scripted-%d", id)
	created := time.Now().Unix()
	finish := "stop"
	if len(t.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	if model == "" {
		model = "gpt-scripted"
	}
	usage := map[string]any{"prompt_tokens": promptTokens, "completion_tokens": usageTokens(t), "total_tokens": promptTokens + usageTokens(t)}
	if !stream {
		msg := map[string]any{"role": "assistant", "content": t.Text}
		if len(t.ToolCalls) > 0 {
			var calls []any
			for _, c := range t.ToolCalls {
				calls = append(calls, map[string]any{"id": c.ID, "type": "function",
					"function": map[string]any{"name": c.Name, "arguments": argsJSON(c)}})
			}
			msg["tool_calls"] = calls
		}
		writeJSON(w, map[string]any{"id": cid, "object": "chat.completion", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	s := newSSE(w)
	chunk := func(delta map[string]any, fin any) map[string]any {
		return map[string]any{"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": fin}}}
	}
	s.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if t.Text != "" {
		for _, p := range chunks(t.Text) {
			s.event("", chunk(map[string]any{"content": p}, nil))
		}
	}
	for i, c := range t.ToolCalls {
		s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil))
		for _, p := range chunks(argsJSON(c)) {
			s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i,
				"function": map[string]any{"arguments": p}}}}, nil))
		}
	}
	last := chunk(map[string]any{}, finish)
	last["usage"] = usage
	s.event("", last)
	s.event("", "[DONE]")
}

// writeResponses answers in the OpenAI Responses shape.
func writeResponses(w http.ResponseWriter, stream bool, t Turn, model string, id int) {
	rid := fmt.Sprintf("resp_scripted_%d", id)
	if model == "" {
		model = "gpt-scripted"
	}
	var items []map[string]any
	if t.Text != "" {
		items = append(items, map[string]any{"type": "message", "id": fmt.Sprintf("msg_scripted_%d", id),
			"role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": t.Text, "annotations": []any{}}}})
	}
	for i, c := range t.ToolCalls {
		items = append(items, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_scripted_%d_%d", id, i),
			"call_id": c.ID, "name": c.Name, "arguments": argsJSON(c), "status": "completed"})
	}
	out := make([]any, len(items))
	for i, it := range items {
		out[i] = it
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": usageTokens(t), "total_tokens": 10 + usageTokens(t),
		"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}
	resp := func(status string, output []any) map[string]any {
		r := map[string]any{"id": rid, "object": "response", "created_at": time.Now().Unix(), "status": status,
			"model": model, "output": output}
		if status == "completed" {
			r["usage"] = usage
		}
		return r
	}
	if !stream {
		writeJSON(w, resp("completed", out))
		return
	}
	s := newSSE(w)
	seq := 0
	ev := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		s.event(typ, fields)
	}
	ev("response.created", map[string]any{"response": resp("in_progress", []any{})})
	ev("response.in_progress", map[string]any{"response": resp("in_progress", []any{})})
	for i, it := range items {
		switch it["type"] {
		case "message":
			ev("response.output_item.added", map[string]any{"output_index": i, "item": map[string]any{
				"type": "message", "id": it["id"], "role": "assistant", "status": "in_progress", "content": []any{}}})
			ev("response.content_part.added", map[string]any{"output_index": i, "item_id": it["id"], "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
			for _, p := range chunks(t.Text) {
				ev("response.output_text.delta", map[string]any{"output_index": i, "item_id": it["id"],
					"content_index": 0, "delta": p})
			}
			ev("response.output_text.done", map[string]any{"output_index": i, "item_id": it["id"],
				"content_index": 0, "text": t.Text})
			ev("response.content_part.done", map[string]any{"output_index": i, "item_id": it["id"], "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": t.Text, "annotations": []any{}}})
		case "function_call":
			added := map[string]any{}
			for k, v := range it {
				added[k] = v
			}
			added["arguments"] = ""
			added["status"] = "in_progress"
			ev("response.output_item.added", map[string]any{"output_index": i, "item": added})
			ev("response.function_call_arguments.delta", map[string]any{"output_index": i, "item_id": it["id"],
				"delta": it["arguments"]})
			ev("response.function_call_arguments.done", map[string]any{"output_index": i, "item_id": it["id"],
				"arguments": it["arguments"]})
		}
		ev("response.output_item.done", map[string]any{"output_index": i, "item": it})
	}
	ev("response.completed", map[string]any{"response": resp("completed", out)})
}

// writeGemini answers in the Gemini generateContent shape.
func writeGemini(w http.ResponseWriter, stream bool, t Turn, model string) {
	var parts []any
	if t.Text != "" {
		parts = append(parts, map[string]any{"text": t.Text})
	}
	for _, c := range t.ToolCalls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": c.Args, "id": c.ID}})
	}
	usage := map[string]any{"promptTokenCount": 10, "candidatesTokenCount": usageTokens(t), "totalTokenCount": 10 + usageTokens(t)}
	resp := func(parts []any, finish string) map[string]any {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		if finish != "" {
			cand["finishReason"] = finish
		}
		r := map[string]any{"candidates": []any{cand}, "modelVersion": model}
		if finish != "" {
			r["usageMetadata"] = usage
		}
		return r
	}
	if parts == nil {
		parts = []any{map[string]any{"text": ""}}
	}
	if !stream {
		writeJSON(w, resp(parts, "STOP"))
		return
	}
	s := newSSE(w)
	// Stream the text in pieces, then the function calls with the finish reason.
	if t.Text != "" && len(t.ToolCalls) == 0 {
		pieces := chunks(t.Text)
		for i, p := range pieces {
			fin := ""
			if i == len(pieces)-1 {
				fin = "STOP"
			}
			s.event("", resp([]any{map[string]any{"text": p}}, fin))
		}
		return
	}
	if t.Text != "" {
		s.event("", resp([]any{map[string]any{"text": t.Text}}, ""))
		parts = parts[1:]
	}
	s.event("", resp(parts, "STOP"))
}
