// agentry's web page: a chat-flow client over the plain WebSocket at /ws and the REST API.
// Turns are kept as the server projects them (turn:start / turn:end carry whole turns, patches
// change them) and re-rendered when they change. Only the main loop's turns are shown in the
// conversation; a sub-agent's turns are folded under the Agent call that started it. The
// server's token travels in the cookie the page was given when opened with its link. When the
// connection drops (the server restarts, the network goes), the page reconnects by itself and
// catches up: the session's turns are read again whole, and live events up to the sequence
// they were read at are skipped, so nothing is lost or shown twice.
"use strict";

const turns = new Map(); // turn_id -> projection, in arrival order
let sequence = 0; // the open session's last sequence number seen
let sessions = []; // the stored sessions, as GET /api/sessions lists them
let attachments = []; // message parts waiting for the next message
let connected = false;
let sessionModel = null; // the open session's model, as the server last said
let retryDelay = 500;
// Answers are Markdown, rendered (and sanitised) by the server's /api/render. A block shows
// its last rendering while a newer one is on its way, its plain text before the first.
const renderings = new Map(); // "turn_id:block" -> { text, html }
const toRender = new Map(); // "turn_id:block" -> the text to render next
let renderingNow = false;
let sessionId = null;
let socket = null;
let running = false;

const $ = (id) => document.getElementById(id);
const el = (tag, props = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  for (const child of children) if (child != null) node.append(child);
  return node;
};

async function api(method, path, body) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status === 204) return null;
  if (response.status === 401) {
    throw new Error("Open this page with the link `agentry serve` printed (it ends with ?token=…).");
  }
  const data = await response.json();
  if (!response.ok) throw new Error(data.message ?? `HTTP ${response.status}`);
  return data;
}

function send(event, data) {
  socket.send(JSON.stringify({ event, data }));
}

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = !message;
}

// --- the connection ---------------------------------------------------------------------

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  socket = new WebSocket(`${scheme}://${location.host}/ws`);
  socket.onmessage = (message) => {
    const { event, data } = JSON.parse(message.data);
    handle(event, data);
  };
  socket.onopen = async () => {
    connected = true;
    retryDelay = 500;
    showState();
    if (sessionId) await catchUp();
    listSessions().catch((error) => showError(error.message));
  };
  socket.onclose = () => {
    connected = false;
    showState();
    setTimeout(connect, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 5000);
  };
}

// Reads the open session's turns again and subscribes from there.
async function catchUp() {
  try {
    const stored = await api("GET", `/api/sessions/${sessionId}/messages`);
    turns.clear();
    for (const turn of stored.turns) turns.set(turn.turn_id, turn);
    sequence = stored.sequence;
    if (stored.model) $("model").value = sessionModel = stored.model;
    if (stored.mode) $("mode").value = stored.mode;
    render();
    setRunning(false);
    if (socket?.readyState === WebSocket.OPEN) send("session:subscribe", { session_id: sessionId });
  } catch (error) {
    showError(error.message);
  }
}

function handle(event, data) {
  if (data.session_id && data.session_id !== sessionId) return;
  // The turns were read whole just before subscribing: the open ones that follow are newer
  // only if their sequence is.
  if (event === "session:subscribed") return;
  if (typeof data.sequence === "number") {
    if (data.sequence <= sequence) return;
    sequence = data.sequence;
  }
  switch (event) {
    case "turn:start":
    case "turn:end":
      turns.set(data.turn_id, data);
      render();
      break;
    case "turn:patch":
      patch(data);
      render();
      break;
    case "chat:start":
      setRunning(true);
      break;
    case "chat:end":
      setRunning(false);
      if (data.status === "failed") showError(data.error ?? "The chat failed.");
      listSessions().catch((error) => showError(error.message));
      break;
    case "permission:request":
      showPermission(data);
      break;
    case "permission:resolved":
      document.querySelector(`[data-request="${data.request_id}"]`)?.remove();
      break;
    case "system:error":
      showError(data.message);
      break;
    case "session:rewound":
      showRewound(data);
      catchUp();
      break;
  }
}

