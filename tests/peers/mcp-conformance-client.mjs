// The client command the MCP conformance suite (@modelcontextprotocol/conformance) runs for a
// client scenario, driving the real `agentry`:
//
//   node tests/peers/mcp-conformance-client.mjs SERVER_URL
//
// The suite gives the scenario's server URL as the last argument, the scenario's name in
// MCP_CONFORMANCE_SCENARIO and, for some, a JSON context in MCP_CONFORMANCE_CONTEXT (tools to
// call with their arguments, pre-registered client credentials). This script configures the
// server as `conformance` in the project's `.mcp.json` (the working folder) and runs
// `$AGENTRY_BIN run` with the model the test set up (OPENAI_BASE_URL): the prompt says which
// tools to call (as the context lists them, or every tool the server offers), and the test's
// mock model calls them. Its exit code is agentry's.
import { writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";

const url = process.argv[process.argv.length - 1];
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");

const server = { type: "http", url };
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
const run = spawnSync(
  process.env.AGENTRY_BIN,
  ["run", "--model", "openai/gpt-4.1", "--allow", "mcp__conformance__*", "--output-format", "stream-json", prompt],
  { stdio: "inherit" },
);
process.exit(run.status ?? 1);
