// A chat-protocol client for agentry's end-to-end tests of `agentry serve`, on either transport:
// the official `socket.io-client`, or a plain WebSocket client (the `ws` package) speaking
// `{"event": NAME, "data": {...}}` frames.
//
//   node tests/peers/chat-client.mjs SCENARIO.json
//
// It prints one JSON line per thing it saw: {"kind": "event", "event": NAME, "data": {...}},
// {"kind": "open"}, {"kind": "closed", "by": "server" | "client"}, {"kind": "refused", "status": n}.
//
// Scenario: {
//   "transport": "ws" | "socket.io",                                 // "ws" by default
//   "socketio_transports": ["websocket"],                            // Socket.IO's, if not its default
//   "url": "ws://127.0.0.1:PORT/ws" (ws) or "http://127.0.0.1:PORT" (socket.io),
//   "headers": {"Origin": "...", "Authorization": "Bearer ..."},   // sent with the upgrade
//   "steps": [{"op": "send", "event": "chat:send", "data": {...}},
//             {"op": "raw", "text": "..."},                          // a frame as it is (ws)
//             {"op": "wait_for", "event": "chat:end", "count": 1},   // until seen `count` times
//             {"op": "reconnect", "url": "..."},                     // close, then open again
//                                                                    // (to `url` when given)
//             {"op": "sleep", "ms": n}]
// }
// Within data, the string "$answer_call" stands for the id of the last call seen
// awaiting an answer, "$permission" for the id of the last permission request, and
// "$last_sequence" for the largest event `sequence` seen so far.
import { readFileSync } from "node:fs";
import WebSocket from "ws";
import { io } from "socket.io-client";

const scenario = JSON.parse(readFileSync(process.argv[2], "utf8"));
const print = (record) => process.stdout.write(JSON.stringify(record) + "\n");

const seen = new Map(); // event name -> count
const waiters = [];
let answerCall = null;
let permission = null;
let lastSequence = 0; // the largest `sequence` seen, to resume from on another server

function note(event, data) {
  print({ kind: "event", event, data });
  if (event === "turn:patch" && data.patch_type === "set_tool_status" && data.data.status === "awaiting_answer") {
    answerCall = data.data.tool_call_id;
  }
  if (event === "permission:request") permission = data.request_id;
  if (Number.isInteger(data?.sequence) && event !== "session:subscribed") {
    lastSequence = Math.max(lastSequence, data.sequence);
  }
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

// Each transport: connect(url) resolves to {send(event, data), raw(text), close()} or null.
const transports = {
  ws: (url) =>
    new Promise((resolve) => {
      const socket = new WebSocket(url, { headers: scenario.headers ?? {} });
      let closing = false;
      socket.on("open", () => {
        print({ kind: "open" });
        resolve({
          send: (event, data) => socket.send(JSON.stringify({ event, data })),
          raw: (text) => socket.send(text),
          close: () =>
            new Promise((done) => {
              if (socket.readyState === WebSocket.CLOSED) return done();
              closing = true;
              socket.once("close", done);
              socket.close();
            }),
        });
      });
      socket.on("unexpected-response", (_request, response) => {
        print({ kind: "refused", status: response.statusCode });
        resolve(null);
      });
      socket.on("message", (bytes) => {
        const frame = JSON.parse(bytes.toString());
        note(frame.event, frame.data);
      });
      socket.on("close", (code) => print({ kind: "closed", by: closing ? "client" : "server", code }));
      socket.on("error", () => {});
    }),
  "socket.io": (url) =>
    new Promise((resolve) => {
      const socket = io(url, {
        extraHeaders: scenario.headers ?? {},
        // ["websocket"] alone behind a load balancer without sticky sessions.
        ...(scenario.socketio_transports ? { transports: scenario.socketio_transports } : {}),
        reconnection: false,
        forceNew: true,
      });
      socket.on("connect", () => {
        print({ kind: "open" });
        resolve({
          send: (event, data) => socket.emit(event, data),
          raw: () => {
            throw new Error("Socket.IO has no raw frames");
          },
          close: async () => {
            socket.disconnect();
          },
        });
      });
      socket.on("connect_error", (error) => {
        print({ kind: "refused", message: String(error.message ?? error) });
        resolve(null);
      });
      socket.onAny((event, data) => note(event, data));
      socket.on("disconnect", (reason) =>
        print({ kind: "closed", by: reason === "io client disconnect" ? "client" : "server", reason }),
      );
    }),
};
const connect = transports[scenario.transport ?? "ws"];

const substitute = (value) =>
  JSON.parse(
    JSON.stringify(value ?? {})
      .replaceAll('"$answer_call"', JSON.stringify(answerCall))
      .replaceAll('"$permission"', JSON.stringify(permission))
      .replaceAll('"$last_sequence"', JSON.stringify(lastSequence)),
  );

let socket = await connect(scenario.url);
try {
  for (const step of scenario.steps ?? []) {
    if (socket === null) break;
    switch (step.op) {
      case "send":
        socket.send(step.event, substitute(step.data));
        await new Promise((resolve) => setImmediate(resolve));
        break;
      case "raw":
        socket.raw(step.text);
        break;
      case "wait_for":
        await waitFor(step.event, step.count ?? 1);
        break;
      case "reconnect":
        // To the same server, or to another one (`url`) serving the same sessions.
        await socket.close();
        socket = await connect(step.url ?? scenario.url);
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
if (socket !== null) await socket.close();
process.exit(0);