function patch({ turn_id, patch_type, data }) {
  const turn = turns.get(turn_id);
  if (!turn) return;
  const call = (id) => turn.tool_calls.find((c) => c.id === id);
  switch (patch_type) {
    case "add_content":
      turn.blocks[data.block_index] = { ...(turn.blocks[data.block_index] ?? {}), type: data.type, content: data.content };
      break;
    case "add_tool_call":
      if (!call(data.id)) {
        turn.tool_calls.push(data);
        turn.blocks.push({ type: "tool_use", tool_call_id: data.id, content: data.arguments });
      }
      break;
    case "tool_result":
    case "set_tool_status": {
      const found = call(data.tool_call_id);
      if (found) Object.assign(found, data);
      break;
    }
    case "set_status":
      turn.status = data.status;
      break;
  }
}

// --- rendering ----------------------------------------------------------------------------

function render() {
  const conversation = $("conversation");
  const atBottom = conversation.scrollHeight - conversation.scrollTop - conversation.clientHeight < 40;
  conversation.replaceChildren(...[...turns.values()].filter((t) => !t.parent_fork_tool_call_id).map(renderTurn));
  if (atBottom) conversation.scrollTop = conversation.scrollHeight;
}

function renderTurn(turn) {
  const node = el("div", { className: `turn ${turn.role}` });
  node.dataset.turn = turn.turn_id;
  if (turn.role === "user") {
    for (const block of turn.blocks) {
      if (block.type === "text") node.append(el("div", { className: "bubble", textContent: block.content }));
      if (block.type === "ask_user_answer") node.append(el("div", { className: "bubble", textContent: `Answered ${describeAnswer(block.content)}` }));
    }
    if (!turn.parent_fork_tool_call_id) node.append(rewindButton(turn));
    return node;
  }
  if (turn.role === "system") {
    node.textContent = turn.blocks.map((b) => b.content).join("\n");
    return node;
  }
  turn.blocks.forEach((block, index) => {
    if (block.type === "text") node.append(renderAnswer(`${turn.turn_id}:${index}`, block.content));
    else if (block.type === "thinking") node.append(el("details", { className: "thinking" }, el("summary", { textContent: "Thinking" }), el("div", { className: "text", textContent: block.content })));
    else if (block.type === "tool_use") {
      const call = turn.tool_calls.find((c) => c.id === block.tool_call_id);
      if (call) node.append(renderCall(call, turn));
    }
  });
  if (turn.status === "failed" && turn.failure_reason) node.append(el("div", { className: "text", textContent: `Failed: ${turn.failure_reason}` }));
  return node;
}

// "Rewind to here" under a user message: then what to restore, files and conversation or one
// of them (POST …/rewind); the page reads the session again when the server says it rewound.
function rewindButton(turn) {
  const button = el("button", { className: "rewind", type: "button", textContent: "Rewind to here", title: "Go back to before this message" });
  button.addEventListener("click", () => {
    const choices = el("div", { className: "rewind-choices" }, el("span", { textContent: "Restore: " }));
    for (const [label, files, conversation] of [["Files and conversation", true, true], ["Conversation only", false, true], ["Files only", true, false]]) {
      const choice = el("button", { type: "button", textContent: label });
      choice.addEventListener("click", () => rewindTo(turn, files, conversation));
      choices.append(choice);
    }
    const cancel = el("button", { type: "button", textContent: "Cancel" });
    cancel.addEventListener("click", render);
    choices.append(cancel);
    button.replaceWith(choices);
  });
  return button;
}

async function rewindTo(turn, files, conversation, overwrite) {
  const path = `/api/sessions/${sessionId}/rewind`;
  const request = { chat_id: turn.turn_id, files, conversation };
  try {
    // Files changed by hand since the agent's last change: asked about first.
    if (files && overwrite === undefined) {
      const plan = await api("POST", path, { ...request, dry_run: true });
      if (plan.hand_edited.length) return askAboutHandEdits(turn, files, conversation, plan.hand_edited);
    }
    await api("POST", path, { ...request, overwrite_hand_edits: overwrite === true });
    // The message goes back into the box, to edit and send again.
    if (conversation) $("message").value = turn.blocks.filter((b) => b.type === "text").map((b) => b.content).join("\n");
  } catch (error) {
    showError(error.message);
  }
}

function askAboutHandEdits(turn, files, conversation, edited) {
  const question = el("div", { className: "rewind-choices" },
    el("div", { textContent: `Changed by hand since the agent's last change: ${edited.map((f) => f.path).join(", ")}` }));
  for (const [label, overwrite] of [["Overwrite them too", true], ["Keep them", false]]) {
    const choice = el("button", { type: "button", textContent: label });
    choice.addEventListener("click", () => rewindTo(turn, files, conversation, overwrite));
    question.append(choice);
  }
  const cancel = el("button", { type: "button", textContent: "Cancel" });
  cancel.addEventListener("click", render);
  question.append(cancel);
  document.querySelector(`[data-turn="${CSS.escape(turn.turn_id)}"] .rewind-choices`)?.replaceWith(question);
}

