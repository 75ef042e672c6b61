// agentry's web page: a chat-flow client over the plain WebSocket at /ws and the REST API.
// Turns are kept as the server projects them (turn:start / turn:end carry whole turns, patches
// change them) and re-rendered when they change. Only the main loop's turns are shown in the
// conversation; a sub-agent's turns are folded under the Agent call that started it. The
// server's token travels in the cookie the page was given when opened with its link.
"use strict";

const turns = new Map(); // turn_id -> projection, in arrival order
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
  socket.onopen = () => {
    if (sessionId) send("session:subscribe", { session_id: sessionId });
  };
  socket.onclose = () => setTimeout(connect, 1000);
}

function handle(event, data) {
  if (data.session_id && data.session_id !== sessionId) return;
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
    return node;
  }
  if (turn.role === "system") {
    node.textContent = turn.blocks.map((b) => b.content).join("\n");
    return node;
  }
  for (const block of turn.blocks) {
    if (block.type === "text") node.append(el("div", { className: "text", textContent: block.content }));
    else if (block.type === "thinking") node.append(el("details", { className: "thinking" }, el("summary", { textContent: "Thinking" }), el("div", { className: "text", textContent: block.content })));
    else if (block.type === "tool_use") {
      const call = turn.tool_calls.find((c) => c.id === block.tool_call_id);
      if (call) node.append(renderCall(call, turn));
    }
  }
  if (turn.status === "failed" && turn.failure_reason) node.append(el("div", { className: "text", textContent: `Failed: ${turn.failure_reason}` }));
  return node;
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
  $("cancel").hidden = !running;
  $("send").disabled = running || !sessionId;
  $("status").textContent = sessionId ? `Session ${sessionId}${running ? " — working…" : ""}` : "No session";
}

// --- sessions -------------------------------------------------------------------------------

async function listSessions() {
  const { sessions } = await api("GET", "/api/sessions");
  $("sessions").replaceChildren(...sessions.map((s) => {
    const item = el("li", { textContent: s.title ?? s.session_id, title: s.cwd, onclick: () => open(s.session_id) });
    if (s.session_id === sessionId) item.className = "current";
    return item;
  }));
}

async function open(id) {
  if (sessionId && socket?.readyState === WebSocket.OPEN) send("session:unsubscribe", { session_id: sessionId });
  sessionId = id;
  turns.clear();
  $("permissions").replaceChildren();
  showError("");
  const { turns: stored } = await api("GET", `/api/sessions/${id}/messages`);
  for (const turn of stored) turns.set(turn.turn_id, turn);
  render();
  if (socket?.readyState === WebSocket.OPEN) send("session:subscribe", { session_id: id });
  $("message").disabled = false;
  setRunning(false);
  await listSessions();
}

$("new-session").onclick = async () => {
  try {
    const created = await api("POST", "/api/sessions", {});
    await open(created.session_id);
  } catch (error) {
    showError(error.message);
  }
};

$("composer").onsubmit = (event) => {
  event.preventDefault();
  const text = $("message").value.trim();
  if (!text || !sessionId || running) return;
  showError("");
  send("chat:send", { session_id: sessionId, message: text });
  $("message").value = "";
};

$("message").onkeydown = (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    $("composer").requestSubmit();
  }
};

$("cancel").onclick = () => send("chat:stop", { session_id: sessionId });

connect();
listSessions().catch((error) => showError(error.message));
