// An ACP client built on the official TypeScript SDK (@agentclientprotocol/sdk), for agentry's
// end-to-end tests and as a reference for people writing clients.
//
//   node tests/peers/acp-client.mjs SCENARIO.json
//
// It spawns the agent named in the scenario, runs the scenario's steps in order and prints one
// JSON line per thing it saw: {"kind": "response" | "error" | "update" | "permission" |
// "elicitation" | "fs" | "terminal", ...}. The Rust tests read those lines and check them.
//
// Scenario: {
//   "agent": {"command": "...", "args": [...], "env": {...}, "cwd": "..."},
//   "clientCapabilities": {...},          // what this client offers (fs, terminal)
//   "unstable": true,                     // use the SDK's unstable protocol (subagents, …)
//   "buffers": {"/abs/path": "text"},     // unsaved editor buffers fs/read_text_file sees
//   "permissions": ["allow_once", ...],   // answers to permission requests, in order;
//                                         // "cancel" cancels the turn and answers cancelled;
//                                         // "ignore_then_cancel" cancels it and never answers
//   "elicitations": [{"action": "accept", "content": {...}}, {"action": "decline"}, ...],
//                                         // answers to elicitation/create, in order
//                                         // (advertise "elicitation": {"form": {}} too)
//   "steps": [{"op": "initialize"}, {"op": "new_session", "cwd": "/abs"},
//             {"op": "prompt", "text": "...", "cancelOn": "tool_call" | null, "cancelAfterMs": n},
//             {"op": "request", "method": "...", "params": {...}},   // any other method
//             {"op": "raw", "line": "..."},                          // bytes as they are
//             {"op": "wait"},        // waits for the steps started with "noWait": true
//             {"op": "sleep", "ms": n},
//             {"op": "wait_for_command", "name": "..."},  // until a commands update offers it
//             {"op": "write_file", "path": "/abs", "text": "..."},
//             {"op": "close_stdin"}]     // hangs up: the agent's stdin reaches EOF
// }
// Within params, the string "$session" stands for the id of the last session created.
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { Readable, Writable } from "node:stream";

const scenario = JSON.parse(readFileSync(process.argv[2], "utf8"));
// The SDK's stable entry point, or with `"unstable": true` its unstable one (for unstable
// capabilities such as subagent sessions).
const acp = await import(scenario.unstable ? "@agentclientprotocol/sdk/unstable" : "@agentclientprotocol/sdk");
const print = (record) => process.stdout.write(JSON.stringify(record) + "\n");

const agent = spawn(scenario.agent.command, scenario.agent.args ?? [], {
  cwd: scenario.agent.cwd,
  env: scenario.agent.env ?? process.env,
  stdio: ["pipe", "pipe", "inherit"],
});
const exited = new Promise((resolve) => agent.on("exit", (code, signal) => resolve({ code, signal })));

let sessionId = null;
let turn = null; // {onUpdate, cancel} of the prompt being run
const answers = [...(scenario.permissions ?? [])];
const elicitationAnswers = [...(scenario.elicitations ?? [])];
const buffers = { ...(scenario.buffers ?? {}) };
const terminals = new Map();
// The commands the agent last announced, and the steps waiting for one of them.
let commands = new Set();
const commandWaiters = [];
const commandsAnnounced = (update) => {
  commands = new Set(update.availableCommands.map((command) => command.name));
  for (const waiter of commandWaiters.splice(0)) {
    if (commands.has(waiter.name)) waiter.resolve();
    else commandWaiters.push(waiter);
  }
};
const substitute = (value) => JSON.parse(JSON.stringify(value ?? {}).replaceAll('"$session"', JSON.stringify(sessionId)));