// Files a rewind kept because they were changed by hand since the agent's last change.
function showRewound({ files, hand_edited }) {
  const kept = hand_edited.filter((edited) => !files.some((file) => file.path === edited.path));
  if (kept.length) showError(`Kept as they are (changed by hand since the agent's last change): ${kept.map((f) => f.path).join(", ")}`);
}

// An answer's text as rendered Markdown: the server's sanitised HTML for it when there is one,
// else the last rendering (or the plain text) while it is rendered.
// The most bytes of Markdown the server renders (MAX_RENDER_BYTES): a longer answer stays
// plain text.
const MAX_RENDER_BYTES = 512 * 1024;

function renderAnswer(key, text) {
  const node = el("div", { className: "answer" });
  const done = renderings.get(key);
  if (done) node.innerHTML = done.html;
  else node.textContent = text;
  if (done?.text !== text && new TextEncoder().encode(text).length <= MAX_RENDER_BYTES) {
    toRender.set(key, text);
    renderPending();
  }
  return node;
}

async function renderPending() {
  if (renderingNow) return;
  renderingNow = true;
  try {
    while (toRender.size) {
      const [key, text] = toRender.entries().next().value;
      toRender.delete(key);
      const { html } = await api("POST", "/api/render", { markdown: text });
      renderings.set(key, { text, html });
      render();
    }
  } catch (error) {
    showError(`Answers are shown as plain text: ${error.message}`);
  } finally {
    renderingNow = false;
  }
}

function renderCall(call, turn) {
  const card = el("div", { className: "tool" });
  card.dataset.call = call.id;
  card.append(el("div", { className: "head" },
    el("span", { className: "title", textContent: call.display_name || call.tool_name }),
    el("span", { className: `badge ${call.status}`, textContent: call.status.replace("_", " ") })));
  for (const item of call.content ?? []) if (item.type === "diff") card.append(renderDiff(item));
  if (call.result) card.append(el("pre", { textContent: call.result }));
  const children = [...turns.values()].filter((t) => t.parent_fork_tool_call_id === call.id);
  if (children.length) {
    const folded = el("details", { className: "subagent" }, el("summary", { textContent: `Sub-agent (${children.length} turns)` }));
    folded.append(...children.map(renderTurn));
    card.append(folded);
  }
  if (call.tool_name === "AskUserQuestion" && call.status === "awaiting_answer" && !turn.parent_fork_tool_call_id) {
    card.append(renderQuestion(call));
  }
  return card;
}

