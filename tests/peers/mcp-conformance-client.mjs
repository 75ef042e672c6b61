// The client command the MCP conformance suite (@modelcontextprotocol/conformance) runs for a
// client scenario, driving the real `agentry`:
//
//   node tests/peers/mcp-conformance-client.mjs SERVER_URL
//
// The suite gives the scenario's server URL as the last argument, the scenario's name in
// MCP_CONFORMANCE_SCENARIO and, for some, a JSON context in MCP_CONFORMANCE_CONTEXT (tools to
// call with their arguments, pre-registered client credentials). This script configures the
// server as `conformance` in the project's `.mcp.json` (the working folder) and runs
// `$AGENTRY_BIN run` with the model the test set up (OPENAI_BASE_URL) and `--answers` that
// take the first option of every question the server asks: the prompt says which
// tools to call (as the context lists them, or every tool the server offers), and the test's
// mock model calls them. For an `auth/` scenario it first runs `agentry mcp login conformance`
// with `$BROWSER` set to headless-browser.mjs, a client registered ahead of time (the
// context's `client_id`, `client_secret`) configured as the server's `oauth`. Its exit code is
// agentry's (the login's when that fails).
import { writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const url = process.argv[process.argv.length - 1];
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");

const server = { type: "http", url };
if (context.client_id) {
  server.oauth = { clientId: context.client_id, clientSecret: context.client_secret };
} else if (process.env.MCP_CONFORMANCE_SCENARIO?.startsWith("auth/")) {
  // Where a team would host agentry's client metadata document (the suite's authorization
  // server takes this address as given and fetches nothing).
  server.oauth = { clientMetadataUrl: "https://conformance-test.local/client-metadata.json" };
}
writeFileSync(".mcp.json", JSON.stringify({ mcpServers: { conformance: server } }, null, 2));

// What a scenario asks of the client beyond calling each tool once. `{"$inputSchemaOf": TOOL}`
// stands for TOOL's input schema as the model was given it.
const scenarioCalls = {
  "json-schema-2020-12-preservation": [
    { name: "json_schema_echo", arguments: { schema: { $inputSchemaOf: "json_schema_2020_12_tool" } } },
  ],
};
const calls = context.toolCalls ?? context.tool_calls ?? scenarioCalls[process.env.MCP_CONFORMANCE_SCENARIO];
const prompt = calls
  ? `Call these tools: ${JSON.stringify(calls)}`
  : "Call every tool of the conformance server.";
// The user's answers to the server's questions: each time, the first option of every
// question, which is a field's default where it has one (a person accepting what is proposed).
const firstOptions = { selections: { 0: [0], 1: [0], 2: [0], 3: [0] } };
writeFileSync("answers.json", JSON.stringify(Array(8).fill(firstOptions)));
const agentry = (args, env = {}) =>
  spawnSync(process.env.AGENTRY_BIN, args, { stdio: "inherit", env: { ...process.env, ...env } });

// The headless browser stays the user's for the chat too: a server that asks for more scope
// mid-chat (step-up) is logged in to again.
const browser = { BROWSER: `${process.execPath} ${fileURLToPath(new URL("headless-browser.mjs", import.meta.url))}` };
if (process.env.MCP_CONFORMANCE_SCENARIO?.startsWith("auth/")) {
  const login = agentry(["mcp", "login", "conformance"], browser);
  if (login.status !== 0) process.exit(login.status ?? 1);
}
const run = agentry([
  "run", "--model", "openai/gpt-4.1", "--allow", "mcp__conformance__*", "--answers", "answers.json",
  "--output-format", "stream-json", prompt,
], browser);
process.exit(run.status ?? 1);