const app = acp
  .client({ name: "agentry-e2e" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    print({ kind: "update", sessionId: params.sessionId, update: params.update });
    if (params.update.sessionUpdate === "available_commands_update") commandsAnnounced(params.update);
    turn?.onUpdate(params.update);
  })
  // An editor's files: its buffers first, then the disk; writes go to the buffer.
  .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
    print({ kind: "fs", op: "read", path: params.path });
    return { content: buffers[params.path] ?? readFileSync(params.path, "utf8") };
  })
  .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
    print({ kind: "fs", op: "write", path: params.path, content: params.content });
    buffers[params.path] = params.content;
    return {};
  })
  // Terminals: each runs its command in a process group of its own, like an editor's would.
  .onRequest(acp.methods.client.terminal.create, ({ params }) => {
    const terminalId = `term_${terminals.size + 1}`;
    const child = spawn(params.command, params.args ?? [], { cwd: params.cwd, detached: true });
    const terminal = { child, output: "", exit: null };
    terminal.exited = new Promise((resolve) =>
      child.on("exit", (code, signal) => resolve((terminal.exit = { exitCode: code, signal }))),
    );
    child.stdout.on("data", (chunk) => (terminal.output += chunk));
    child.stderr.on("data", (chunk) => (terminal.output += chunk));
    terminals.set(terminalId, terminal);
    print({ kind: "terminal", op: "create", terminalId, command: params.command, args: params.args, pid: child.pid });
    return { terminalId };
  })
  .onRequest(acp.methods.client.terminal.output, ({ params }) => {
    const terminal = terminals.get(params.terminalId);
    print({ kind: "terminal", op: "output", terminalId: params.terminalId });
    return { output: terminal.output, truncated: false, exitStatus: terminal.exit };
  })
  .onRequest(acp.methods.client.terminal.waitForExit, async ({ params }) => {
    const exit = await terminals.get(params.terminalId).exited;
    print({ kind: "terminal", op: "wait_for_exit", terminalId: params.terminalId, ...exit });
    return exit;
  })
  .onRequest(acp.methods.client.terminal.kill, ({ params }) => {
    print({ kind: "terminal", op: "kill", terminalId: params.terminalId });
    const { child, exit } = terminals.get(params.terminalId);
    if (!exit) process.kill(-child.pid, "SIGKILL");
    return {};
  })
  .onRequest(acp.methods.client.terminal.release, ({ params }) => {
    print({ kind: "terminal", op: "release", terminalId: params.terminalId });
    terminals.delete(params.terminalId);
    return {};
  })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
    const answer = answers.shift() ?? "reject_once";
    print({ kind: "permission", sessionId: params.sessionId, toolCall: params.toolCall, options: params.options, answer });
    if (answer === "cancel") {
      await turn?.cancel();
      return { outcome: { outcome: "cancelled" } };
    }
    if (answer === "ignore_then_cancel") {
      await turn?.cancel();
      return new Promise(() => {});
    }
    const option = params.options.find((o) => o.kind === answer);
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  })
  .onRequest(acp.methods.client.elicitation.create, async ({ params }) => {
    const answer = elicitationAnswers.shift() ?? { action: "decline" };
    print({ kind: "elicitation", params, answer });
    return answer;
  });

const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

async function runPrompt(ctx, step) {
  const cancel = async () => {
    print({ kind: "cancel" });
    await ctx.notify(acp.methods.agent.session.cancel, { sessionId });
  };
  let cancelled = false;
  const cancelOnce = async () => {
    if (!cancelled) {
      cancelled = true;
      await cancel();
    }
  };
  turn = {
    cancel: cancelOnce,
    onUpdate: (update) => {
      if (step.cancelOn && update.sessionUpdate === step.cancelOn) void cancelOnce();
    },
  };
  const timer = step.cancelAfterMs === undefined ? null : setTimeout(() => void cancelOnce(), step.cancelAfterMs);
  const prompt = step.prompt ?? [{ type: "text", text: step.text }];
  try {
    return await ctx.request(acp.methods.agent.session.prompt, { sessionId: step.sessionId ?? sessionId, prompt });
  } finally {
    clearTimeout(timer);
    turn = null;
  }
}

async function run(ctx, step) {
  switch (step.op) {
    case "initialize":
      return ctx.request(acp.methods.agent.initialize, {
        protocolVersion: step.protocolVersion ?? acp.PROTOCOL_VERSION,
        clientCapabilities: scenario.clientCapabilities ?? {},
        clientInfo: { name: "agentry-e2e", version: "1.0.0" },
      });
    case "new_session": {
      const response = await ctx.request(acp.methods.agent.session.new, { cwd: step.cwd, mcpServers: step.mcpServers ?? [] });
      sessionId = response.sessionId;
      return response;
    }
    case "prompt":
      return runPrompt(ctx, step);
    case "request":
      return ctx.request(step.method, substitute(step.params));
    case "sleep":
      await new Promise((resolve) => setTimeout(resolve, step.ms));
      return null;
    case "wait_for_command":
      if (!commands.has(step.name)) await new Promise((resolve) => commandWaiters.push({ name: step.name, resolve }));
      return null;
    case "write_file":
      mkdirSync(dirname(step.path), { recursive: true });
      writeFileSync(step.path, step.text);
      return null;
    case "raw":
      agent.stdin.write(step.line + "\n");
      return null;
    default:
      throw new Error(`unknown step ${step.op}`);
  }
}

try {
  await app.connectWith(stream, async (ctx) => {
    const started = [];
    for (const [index, step] of scenario.steps.entries()) {
      if (step.op === "close_stdin") {
        agent.stdin.end();
        await exited;
        break;
      }
      if (step.op === "wait") {
        await Promise.all(started.splice(0));
        continue;
      }
      const outcome = run(ctx, step).then(
        (result) => !["raw", "sleep", "wait_for_command", "write_file"].includes(step.op) && print({ kind: "response", step: index, op: step.op, result }),
        (error) => print({ kind: "error", step: index, op: step.op, code: error.code ?? null, message: String(error.message ?? error), data: error.data ?? null }),
      );
      if (step.noWait) started.push(outcome);
      else await outcome;
    }
    await Promise.all(started);
  });
} catch (error) {
  // The agent went away (after "close_stdin", or by exiting): say so rather than crash.
  print({ kind: "closed", message: String(error.message ?? error) });
} finally {
  agent.stdin.end();
  print({ kind: "exit", ...(await exited) });
}
