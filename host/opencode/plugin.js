// warden governance plugin for OpenCode, written by `warden init opencode`.
// Every tool call is decided by `warden-hook opencode` (or `warden hook
// opencode`) against the project's
// warden.yaml. A call warden does not allow is blocked by throwing, and the
// reason reaches the model. If warden cannot be run or does not answer,
// the call is blocked too: warden never fails open.
// Set WARDEN_BIN to use another warden binary.
import { spawn } from "node:child_process";
import { basename } from "node:path";

const WARDEN = process.env.WARDEN_BIN || __WARDEN_BIN__;
// warden-hook takes the host directly; warden takes `hook` first.
const ARGS = (basename(WARDEN).startsWith("warden-hook") ? [] : ["hook"]).concat(__WARDEN_ARGS__);
const TIMEOUT_MS = __TIMEOUT_MS__;

function callWarden(directory, input) {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    let child;
    try {
      child = spawn(WARDEN, ARGS, { cwd: directory, stdio: ["pipe", "pipe", "pipe"] });
    } catch (e) {
      reject(e);
      return;
    }
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no answer within ${TIMEOUT_MS / 1000}s`));
    }, TIMEOUT_MS);
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(out));
      } catch (e) {
        reject(new Error(`answered no JSON (exit ${code}): ${(err || out).trim().slice(0, 500)}`));
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(input));
  });
}

function textOf(parts) {
  return (parts || [])
    .filter((p) => p && p.type === "text" && typeof p.text === "string" && !p.synthetic)
    .map((p) => p.text)
    .join("\n");
}

// lastAssistant returns the id and text of a session's last assistant
// message ({} when it cannot be read).
async function lastAssistant(ctx, sid) {
  try {
    const res = await ctx.client.session.messages({ path: { id: sid } });
    const msgs = (res && res.data) || [];
    for (let i = msgs.length - 1; i >= 0; i--) {
      const m = msgs[i];
      if (m && m.info && m.info.role === "assistant") {
        return { id: m.info.id, text: textOf(m.parts) };
      }
    }
  } catch (e) {}
  return {};
}

// turnText returns the text of assistant message mid of session sid as
// it stands when its text part pid completes with text: the other text
// parts as stored, this one (not stored yet) as given. tool reports that
// the message calls a tool (then the turn goes on after the tool, and its
// text is not the turn's final text), or is a compaction's summary.
async function turnText(ctx, sid, mid, pid, text) {
  const res = await ctx.client.session.message({ path: { id: sid, messageID: mid } });
  const info = (res && res.data && res.data.info) || {};
  const parts = (res && res.data && res.data.parts) || [];
  const texts = [];
  // A compaction's summary is no answer of a turn.
  let tool = info.summary === true || info.agent === "compaction" || info.mode === "compaction";
  let seen = false;
  for (const p of parts) {
    if (!p) continue;
    if (p.type === "tool") tool = true;
    if (p.id === pid) {
      seen = true;
      texts.push(text);
    } else if (p.type === "text" && typeof p.text === "string" && !p.synthetic) {
      texts.push(p.text);
    }
  }
  if (!seen) texts.push(text);
  return { tool, text: texts.join("\n") };
}

// lastUser returns the agent and model of a session's last user message:
// a message warden adds to the session goes to the same agent and model.
async function lastUser(ctx, sid) {
  const res = await ctx.client.session.messages({ path: { id: sid } });
  const msgs = (res && res.data) || [];
  for (let i = msgs.length - 1; i >= 0; i--) {
    const info = msgs[i] && msgs[i].info;
    if (info && info.role === "user") {
      const out = {};
      if (info.agent) out.agent = info.agent;
      if (info.model && info.model.providerID && info.model.modelID) {
        out.model = { providerID: info.model.providerID, modelID: info.model.modelID };
      }
      return out;
    }
  }
  return {};
}

export const WardenPlugin = async (ctx) => {
  const directory = ctx.directory || process.cwd();
  const send = (input) => callWarden(directory, { directory, ...input });
  // quiet: events that only inform warden must never break OpenCode.
  const quiet = async (input) => {
    try {
      return await send(input);
    } catch (e) {
      return {};
    }
  };
  // OpenCode does not wait for its event bus: a subagent's first message
  // and tool call can reach warden before its session.created event, and
  // warden would take the subagent for a session of its own, without its
  // parent and depth. So a session's start is reported once, before
  // anything else of it: by the event, or else by asking OpenCode for the
  // session's parent first.
  const started = new Map();
  const start = (sid, parentID) => {
    if (!sid) return Promise.resolve();
    if (!started.has(sid)) {
      started.set(sid, (async () => {
        let parent = parentID;
        if (parent === undefined) {
          parent = "";
          try {
            const res = await ctx.client.session.get({ path: { id: sid } });
            parent = (res && res.data && res.data.parentID) || "";
          } catch (e) {}
        }
        await quiet({ event: "session.created", session_id: sid, parent_id: parent });
      })());
    }
    return started.get(sid);
  };
  // checked holds the assistant messages whose text warden's report gate
  // stored (at text.complete, or at turn.end for a held turn): their
  // session.idle does not check them again.
  const checked = new Set();
  // held: per session, the retry message warden added at text.complete
  // ({mid: the answer, uid: the user message, text: the answer's text})
  // until the next model request tells whether the answer ended the turn;
  // voided: the retry messages of answers that went on with a tool.
  const held = new Map();
  const voided = new Set();
  return {
    "tool.execute.before": async (input, output) => {
      await start(input.sessionID);
      let answer;
      try {
        answer = await send({
          event: "tool.execute.before",
          session_id: input.sessionID,
          tool: input.tool,
          call_id: input.callID,
          args: output.args || {},
          rewrite: true,
        });
      } catch (e) {
        throw new Error(`warden BLOCKED: POLICY_ERROR\n\nReason: warden could not decide this call: ${e.message}\nSuggestion: Check that warden is installed and warden.yaml is valid (run \`warden lint\`), then retry.`);
      }
      if (!answer || typeof answer !== "object" || answer.decision === "deny" || answer.decision === "ask") {
        throw new Error((answer && answer.message) || "warden BLOCKED: POLICY_ERROR\n\nReason: warden gave no decision.");
      }
      // An allowed shell command runs confined: warden rewrote it to run
      // under warden sandbox, and the tool runs the rewritten arguments.
      if (answer.args && typeof answer.args === "object") {
        if (!output.args || typeof output.args !== "object") {
          throw new Error("warden BLOCKED: POLICY_ERROR\n\nReason: warden must run this call confined, and the tool's arguments cannot be replaced.");
        }
        Object.assign(output.args, answer.args);
      }
    },
    "tool.execute.after": async (input, output) => {
      const answer = await quiet({
        event: "tool.execute.after",
        session_id: input.sessionID,
        tool: input.tool,
        call_id: input.callID,
        args: input.args || {},
        title: output.title || "",
        output: typeof output.output === "string" ? output.output : "",
        exit: output.metadata && typeof output.metadata.exit === "number" ? output.metadata.exit : undefined,
      });
      if (answer.append) {
        output.output = (typeof output.output === "string" ? output.output + "\n\n" : "") + answer.append;
      }
    },
    "chat.message": async (input, output) => {
      await start(input.sessionID);
      await quiet({
        event: "chat.message",
        session_id: input.sessionID,
        agent: input.agent || (output.message && output.message.agent) || "",
        prompt: textOf(output.parts),
      });
    },
    "experimental.chat.system.transform": async (input, output) => {
      const answer = await quiet({ event: "chat.system.transform", session_id: input.sessionID });
      if (answer.system && Array.isArray(output.system)) {
        output.system.push(answer.system);
      }
    },
    // The end of a turn, while OpenCode still holds it. OpenCode waits for
    // experimental.text.complete when an answer's text is complete, and
    // asks the model again while the session's last user message is newer
    // than its last answer. So when warden's report gate would hold the
    // turn (the final report is missing or invalid, retries left), its
    // retry text becomes a user message of the session (added without a
    // reply of its own), and the model gets it before the session goes
    // idle: `opencode run` does not exit in between.
    //
    // An answer may still call a tool after its text is complete (some
    // providers stream the text first), and then the turn goes on. So
    // the held turn is tentative until the next model request
    // (experimental.chat.messages.transform): there, an answer without a
    // tool call has ended the turn and warden stores the held turn
    // (turn.end); the retry message of an answer that went on with a tool
    // is taken out of every later request, and nothing was counted.
    "experimental.text.complete": async (input, output) => {
      const sid = input && input.sessionID;
      const mid = input && input.messageID;
      if (!sid || !mid || !output || typeof output.text !== "string") return;
      let turn;
      try {
        turn = await turnText(ctx, sid, mid, input.partID, output.text);
      } catch (e) {
        return; // session.idle checks it then (without holding the turn)
      }
      if (turn.tool) return;
      await start(sid);
      let answer;
      try {
        answer = await send({ event: "text.complete", session_id: sid, message: turn.text });
      } catch (e) {
        return; // warden failed: session.idle checks it then (the turn ends)
      }
      if (!answer || typeof answer.block !== "string" || answer.block === "") {
        checked.add(mid); // stored already: final, failed, or not required
        return;
      }
      try {
        const res = await ctx.client.session.prompt({
          path: { id: sid },
          body: { noReply: true, ...(await lastUser(ctx, sid)), parts: [{ type: "text", text: answer.block, synthetic: true }] },
        });
        const uid = res && res.data && res.data.info && res.data.info.id;
        if (uid) held.set(sid, { mid, uid, text: turn.text });
      } catch (e) {}
    },
    "experimental.chat.messages.transform": async (input, output) => {
      const msgs = output && Array.isArray(output.messages) ? output.messages : null;
      if (!msgs) return;
      const idOf = (m) => m && m.info && m.info.id;
      for (const [sid, h] of held) {
        if (!msgs.some((m) => idOf(m) === h.uid)) continue; // another session's request
        held.delete(sid);
        const ans = msgs.find((m) => idOf(m) === h.mid);
        if (ans && (ans.parts || []).some((p) => p && p.type === "tool")) {
          voided.add(h.uid); // the answer went on with a tool: no end of turn
          continue;
        }
        checked.add(h.mid);
        try {
          const answer = await send({ event: "turn.end", session_id: sid, message: h.text });
          // Not held after all (the report changed meanwhile): no retry.
          if (!answer || typeof answer.block !== "string" || answer.block === "") voided.add(h.uid);
        } catch (e) {} // warden failed: the model still gets the retry text it was to get
      }
      for (let i = msgs.length - 1; i >= 0; i--) {
        if (voided.has(idOf(msgs[i]))) msgs.splice(i, 1);
      }
    },
    // OpenCode waits for this hook before it asks the model for a
    // compaction's summary. The session.compacted event (below) comes
    // through OpenCode's event bus, which it does not wait for: the next
    // request's chat.system.transform could reach warden first and get the
    // session-start text instead of the post-compaction reminder.
    "experimental.session.compacting": async (input) => {
      await quiet({ event: "session.compacted", session_id: input && input.sessionID });
    },
    event: async ({ event }) => {
      const p = (event && event.properties) || {};
      switch (event && event.type) {
        case "session.created":
          await start((p.info && p.info.id) || p.sessionID, (p.info && p.info.parentID) || "");
          break;
        case "session.idle": {
          // warden's report gate checks the last assistant message.
          const sid = p.sessionID || (p.info && p.info.id);
          const last = await lastAssistant(ctx, sid);
          if (last.id && checked.has(last.id)) {
            await quiet({ event: "session.idle", session_id: sid, checked: true });
          } else {
            await quiet({ event: "session.idle", session_id: sid, message: last.text });
          }
          break;
        }
        case "session.compacted":
        case "session.deleted":
          await quiet({ event: event.type, session_id: p.sessionID || (p.info && p.info.id) });
          break;
      }
    },
  };
};
