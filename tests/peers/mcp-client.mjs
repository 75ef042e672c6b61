// An MCP client built on the official TypeScript SDK (@modelcontextprotocol/sdk), for the
// end-to-end tests of `agentry mcp serve`.
//
//   node tests/peers/mcp-client.mjs SCENARIO.json
//
// It connects to the server named in the scenario, runs the steps in order and prints one JSON
// line per thing it saw: {"kind": "response" | "error" | "notification" | "progress", ...}.
//
// Scenario: {
//   "server": {"command": "...", "args": [...], "env": {...}, "cwd": "..."}   // stdio, or
//   "server": {"url": "http://127.0.0.1:PORT/mcp", "headers": {...}},       // streamable HTTP
//   "steps": [{"op": "list_prompts", "cursor": "..."},
//             {"op": "list_all_prompts"},        // follows nextCursor to the end
//             {"op": "get_prompt", "name": "...", "arguments": {...}},
//             {"op": "list_tools"},
//             {"op": "call_tool", "name": "...", "arguments": {...}, "progress": true,
//              "cancelAfterMs": n},                // aborts the call (notifications/cancelled)
//             {"op": "write_file", "path": "/abs", "text": "..."},
//             {"op": "wait_for_list_changed", "timeoutMs": n},
//             {"op": "process_gone", "pidFile": "/abs", "timeoutMs": n},  // {gone}: the pid's process ended
//             {"op": "sleep", "ms": n}]
// }
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { PromptListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const scenario = JSON.parse(readFileSync(process.argv[2], "utf8"));
const print = (record) => process.stdout.write(JSON.stringify(record) + "\n");

const transport = scenario.server.url
  ? new StreamableHTTPClientTransport(new URL(scenario.server.url), {
      requestInit: { headers: scenario.server.headers ?? {} },
    })
  : new StdioClientTransport({
      command: scenario.server.command,
      args: scenario.server.args ?? [],
      env: scenario.server.env,
      cwd: scenario.server.cwd,
      stderr: "inherit",
    });
const client = new Client({ name: "agentry-e2e", version: "1.0.0" });

let listChanges = 0;
let listChangeWaiters = [];
client.setNotificationHandler(PromptListChangedNotificationSchema, () => {
  listChanges += 1;
  print({ kind: "notification", method: "notifications/prompts/list_changed" });
  for (const resolve of listChangeWaiters.splice(0)) resolve();
});

async function run(step) {
  switch (step.op) {
    case "list_prompts":
      return client.listPrompts(step.cursor === undefined ? {} : { cursor: step.cursor });
    case "list_all_prompts": {
      const pages = [];
      let cursor;
      do {
        const page = await client.listPrompts(cursor === undefined ? {} : { cursor });
        pages.push(page.prompts.map((prompt) => prompt.name));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return { pages };
    }
    case "get_prompt":
      return client.getPrompt({ name: step.name, arguments: step.arguments ?? {} });
    case "list_tools":
      return client.listTools();
    case "call_tool": {
      const onprogress = step.progress ? (progress) => print({ kind: "progress", ...progress }) : undefined;
      const abort = new AbortController();
      const timer = step.cancelAfterMs === undefined ? null : setTimeout(() => abort.abort("cancelled by the test"), step.cancelAfterMs);
      try {
        return await client.callTool({ name: step.name, arguments: step.arguments ?? {} }, undefined, {
          onprogress,
          timeout: step.timeoutMs ?? 60000,
          signal: abort.signal,
        });
      } finally {
        clearTimeout(timer);
      }
    }
    case "write_file":
      mkdirSync(dirname(step.path), { recursive: true });
      writeFileSync(step.path, step.text);
      return null;
    case "wait_for_list_changed": {
      const changed = new Promise((resolve) => listChangeWaiters.push(resolve));
      let timer;
      const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("no list_changed in time")), step.timeoutMs ?? 10000);
      });
      try {
        await Promise.race([changed, timeout]);
      } finally {
        clearTimeout(timer);
      }
      return { listChanges };
    }
    case "process_gone": {
      const pid = readFileSync(step.pidFile, "utf8").trim();
      const deadline = Date.now() + (step.timeoutMs ?? 3000);
      const gone = () => {
        try {
          return readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
        } catch {
          return true;
        }
      };
      while (!gone() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      return { gone: gone() };
    }
    case "sleep":
      await new Promise((resolve) => setTimeout(resolve, step.ms));
      return null;
    default:
      throw new Error(`unknown step ${step.op}`);
  }
}

try {
  await client.connect(transport);
  print({ kind: "connected", server: client.getServerVersion(), capabilities: client.getServerCapabilities() });
  for (const [index, step] of scenario.steps.entries()) {
    try {
      const result = await run(step);
      print({ kind: "response", step: index, op: step.op, result });
    } catch (error) {
      print({ kind: "error", step: index, op: step.op, code: error.code ?? null, message: String(error.message ?? error) });
    }
  }
} catch (error) {
  print({ kind: "closed", message: String(error.message ?? error) });
} finally {
  await client.close();
}