// A line diff (longest common subsequence), for the diffs of edits.
function renderDiff({ path, oldText, newText }) {
  const before = (oldText ?? "").split("\n");
  const after = newText.split("\n");
  const box = el("div", { className: "diff" }, el("div", { className: "path", textContent: path }));
  if (before.length * after.length > 250000) {
    box.append(el("div", { className: "add", textContent: newText }));
    return box;
  }
  const lcs = Array.from({ length: before.length + 1 }, () => new Uint32Array(after.length + 1));
  for (let i = before.length - 1; i >= 0; i--)
    for (let j = after.length - 1; j >= 0; j--)
      lcs[i][j] = before[i] === after[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  let i = 0, j = 0;
  const line = (kind, text) => box.append(el("div", { className: kind, textContent: `${kind === "add" ? "+" : kind === "del" ? "-" : " "} ${text}` }));
  while (i < before.length || j < after.length) {
    if (i < before.length && j < after.length && before[i] === after[j]) { line("same", before[i]); i++; j++; }
    else if (i < before.length && (j === after.length || lcs[i + 1][j] >= lcs[i][j + 1])) { line("del", before[i]); i++; }
    else { line("add", after[j]); j++; }
  }
  return box;
}

function renderQuestion(call) {
  let questions = [];
  try { questions = JSON.parse(call.arguments).questions ?? []; } catch { /* shown without a form */ }
  const form = el("form", { className: "question" });
  questions.forEach((q, index) => {
    const set = el("fieldset", {}, el("legend", { textContent: q.question }));
    q.options.forEach((option, choice) => {
      const input = el("input", { type: q.multiSelect ? "checkbox" : "radio", name: `q${index}`, value: String(choice) });
      set.append(el("label", {}, input, ` ${option.label}`), option.description ? el("small", { textContent: ` — ${option.description}` }) : null, el("br"));
    });
    set.append(el("input", { type: "text", name: `q${index}_other`, placeholder: "Or in your own words" }));
    form.append(set);
  });
  form.append(el("button", { type: "submit", textContent: "Answer" }));
  form.onsubmit = (event) => {
    event.preventDefault();
    const selections = {}, custom = {};
    questions.forEach((_, index) => {
      const chosen = [...form.querySelectorAll(`input[name="q${index}"]:checked`)].map((i) => Number(i.value));
      if (chosen.length) selections[index] = chosen;
      const own = form.querySelector(`input[name="q${index}_other"]`).value.trim();
      if (own) custom[index] = own;
    });
    send("chat:send", { session_id: sessionId, message: "", askuser_answer: { tool_call_id: call.id, selections, custom } });
  };
  return form;
}

function describeAnswer(answer) {
  const parts = Object.entries(answer.selections ?? {}).map(([q, chosen]) => `${Number(q) + 1}: option ${chosen.map((c) => c + 1).join(", ")}`);
  parts.push(...Object.entries(answer.custom ?? {}).map(([q, text]) => `${Number(q) + 1}: “${text}”`));
  return parts.join("; ");
}

function showPermission(request) {
  if (document.querySelector(`[data-request="${request.request_id}"]`)) return;
  const box = el("div", { className: "permission" }, el("div", { textContent: `Allow ${request.tool_call.display_name}?` }));
  box.dataset.request = request.request_id;
  for (const option of request.options) {
    box.append(el("button", {
      type: "button",
      textContent: option.name,
      onclick: () => send("permission:respond", { session_id: sessionId, request_id: request.request_id, option_id: option.option_id }),
    }));
  }
  $("permissions").append(box);
}

function setRunning(value) {
  running = value;
  document.body.classList.toggle("running", running);
  $("cancel").hidden = !running;
  $("send").disabled = running || !sessionId;
  showState();
}

function showState() {
  $("state").textContent = !connected ? "Reconnecting…" : !sessionId ? "" : running ? "Working…" : "Ready";
}

// --- sessions -------------------------------------------------------------------------------

const when = (stamp) => {
  const date = new Date(stamp);
  const minutes = Math.round((Date.now() - date) / 60000);
  if (minutes < 1) return "just now";
  if (minutes < 60) return `${minutes} min ago`;
  if (minutes < 24 * 60) return `${Math.round(minutes / 60)} h ago`;
  return date.toLocaleDateString();
};

async function listSessions() {
  ({ sessions } = await api("GET", "/api/sessions"));
  showSessions();
  const current = sessions.find((s) => s.session_id === sessionId);
  $("title").textContent = sessionId ? (current?.title ?? "New session") : "No session";
}

// The stored sessions whose title has the search's words, newest first (as listed).
function showSessions() {
  const words = $("search").value.toLowerCase().split(/\s+/).filter(Boolean);
  const shown = sessions.filter((s) => words.every((w) => (s.title ?? "").toLowerCase().includes(w)));
  $("sessions").replaceChildren(...shown.map((s) => {
    const name = s.title ?? "Untitled";
    const item = el("li", { className: s.session_id === sessionId ? "current" : "" });
    item.dataset.session = s.session_id;
    item.append(
      el("button", { type: "button", className: "open", title: s.cwd, onclick: () => openSession(s.session_id) },
        el("span", { className: "name", textContent: name }),
        el("span", { className: "when", textContent: when(s.updated_at) })),
      el("button", { type: "button", className: "act rename", textContent: "✎", ariaLabel: `Rename ${name}`, onclick: () => rename(item, s) }),
      el("button", { type: "button", className: "act delete", textContent: "✕", ariaLabel: `Delete ${name}`, onclick: (event) => remove(event.currentTarget, s) }));
    return item;
  }));
}

// Turns an entry into a title field: Enter keeps the new title, Escape the old one.
function rename(item, session) {
  const field = el("input", { type: "text", className: "title-field", value: session.title ?? "", ariaLabel: "New title" });
  field.onkeydown = async (event) => {
    if (event.key === "Escape") return showSessions();
    if (event.key !== "Enter") return;
    try {
      await api("PATCH", `/api/sessions/${session.session_id}`, { title: field.value });
      await listSessions();
    } catch (error) {
      showError(error.message);
    }
  };
  item.replaceChildren(field);
  field.focus();
}

// Deletes on a second click, so that one stray click loses nothing.
async function remove(button, session) {
  if (!button.classList.contains("confirm")) {
    button.classList.add("confirm");
    button.textContent = "Delete?";
    return;
  }
  try {
    await api("DELETE", `/api/sessions/${session.session_id}`);
    if (session.session_id === sessionId) closeSession();
    await listSessions();
  } catch (error) {
    showError(error.message);
  }
}

async function openSession(id) {
  if (sessionId && socket?.readyState === WebSocket.OPEN) send("session:unsubscribe", { session_id: sessionId });
  sessionId = id;
  sequence = 0;
  $("permissions").replaceChildren();
  showError("");
  await catchUp();
  $("message").disabled = false;
  $("attach-button").disabled = false;
  $("model").disabled = false;
  await listSessions();
}

function closeSession() {
  sessionId = null;
  turns.clear();
  render();
  $("message").disabled = true;
  $("attach-button").disabled = true;
  $("model").disabled = true;
  setRunning(false);
}

async function loadChoices() {
  const { models, modes, mode } = await api("GET", "/api/options");
  $("model").replaceChildren(...models.map((m) => el("option", { value: m, textContent: m })));
  $("mode").replaceChildren(...modes.map((m) => el("option", { value: m, textContent: m.replace("_", " ") })));
  $("mode").value = mode;
}

$("new-session").onclick = async () => {
  try {
    const created = await api("POST", "/api/sessions", { mode: $("mode").value });
    await openSession(created.session_id);
  } catch (error) {
    showError(error.message);
  }
};

$("search").oninput = showSessions;

$("mode").onchange = async () => {
  if (!sessionId) return;
  try {
    await api("PATCH", `/api/sessions/${sessionId}`, { mode: $("mode").value });
  } catch (error) {
    showError(error.message);
  }
};

// --- the composer ---------------------------------------------------------------------------

// Files become message parts: images as `image_url` data URLs, others as base64 `file`s.
async function attach(files) {
  for (const file of files) {
    const url = await new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(reader.result);
      reader.onerror = () => reject(reader.error);
      reader.readAsDataURL(file);
    });
    const part = file.type.startsWith("image/")
      ? { type: "image_url", image_url: { url } }
      : { type: "file", file: { name: file.name, data: url.slice(url.indexOf(",") + 1) } };
    attachments.push({ name: file.name || "pasted image", part });
  }
  showAttachments();
}

