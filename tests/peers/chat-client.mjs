// A chat-protocol client for agentry's end-to-end tests of `agentry serve`: a plain WebSocket
// client (the `ws` package) speaking `{"event": NAME, "data": {...}}` frames.
//
//   node tests/peers/chat-client.mjs SCENARIO.json
//
// It prints one JSON line per thing it saw: {"kind": "event", "event": NAME, "data": {...}},
// {"kind": "open"}, {"kind": "closed", "code": n}, {"kind": "refused", "status": n}.
//
// Scenario: {
//   "url": "ws://127.0.0.1:PORT/ws",
//   "headers": {"Origin": "...", "Authorization": "Bearer ..."},   // sent with the upgrade
//   "steps": [{"op": "send", "event": "chat:send", "data": {...}},
//             {"op": "raw", "text": "..."},                          // a frame as it is
//             {"op": "wait_for", "event": "chat:end", "count": 1},   // until seen `count` times
//             {"op": "reconnect"},                                   // close, then open again
//             {"op": "sleep", "ms": n}]
// }
// Within data, the string "$answer_call" stands for the id of the last call seen
// awaiting an answer, and "$permission" for the id of the last permission request.
import { readFileSync } from "node:fs";
import WebSocket from "ws";

const scenario = JSON.parse(readFileSync(process.argv[2], "utf8"));
const print = (record) => process.stdout.write(JSON.stringify(record) + "\n");

const seen = new Map(); // event name -> count
const waiters = [];
let answerCall = null;
let permission = null;

function note(event, data) {
  print({ kind: "event", event, data });
  if (event === "turn:patch" && data.patch_type === "set_tool_status" && data.data.status === "awaiting_answer") {
    answerCall = data.data.tool_call_id;
  }
  if (event === "permission:request") permission = data.request_id;
  seen.set(event, (seen.get(event) ?? 0) + 1);
  for (const waiter of waiters.splice(0)) {
    if ((seen.get(waiter.event) ?? 0) >= waiter.count) waiter.resolve();
    else waiters.push(waiter);
  }
}

function waitFor(event, count) {
  return new Promise((resolve, reject) => {
    if ((seen.get(event) ?? 0) >= count) return resolve();
    const timer = setTimeout(() => reject(new Error(`no ${count}× ${event} within 20 s`)), 20000);
    waiters.push({ event, count, resolve: () => { clearTimeout(timer); resolve(); } });
  });
}

function connect() {
  return new Promise((resolve) => {
    const socket = new WebSocket(scenario.url, { headers: scenario.headers ?? {} });
    socket.on("open", () => {
      print({ kind: "open" });
      resolve(socket);
    });
    socket.on("unexpected-response", (_request, response) => {
      print({ kind: "refused", status: response.statusCode });
      resolve(null);
    });
    socket.on("message", (bytes) => {
      const frame = JSON.parse(bytes.toString());
      note(frame.event, frame.data);
    });
    socket.on("close", (code) => print({ kind: "closed", code }));
    socket.on("error", () => {});
  });
}

const substitute = (value) =>
  JSON.parse(
    JSON.stringify(value ?? {})
      .replaceAll('"$answer_call"', JSON.stringify(answerCall))
      .replaceAll('"$permission"', JSON.stringify(permission)),
  );

let socket = await connect();
try {
  for (const step of scenario.steps ?? []) {
    if (socket === null) break;
    switch (step.op) {
      case "send":
        socket.send(JSON.stringify({ event: step.event, data: substitute(step.data) }));
        break;
      case "raw":
        socket.send(step.text);
        break;
      case "wait_for":
        await waitFor(step.event, step.count ?? 1);
        break;
      case "reconnect":
        await new Promise((resolve) => {
          socket.once("close", resolve);
          socket.close();
        });
        socket = await connect();
        break;
      case "sleep":
        await new Promise((resolve) => setTimeout(resolve, step.ms));
        break;
      default:
        throw new Error(`unknown step ${step.op}`);
    }
  }
} catch (error) {
  print({ kind: "failed", message: String(error) });
}
if (socket !== null) {
  await new Promise((resolve) => {
    socket.once("close", resolve);
    socket.close();
  });
}
process.exit(0);