function showAttachments() {
  $("attachments").replaceChildren(...attachments.map((a, index) => el("li", {},
    a.name,
    el("button", { type: "button", textContent: "✕", ariaLabel: `Remove ${a.name}`, onclick: () => { attachments.splice(index, 1); showAttachments(); } }))));
}

$("attach-button").onclick = () => $("attach").click();
$("attach").onchange = () => attach([...$("attach").files]).then(() => { $("attach").value = ""; });
$("composer").ondragover = (event) => {
  if (!sessionId) return;
  event.preventDefault();
  $("composer").classList.add("dropping");
};
$("composer").ondragleave = () => $("composer").classList.remove("dropping");
$("composer").ondrop = (event) => {
  event.preventDefault();
  $("composer").classList.remove("dropping");
  if (sessionId) attach([...event.dataTransfer.files]);
};
$("message").onpaste = (event) => {
  const files = [...(event.clipboardData?.files ?? [])];
  if (!files.length) return;
  event.preventDefault();
  attach(files);
};

$("composer").onsubmit = (event) => {
  event.preventDefault();
  const text = $("message").value.trim();
  if ((!text && !attachments.length) || !sessionId || running) return;
  showError("");
  const message = attachments.length
    ? [...(text ? [{ type: "text", text }] : []), ...attachments.map((a) => a.part)]
    : text;
  const request = { session_id: sessionId, message };
  if ($("model").value !== sessionModel) request.model = sessionModel = $("model").value;
  send("chat:send", request);
  $("message").value = "";
  attachments = [];
  showAttachments();
};

$("message").onkeydown = (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    $("composer").requestSubmit();
  }
};

$("cancel").onclick = () => send("chat:stop", { session_id: sessionId });

showState();
loadChoices().catch((error) => showError(error.message));
connect();
